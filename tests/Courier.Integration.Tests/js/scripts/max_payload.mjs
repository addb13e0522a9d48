// A payload of exactly INFO max_payload bytes round-trips intact; one byte more is refused
// by the client before it is sent (nats.js checks against the server's INFO).
import { ErrorCode } from "nats";
import { check, connectTo, inbox, run, uniquePrefix, within } from "../lib.mjs";

run("max_payload", async () => {
  const nc = await connectTo();
  const max = nc.info.max_payload;
  check(max === 1024 * 1024, `expected the default max_payload of 1 MiB, INFO says ${max}`);
  const subject = `${uniquePrefix("big")}.blob`;
  const sub = inbox(nc.subscribe(subject));
  await within(nc.flush(), "flush");

  const payload = new Uint8Array(max);
  for (let i = 0; i < payload.length; i++) payload[i] = (i * 31 + 7) & 0xff;
  nc.publish(subject, payload);
  const [m] = await sub.take(1, "the 1 MiB message");
  check(m.data.length === max, `received ${m.data.length} bytes, sent ${max}`);
  for (let i = 0; i < max; i++) {
    if (m.data[i] !== payload[i]) check(false, `byte ${i} differs: ${m.data[i]} != ${payload[i]}`);
  }

  let error;
  try {
    nc.publish(subject, new Uint8Array(max + 1));
  } catch (err) {
    error = err;
  }
  check(error?.code === ErrorCode.MaxPayloadExceeded, `publishing max+1 bytes gave ${error?.code}`);
  await within(nc.flush(), "connection still usable");
  await nc.close();
});

// Fills a file stream with 10,000 acknowledged messages (up to 256 acks outstanding), for the
// crash test: every message acknowledged here must be there after kill -9 and a restart.
import { StringCodec } from "nats";
import { check, connectTo, run, within } from "../lib.mjs";

const COUNT = 10_000;
const WINDOW = 256; // acks outstanding at most

run("jetstream_fill", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  await within(jsm.streams.add({ name: "CRASH", subjects: ["crash.>"], storage: "file" }), "create CRASH");
  const js = nc.jetstream();
  let pending = [];
  for (let i = 1; i <= COUNT; i++) {
    pending.push(js.publish(`crash.${i % 7}`, sc.encode(`payload-${i}`)));
    if (pending.length === WINDOW || i === COUNT) {
      const acks = await within(Promise.all(pending), `acks up to ${i}`);
      for (const ack of acks) check(ack.stream === "CRASH", `ack names '${ack.stream}'`);
      pending = [];
    }
  }
  const info = await within(jsm.streams.info("CRASH"), "info");
  check(info.state.messages === COUNT && info.state.last_seq === COUNT, `stream has ${info.state.messages}, last ${info.state.last_seq}`);
  await nc.close();
});

// Fills a file stream with 10,000 acknowledged messages (up to 256 acks outstanding), for the
// crash test: every message acknowledged here must be there after kill -9 and a restart.
import { AckPolicy, StringCodec } from "nats";
import { check, connectTo, run, within } from "../lib.mjs";

const COUNT = 10_000;
const WINDOW = 256; // acks outstanding at most
// Messages the durable consumer acknowledges before the crash, each ack confirmed (one journal fsync
// each, one at a time): kept small enough that a slow CI disk stays far inside the script's 30 s.
const ACKED = 1_000;

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

  // A durable consumer acknowledged part of the way: 1,000 of 10,000, acks confirmed by the server.
  await within(jsm.consumers.add("CRASH", { durable_name: "DUR", ack_policy: AckPolicy.Explicit }), "create DUR");
  const consumer = await within(js.consumers.get("CRASH", "DUR"), "get DUR");
  let acked = 0;
  while (acked < ACKED) {
    const batch = await within(consumer.fetch({ max_messages: 500, expires: 5000 }), `fetch from ${acked}`);
    for await (const m of batch) {
      check(m.seq === acked + 1, `consumer delivered seq ${m.seq} after ${acked}`);
      await within(m.ackAck(), `ack ${m.seq}`);
      acked++;
    }
  }
  const dur = await within(jsm.consumers.info("CRASH", "DUR"), "DUR info");
  check(dur.ack_floor.stream_seq === ACKED, `DUR ack floor ${dur.ack_floor.stream_seq} before the crash`);
  await nc.close();
});

// After kill -9 and a restart on the same store: all 10,000 acknowledged messages are there with
// the same sequences and payloads, and publishing continues at the next sequence.
import { StringCodec } from "nats";
import { check, connectTo, run, within } from "../lib.mjs";

const COUNT = 10_000;

run("jetstream_verify", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const info = await within(jsm.streams.info("CRASH"), "info after restart");
  check(info.state.messages === COUNT, `${info.state.messages} messages after restart`);
  check(info.state.first_seq === 1 && info.state.last_seq === COUNT, `sequences ${info.state.first_seq}..${info.state.last_seq}`);
  for (const seq of [1, 2, 777, 5000, 9999, COUNT]) {
    const m = await within(jsm.streams.getMessage("CRASH", { seq }), `get ${seq}`);
    check(m.subject === `crash.${seq % 7}` && sc.decode(m.data) === `payload-${seq}`, `seq ${seq} is ${m.subject} '${sc.decode(m.data)}'`);
  }
  // The durable consumer's ack floor survived; it continues at the first unacknowledged message.
  // Courier writes consumer state before confirming an ack; nats-server 2.9 writes it
  // asynchronously and loses recent acks to kill -9, so this part is checked only when asked.
  if (process.env.EXPECT_DURABLE_ACK_FLOOR === "1") {
  const dur = await within(jsm.consumers.info("CRASH", "DUR"), "DUR info after restart");
  check(dur.ack_floor.stream_seq === 1000, `DUR ack floor ${dur.ack_floor.stream_seq} after restart`);
  check(dur.num_pending === COUNT - 1000, `DUR has ${dur.num_pending} pending after restart`);
  const consumer = await within(nc.jetstream().consumers.get("CRASH", "DUR"), "get DUR");
  const next = await within(consumer.next({ expires: 5000 }), "next from DUR");
  check(next !== null && next.seq === 1001, `DUR continues at ${next?.seq}`);
  next.ack();
  }

  const ack = await within(nc.jetstream().publish("crash.next", sc.encode("next")), "publish after restart");
  check(ack.seq === COUNT + 1, `publishing continues at ${ack.seq}`);
  await nc.close();
});

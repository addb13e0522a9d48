// Ordered pull consumers as nats.js 2.x's consumer API makes them (js.consumers.get(stream) with no
// name: an ephemeral, ack-none, memory consumer that the client recreates from the last sequence
// it saw): consume a stream whole, in order, with a subject filter and with a start sequence, and
// keep consuming what is published while it runs.
import { DeliverPolicy, StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_ordered_pull", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jso");
  const stream = p.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name: stream, subjects: [`${p}.>`] }), "create stream");
  const COUNT = 2000;
  const pubs = [];
  for (let i = 1; i <= COUNT; i++) {
    pubs.push(js.publish(`${p}.${i % 2 ? "odd" : "even"}`, sc.encode(`${i}`)));
  }
  await within(Promise.all(pubs), `${COUNT} publishes`);

  // The whole stream, fetched in batches, in order.
  const all = await within(js.consumers.get(stream), "ordered consumer");
  let n = 0;
  while (n < COUNT) {
    const batch = await within(all.fetch({ max_messages: 300, expires: 2000 }), `fetch after ${n}`);
    for await (const m of batch) {
      n++;
      check(m.seq === n && sc.decode(m.data) === `${n}`, `message ${n} arrived as seq ${m.seq} '${sc.decode(m.data)}'`);
      check(m.info.pending === COUNT - n, `message ${n} says ${m.info.pending} pending`);
    }
  }

  // Only the even subject, from sequence 1001, consumed (not fetched) while more is published.
  const even = await within(js.consumers.get(stream, { filterSubjects: `${p}.even`, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: 1001 }), "ordered even consumer");
  const messages = await within(even.consume({ max_messages: 100 }), "consume even");
  let expected = 1002;
  const done = (async () => {
    for await (const m of messages) {
      check(m.seq === expected && m.subject === `${p}.even`, `even message ${m.seq} (${m.subject}), expected ${expected}`);
      expected += 2;
      if (expected > COUNT + 20) break;
    }
  })();
  for (let i = COUNT + 1; i <= COUNT + 20; i++) {
    await within(js.publish(`${p}.${i % 2 ? "odd" : "even"}`, sc.encode(`${i}`)), `late publish ${i}`);
  }
  await within(done, `even messages to ${COUNT + 20} (at ${expected})`, 15000);
  messages.stop();
  await nc.close();
});

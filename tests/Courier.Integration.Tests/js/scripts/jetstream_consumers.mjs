// Durable pull consumers through nats.js: create, fetch batches, ack, nak (redelivery with a
// higher delivery count), term, ack floor and pending counts in consumer info, no-wait fetch on an
// empty consumer, names, list, delete.
import { AckPolicy, StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_consumers", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const prefix = uniquePrefix("jsc");
  const stream = prefix.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] }), "create stream");
  for (let i = 1; i <= 10; i++) {
    await within(js.publish(`${prefix}.${i}`, sc.encode(`m${i}`)), `publish ${i}`);
  }

  const created = await within(jsm.consumers.add(stream, { durable_name: "D", ack_policy: AckPolicy.Explicit, ack_wait: 2_000_000_000 }), "create consumer");
  check(created.name === "D" && created.num_pending === 10, `created ${created.name} with ${created.num_pending} pending`);

  const consumer = await within(js.consumers.get(stream, "D"), "get consumer");
  const first = await within(consumer.fetch({ max_messages: 5, expires: 5000 }), "fetch 5");
  const seen = [];
  for await (const m of first) {
    seen.push(m.seq);
    check(m.subject === `${prefix}.${m.seq}` && sc.decode(m.data) === `m${m.seq}`, `message ${m.seq} is ${m.subject} '${sc.decode(m.data)}'`);
    check(m.info.redeliveryCount === 1, `first delivery count ${m.info.redeliveryCount}`);
    m.ack();
  }
  check(seen.join(",") === "1,2,3,4,5", `first batch ${seen}`);
  await within(nc.flush(), "flush acks");

  let info = await within(jsm.consumers.info(stream, "D"), "info after first batch");
  check(info.ack_floor.stream_seq === 5 && info.delivered.stream_seq === 5, `ack floor ${info.ack_floor.stream_seq}, delivered ${info.delivered.stream_seq}`);
  check(info.num_pending === 5 && info.num_ack_pending === 0, `pending ${info.num_pending}, ack pending ${info.num_ack_pending}`);

  // Take 6 and nak it: it comes back with delivery count 2; term 7; ack the rest.
  const second = await within(consumer.fetch({ max_messages: 2, expires: 5000 }), "fetch 2");
  for await (const m of second) {
    if (m.seq === 6) m.nak();
    else m.term();
  }
  const third = await within(consumer.fetch({ max_messages: 4, expires: 5000 }), "fetch redelivery and rest");
  const again = [];
  for await (const m of third) {
    again.push(`${m.seq}:${m.info.redeliveryCount}`);
    m.ack();
  }
  // The nak'd message may come back before or after the new ones (nats-server orders it either way).
  again.sort((a, b) => Number(a.split(":")[0]) - Number(b.split(":")[0]));
  check(again.join(",") === "6:2,8:1,9:1,10:1", `after nak and term: ${again}`);
  await within(nc.flush(), "flush acks 2");

  info = await within(jsm.consumers.info(stream, "D"), "info at the end");
  check(info.num_pending === 0 && info.num_ack_pending === 0, `end: pending ${info.num_pending}, ack pending ${info.num_ack_pending}`);
  check(info.ack_floor.stream_seq === 10, `end ack floor ${info.ack_floor.stream_seq}`);

  const empty = await within(consumer.fetch({ max_messages: 3, expires: 1000 }), "fetch on an empty consumer");
  let extra = 0;
  for await (const _ of empty) extra++;
  check(extra === 0, `an empty consumer delivered ${extra}`);

  const names = [];
  for await (const n of jsm.consumers.list(stream)) names.push(n.name);
  check(names.includes("D"), `consumer list: ${names}`);
  check(await within(jsm.consumers.delete(stream, "D"), "delete consumer"), "delete consumer failed");
  await within(jsm.streams.delete(stream), "delete stream");
  await nc.close();
});

// Push consumers through nats.js: a durable push consumer delivering to a subject, acks, and a
// deliver group spreading messages over two queue subscribers, each message once.
import { AckPolicy, StringCodec, createInbox } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_push", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsp");
  const stream = p.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name: stream, subjects: [`${p}.>`] }), "create stream");
  for (let i = 1; i <= 20; i++) await within(js.publish(`${p}.${i}`, sc.encode(`m${i}`)), `publish ${i}`);

  // One subscriber on the deliver subject gets every message in order.
  const deliver = createInbox();
  const got = [];
  const all = new Promise((resolve) => {
    nc.subscribe(deliver, {
      callback: (err, m) => {
        if (err || !m.reply) return; // status messages have no reply
        got.push(Number(sc.decode(m.data).slice(1)));
        m.respond(); // ack
        if (got.length === 20) resolve();
      },
    });
  });
  await within(nc.flush(), "flush subscriber");
  await within(jsm.consumers.add(stream, { durable_name: "PUSH", deliver_subject: deliver, ack_policy: AckPolicy.Explicit }), "create push consumer");
  await within(all, "20 pushed messages");
  check(got.join(",") === Array.from({ length: 20 }, (_, i) => i + 1).join(","), `pushed in order: ${got}`);

  // A deliver group: two queue subscribers share the messages, each delivered once.
  const groupSubject = createInbox();
  const counts = [0, 0];
  const seen = new Set();
  let total = 0;
  const shared = new Promise((resolve) => {
    for (const member of [0, 1]) {
      nc.subscribe(groupSubject, {
        queue: "workers",
        callback: (err, m) => {
          if (err || !m.reply) return;
          const n = sc.decode(m.data);
          check(!seen.has(n), `${n} delivered twice`);
          seen.add(n);
          counts[member]++;
          m.respond();
          if (++total === 20) resolve();
        },
      });
    }
  });
  await within(nc.flush(), "flush group");
  await within(jsm.consumers.add(stream, { durable_name: "GROUP", deliver_subject: groupSubject, deliver_group: "workers", ack_policy: AckPolicy.Explicit }), "create group consumer");
  await within(shared, "20 messages over the group");
  check(counts[0] + counts[1] === 20 && counts[0] > 0 && counts[1] > 0, `group split ${counts}`);

  await within(jsm.streams.delete(stream), "delete stream");
  await nc.close();
});

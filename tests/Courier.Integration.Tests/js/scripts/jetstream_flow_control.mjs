// Push consumer flow control through nats.js: 20,000 messages of 2 KiB (40 MiB, many flow control
// windows) reach an ordered consumer (js.subscribe ordered: flow control, heartbeats, ack none)
// completely and in order without a consumer reset, and reach a durable push consumer with flow
// control and explicit acks, each once. nats.js answers the flow control requests itself.
import { AckPolicy, consumerOpts, createInbox, nanos } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

const COUNT = 20_000;
const SIZE = 2048; // bytes per payload

run("jetstream_flow_control", async () => {
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsfc");
  const stream = p.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name: stream, subjects: [`${p}.>`], storage: "memory" }), "create stream");

  const pending = [];
  for (let i = 1; i <= COUNT; i++) {
    const payload = new Uint8Array(SIZE);
    new DataView(payload.buffer).setUint32(0, i);
    pending.push(js.publish(`${p}.m`, payload));
    if (pending.length === 1000) {
      await within(Promise.all(pending), `publish up to ${i}`);
      pending.length = 0;
    }
  }
  await within(Promise.all(pending), "last publishes");

  // Ordered consumer: every message once, in stream order, each carrying its number.
  const opts = consumerOpts();
  opts.orderedConsumer();
  const sub = await within(js.subscribe(`${p}.>`, opts), "ordered subscribe");
  let n = 0;
  const ordered = (async () => {
    for await (const m of sub) {
      n++;
      check(m.seq === n && m.info.deliverySequence === n, `ordered message ${n} has stream seq ${m.seq}, delivery seq ${m.info.deliverySequence}`);
      check(m.data.length === SIZE && new DataView(m.data.buffer, m.data.byteOffset).getUint32(0) === n, `ordered message ${n} carries the wrong payload`);
      if (n === COUNT) break;
    }
  })();
  await within(ordered, `${COUNT} ordered messages (got ${n})`, 20000);
  const flow = sub.info.flow_control;
  check(flow.fc_count > 0, `the ordered consumer saw no flow control request: ${JSON.stringify(flow)}`);
  check(flow.consumer_restarts === 0, `the ordered consumer was reset: ${JSON.stringify(flow)}`);

  // A durable push consumer with flow control and explicit acks.
  const deliver = createInbox();
  let received = 0;
  let requests = 0;
  const seen = new Uint8Array(COUNT + 1);
  const all = new Promise((resolve, reject) => {
    nc.subscribe(deliver, {
      callback: (err, m) => {
        if (err) return reject(err);
        if (m.headers && m.data.length === 0 && m.headers.code === 100) {
          if (m.headers.description === "FlowControl Request") {
            check(m.reply?.startsWith(`$JS.FC.${stream}.PUSH.`), `flow control reply ${m.reply}`);
            requests++;
            m.respond();
          }
          return;
        }
        const seq = Number(m.reply.split(".")[5]);
        if (seen[seq]) return reject(new Error(`message ${seq} delivered twice`));
        seen[seq] = 1;
        m.respond();
        if (++received === COUNT) resolve();
      },
    });
  });
  await within(nc.flush(), "flush subscription");
  await within(jsm.consumers.add(stream, {
    durable_name: "PUSH",
    deliver_subject: deliver,
    ack_policy: AckPolicy.Explicit,
    max_ack_pending: COUNT,
    flow_control: true,
    idle_heartbeat: nanos(1000),
  }), "create push consumer");
  await within(all, `${COUNT} pushed messages (got ${received})`, 20000);
  check(requests > 0, "no flow control request reached the push subscriber");

  await within(jsm.streams.delete(stream), "delete stream");
  await nc.close();
});

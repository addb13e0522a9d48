// Consumer creation rules through nats.js, with nats-server's error codes and texts: a work-queue
// stream takes only explicit-ack, deliver-all consumers whose filters do not collide (one
// unfiltered consumer at most); term removes a work-queue message as an ack does; flow control
// and heartbeats need a push consumer, flow control needs heartbeats, and the other push/pull
// option checks.
import { AckPolicy, RetentionPolicy, StringCodec, createInbox, nanos } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

run("jetstream_consumer_rules", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsr");
  const name = (s) => `${p}_${s}`.replaceAll(".", "_").toUpperCase();

  const refused = async (stream, config, code, description) => {
    let error;
    try {
      await jsm.consumers.add(stream, config);
    } catch (e) {
      error = e.api_error;
    }
    check(error !== undefined, `${JSON.stringify(config)} was accepted; expected ${code} ${description}`);
    check(error.err_code === code && error.code === 400 && error.description === description,
      `${JSON.stringify(config)}: got ${JSON.stringify(error)}; expected ${code} ${description}`);
  };
  const accepted = async (stream, config) => {
    const info = await within(jsm.consumers.add(stream, config), `create ${JSON.stringify(config)}`);
    check(info.name === (config.durable_name ?? info.name), `created ${info.name}`);
    return info;
  };

  // Work queue.
  const wq = name("wq");
  await within(jsm.streams.add({ name: wq, subjects: [`${p}.wq.>`], retention: RetentionPolicy.Workqueue }), "create wq");
  await refused(wq, { durable_name: "a", ack_policy: AckPolicy.None }, 10084, "consumer in pull mode requires ack policy");
  await refused(wq, { durable_name: "a", ack_policy: AckPolicy.All }, 10098, "workqueue stream requires explicit ack");
  await refused(wq, { durable_name: "a", ack_policy: AckPolicy.None, deliver_subject: createInbox() }, 10098, "workqueue stream requires explicit ack");
  await refused(wq, { durable_name: "a", ack_policy: AckPolicy.Explicit, deliver_policy: "new" }, 10101, "consumer must be deliver all on workqueue stream");
  await accepted(wq, { durable_name: "foo", ack_policy: AckPolicy.Explicit, filter_subject: `${p}.wq.foo.*` });
  await refused(wq, { durable_name: "all", ack_policy: AckPolicy.Explicit }, 10099, "multiple non-filtered consumers not allowed on workqueue stream");
  await refused(wq, { durable_name: "foobar", ack_policy: AckPolicy.Explicit, filter_subject: `${p}.wq.foo.bar` }, 10100, "filtered consumer not unique on workqueue stream");
  await refused(wq, { durable_name: "any", ack_policy: AckPolicy.Explicit, filter_subject: `${p}.wq.>` }, 10100, "filtered consumer not unique on workqueue stream");
  await accepted(wq, { durable_name: "bar", ack_policy: AckPolicy.Explicit, filter_subject: `${p}.wq.bar` });
  await accepted(wq, { durable_name: "baz", ack_policy: AckPolicy.Explicit, filter_subject: `${p}.wq.baz`, deliver_subject: createInbox() });
  await accepted(wq, { durable_name: "bar", ack_policy: AckPolicy.Explicit, filter_subject: `${p}.wq.bar` }); // the same again: fine
  await refused(wq, { ack_policy: AckPolicy.Explicit, filter_subject: `${p}.wq.qux`, deliver_policy: "new" }, 10101, "consumer must be deliver all on workqueue stream");

  // Term takes a work-queue message away as an ack does; a nak keeps it.
  for (let i = 0; i < 3; i++) await within(js.publish(`${p}.wq.bar`, sc.encode(`job${i}`)), `publish job ${i}`);
  const bar = await within(js.consumers.get(wq, "bar"), "get bar");
  const jobs = await within(bar.fetch({ max_messages: 3, expires: 2000 }), "fetch jobs");
  const seen = [];
  for await (const m of jobs) {
    seen.push(m.seq);
    if (m.seq === 1) m.term();
    else if (m.seq === 2) m.nak(5_000);
    else await within(m.ackAck(), "ack job 3");
  }
  check(seen.join(",") === "1,2,3", `jobs ${seen}`);
  let state;
  for (let i = 0; i < 100; i++) {
    state = (await within(jsm.streams.info(wq), "wq info")).state;
    if (state.messages === 1) break;
    await sleep(50);
  }
  check(state.messages === 1 && state.first_seq === 2, `after term, nak, ack: ${state.messages} messages from ${state.first_seq}`);

  // Push and pull option rules (a limits stream).
  const lim = name("lim");
  await within(jsm.streams.add({ name: lim, subjects: [`${p}.lim.>`] }), "create lim");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, flow_control: true }, 10089, "consumer flow control requires a push based consumer");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, flow_control: true, deliver_subject: createInbox() }, 10108, "consumer with flow control also needs heartbeats");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, idle_heartbeat: nanos(1000) }, 10088, "consumer idle heartbeat requires a push based consumer");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, max_waiting: 5, deliver_subject: createInbox() }, 10080, "consumer in push mode can not set max waiting");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, idle_heartbeat: nanos(50), deliver_subject: createInbox() }, 10083, "consumer idle heartbeat needs to be >= 100ms");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.None, max_ack_pending: 5, deliver_subject: createInbox() }, 10082, "consumer requires ack policy for max ack pending");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, max_batch: -1 }, 10114, "consumer max request batch needs to be > 0");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, max_expires: 1000 }, 10115, "consumer max request expires needs to be >= 1ms");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, max_waiting: -1 }, 10087, "consumer max waiting needs to be positive");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, deliver_subject: "a.*" }, 10079, "consumer deliver subject has wildcards");
  await refused(lim, { durable_name: "x", ack_policy: AckPolicy.Explicit, deliver_subject: `${p}.lim.loop` }, 10081, "consumer deliver subject forms a cycle");

  // Defaults nats-server fills in: a pull consumer queues up to 512 requests.
  const pull = await accepted(lim, { durable_name: "pull", ack_policy: AckPolicy.Explicit });
  check(pull.config.max_waiting === 512, `pull max_waiting ${pull.config.max_waiting}`);
  const push = await accepted(lim, { durable_name: "push", ack_policy: AckPolicy.Explicit, flow_control: true, idle_heartbeat: nanos(1000), deliver_subject: createInbox() });
  check(push.config.flow_control === true && push.config.idle_heartbeat === nanos(1000) && !push.config.max_waiting, `push config ${JSON.stringify(push.config)}`);

  // Interest streams take any of these.
  const interest = name("int");
  await within(jsm.streams.add({ name: interest, subjects: [`${p}.int.>`], retention: RetentionPolicy.Interest }), "create interest");
  await accepted(interest, { durable_name: "none", ack_policy: AckPolicy.None });
  await accepted(interest, { durable_name: "all", ack_policy: AckPolicy.All });
  await accepted(interest, { durable_name: "new", ack_policy: AckPolicy.Explicit, deliver_policy: "new" });
  await accepted(interest, { durable_name: "more", ack_policy: AckPolicy.Explicit });

  for (const s of [wq, lim, interest]) await within(jsm.streams.delete(s), `delete ${s}`);
  await nc.close();
});

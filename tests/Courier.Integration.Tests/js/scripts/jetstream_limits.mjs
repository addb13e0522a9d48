// Stream policies through nats.js: work-queue retention, max_age expiry, discard new at
// max_msgs, max_msgs_per_subject, Nats-Msg-Id dedupe, expected-last-sequence checks.
import { AckPolicy, DiscardPolicy, RetentionPolicy, StringCodec, headers } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

run("jetstream_limits", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsl");
  const name = (s) => `${p}_${s}`.replaceAll(".", "_").toUpperCase();

  // Work queue: an acknowledged message leaves the stream.
  await within(jsm.streams.add({ name: name("wq"), subjects: [`${p}.wq`], retention: RetentionPolicy.Workqueue }), "create wq");
  for (let i = 0; i < 3; i++) await within(js.publish(`${p}.wq`, sc.encode(`w${i}`)), `wq publish ${i}`);
  await within(jsm.consumers.add(name("wq"), { durable_name: "W", ack_policy: AckPolicy.Explicit }), "wq consumer");
  const worker = await within(js.consumers.get(name("wq"), "W"), "get W");
  const jobs = await within(worker.fetch({ max_messages: 2, expires: 5000 }), "fetch jobs");
  for await (const m of jobs) await within(m.ackAck(), `ack job ${m.seq}`);
  const wq = (await within(jsm.streams.info(name("wq")), "wq info")).state;
  check(wq.messages === 1, `work queue holds ${wq.messages} after 2 of 3 acked`);

  // max_age: messages expire.
  await within(jsm.streams.add({ name: name("age"), subjects: [`${p}.age`], max_age: 1_000_000_000 }), "create age");
  await within(js.publish(`${p}.age`, sc.encode("old")), "age publish");
  await sleep(2500);
  const age = (await within(jsm.streams.info(name("age")), "age info")).state;
  check(age.messages === 0, `${age.messages} messages left past max_age`);

  // Discard new at max_msgs: the third publish is refused.
  await within(jsm.streams.add({ name: name("full"), subjects: [`${p}.full`], max_msgs: 2, discard: DiscardPolicy.New }), "create full");
  await within(js.publish(`${p}.full`, sc.encode("1")), "full 1");
  await within(js.publish(`${p}.full`, sc.encode("2")), "full 2");
  let refused = false;
  try {
    await js.publish(`${p}.full`, sc.encode("3"));
  } catch (e) {
    refused = /maximum messages|503/i.test(String(e.message) + String(e.code));
  }
  check(refused, "a publish past max_msgs with discard new is refused");

  // max_msgs_per_subject: only the newest per subject is kept.
  await within(jsm.streams.add({ name: name("per"), subjects: [`${p}.per.*`], max_msgs_per_subject: 1 }), "create per");
  for (const v of ["a", "b", "c"]) await within(js.publish(`${p}.per.x`, sc.encode(v)), `per ${v}`);
  await within(js.publish(`${p}.per.y`, sc.encode("y")), "per y");
  const per = (await within(jsm.streams.info(name("per")), "per info")).state;
  check(per.messages === 2, `${per.messages} messages with one per subject`);

  // Dedupe and expectations.
  await within(jsm.streams.add({ name: name("dd"), subjects: [`${p}.dd`] }), "create dd");
  const a1 = await within(js.publish(`${p}.dd`, sc.encode("x"), { msgID: "id-1" }), "dd first");
  const a2 = await within(js.publish(`${p}.dd`, sc.encode("x"), { msgID: "id-1" }), "dd again");
  check(!a1.duplicate && a2.duplicate && a2.seq === a1.seq, `dedupe: ${JSON.stringify(a1)} then ${JSON.stringify(a2)}`);
  let wrong = false;
  try {
    await js.publish(`${p}.dd`, sc.encode("y"), { expect: { lastSequence: 99 } });
  } catch (e) {
    wrong = /wrong last sequence/i.test(String(e.message));
  }
  check(wrong, "a wrong expected last sequence is refused");
  const ok = await within(js.publish(`${p}.dd`, sc.encode("z"), { expect: { lastSequence: a1.seq, streamName: name("dd") } }), "right expectation");
  check(ok.seq === a1.seq + 1, `expected publish got seq ${ok.seq}`);

  for (const s of ["wq", "age", "full", "per", "dd"]) await within(jsm.streams.delete(name(s)), `delete ${s}`);
  await nc.close();
});

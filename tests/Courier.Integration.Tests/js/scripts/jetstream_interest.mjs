// Interest retention through nats.js: a message stays while a consumer whose filter matches it has
// not acknowledged it, and goes once the last of them has; with no consumer (or none whose filter
// matches) a published message takes its sequence but is not kept; ack none consumers release what
// they were sent; ack all releases everything below; term counts as an ack; deleting a consumer
// drops what only it still needed. The stream state (messages, first and last sequence) is compared
// after each step.
import { AckPolicy, DeliverPolicy, RetentionPolicy, StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

run("jetstream_interest", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsi");
  const stream = p.replaceAll(".", "_").toUpperCase();

  // Acks are processed asynchronously by both servers: poll the state until it is as expected.
  const expectState = async (what, messages, first, last) => {
    let s;
    for (let i = 0; i < 100; i++) {
      s = (await within(jsm.streams.info(stream), `info: ${what}`)).state;
      if (s.messages === messages && s.first_seq === first && s.last_seq === last) return;
      await sleep(50);
    }
    check(false, `${what}: messages ${s.messages}, first ${s.first_seq}, last ${s.last_seq}; expected ${messages}, ${first}, ${last}`);
  };
  const fetch = async (name, count) => {
    const consumer = await within(js.consumers.get(stream, name), `get ${name}`);
    const batch = await within(consumer.fetch({ max_messages: count, expires: 2000 }), `fetch ${count} from ${name}`);
    const got = [];
    for await (const m of batch) got.push(m);
    return got;
  };
  const publish = async (subject, n) => {
    for (let i = 0; i < n; i++) await within(js.publish(`${p}.${subject}`, sc.encode(subject)), `publish ${subject}`);
  };

  await within(jsm.streams.add({ name: stream, subjects: [`${p}.>`], retention: RetentionPolicy.Interest }), "create stream");

  // No consumers: the messages get sequences and PubAcks but are not kept.
  const ack = await within(js.publish(`${p}.a`, sc.encode("nobody")), "publish to nobody");
  check(ack.seq === 1 && !ack.duplicate, `puback ${JSON.stringify(ack)}`);
  await publish("a", 2);
  await expectState("no consumers", 0, 4, 3);

  // A takes everything, B only .b: each message is kept for whoever's filter matches it.
  await within(jsm.consumers.add(stream, { durable_name: "A", ack_policy: AckPolicy.Explicit }), "consumer A");
  await within(jsm.consumers.add(stream, { durable_name: "B", ack_policy: AckPolicy.Explicit, filter_subject: `${p}.b` }), "consumer B");
  await publish("a", 3); // 4..6
  await publish("b", 3); // 7..9
  await publish("c", 1); // 10
  await expectState("3 a, 3 b, 1 c", 7, 4, 10);

  // A acknowledges 4..7: the .a ones go, 7 (.b) stays for B.
  const a1 = await fetch("A", 4);
  check(a1.map((m) => m.seq).join(",") === "4,5,6,7", `A got ${a1.map((m) => m.seq)}`);
  for (const m of a1) await within(m.ackAck(), `A acks ${m.seq}`);
  await expectState("A acked 4..7", 4, 7, 10);

  // Both consumers get the .b messages; B acknowledges 7 and 8: 7 goes (A acked it), 8 stays for A.
  const b1 = await fetch("B", 2);
  check(b1.map((m) => m.seq).join(",") === "7,8", `B got ${b1.map((m) => m.seq)}`);
  for (const m of b1) await within(m.ackAck(), `B acks ${m.seq}`);
  await expectState("B acked 7, 8", 3, 8, 10);

  // Term counts as an acknowledgement: A terms 8.
  const a2 = await fetch("A", 1);
  check(a2.length === 1 && a2[0].seq === 8, `A got ${a2.map((m) => m.seq)}`);
  a2[0].term();
  await expectState("A termed 8", 2, 9, 10);

  // An ack none consumer (deliver new) releases what it is sent; A still needs 11, so it stays.
  await within(jsm.consumers.add(stream, { durable_name: "N", ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.New }), "consumer N");
  await publish("a", 1); // 11
  await expectState("N created, one more", 3, 9, 11);
  const n1 = await fetch("N", 5);
  check(n1.map((m) => m.seq).join(",") === "11", `N got ${n1.map((m) => m.seq)}`);
  await sleep(200);
  await expectState("N got 11", 3, 9, 11);

  // Deleting B changes nothing (A needs 9, 10, 11); deleting A drops everything (N has 11).
  check(await within(jsm.consumers.delete(stream, "B"), "delete B"), "delete B failed");
  await expectState("B deleted", 3, 9, 11);
  check(await within(jsm.consumers.delete(stream, "A"), "delete A"), "delete A failed");
  await expectState("A deleted", 0, 12, 11);

  // Only a filtered consumer: what its filter does not match is not kept.
  check(await within(jsm.consumers.delete(stream, "N"), "delete N"), "delete N failed");
  await within(jsm.consumers.add(stream, { durable_name: "F", ack_policy: AckPolicy.All, filter_subject: `${p}.f` }), "consumer F");
  await publish("x", 1); // 12, not kept
  await publish("f", 3); // 13..15
  await expectState("only .f kept", 3, 13, 15);

  // Ack all: acknowledging the last of a batch releases the batch.
  const f1 = await fetch("F", 3);
  check(f1.map((m) => m.seq).join(",") === "13,14,15", `F got ${f1.map((m) => m.seq)}`);
  await within(f1[2].ackAck(), "F acks 15");
  await expectState("F acked all", 0, 16, 15);

  await within(jsm.streams.delete(stream), "delete stream");
  await nc.close();
});

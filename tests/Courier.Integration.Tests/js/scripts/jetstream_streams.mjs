// JetStream streams through nats.js's JetStream manager and publisher: create (file and memory),
// publish with acknowledgements, stream info, get by sequence and last by subject, purge with a
// filter, delete a message, list and names, delete the stream.
import { StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_streams", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager (account info)");
  const js = nc.jetstream();
  const prefix = uniquePrefix("jss").replaceAll(".", "_");

  for (const storage of ["file", "memory"]) {
    const name = `${prefix}_${storage}`.toUpperCase();
    const subject = `${prefix}.${storage}`;
    const info = await within(jsm.streams.add({ name, subjects: [`${subject}.>`], storage }), `create ${name}`);
    check(info.config.name === name, `created stream is '${info.config.name}'`);
    check(info.state.messages === 0, `new stream has ${info.state.messages} messages`);

    for (let i = 1; i <= 20; i++) {
      const ack = await within(js.publish(`${subject}.${i % 2 === 0 ? "even" : "odd"}`, sc.encode(`m${i}`)), `ack ${i}`);
      check(ack.stream === name, `ack ${i} names stream '${ack.stream}'`);
      check(ack.seq === i, `ack ${i} has seq ${ack.seq}`);
      check(!ack.duplicate, `ack ${i} is a duplicate`);
    }

    const state = (await within(jsm.streams.info(name), "stream info")).state;
    check(state.messages === 20, `stream holds ${state.messages} messages`);
    check(state.first_seq === 1 && state.last_seq === 20, `sequences ${state.first_seq}..${state.last_seq}`);

    const seven = await within(jsm.streams.getMessage(name, { seq: 7 }), "get seq 7");
    check(seven.subject === `${subject}.odd` && sc.decode(seven.data) === "m7", `seq 7 is ${seven.subject} '${sc.decode(seven.data)}'`);
    const lastEven = await within(jsm.streams.getMessage(name, { last_by_subj: `${subject}.even` }), "last even");
    check(lastEven.seq === 20, `last even is seq ${lastEven.seq}`);

    let missing = false;
    try {
      await jsm.streams.getMessage(name, { seq: 999 });
    } catch (e) {
      missing = /no message found/i.test(String(e.message));
    }
    check(missing, "getting a missing sequence fails with 'no message found'");

    check(await within(jsm.streams.deleteMessage(name, 3), "delete seq 3"), "deleting seq 3 failed");
    const purge = await within(jsm.streams.purge(name, { filter: `${subject}.even` }), "purge evens");
    check(purge.success && purge.purged === 10, `purged ${purge.purged} evens`);
    const after = (await within(jsm.streams.info(name), "info after purge")).state;
    check(after.messages === 9, `after deleting one odd and purging the evens ${after.messages} remain`);

    const next = await within(js.publish(`${subject}.odd`, sc.encode("after")), "ack after purge");
    check(next.seq === 21, `the sequence continues at ${next.seq}`);
  }

  const names = [];
  for await (const n of jsm.streams.names()) names.push(n);
  check(names.includes(`${prefix}_FILE`.toUpperCase()) && names.includes(`${prefix}_MEMORY`.toUpperCase()), `names: ${names}`);
  const listed = await jsm.streams.list().next();
  check(listed.some((s) => s.config.name === `${prefix}_FILE`.toUpperCase()), "list has the file stream");

  let overlap = false;
  try {
    await jsm.streams.add({ name: `${prefix}_OVERLAP`.toUpperCase(), subjects: [`${prefix}.file.>`] });
  } catch (e) {
    overlap = /overlap/i.test(String(e.message));
  }
  check(overlap, "a stream over another stream's subjects is refused");

  for (const storage of ["file", "memory"]) {
    const name = `${prefix}_${storage}`.toUpperCase();
    check(await within(jsm.streams.delete(name), `delete ${name}`), `delete ${name} failed`);
  }

  let gone = false;
  try {
    await jsm.streams.info(`${prefix}_FILE`.toUpperCase());
  } catch (e) {
    gone = /stream not found/i.test(String(e.message));
  }
  check(gone, "a deleted stream is not found");
  await nc.close();
});

// STREAM.UPDATE through nats.js: add a subject and a limit to a live stream; changing the
// storage type is refused.
import { StorageType, StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_update", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsu");
  const name = p.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name, subjects: [`${p}.a`] }), "create");
  await within(js.publish(`${p}.a`, sc.encode("1")), "publish a");

  const updated = await within(jsm.streams.update(name, { subjects: [`${p}.a`, `${p}.b`], max_msgs: 5 }), "update");
  check(updated.config.subjects.includes(`${p}.b`) && updated.config.max_msgs === 5, `updated config ${JSON.stringify(updated.config.subjects)} max ${updated.config.max_msgs}`);
  for (let i = 0; i < 10; i++) await within(js.publish(`${p}.b`, sc.encode(`b${i}`)), `publish b ${i}`);
  const state = (await within(jsm.streams.info(name), "info")).state;
  check(state.messages === 5 && state.last_seq === 11, `after the update: ${state.messages} messages, last ${state.last_seq}`);

  let refused = false;
  try {
    await jsm.streams.update(name, { storage: StorageType.Memory });
  } catch (e) {
    refused = /storage/i.test(String(e.message)) || /500|400/.test(String(e.code));
  }
  check(refused, "changing the storage type is refused");
  await within(jsm.streams.delete(name), "delete");
  await nc.close();
});

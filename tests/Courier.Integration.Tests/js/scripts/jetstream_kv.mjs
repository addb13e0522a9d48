// Key-value buckets through nats.js's KV (client-side on a stream): put, get, create (only if
// absent), update (only from the expected revision), delete, purge, keys, history, watch.
import { StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_kv", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const js = nc.jetstream();
  const bucket = uniquePrefix("kv").replaceAll(".", "_");
  const kv = await within(js.views.kv(bucket, { history: 5 }), "create bucket");

  const r1 = await within(kv.put("colour", sc.encode("red")), "put colour");
  const r2 = await within(kv.put("shape", sc.encode("circle")), "put shape");
  check(r2 === r1 + 1, `revisions ${r1}, ${r2}`);
  const colour = await within(kv.get("colour"), "get colour");
  check(colour && sc.decode(colour.value) === "red" && colour.revision === r1, `colour is ${colour && sc.decode(colour.value)}@${colour?.revision}`);
  check((await within(kv.get("missing"), "get missing")) === null, "a missing key is null");

  let refused = false;
  try {
    await kv.create("colour", sc.encode("blue"));
  } catch {
    refused = true;
  }
  check(refused, "create over an existing key is refused");
  const r3 = await within(kv.create("size", sc.encode("large")), "create size");

  const r4 = await within(kv.update("colour", sc.encode("green"), r1), "update colour from r1");
  let stale = false;
  try {
    await kv.update("colour", sc.encode("blue"), r1);
  } catch {
    stale = true;
  }
  check(stale, "update from a stale revision is refused");
  check(sc.decode((await kv.get("colour")).value) === "green", "colour is green");

  const history = [];
  for await (const e of await within(kv.history({ key: "colour" }), "history")) history.push(`${sc.decode(e.value)}@${e.revision}`);
  check(history.join(",") === `red@${r1},green@${r4}`, `history ${history}`);

  await within(kv.delete("shape"), "delete shape");
  const deleted = await within(kv.get("shape"), "get deleted");
  check(deleted === null || deleted.operation === "DEL", `deleted shape reads as ${deleted?.operation}`);

  const keys = [];
  for await (const k of await within(kv.keys(), "keys")) keys.push(k);
  keys.sort();
  check(keys.join(",") === "colour,size", `keys ${keys} (r3 ${r3})`);

  const seen = [];
  const watch = await within(kv.watch({ key: "colour" }), "watch");
  const done = (async () => {
    for await (const e of watch) {
      seen.push(sc.decode(e.value));
      if (seen.length === 2) break;
    }
  })();
  await within(kv.put("colour", sc.encode("purple")), "put while watching");
  await within(done, "watch updates");
  check(seen.join(",") === "green,purple", `watch saw ${seen}`);

  await within(kv.purge("colour"), "purge colour");
  const purged = await within(kv.get("colour"), "get purged");
  check(purged === null || purged.operation === "PURGE", `purged colour reads as ${purged?.operation}`);
  await nc.close();
});

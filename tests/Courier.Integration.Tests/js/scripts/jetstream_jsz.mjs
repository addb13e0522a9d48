// /jsz and /healthz?js-enabled-only=true reflect JetStream usage (MONITOR_URL in the environment).
import { StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_jsz", async () => {
  const monitor = process.env.MONITOR_URL;
  check(monitor, "MONITOR_URL is not set");
  const jsz = async () => (await within(fetch(new URL("/jsz", monitor)), "GET /jsz")).json();
  const health = await within(fetch(new URL("/healthz?js-enabled-only=true", monitor)), "GET /healthz");
  check(health.status === 200, `/healthz?js-enabled-only=true answered ${health.status}`);

  const before = await jsz();
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const p = uniquePrefix("jsz");
  const name = p.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name, subjects: [`${p}.>`] }), "create stream");
  for (let i = 0; i < 5; i++) await within(nc.jetstream().publish(`${p}.x`, sc.encode("12345")), `publish ${i}`);
  await within(jsm.consumers.add(name, { durable_name: "J" }), "create consumer");

  const after = await jsz();
  check(after.streams === before.streams + 1, `streams ${before.streams} -> ${after.streams}`);
  check(after.consumers === before.consumers + 1, `consumers ${before.consumers} -> ${after.consumers}`);
  check(after.messages === before.messages + 5, `messages ${before.messages} -> ${after.messages}`);
  check(after.bytes > before.bytes && after.storage > before.storage, `bytes ${before.bytes} -> ${after.bytes}, storage ${before.storage} -> ${after.storage}`);
  check(typeof after.config?.store_dir === "string" && after.config.store_dir.length > 0, `store_dir ${after.config?.store_dir}`);
  check(after.api.total > before.api.total, `api total ${before.api.total} -> ${after.api.total}`);
  await within(jsm.streams.delete(name), "delete stream");
  await nc.close();
});

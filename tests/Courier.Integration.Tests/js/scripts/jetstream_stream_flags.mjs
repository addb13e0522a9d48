// Stream flags through nats.js: max_msg_size, deny_delete, deny_purge, sealed, allow_rollup_hdrs
// (Nats-Rollup: sub and all), allow_direct (direct get by sequence and last by subject), and the
// API errors each refusal carries (code and err_code, as nats-server sends them).
import { StringCodec, headers } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

// The JetStream API error a call is refused with, as { code, err_code }, or null when it succeeds.
async function refusal(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    const api = e.api_error ?? {};
    return { code: api.code ?? e.code, err_code: api.err_code, text: String(e.message) };
  }
}

run("jetstream_stream_flags", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsf");
  const name = (s) => `${p}_${s}`.replaceAll(".", "_").toUpperCase();

  // max_msg_size: a larger message is refused with 10054, a message at the limit is stored.
  await within(jsm.streams.add({ name: name("size"), subjects: [`${p}.size`], max_msg_size: 16 }), "create size");
  await within(js.publish(`${p}.size`, sc.encode("x".repeat(16))), "16 bytes");
  const tooBig = await refusal(js.publish(`${p}.size`, sc.encode("x".repeat(17))));
  check(tooBig !== null && tooBig.err_code === 10054, `17 bytes refused with ${JSON.stringify(tooBig)}`);
  check((await jsm.streams.info(name("size"))).state.messages === 1, "only the message at the limit is stored");

  // deny_delete and deny_purge.
  await within(jsm.streams.add({ name: name("deny"), subjects: [`${p}.deny`], deny_delete: true, deny_purge: true }), "create deny");
  await within(js.publish(`${p}.deny`, sc.encode("keep")), "deny publish");
  const deleteRefused = await refusal(jsm.streams.deleteMessage(name("deny"), 1));
  check(deleteRefused !== null && deleteRefused.err_code === 10057 && deleteRefused.code === 500, `message delete refused with ${JSON.stringify(deleteRefused)}`);
  const purgeRefused = await refusal(jsm.streams.purge(name("deny")));
  check(purgeRefused !== null && purgeRefused.err_code === 10110 && purgeRefused.code === 500, `purge refused with ${JSON.stringify(purgeRefused)}`);
  check((await jsm.streams.info(name("deny"))).state.messages === 1, "the denied stream still holds its message");

  // sealed: an update seals the stream; then publishes, deletes and purges are refused.
  const sealedConfig = { name: name("seal"), subjects: [`${p}.seal`] };
  await within(jsm.streams.add(sealedConfig), "create seal");
  await within(js.publish(`${p}.seal`, sc.encode("before")), "publish before sealing");
  const sealed = await within(jsm.streams.update(name("seal"), { ...sealedConfig, sealed: true }), "seal");
  check(sealed.config.sealed === true, "the update reports sealed");
  check(sealed.config.deny_delete === true && sealed.config.deny_purge === true, `a sealed stream denies delete ${sealed.config.deny_delete} and purge ${sealed.config.deny_purge}`);
  const afterSeal = await refusal(js.publish(`${p}.seal`, sc.encode("after")));
  check(afterSeal !== null, "a publish to a sealed stream is refused");
  const unseal = await refusal(jsm.streams.update(name("seal"), { ...sealedConfig, sealed: false }));
  check(unseal !== null, "a sealed stream cannot be unsealed");
  check((await jsm.streams.info(name("seal"))).state.messages === 1, "the sealed stream keeps its message");

  // Nats-Rollup: refused without allow_rollup_hdrs; with it, "sub" keeps the subject's last, "all" the stream's last.
  await within(jsm.streams.add({ name: name("norollup"), subjects: [`${p}.norollup`] }), "create norollup");
  const rollupHeaders = (kind) => {
    const h = headers();
    h.set("Nats-Rollup", kind);
    return h;
  };
  const rollupRefused = await refusal(js.publish(`${p}.norollup`, sc.encode("r"), { headers: rollupHeaders("sub") }));
  check(rollupRefused !== null && rollupRefused.err_code === 10111 && rollupRefused.code === 500, `rollup without allow_rollup_hdrs refused with ${JSON.stringify(rollupRefused)}`);
  await within(jsm.streams.add({ name: name("rollup"), subjects: [`${p}.rollup.*`], allow_rollup_hdrs: true }), "create rollup");
  for (let i = 0; i < 3; i++) {
    await within(js.publish(`${p}.rollup.a`, sc.encode(`a${i}`)), `a${i}`);
    await within(js.publish(`${p}.rollup.b`, sc.encode(`b${i}`)), `b${i}`);
  }

  await within(js.publish(`${p}.rollup.a`, sc.encode("a-rolled"), { headers: rollupHeaders("sub") }), "rollup sub");
  const afterSub = (await jsm.streams.info(name("rollup"))).state;
  check(afterSub.messages === 4, `after a subject rollup the stream holds ${afterSub.messages} (3 b + 1 a)`);
  await within(js.publish(`${p}.rollup.b`, sc.encode("all-rolled"), { headers: rollupHeaders("all") }), "rollup all");
  const afterAll = (await jsm.streams.info(name("rollup"))).state;
  check(afterAll.messages === 1 && afterAll.first_seq === 8, `after a stream rollup: ${afterAll.messages} message, first ${afterAll.first_seq}`);

  // allow_direct: direct gets by sequence and last by subject, answered by the stream itself.
  await within(jsm.streams.add({ name: name("direct"), subjects: [`${p}.direct.*`], allow_direct: true }), "create direct");
  for (let i = 1; i <= 4; i++) await within(js.publish(`${p}.direct.${i % 2 ? "odd" : "even"}`, sc.encode(`d${i}`)), `direct ${i}`);
  const bySeq = await within(jsm.direct.getMessage(name("direct"), { seq: 3 }), "direct seq 3");
  check(bySeq.seq === 3 && sc.decode(bySeq.data) === "d3" && bySeq.subject === `${p}.direct.odd`, `direct seq 3 is ${bySeq.seq} ${bySeq.subject}`);
  const lastEven = await within(jsm.direct.getMessage(name("direct"), { last_by_subj: `${p}.direct.even` }), "direct last even");
  check(lastEven.seq === 4 && sc.decode(lastEven.data) === "d4", `direct last even is ${lastEven.seq}`);
  const nextOdd = await within(jsm.direct.getMessage(name("direct"), { seq: 2, next_by_subj: `${p}.direct.odd` }), "direct next odd");
  check(nextOdd.seq === 3, `direct next odd from 2 is ${nextOdd.seq}`);
  const missing = await refusal(jsm.direct.getMessage(name("direct"), { seq: 99 }));
  check(missing !== null, "a direct get past the end is refused");

  await nc.close();
});

// DIRECT.GET batches through nats.js (nats-server 2.11's batch direct get; 2.9.10 has none of it):
// jsm.direct.getBatch with multi_last (the last message of every matching subject, as of up_to_seq),
// and a plain batch from a sequence through requestMany with the sentinel strategy: each message
// carries Nats-Num-Pending and Nats-Last-Sequence, and the batch ends with an empty 204 EOB.
import { RequestStrategy, StringCodec } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

run("jetstream_direct_batch", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jdb");
  const stream = `${p}_S`.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name: stream, subjects: [`${p}.>`], allow_direct: true }), "create");
  for (const [s, v] of [["a.1", "v1"], ["a.2", "v2"], ["b.1", "v3"], ["a.1", "v4"], ["b.2", "v5"], ["c", "v6"]]) {
    await within(js.publish(`${p}.${s}`, sc.encode(v)), `publish ${s}`);
  }

  const collect = async (iter) => {
    const got = [];
    for await (const m of iter) {
      got.push([m.subject.slice(p.length + 1), m.seq, sc.decode(m.data)]);
    }
    return JSON.stringify(got);
  };

  // The last of every subject under a.> and b.>, in sequence order.
  const all = await collect(await within(jsm.direct.getBatch(stream, { multi_last: [`${p}.a.>`, `${p}.b.>`] }), "multi_last"));
  check(all === JSON.stringify([["a.2", 2, "v2"], ["b.1", 3, "v3"], ["a.1", 4, "v4"], ["b.2", 5, "v5"]]), `multi_last: ${all}`);

  // As of sequence 3: a.1 was then v1, b.2 did not exist yet.
  const asOf = await collect(await within(jsm.direct.getBatch(stream, { multi_last: [`${p}.a.>`, `${p}.b.>`], up_to_seq: 3 }), "multi_last up_to_seq"));
  check(asOf === JSON.stringify([["a.1", 1, "v1"], ["a.2", 2, "v2"], ["b.1", 3, "v3"]]), `multi_last up_to_seq 3: ${asOf}`);

  // At most two of them.
  const two = await collect(await within(jsm.direct.getBatch(stream, { multi_last: [`${p}.>`], batch: 2 }), "multi_last batch"));
  check(two === JSON.stringify([["a.2", 2, "v2"], ["b.1", 3, "v3"]]), `multi_last batch 2: ${two}`);

  // A plain batch of three from sequence 2, then EOB with what is left.
  const replies = await within(nc.requestMany(`$JS.API.DIRECT.GET.${stream}`, JSON.stringify({ seq: 2, batch: 3 }), { strategy: RequestStrategy.SentinelMsg, maxWait: 5000 }), "batch request");
  const batch = [];
  let eob = null;
  for await (const m of replies) {
    if (m.data.length === 0) {
      eob = m;
      break;
    }
    batch.push([Number(m.headers.get("Nats-Sequence")), m.headers.get("Nats-Num-Pending"), m.headers.get("Nats-Last-Sequence"), sc.decode(m.data)]);
  }
  check(JSON.stringify(batch) === JSON.stringify([[2, "5", "0", "v2"], [3, "4", "2", "v3"], [4, "3", "3", "v4"]]), `batch: ${JSON.stringify(batch)}`);
  check(eob !== null && eob.headers.code === 204 && eob.headers.description === "EOB", `EOB status ${eob?.headers?.code} ${eob?.headers?.description}`);
  check(eob.headers.get("Nats-Num-Pending") === "2" && eob.headers.get("Nats-Last-Sequence") === "4", `EOB pending ${eob.headers.get("Nats-Num-Pending")} last ${eob.headers.get("Nats-Last-Sequence")}`);

  // A batch filtered by a wildcard subject.
  const filtered = await within(nc.requestMany(`$JS.API.DIRECT.GET.${stream}`, JSON.stringify({ seq: 1, next_by_subj: `${p}.b.*`, batch: 10 }), { strategy: RequestStrategy.SentinelMsg, maxWait: 5000 }), "filtered batch");
  const bs = [];
  for await (const m of filtered) {
    if (m.data.length === 0) {
      break;
    }
    bs.push(sc.decode(m.data));
  }
  check(JSON.stringify(bs) === JSON.stringify(["v3", "v5"]), `filtered batch: ${JSON.stringify(bs)}`);

  await nc.close();
});

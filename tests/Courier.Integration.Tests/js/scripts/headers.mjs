// Headers survive the round trip (HPUB -> HMSG), including multi-value keys, and a
// request's headers reach the responder and the reply's headers come back.
import { headers, StringCodec } from "nats";
import { check, connectTo, inbox, run, uniquePrefix, within } from "../lib.mjs";

run("headers", async () => {
  const sc = StringCodec();
  const p = uniquePrefix("hdr");
  const nc = await connectTo();
  const sub = inbox(nc.subscribe(`${p}.data`));
  await within(nc.flush(), "flush");

  const h = headers();
  h.set("X-Trace", "abc-123");
  h.append("X-Multi", "one");
  h.append("X-Multi", "two");
  nc.publish(`${p}.data`, sc.encode("payload"), { headers: h });
  const onlyHeaders = headers();
  onlyHeaders.set("X-Empty-Body", "yes");
  nc.publish(`${p}.data`, undefined, { headers: onlyHeaders });

  const [m1, m2] = await sub.take(2);
  check(m1.headers !== undefined, "first message arrived without headers");
  check(m1.headers.get("X-Trace") === "abc-123", `X-Trace is '${m1.headers.get("X-Trace")}'`);
  check(JSON.stringify(m1.headers.values("X-Multi")) === JSON.stringify(["one", "two"]), `X-Multi is ${JSON.stringify(m1.headers.values("X-Multi"))}`);
  check(sc.decode(m1.data) === "payload", `payload is '${sc.decode(m1.data)}'`);
  check(m2.headers?.get("X-Empty-Body") === "yes" && m2.data.length === 0, "header-only message wrong");

  nc.subscribe(`${p}.svc`, {
    callback: (err, m) => {
      if (err) return;
      const rh = headers();
      rh.set("X-Seen", m.headers?.get("X-Req") ?? "none");
      m.respond(sc.encode("ok"), { headers: rh });
    },
  });
  const reqHeaders = headers();
  reqHeaders.set("X-Req", "42");
  const reply = await within(nc.request(`${p}.svc`, sc.encode("q"), { headers: reqHeaders, timeout: 5000 }), "reply");
  check(reply.headers?.get("X-Seen") === "42", `reply header X-Seen is '${reply.headers?.get("X-Seen")}'`);
  check(sc.decode(reply.data) === "ok", `reply payload is '${sc.decode(reply.data)}'`);
  await nc.close();
});

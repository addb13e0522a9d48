// Over TLS (the server's tls {} block): NATS_TLS_CA is the CA bundle; NATS_TLS_CERT and NATS_TLS_KEY,
// when set, are the client certificate for mutual TLS. Publishes, subscribes and requests over one
// TLS connection each. With NATS_TLS_EXPECT_REFUSED=1 the connection must be refused instead.
import { StringCodec } from "nats";
import { check, connectTo, fail, inbox, run, uniquePrefix, within } from "../lib.mjs";

run("tls", async () => {
  const caFile = process.env.NATS_TLS_CA;
  if (!caFile) fail("set NATS_TLS_CA");
  const tls = { caFile };
  if (process.env.NATS_TLS_CERT) {
    tls.certFile = process.env.NATS_TLS_CERT;
    tls.keyFile = process.env.NATS_TLS_KEY;
  }

  if (process.env.NATS_TLS_EXPECT_REFUSED === "1") {
    let error;
    try {
      const nc = await connectTo({ tls });
      await within(nc.flush(), "flush");
      await nc.close();
    } catch (err) {
      error = err;
    }
    check(error !== undefined, "the connection should have been refused");
    return;
  }

  const sc = StringCodec();
  const prefix = uniquePrefix("tls");
  const subscriber = await connectTo({ tls });
  const publisher = await connectTo({ tls });
  check(subscriber.info?.tls_required === true, `INFO should say tls_required, got ${JSON.stringify(subscriber.info)}`);
  const sub = inbox(subscriber.subscribe(`${prefix}.greet`));
  const service = subscriber.subscribe(`${prefix}.svc`, { callback: (_, m) => m.respond(sc.encode(`re:${sc.decode(m.data)}`)) });
  await within(subscriber.flush(), "subscriber flush");

  for (let i = 0; i < 50; i++) {
    publisher.publish(`${prefix}.greet`, sc.encode(`m${i}`));
  }
  const got = await sub.take(50);
  got.forEach((m, i) => check(sc.decode(m.data) === `m${i}`, `message ${i} is ${sc.decode(m.data)}`));
  const reply = await publisher.request(`${prefix}.svc`, sc.encode("ping"), { timeout: 10000 });
  check(sc.decode(reply.data) === "re:ping", `reply was ${sc.decode(reply.data)}`);
  service.unsubscribe();
  await publisher.close();
  await subscriber.close();
});

// Pull requests (CONSUMER.MSG.NEXT, sent by hand so every status is visible) and the statuses
// that end them, as nats-server sends them: 409 Exceeded MaxRequestBatch / MaxRequestExpires /
// MaxRequestMaxBytes / MaxWaiting, 409 Message Size Exceeds MaxBytes and 408 Request Timeout with
// Nats-Pending-Messages and Nats-Pending-Bytes, 404 No Messages, 400 Bad Request, 409 Consumer is
// push based, 409 Consumer Deleted; then max_bytes through nats.js fetch.
import { AckPolicy, DeliverPolicy, StringCodec, createInbox, nanos } from "nats";
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

run("jetstream_pull_statuses", async () => {
  const sc = StringCodec();
  const nc = await connectTo();
  const jsm = await within(nc.jetstreamManager(), "jetstream manager");
  const js = nc.jetstream();
  const p = uniquePrefix("jsps");
  const stream = p.replaceAll(".", "_").toUpperCase();
  await within(jsm.streams.add({ name: stream, subjects: [`${p}.>`] }), "create stream");
  for (let i = 0; i < 5; i++) await within(js.publish(`${p}.a`, sc.encode("0123456789")), `publish ${i}`);

  // Opens an inbox, sends one pull request to it, and collects what arrives until the request ends
  // (a status other than 100) or `wait` ms pass.
  const pull = (consumer, body, wait = 3000) => {
    const inbox = createInbox();
    const sub = nc.subscribe(inbox);
    const messages = [];
    let status;
    const done = (async () => {
      for await (const m of sub) {
        if (m.headers && m.data.length === 0 && m.headers.code !== 0) {
          if (m.headers.code === 100) continue;
          status = m;
          break;
        }
        messages.push(m);
      }
    })();
    nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`, sc.encode(body), { reply: inbox });
    return Promise.race([done, sleep(wait)]).then(() => {
      sub.unsubscribe();
      return { messages, status };
    });
  };
  const describe = (m) => (m ? `${m.headers.code} ${m.headers.description} [${[...m.headers.keys()].map((k) => `${k}=${m.headers.get(k)}`).join(",")}]` : "no status");
  const expectStatus = (what, got, code, description, pendingMessages, pendingBytes) => {
    const s = got.status;
    check(s && s.headers.code === code && s.headers.description === description, `${what}: ${describe(s)}; expected ${code} ${description}`);
    const keys = [...s.headers.keys()];
    if (pendingMessages === undefined) {
      check(keys.length === 0, `${what}: unexpected headers ${describe(s)}`);
    } else {
      check(s.headers.get("Nats-Pending-Messages") === String(pendingMessages) && s.headers.get("Nats-Pending-Bytes") === String(pendingBytes),
        `${what}: ${describe(s)}; expected pending ${pendingMessages} messages, ${pendingBytes} bytes`);
    }
  };

  // Request limits of the consumer.
  await within(jsm.consumers.add(stream, { durable_name: "P", ack_policy: AckPolicy.Explicit, max_batch: 3, max_expires: nanos(1500), max_bytes: 1000 }), "consumer P");
  expectStatus("batch over max_batch", await pull("P", JSON.stringify({ batch: 4 })), 409, "Exceeded MaxRequestBatch of 3");
  expectStatus("expires over max_expires", await pull("P", JSON.stringify({ batch: 1, expires: nanos(2000) })), 409, "Exceeded MaxRequestExpires of 1.5s");
  expectStatus("max_bytes over the consumer's", await pull("P", JSON.stringify({ batch: 1, expires: nanos(1000), max_bytes: 2000 })), 409, "Exceeded MaxRequestMaxBytes of 1000");

  // max_bytes: a message that does not fit ends the request.
  let got = await pull("P", JSON.stringify({ batch: 3, expires: nanos(1000), max_bytes: 10 }));
  check(got.messages.length === 0, `a 10-byte request got ${got.messages.length} messages`);
  expectStatus("nothing fits", got, 409, "Message Size Exceeds MaxBytes", 3, 10);
  got = await pull("P", JSON.stringify({ batch: 3, expires: nanos(1000), max_bytes: 150 }));
  check(got.messages.length === 1, `a 150-byte request got ${got.messages.length} messages`);
  // What max_bytes counts: subject, ack reply subject, headers and payload.
  const first = got.messages[0];
  const size = first.subject.length + first.reply.length + first.data.length;
  expectStatus("the second does not fit", got, 409, "Message Size Exceeds MaxBytes", 2, 150 - size);

  // Expiry, no_wait, bad requests.
  await within(jsm.consumers.add(stream, { durable_name: "Q", ack_policy: AckPolicy.Explicit }), "consumer Q");
  got = await pull("Q", JSON.stringify({ batch: 10, expires: nanos(500) }));
  check(got.messages.length === 5, `an expiring request for 10 got ${got.messages.length}`);
  expectStatus("request expired", got, 408, "Request Timeout", 5, 0);
  expectStatus("no_wait with nothing left", await pull("Q", JSON.stringify({ batch: 10, no_wait: true })), 404, "No Messages");
  expectStatus("no_wait with expires and nothing left", await pull("Q", JSON.stringify({ batch: 10, no_wait: true, expires: nanos(500) })), 408, "Request Timeout", 10, 0);
  expectStatus("heartbeat over half the expiry", await pull("Q", JSON.stringify({ batch: 10, expires: nanos(500), idle_heartbeat: nanos(400) })), 400, "Bad Request - heartbeat value too large");
  got = await pull("Q", "{bad");
  check(got.status?.headers.code === 400 && got.status.headers.description.startsWith("Bad Request - "), `bad JSON: ${describe(got.status)}`);

  // no_wait with messages: a one-shot that ends with 408 once they are delivered.
  for (let i = 0; i < 2; i++) await within(js.publish(`${p}.a`, sc.encode("more")), `publish more ${i}`);
  // A PubAck says the stream stored them; the consumer learns of them just after (nats-server signals it
  // off the publish path), so a no_wait request sent at once may legitimately find nothing: wait (bounded)
  // until the consumer counts both as pending.
  for (let i = 0; i < 100 && (await within(jsm.consumers.info(stream, "Q"), "consumer Q info")).num_pending < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  got = await pull("Q", JSON.stringify({ batch: 10, no_wait: true }));
  check(got.messages.length === 2, `no_wait for 10 with 2 there got ${got.messages.length}`);
  expectStatus("no_wait one-shot", got, 408, "Request Timeout", 8, 0);

  // A pull request to a push consumer.
  await within(jsm.consumers.add(stream, { durable_name: "PUSH", ack_policy: AckPolicy.Explicit, deliver_subject: createInbox() }), "consumer PUSH");
  expectStatus("pull from push", await pull("PUSH", ""), 409, "Consumer is push based");

  // max_waiting: one request waits, the second is refused; deleting the consumer ends the first.
  await within(jsm.consumers.add(stream, { durable_name: "W", ack_policy: AckPolicy.Explicit, max_waiting: 1, deliver_policy: DeliverPolicy.New }), "consumer W");
  const waiting = pull("W", JSON.stringify({ batch: 1, expires: nanos(5000) }), 6000);
  await within(nc.flush(), "flush the waiting request");
  await sleep(100);
  expectStatus("second waiting request", await pull("W", JSON.stringify({ batch: 1, expires: nanos(1000) })), 409, "Exceeded MaxWaiting");
  const info = await within(jsm.consumers.info(stream, "W"), "info W");
  check(info.num_waiting === 1, `W has ${info.num_waiting} waiting`);
  check(await within(jsm.consumers.delete(stream, "W"), "delete W"), "delete W failed");
  expectStatus("consumer deleted while waiting", await waiting, 409, "Consumer Deleted");

  // max_bytes through nats.js: a fetch stops before the message that would not fit.
  await within(jsm.consumers.add(stream, { durable_name: "B", ack_policy: AckPolicy.Explicit }), "consumer B");
  const consumer = await within(js.consumers.get(stream, "B"), "get B");
  const batch = await within(consumer.fetch({ max_bytes: 2 * size + 10, expires: 2000 }), "fetch by bytes");
  const fetched = [];
  for await (const m of batch) {
    fetched.push(m.seq);
    m.ack();
  }
  check(fetched.join(",") === "1,2", `fetch by bytes got ${fetched}`);

  await within(jsm.streams.delete(stream), "delete stream");
  await nc.close();
});

// nats.ws over WebSocket: publish/subscribe, request/reply, headers, a payload needing a 64-bit
// frame length, and 5,000 messages in order; with WS_COMPRESSION=1 the sockets must have
// negotiated permessage-deflate, without it they must not have.
import { StringCodec, headers } from "nats.ws";
import { check, inbox, run, uniquePrefix, within } from "../lib.mjs";
import { connectWs, sockets } from "../ws.mjs";

run("ws_pub_sub", async () => {
  const sc = StringCodec();
  const prefix = uniquePrefix("ws");
  const subscriber = await connectWs();
  const publisher = await connectWs();
  const expectCompression = process.env.WS_COMPRESSION === "1";
  for (const socket of sockets) {
    const negotiated = socket.extensions.includes("permessage-deflate");
    check(negotiated === expectCompression, `permessage-deflate negotiated: ${negotiated}, expected ${expectCompression} (extensions "${socket.extensions}")`);
  }

  const sub = inbox(subscriber.subscribe(`${prefix}.greet`));
  const service = subscriber.subscribe(`${prefix}.service`, { callback: (_, m) => m.respond(sc.encode(`re: ${sc.decode(m.data)}`)) });
  await within(subscriber.flush(), "subscriber flush");

  publisher.publish(`${prefix}.greet`, sc.encode("hello"));
  const h = headers();
  h.set("X-Test", "ws");
  publisher.publish(`${prefix}.greet`, sc.encode("with headers"), { headers: h, reply: `${prefix}.inbox` });
  const big = new Uint8Array(200 * 1024).map((_, i) => i % 251);
  publisher.publish(`${prefix}.greet`, big);
  await within(publisher.flush(), "publisher flush");

  const [a, b, c] = await sub.take(3);
  check(sc.decode(a.data) === "hello", `first message wrong: ${sc.decode(a.data)}`);
  check(b.headers?.get("X-Test") === "ws" && b.reply === `${prefix}.inbox`, `second message lost its headers or reply`);
  check(c.data.length === big.length && c.data.every((v, i) => v === big[i]), `the 200 KB payload came back different (${c.data.length} bytes)`);

  const reply = await within(publisher.request(`${prefix}.service`, sc.encode("ping"), { timeout: 5000 }), "reply");
  check(sc.decode(reply.data) === "re: ping", `reply wrong: ${sc.decode(reply.data)}`);

  const count = 5000;
  for (let i = 0; i < count; i++) {
    publisher.publish(`${prefix}.greet`, sc.encode(`${i}`));
  }
  await within(publisher.flush(), "publisher flush after burst");
  const burst = await sub.take(count, `${count} ordered messages`);
  burst.forEach((m, i) => check(sc.decode(m.data) === `${i}`, `message ${i} out of order: ${sc.decode(m.data)}`));

  service.unsubscribe();
  await publisher.close();
  await subscriber.close();
});

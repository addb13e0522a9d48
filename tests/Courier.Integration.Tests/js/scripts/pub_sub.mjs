// Publishes on one connection and receives on another, with reply subjects preserved.
import { StringCodec } from "nats";
import { check, connectTo, inbox, run, uniquePrefix, within } from "../lib.mjs";

run("pub_sub", async () => {
  const sc = StringCodec();
  const prefix = uniquePrefix("pubsub");
  const subscriber = await connectTo();
  const publisher = await connectTo();
  const sub = inbox(subscriber.subscribe(`${prefix}.greet`));
  await within(subscriber.flush(), "subscriber flush");

  publisher.publish(`${prefix}.greet`, sc.encode("hello"));
  publisher.publish(`${prefix}.greet`, sc.encode("with reply"), { reply: `${prefix}.inbox` });
  publisher.publish(`${prefix}.greet`);
  await within(publisher.flush(), "publisher flush");

  const [a, b, c] = await sub.take(3);
  check(a.subject === `${prefix}.greet` && sc.decode(a.data) === "hello", `first message wrong: ${a.subject} ${sc.decode(a.data)}`);
  check(a.reply === "" || a.reply === undefined, `first message has a reply subject: ${a.reply}`);
  check(b.reply === `${prefix}.inbox` && sc.decode(b.data) === "with reply", `second message wrong: reply=${b.reply}`);
  check(c.data.length === 0, `third message should be empty, has ${c.data.length} bytes`);
  await publisher.close();
  await subscriber.close();
});

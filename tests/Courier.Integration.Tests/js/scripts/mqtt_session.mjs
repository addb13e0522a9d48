// MQTT.js: a persistent session (clean: false) keeps its subscription and the QoS 1/2 messages published while it was away.
import { check, run } from "../lib.mjs";
import { connectMqtt, end, expectNothing, publish, subscribe, uniqueTopic } from "../mqtt_lib.mjs";

run("mqtt_session", async () => {
  const topic = `${uniqueTopic("session")}/inbox`;
  const id = `persistent-${process.pid}-${Date.now()}`;
  const first = await connectMqtt(id, { clean: false });
  check(first.connack.sessionPresent === false, "a new session was reported present");
  await subscribe(first.client, topic, 1);
  await end(first.client);

  const pub = await connectMqtt(`pub-${process.pid}-${Date.now()}`);
  await publish(pub.client, topic, "while away 1", { qos: 1 });
  await publish(pub.client, topic, "not kept", { qos: 0 });
  await publish(pub.client, topic, "while away 2", { qos: 2 });

  const again = await connectMqtt(id, { clean: false });
  check(again.connack.sessionPresent === true, "the session was not reported present");
  const got = (await again.take(2, "the kept messages")).map((m) => `${m.payload} ${m.qos}`);
  check(JSON.stringify(got) === JSON.stringify(["while away 1 1", "while away 2 1"]), `kept: ${JSON.stringify(got)}`);
  await expectNothing(again, 300, "after the kept messages");

  // Still subscribed: a live message arrives without a new SUBSCRIBE.
  await publish(pub.client, topic, "live", { qos: 1 });
  const [live] = await again.take(1, "the live message");
  check(live.payload === "live", `live: ${JSON.stringify(live)}`);
  await end(again.client);

  const clean = await connectMqtt(id, { clean: true });
  check(clean.connack.sessionPresent === false, "a clean session was reported present");
  await end(clean.client);
  await end(pub.client);
});

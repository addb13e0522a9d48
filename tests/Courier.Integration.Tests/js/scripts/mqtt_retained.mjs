// MQTT.js: a retained message is delivered on subscribe with the retain flag, replaced, then cleared by an empty payload.
import { check, run } from "../lib.mjs";
import { connectMqtt, end, expectNothing, publish, subscribe, uniqueTopic } from "../mqtt_lib.mjs";

run("mqtt_retained", async () => {
  const topic = `${uniqueTopic("retained")}/state`;
  const pub = await connectMqtt(`pub-${process.pid}-${Date.now()}`);
  await publish(pub.client, topic, "first", { qos: 1, retain: true });
  await publish(pub.client, topic, "second", { qos: 1, retain: true });

  const a = await connectMqtt(`a-${process.pid}-${Date.now()}`);
  await subscribe(a.client, topic, 1);
  const [m] = await a.take(1, "the retained message");
  check(m.payload === "second" && m.retain === true && m.qos === 1, `retained: ${JSON.stringify(m)}`);

  // A live publish reaches an existing subscriber without the retain flag [MQTT-3.3.1-9].
  await publish(pub.client, topic, "live", { qos: 1, retain: true });
  const [live] = await a.take(1, "the live message");
  check(live.payload === "live" && live.retain === false, `live: ${JSON.stringify(live)}`);

  await publish(pub.client, topic, "", { qos: 1, retain: true });
  await a.take(1, "the clearing message");
  const b = await connectMqtt(`b-${process.pid}-${Date.now()}`);
  await subscribe(b.client, topic, 1);
  await expectNothing(b, 300, "after the retained message was cleared");
  await end(a.client);
  await end(b.client);
  await end(pub.client);
});

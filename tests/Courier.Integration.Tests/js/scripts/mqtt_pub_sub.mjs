// MQTT.js: QoS 0, 1 and 2 publishes to subscriptions at QoS 0, 1 and 2 (delivered at the lower of the two).
import { check, run } from "../lib.mjs";
import { connectMqtt, end, publish, subscribe, uniqueTopic } from "../mqtt_lib.mjs";

run("mqtt_pub_sub", async () => {
  const root = uniqueTopic("pubsub");
  const sub = await connectMqtt(`sub-${process.pid}-${Date.now()}`);
  check(sub.connack.returnCode === 0 && sub.connack.sessionPresent === false, `CONNACK ${JSON.stringify(sub.connack)}`);
  const granted = [
    ...(await subscribe(sub.client, `${root}/q0`, 0)),
    ...(await subscribe(sub.client, `${root}/q1`, 1)),
    ...(await subscribe(sub.client, `${root}/q2/#`, 2)),
  ];
  check(JSON.stringify(granted) === JSON.stringify([0, 1, 2]), `granted ${JSON.stringify(granted)}`);

  const pub = await connectMqtt(`pub-${process.pid}-${Date.now()}`);
  await publish(pub.client, `${root}/q0`, "zero at 2", { qos: 2 });
  await publish(pub.client, `${root}/q1`, "one at 1", { qos: 1 });
  await publish(pub.client, `${root}/q1`, "one at 0", { qos: 0 });
  await publish(pub.client, `${root}/q2/a/b`, "two at 2", { qos: 2 });
  await publish(pub.client, `${root}/q2`, "two at 1", { qos: 1 });

  const got = await sub.take(5);
  // Order is kept per publisher and QoS [MQTT-4.6.0-6]; a QoS 2 delivery may be overtaken by a QoS 1 one (mosquitto).
  const seen = got.map((m) => `${m.topic} ${m.payload} ${m.qos}`).sort();
  const expected = [
    `${root}/q0 zero at 2 0`,
    `${root}/q1 one at 1 1`,
    `${root}/q1 one at 0 0`,
    `${root}/q2/a/b two at 2 2`,
    `${root}/q2 two at 1 1`,
  ].sort();
  check(JSON.stringify(seen) === JSON.stringify(expected), `received ${JSON.stringify(seen)}`);
  await end(pub.client);
  await end(sub.client);
});

// MQTT.js: a will is published when its client vanishes without DISCONNECT, and not after a clean DISCONNECT.
import { check, run } from "../lib.mjs";
import { connectMqtt, end, expectNothing, subscribe, uniqueTopic } from "../mqtt_lib.mjs";

run("mqtt_will", async () => {
  const topic = `${uniqueTopic("will")}/status`;
  const watcher = await connectMqtt(`watch-${process.pid}-${Date.now()}`);
  await subscribe(watcher.client, topic, 1);

  const polite = await connectMqtt(`polite-${process.pid}-${Date.now()}`, { will: { topic, payload: "polite gone", qos: 1, retain: false } });
  await end(polite.client);
  await expectNothing(watcher, 300, "after a clean DISCONNECT");

  const rude = await connectMqtt(`rude-${process.pid}-${Date.now()}`, { will: { topic, payload: "rude gone", qos: 1, retain: false } });
  rude.client.stream.destroy(); // the socket closes without DISCONNECT
  const [will] = await watcher.take(1, "the will");
  check(will.payload === "rude gone" && will.qos === 1, `will: ${JSON.stringify(will)}`);
  rude.client.end(true);
  await end(watcher.client);
});

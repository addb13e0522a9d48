// Shared helpers for the MQTT.js (npm `mqtt`) scripts: `node scripts/mqtt_<name>.mjs mqtt://127.0.0.1:<port>`.
// MQTT 3.1.1 (protocolVersion 4), no reconnects, every wait bounded by WAIT_MS.
import mqtt from "mqtt";
import { CheckFailure, WAIT_MS, fail, within } from "./lib.mjs";

/** The broker URL: first command-line argument, else MQTT_URL. */
export function mqttUrl() {
  const url = process.argv[2] ?? process.env.MQTT_URL;
  if (!url) {
    fail("no MQTT URL: pass it as the first argument or set MQTT_URL");
  }
  return url;
}

/** A topic root unique to this run. */
export function uniqueTopic(name) {
  return `mqttjs/${name}/${process.pid}/${Date.now().toString(36)}`;
}

/**
 * Connects and resolves with { client, connack, take(n) } once CONNACK arrived; `take(n)` hands out
 * the next n messages received ({ topic, payload (string), qos, retain }).
 */
export async function connectMqtt(clientId, extra = {}) {
  const client = mqtt.connect(mqttUrl(), {
    protocolVersion: 4,
    clientId,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: WAIT_MS,
    keepalive: 30,
    ...extra,
  });
  const messages = [];
  let cursor = 0;
  let wake = () => {};
  client.on("message", (topic, payload, packet) => {
    messages.push({ topic, payload: payload.toString(), qos: packet.qos, retain: packet.retain });
    wake();
  });
  const connack = await within(
    new Promise((resolve, reject) => {
      client.once("connect", resolve);
      client.once("error", reject);
    }),
    `CONNACK for ${clientId}`,
  );
  return {
    client,
    connack,
    received: () => messages.length - cursor,
    async take(count, what = `${count} messages`) {
      while (messages.length < cursor + count) {
        await within(new Promise((resolve) => (wake = resolve)), `${what} (got ${messages.length - cursor})`);
      }
      const got = messages.slice(cursor, cursor + count);
      cursor += count;
      return got;
    },
  };
}

/** SUBSCRIBE; resolves with the granted QoS list (128 for a failure). */
export async function subscribe(client, topic, qos) {
  const granted = await within(client.subscribeAsync(topic, { qos }), `SUBACK for ${topic}`);
  return granted.map((g) => g.qos);
}

/** PUBLISH, resolved when the QoS flow completed (PUBACK / PUBCOMP). */
export function publish(client, topic, payload, opts = {}) {
  return within(client.publishAsync(topic, payload, opts), `publish to ${topic}`);
}

/** A clean DISCONNECT. */
export function end(client) {
  return within(client.endAsync(), "end");
}

/** Waits `ms` and checks nothing more came. */
export async function expectNothing(session, ms, what) {
  await new Promise((resolve) => setTimeout(resolve, ms));
  if (session.received() !== 0) {
    throw new CheckFailure(`${what}: ${session.received()} unexpected message(s)`);
  }
}

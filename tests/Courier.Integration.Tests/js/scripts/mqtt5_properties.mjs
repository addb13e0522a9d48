// MQTT.js with protocolVersion 5: the properties of a PUBLISH (user properties, content type, payload
// format, response topic, correlation data, message expiry) reach a subscriber with its subscription
// identifier; no local keeps a client's own messages from it; a request/response pair through the
// response topic and correlation data.
import mqtt from "mqtt";
import { check, run, within } from "../lib.mjs";
import { mqttUrl, uniqueTopic } from "../mqtt_lib.mjs";

function connect5(clientId) {
  const client = mqtt.connect(mqttUrl(), { protocolVersion: 5, clientId, clean: true, reconnectPeriod: 0, connectTimeout: 10000 });
  const messages = [];
  let wake = () => {};
  client.on("message", (topic, payload, packet) => {
    messages.push({ topic, payload: payload.toString(), qos: packet.qos, properties: packet.properties ?? {} });
    wake();
  });
  return within(
    new Promise((resolve, reject) => {
      client.once("connect", (connack) =>
        resolve({
          client,
          connack,
          messages,
          async next(what) {
            while (messages.length === 0) {
              await within(new Promise((r) => (wake = r)), what);
            }
            return messages.shift();
          },
        }),
      );
      client.once("error", reject);
    }),
    `CONNACK for ${clientId}`,
  );
}

const subscribe = (client, topic, options) =>
  within(new Promise((resolve, reject) => client.subscribe(topic, options, (e, granted) => (e ? reject(e) : resolve(granted)))), `SUBACK ${topic}`);
const publish = (client, topic, payload, options) =>
  within(new Promise((resolve, reject) => client.publish(topic, payload, options, (e) => (e ? reject(e) : resolve()))), `PUBACK ${topic}`);
const end = (client) => new Promise((resolve) => client.end(false, {}, resolve));

run("mqtt5_properties", async () => {
  const root = uniqueTopic("v5");
  const sub = await connect5(`s5-${process.pid}-${Date.now()}`);
  check(sub.connack.reasonCode === 0, `CONNACK ${JSON.stringify(sub.connack)}`);
  const granted = await subscribe(sub.client, `${root}/data/#`, { qos: 1, properties: { subscriptionIdentifier: 7 } });
  check(granted[0].qos === 1, `granted ${JSON.stringify(granted)}`);

  const pub = await connect5(`p5-${process.pid}-${Date.now()}`);
  await publish(pub.client, `${root}/data/a`, "hello", {
    qos: 1,
    properties: {
      userProperties: { colour: "blue" },
      contentType: "text/plain",
      payloadFormatIndicator: true,
      responseTopic: `${root}/reply`,
      correlationData: Buffer.from("c-1"),
      messageExpiryInterval: 60,
    },
  });
  const m = await sub.next("the published message");
  const p = m.properties;
  check(m.topic === `${root}/data/a` && m.payload === "hello" && m.qos === 1, `message ${JSON.stringify(m)}`);
  check(JSON.stringify(p.userProperties) === JSON.stringify({ colour: "blue" }), `user properties ${JSON.stringify(p.userProperties)}`);
  check(p.contentType === "text/plain" && p.payloadFormatIndicator === true, `content type ${p.contentType}, format ${p.payloadFormatIndicator}`);
  check(p.responseTopic === `${root}/reply` && Buffer.from(p.correlationData).toString() === "c-1", `response topic ${p.responseTopic}, correlation ${p.correlationData}`);
  check([7, "7", "[7]"].includes(Array.isArray(p.subscriptionIdentifier) ? JSON.stringify(p.subscriptionIdentifier) : p.subscriptionIdentifier), `subscription identifier ${JSON.stringify(p.subscriptionIdentifier)}`);
  check(p.messageExpiryInterval > 0 && p.messageExpiryInterval <= 60, `message expiry ${p.messageExpiryInterval}`);

  // No local: a client's own publishes do not come back to a no-local subscription, another's do.
  await subscribe(pub.client, `${root}/echo`, { qos: 1, nl: true });
  await subscribe(sub.client, `${root}/echo`, { qos: 1 });
  await publish(pub.client, `${root}/echo`, "own", { qos: 1 });
  const echoed = await sub.next("the echo subscriber's copy");
  check(echoed.payload === "own", `echo ${JSON.stringify(echoed)}`);
  await publish(sub.client, `${root}/echo`, "other", { qos: 1 });
  // sub subscribed without no local: it gets its own "other" too; pub gets "other" only (never "own").
  const back = await sub.next("sub's own message");
  check(back.payload === "other", `sub got ${JSON.stringify(back)}`);
  const atPub = await pub.next("the other client's message");
  check(atPub.payload === "other" && pub.messages.length === 0, `pub got ${JSON.stringify(atPub)} then ${JSON.stringify(pub.messages)}`);

  // Request/response: a responder answers on the response topic with the correlation data.
  await subscribe(pub.client, `${root}/service`, { qos: 1 });
  await subscribe(sub.client, `${root}/replies/#`, { qos: 1 });
  await publish(sub.client, `${root}/service`, "ping", { qos: 1, properties: { responseTopic: `${root}/replies/1`, correlationData: Buffer.from("req-9") } });
  const request = await pub.next("the request");
  await publish(pub.client, request.properties.responseTopic, `pong to ${request.payload}`, { qos: 1, properties: { correlationData: request.properties.correlationData } });
  const response = await sub.next("the response");
  check(response.topic === `${root}/replies/1` && response.payload === "pong to ping" && Buffer.from(response.properties.correlationData).toString() === "req-9", `response ${JSON.stringify(response)}`);

  await end(pub.client);
  await end(sub.client);
});

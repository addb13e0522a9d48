// nats.ws publishes one message on ws.bridge.hello and flushes; a plain NATS client checks it.
import { StringCodec } from "nats.ws";
import { run, within } from "../lib.mjs";
import { connectWs } from "../ws.mjs";

run("ws_publish_one", async () => {
  const nc = await connectWs();
  nc.publish("ws.bridge.hello", StringCodec().encode("from ws!"));
  await within(nc.flush(), "flush");
  await nc.close();
});

// nats.ws (nats.js over WebSocket) in Node: the npm `ws` package is the global WebSocket, as a
// browser's would be. Every socket the client opens is recorded, so a script can check what the
// handshake negotiated (e.g. permessage-deflate). For wss://, NATS_TLS_CA names the CA bundle the
// server certificate must chain to (with NATS_TLS_CERT/NATS_TLS_KEY a client certificate is offered),
// as a browser would trust its own store.
import { readFileSync } from "node:fs";
import WebSocket from "ws";
import { connect } from "nats.ws";
import { serverUrl, WAIT_MS } from "./lib.mjs";

/** The sockets nats.ws opened, in order. */
export const sockets = [];

const tls = {};
if (process.env.NATS_TLS_CA) tls.ca = readFileSync(process.env.NATS_TLS_CA);
if (process.env.NATS_TLS_CERT) {
  tls.cert = readFileSync(process.env.NATS_TLS_CERT);
  tls.key = readFileSync(process.env.NATS_TLS_KEY);
}

class RecordingWebSocket extends WebSocket {
  constructor(address, protocols) {
    super(address, protocols, tls);
    sockets.push(this);
  }
}

globalThis.WebSocket = RecordingWebSocket;

/** Connects over WebSocket to the URL of the script's first argument (ws://host:port). */
export function connectWs(extra = {}) {
  return connect({
    servers: serverUrl(),
    reconnect: false,
    timeout: WAIT_MS,
    name: "courier-integration-ws",
    ...extra,
  });
}

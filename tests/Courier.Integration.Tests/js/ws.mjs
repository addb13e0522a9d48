// nats.ws (nats.js over WebSocket) in Node: the npm `ws` package is the global WebSocket, as a
// browser's would be. Every socket the client opens is recorded, so a script can check what the
// handshake negotiated (e.g. permessage-deflate).
import WebSocket from "ws";
import { connect } from "nats.ws";
import { serverUrl, WAIT_MS } from "./lib.mjs";

/** The sockets nats.ws opened, in order. */
export const sockets = [];

class RecordingWebSocket extends WebSocket {
  constructor(...args) {
    super(...args);
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

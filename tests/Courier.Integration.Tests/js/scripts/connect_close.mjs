// Connects, checks the server INFO the client saw, round-trips a flush, closes cleanly.
import { check, connectTo, run, within } from "../lib.mjs";

run("connect_close", async () => {
  const nc = await connectTo();
  const info = nc.info;
  check(info && typeof info.server_id === "string" && info.server_id.length > 0, `INFO has no server_id: ${JSON.stringify(info)}`);
  check(info.headers === true, `INFO headers is not true: ${JSON.stringify(info)}`);
  check(info.max_payload > 0, `INFO max_payload is not positive: ${JSON.stringify(info)}`);
  await within(nc.flush(), "flush (PING/PONG)");
  const rtt = await within(nc.rtt(), "rtt");
  check(rtt >= 0, `rtt is negative: ${rtt}`);
  const closed = nc.closed();
  await within(nc.close(), "close");
  const err = await within(closed, "closed()");
  check(err === undefined, `closed() resolved with an error: ${err}`);
  check(nc.isClosed(), "connection does not report closed");
});

// Draining a subscription delivers everything already published before it ends; draining the
// connection then closes it without error.
import { check, connectTo, inbox, run, uniquePrefix, within } from "../lib.mjs";

const COUNT = 500;

run("drain", async () => {
  const p = uniquePrefix("drain");
  const nc = await connectTo();
  let received = 0;
  const sub = nc.subscribe(`${p}.x`, {
    callback: () => {
      received++;
    },
  });
  await within(nc.flush(), "flush");
  const pub = await connectTo();
  for (let i = 0; i < COUNT; i++) pub.publish(`${p}.x`);
  await within(pub.flush(), "publisher flush");
  await within(nc.flush(), "subscriber flush");

  await within(sub.drain(), "subscription drain");
  check(received === COUNT, `drained subscription processed ${received} of ${COUNT}`);
  check(sub.isClosed(), "drained subscription is not closed");

  const other = inbox(nc.subscribe(`${p}.y`));
  await within(nc.flush(), "subscriber flush");
  pub.publish(`${p}.y`);
  await within(pub.flush(), "publisher flush");
  await within(nc.flush(), "subscriber flush");
  const closed = nc.closed();
  await within(nc.drain(), "connection drain");
  const err = await within(closed, "closed() after drain");
  check(err === undefined, `closed() after drain gave ${err}`);
  await within(other.done, "the remaining subscription to end with the connection drain");
  check(other.received() === 1, `remaining subscription processed ${other.received()} of 1 before closing`);
  await pub.close();
});

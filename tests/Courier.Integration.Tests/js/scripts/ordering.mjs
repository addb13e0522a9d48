// 5000 messages from one publisher arrive at one subscriber in publish order.
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

const COUNT = 5000;

run("ordering", async () => {
  const subject = `${uniquePrefix("order")}.seq`;
  const sub = await connectTo();
  const pub = await connectTo();
  let expected = 0;
  let error;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  sub.subscribe(subject, {
    callback: (err, m) => {
      if (err) {
        error = `subscription error: ${err.message}`;
        done();
        return;
      }
      const n = new DataView(m.data.buffer, m.data.byteOffset, 4).getUint32(0);
      if (n !== expected && error === undefined) error = `message ${expected} expected, got ${n}`;
      expected++;
      if (expected === COUNT) done();
    },
  });
  await within(sub.flush(), "flush");

  for (let i = 0; i < COUNT; i++) {
    // A fresh buffer each time: nats.js may hold the array until it is written out.
    const body = new Uint8Array(64);
    new DataView(body.buffer).setUint32(0, i);
    pub.publish(subject, body);
  }
  await within(pub.flush(), "publisher flush");
  await within(finished, `all ${COUNT} messages (got ${expected})`);
  check(error === undefined, error);
  await Promise.all([sub.close(), pub.close()]);
});

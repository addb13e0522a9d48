// Two members of one queue group on two connections: every message reaches exactly one
// member, and both members get some. A plain subscriber next to the group gets them all.
import { check, connectTo, run, uniquePrefix, within } from "../lib.mjs";

const COUNT = 200;

run("queue_groups", async () => {
  const subject = `${uniquePrefix("queue")}.work`;
  const a = await connectTo();
  const b = await connectTo();
  const seen = new Map();
  const perMember = { a: 0, b: 0 };
  let plain = 0;
  let done;
  const allDone = new Promise((resolve) => (done = resolve));
  const onMsg = (member) => (err, m) => {
    if (err) return;
    perMember[member]++;
    const n = Number(new TextDecoder().decode(m.data));
    seen.set(n, (seen.get(n) ?? 0) + 1);
    if (perMember.a + perMember.b === COUNT && plain === COUNT) done();
  };
  a.subscribe(subject, { queue: "workers", callback: onMsg("a") });
  b.subscribe(subject, { queue: "workers", callback: onMsg("b") });
  a.subscribe(subject, {
    callback: () => {
      plain++;
      if (perMember.a + perMember.b === COUNT && plain === COUNT) done();
    },
  });
  await within(Promise.all([a.flush(), b.flush()]), "flush");

  const pub = await connectTo();
  for (let i = 0; i < COUNT; i++) {
    pub.publish(subject, new TextEncoder().encode(String(i)));
  }
  await within(pub.flush(), "publisher flush");
  await within(allDone, `all ${COUNT} messages (group got ${perMember.a + perMember.b}, plain got ${plain})`);
  // Settle: a duplicate would arrive before these round trips complete.
  await within(Promise.all([a.flush(), b.flush()]), "settle flush");

  check(perMember.a + perMember.b === COUNT, `group delivered ${perMember.a + perMember.b} of ${COUNT}`);
  for (let i = 0; i < COUNT; i++) {
    check(seen.get(i) === 1, `message ${i} delivered ${seen.get(i) ?? 0} times to the group`);
  }
  check(perMember.a > 0 && perMember.b > 0, `not spread across members: ${JSON.stringify(perMember)}`);
  check(plain === COUNT, `plain subscriber got ${plain} of ${COUNT}`);
  await Promise.all([a.close(), b.close(), pub.close()]);
});

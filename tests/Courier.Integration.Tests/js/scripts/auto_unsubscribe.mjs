// `max` on subscribe and `unsubscribe(n)` end a subscription after n messages (UNSUB <sid> <n>).
import { check, connectTo, inbox, run, uniquePrefix, within } from "../lib.mjs";

run("auto_unsubscribe", async () => {
  const p = uniquePrefix("autounsub");
  const nc = await connectTo();
  const withMax = inbox(nc.subscribe(`${p}.a`, { max: 3 }));
  const laterSub = nc.subscribe(`${p}.b`);
  laterSub.unsubscribe(2);
  const later = inbox(laterSub);
  const watcher = inbox(nc.subscribe(`${p}.>`));
  await within(nc.flush(), "flush");

  for (let i = 0; i < 10; i++) {
    nc.publish(`${p}.a`);
    nc.publish(`${p}.b`);
  }
  await watcher.take(20, "all 20 messages at the watcher");
  await within(withMax.done, "max:3 subscription to end");
  await within(later.done, "unsubscribe(2) subscription to end");
  check(withMax.received() === 3, `max:3 subscription received ${withMax.received()}`);
  check(later.received() === 2, `unsubscribe(2) subscription received ${later.received()}`);
  await nc.close();
});

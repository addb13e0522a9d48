// '*' matches exactly one token, '>' one or more trailing tokens.
import { StringCodec } from "nats";
import { check, connectTo, inbox, run, uniquePrefix, within } from "../lib.mjs";

run("wildcards", async () => {
  const sc = StringCodec();
  const p = uniquePrefix("wild");
  const nc = await connectTo();
  const star = inbox(nc.subscribe(`${p}.*.temp`));
  const gt = inbox(nc.subscribe(`${p}.>`));
  await within(nc.flush(), "flush");

  for (const s of [`${p}.kitchen.temp`, `${p}.kitchen.oven.temp`, `${p}.hall.humidity`, `${p}.garage.temp`]) {
    nc.publish(s, sc.encode(s));
  }
  nc.publish(`${p}`, sc.encode("not matched by either"));
  await within(nc.flush(), "flush");

  const starGot = (await star.take(2, "'*' messages")).map((m) => m.subject);
  check(JSON.stringify(starGot) === JSON.stringify([`${p}.kitchen.temp`, `${p}.garage.temp`]), `'*' received ${starGot}`);
  const gtGot = (await gt.take(4, "'>' messages")).map((m) => m.subject);
  check(!gtGot.includes(p), `'>' received ${gtGot}`);

  // A marker published last must be the next '>' message, and '*' must have seen no more.
  nc.publish(`${p}.marker`);
  const [marker] = await gt.take(1, "marker");
  check(marker.subject === `${p}.marker`, `expected the marker, got ${marker.subject}`);
  check(star.received() === 2, `'*' received ${star.received()} messages in total`);
  await nc.close();
});

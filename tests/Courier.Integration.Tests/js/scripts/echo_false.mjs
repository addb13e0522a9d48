// With echo:false a connection does not receive its own messages; others still do.
import { StringCodec } from "nats";
import { check, connectTo, inbox, run, uniquePrefix, within } from "../lib.mjs";

run("echo_false", async () => {
  const sc = StringCodec();
  const subject = `${uniquePrefix("echo")}.x`;
  const quiet = await connectTo({ noEcho: true });
  const other = await connectTo();
  const own = inbox(quiet.subscribe(subject));
  const theirs = inbox(other.subscribe(subject));
  await within(Promise.all([quiet.flush(), other.flush()]), "flush");

  quiet.publish(subject, sc.encode("from quiet"));
  other.publish(subject, sc.encode("from other"));
  await within(Promise.all([quiet.flush(), other.flush()]), "flush");

  const theirsGot = (await theirs.take(2)).map((m) => sc.decode(m.data)).sort();
  check(JSON.stringify(theirsGot) === JSON.stringify(["from other", "from quiet"]), `other got ${theirsGot}`);
  const [ownGot] = await own.take(1);
  check(sc.decode(ownGot.data) === "from other", `echo:false connection got '${sc.decode(ownGot.data)}'`);
  await within(quiet.flush(), "settle");
  check(own.received() === 1, `echo:false connection received ${own.received()} messages, expected 1`);
  await Promise.all([quiet.close(), other.close()]);
});

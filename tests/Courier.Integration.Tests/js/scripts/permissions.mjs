// Against a server where NATS_USER/NATS_PASS may publish and subscribe only under "allowed.>":
// a denied subscription fails with a permissions error, a denied publish is reported as an
// error status, and the connection stays usable.
import { ErrorCode, Events, StringCodec } from "nats";
import { check, connectTo, fail, inbox, run, within } from "../lib.mjs";

run("permissions", async () => {
  const user = process.env.NATS_USER;
  const pass = process.env.NATS_PASS;
  if (!user || !pass) fail("set NATS_USER and NATS_PASS");
  const sc = StringCodec();
  const nc = await connectTo({ user, pass });
  const statuses = [];
  let sawPublishError;
  const publishError = new Promise((resolve) => (sawPublishError = resolve));
  (async () => {
    for await (const s of nc.status()) {
      statuses.push(s);
      if (s.type === Events.Error && s.permissionContext?.operation === "publish") sawPublishError(s);
    }
  })();

  const denied = inbox(nc.subscribe("denied.sub"));
  await within(denied.done, "the denied subscription to end");
  const subError = denied.error();
  check(denied.received() === 0, `denied subscription received ${denied.received()} messages`);
  check(subError?.code === ErrorCode.PermissionsViolation, `denied subscription ended with ${subError?.code} (${subError?.message})`);
  check(/Permissions Violation for Subscription to "denied.sub"/.test(subError.message), `message: ${subError.message}`);

  nc.publish("denied.pub", sc.encode("x"));
  const status = await within(publishError, `a publish permissions status (saw ${JSON.stringify(statuses)})`);
  check(status.data === ErrorCode.PermissionsViolation && status.permissionContext.subject === "denied.pub", `status ${JSON.stringify(status)}`);

  const ok = inbox(nc.subscribe("allowed.sub"));
  await within(nc.flush(), "flush");
  nc.publish("allowed.sub", sc.encode("fine"));
  const [m] = await ok.take(1, "a message on an allowed subject");
  check(sc.decode(m.data) === "fine", "allowed message payload wrong");
  check(!nc.isClosed(), "connection closed after permission errors");
  await nc.close();
});

// Against a server configured with user/password (NATS_USER / NATS_PASS): the right
// credentials connect, wrong or missing ones are refused with an authorization violation.
import { ErrorCode } from "nats";
import { check, connectTo, fail, run, within } from "../lib.mjs";

run("auth_user_password", async () => {
  const user = process.env.NATS_USER;
  const pass = process.env.NATS_PASS;
  if (!user || !pass) fail("set NATS_USER and NATS_PASS");
  const nc = await connectTo({ user, pass });
  check(nc.info.auth_required === true, "INFO does not say auth_required");
  await within(nc.flush(), "flush");
  await nc.close();

  for (const [label, opts] of [["wrong password", { user, pass: `${pass}-wrong` }], ["no credentials", {}]]) {
    let error;
    try {
      const bad = await connectTo(opts);
      await bad.close();
    } catch (err) {
      error = err;
    }
    check(error?.code === ErrorCode.AuthorizationViolation, `${label}: expected ${ErrorCode.AuthorizationViolation}, got ${error?.code} (${error?.message})`);
  }
});

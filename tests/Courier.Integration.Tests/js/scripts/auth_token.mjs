// Against a server configured with a token (NATS_TOKEN): the token connects, a wrong one is refused.
import { ErrorCode } from "nats";
import { check, connectTo, fail, run, within } from "../lib.mjs";

run("auth_token", async () => {
  const token = process.env.NATS_TOKEN;
  if (!token) fail("set NATS_TOKEN");
  const nc = await connectTo({ token });
  await within(nc.flush(), "flush");
  await nc.close();

  let error;
  try {
    const bad = await connectTo({ token: `${token}-wrong` });
    await bad.close();
  } catch (err) {
    error = err;
  }
  check(error?.code === ErrorCode.AuthorizationViolation, `wrong token: expected ${ErrorCode.AuthorizationViolation}, got ${error?.code} (${error?.message})`);
});

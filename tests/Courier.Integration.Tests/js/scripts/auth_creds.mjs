// Against a server in JWT operator mode: a creds file (NATS_CREDS) connects through
// credsAuthenticator and exchanges a message; a revoked user's creds file (NATS_REVOKED_CREDS)
// is refused with an authorization violation.
import { readFileSync } from "node:fs";
import { credsAuthenticator, ErrorCode, StringCodec } from "nats";
import { check, connectTo, fail, run, uniquePrefix, within } from "../lib.mjs";

run("auth_creds", async () => {
  const creds = process.env.NATS_CREDS;
  const revoked = process.env.NATS_REVOKED_CREDS;
  if (!creds || !revoked) fail("set NATS_CREDS and NATS_REVOKED_CREDS");
  const nc = await connectTo({ authenticator: credsAuthenticator(readFileSync(creds)) });
  check(typeof nc.info.nonce === "string" && nc.info.nonce.length > 0, "INFO carries no nonce");
  const sc = StringCodec();
  const subject = uniquePrefix("creds");
  const sub = nc.subscribe(subject, { max: 1 });
  await within(nc.flush(), "flush");
  nc.publish(subject, sc.encode("with creds"));
  for await (const m of sub) {
    check(sc.decode(m.data) === "with creds", `unexpected payload ${sc.decode(m.data)}`);
  }
  await nc.close();

  let error;
  try {
    const bad = await connectTo({ authenticator: credsAuthenticator(readFileSync(revoked)) });
    await bad.close();
  } catch (err) {
    error = err;
  }
  check(error?.code === ErrorCode.AuthorizationViolation, `revoked creds: expected ${ErrorCode.AuthorizationViolation}, got ${error?.code} (${error?.message})`);
});

// A request to a subject nobody listens on fails fast with the no-responders error (503),
// not with a timeout.
import { ErrorCode } from "nats";
import { check, connectTo, run, uniquePrefix } from "../lib.mjs";

run("no_responders", async () => {
  const nc = await connectTo();
  const subject = `${uniquePrefix("noresp")}.nobody`;
  for (const noMux of [false, true]) {
    const started = Date.now();
    let error;
    try {
      await nc.request(subject, undefined, { timeout: 8000, noMux });
    } catch (err) {
      error = err;
    }
    check(error !== undefined, `request (noMux=${noMux}) to nobody resolved instead of failing`);
    check(error.code === ErrorCode.NoResponders, `request (noMux=${noMux}) failed with code '${error.code}' (${error.message}), expected '${ErrorCode.NoResponders}'`);
    check(Date.now() - started < 8000, "no-responders error came only after the timeout");
  }
  await nc.close();
});

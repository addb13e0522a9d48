// Shared helpers for the nats.js compatibility scripts.
//
// Every script: `node scripts/<name>.mjs <server-url>` (or NATS_URL in the environment),
// exits 0 on success and non-zero with a reason on stderr on failure. Each script is
// bounded by SCRIPT_TIMEOUT_MS so a hung server cannot hang the test run.
import { connect } from "nats";

/** Overall time limit of one script, in milliseconds. */
export const SCRIPT_TIMEOUT_MS = Number(process.env.SCRIPT_TIMEOUT_MS ?? 30000);

/** Time limit of a single wait inside a script (a message, a reply), in milliseconds. */
export const WAIT_MS = 10000;

/** The server URL: first command-line argument, else NATS_URL. */
export function serverUrl() {
  const url = process.argv[2] ?? process.env.NATS_URL;
  if (!url) {
    fail("no server URL: pass it as the first argument or set NATS_URL");
  }
  return url;
}

/** A subject prefix unique to this run, so scripts sharing a server never see each other's traffic. */
export function uniquePrefix(name) {
  return `js.${name}.${process.pid}.${Date.now().toString(36)}`;
}

/** Connects with the options every script uses: no reconnects, bounded connect timeout. */
export function connectTo(extra = {}) {
  return connect({
    servers: serverUrl(),
    reconnect: false,
    timeout: WAIT_MS,
    name: "courier-integration-js",
    ...extra,
  });
}

export class CheckFailure extends Error {}

/** Throws a CheckFailure with `message` when `condition` is false. */
export function check(condition, message) {
  if (!condition) {
    throw new CheckFailure(message);
  }
}

/** Prints the reason and exits non-zero. */
export function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exit(1);
}

/** Rejects after `ms` with a message naming what was awaited. */
export function within(promise, what, ms = WAIT_MS) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailure(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Consumes a subscription's async iterator once (nats.js allows only one iteration) and
 * hands out its messages in order with `take(n)`, each wait bounded by WAIT_MS.
 */
export function inbox(sub) {
  const messages = [];
  let cursor = 0;
  let wake = () => {};
  let ended = false;
  let endError;
  const done = (async () => {
    try {
      for await (const m of sub) {
        messages.push(m);
        wake();
      }
    } catch (err) {
      endError = err;
    } finally {
      ended = true;
      wake();
    }
  })();
  return {
    /** Resolves when the subscription's iterator has ended; `error()` then tells why. */
    done,
    error: () => endError,
    received: () => messages.length,
    /** The next `count` messages. */
    async take(count, what = `${count} messages`) {
      while (messages.length < cursor + count) {
        if (ended) {
          throw new CheckFailure(`subscription ended (${endError ?? "closed"}) while waiting for ${what}: got ${messages.length - cursor}`);
        }
        await within(new Promise((resolve) => (wake = resolve)), `${what} (got ${messages.length - cursor})`);
      }
      const got = messages.slice(cursor, cursor + count);
      cursor += count;
      return got;
    },
  };
}

/** Runs the script body; exits 0 on success, 1 with the reason otherwise. */
export function run(name, body) {
  const guard = setTimeout(() => fail(`${name}: script exceeded ${SCRIPT_TIMEOUT_MS} ms`), SCRIPT_TIMEOUT_MS);
  body()
    .then(() => {
      clearTimeout(guard);
      console.log(`PASS: ${name}`);
      process.exit(0);
    })
    .catch((err) => {
      clearTimeout(guard);
      const detail = err instanceof CheckFailure ? err.message : (err?.stack ?? String(err));
      const code = err?.code ? ` [code ${err.code}]` : "";
      fail(`${name}: ${detail}${code}`);
    });
}

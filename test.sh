#!/usr/bin/env bash
# Runs every test: installs what the tests need (Debian's nats-server as the reference server,
# chromium for the browser test, docker-compose to check docker-compose.yml, nats.js and nats.ws for the JavaScript client tests), builds
# once, runs `dotnet test` on the solution, and ends with one line: "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")"

if ! command -v nats-server >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's nats-server (reference server for differential tests)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server) >/dev/null
  else
    echo "nats-server is not installed and cannot be installed here: apt-get install nats-server" >&2
  fi
fi

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's chromium (headless browser for the WebSocket browser test)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null
  else
    echo "chromium is not installed and cannot be installed here: apt-get install chromium" >&2
  fi
fi

# mosquitto (the reference broker for the pure MQTT tests) and mosquitto_pub/mosquitto_sub (MQTT clients).
if ! command -v mosquitto_sub >/dev/null 2>&1 || [ ! -x /usr/sbin/mosquitto ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's mosquitto and mosquitto-clients (MQTT reference broker and clients)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mosquitto mosquitto-clients) >/dev/null
  else
    echo "mosquitto is not installed and cannot be installed here: apt-get install mosquitto mosquitto-clients" >&2
  fi
fi

# docker-compose (only its `config` check of docker-compose.yml runs; there is no Docker engine here).
if ! command -v docker-compose >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing Debian's docker-compose (validates docker-compose.yml)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose) >/dev/null
  else
    echo "docker-compose is not installed and cannot be installed here: apt-get install docker-compose" >&2
  fi
fi

js=tests/Courier.Integration.Tests/js
# Installed again whenever the lockfile changed since the last install (a stamp beside the modules).
if [ -f "$js/package-lock.json" ] && ! cmp -s "$js/package-lock.json" "$js/node_modules/.courier-installed-lock"; then
  echo "== installing nats.js, nats.ws and MQTT.js (npm ci)"
  npm ci --prefix "$js" --no-audit --no-fund --loglevel=error && cp "$js/package-lock.json" "$js/node_modules/.courier-installed-lock"
fi

config=${CONFIGURATION:-Release}
echo "== building ($config)"
if ! dotnet build Courier.slnx -c "$config" -warnaserror -nologo -clp:NoSummary -v:q; then
  echo "0 passed, 1 failed, 0 skipped"
  exit 1
fi

log=$(mktemp)
echo "== testing"
# One test assembly at a time: the cluster and integration suites each start many server processes, and
# together on 2 cores they starved one another into timeouts (nats-server included).
dotnet test Courier.slnx -c "$config" --no-build --nologo -m:1 --logger "console;verbosity=normal" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# VSTest ends each test assembly with a totals block:
#   Total tests: 12
#        Passed: 11
#        Failed: 1      (only when non-zero; likewise Skipped)
read -r passed failed skipped assemblies < <(awk '
  /^Total tests: [0-9]+/ { n++ }
  /^ +Passed: [0-9]+$/ { p += $2 }
  /^ +Failed: [0-9]+$/ { f += $2 }
  /^ +Skipped: [0-9]+$/ { s += $2 }
  END { print p+0, f+0, s+0, n+0 }' "$log")
# Name the failed tests again just above the closing line, where a CI log's tail shows them.
grep -E '^ +Failed [A-Za-z_]' "$log" | sed 's/^ */failed: /' | sort -u
rm -f "$log"
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  failed=1 # the run failed outside any test (a crashed test host, a build problem)
fi
if [ "$assemblies" -eq 0 ]; then
  failed=$((failed + 1))
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ]

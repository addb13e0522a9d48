#!/usr/bin/env bash
# Corruption side by side with nats-server (issue 14), not part of the test run: per server, one
# stream of known messages, then per trial one fault (bit flip, truncation, zeroed page, garbage) in
# a copy of its message block files, a restart and a read-back of every sequence. A table at the end.
#   load/corruption.sh --trials 52 [--messages 200] [--servers courier,nats-server] [--seed N] [--out FILE]
# Needs a Release build (dotnet build load/Courier.Load -c Release, which builds the server too).
set -euo pipefail
cd "$(dirname "$0")/.."
exec dotnet run -c Release --no-build --project load/Courier.Load -- corruption "$@"

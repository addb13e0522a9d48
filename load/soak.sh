#!/usr/bin/env bash
# The soak (issue 14), not part of the test run: many connections with a subscription each, core and
# JetStream load, kill -9 and restart of the server every few minutes; a CSV, a PNG and a summary in
# load/results/. Raises the fd limit first: each connection is one fd in this process and one in the
# server (the server inherits the limit).
#   load/soak.sh --connections 10000 --minutes 10 --kill-every 3
# Needs a Release build (dotnet build -c Release Courier.slnx) and gnuplot for the PNG
# (apt-get install -y gnuplot-nox; without it the CSV and summary are still written).
set -euo pipefail
cd "$(dirname "$0")/.."
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
echo "fd limit: $(ulimit -n)"
exec dotnet run -c Release --no-build --project load/Courier.Load -- soak "$@"

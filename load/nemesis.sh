#!/usr/bin/env bash
# The nemesis bench (issue 35), not part of the test run (its short form is: NemesisShortRunTests).
# Per server kind, fault and seed: a fresh cluster of 3 (or 5) nodes, each in a network namespace of its own
# (ip netns, veth pairs into a bridge in a namespace of its own; no iptables), an R3 file stream with
# acknowledged publishes, an R3 bucket with compare-and-set increments and a durable consumer, a seeded
# fault schedule, then healing, and a checker. A README.md table, each run's history (CSV) and a PNG timeline.
#   load/nemesis.sh [--servers courier,nats-server] [--faults partition-one,kill-leader,...] [--seeds 3]
#                   [--first-seed 1] [--seconds 30] [--nodes 3|5] [--out DIR] [--net-id N]
# Faults: partition-one partition-leader partition-half bridge kill kill-leader pause pause-leader
#         power-one power-all corrupt-bit corrupt-truncate (all of them by default), and member (STREAM.PEER.REMOVE
#         of a replica cut off from the others; needs --nodes 5).
# --net-id N (1-99): namespaces nemN-* on 10.77.N.0/24 instead of nem-* on 10.77.0.0/24 (two benches at once).
# Needs root (network namespaces, FUSE for the power faults), a Release build (dotnet build -c Release
# Courier.slnx), gnuplot for the PNGs; as root it installs what is missing (fuse3, libfuse3-dev, gcc, gnuplot-nox).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != "0" ]; then
  echo "the nemesis bench makes network namespaces: run it as root" >&2
  exit 2
fi
need=()
command -v gnuplot >/dev/null 2>&1 || need+=(gnuplot-nox)
pkg-config --exists fuse3 2>/dev/null || need+=(fuse3 libfuse3-dev pkg-config)
command -v gcc >/dev/null 2>&1 || need+=(gcc)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "== installing ${need[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null
fi
exec dotnet load/Courier.Load/bin/Release/net10.0/Courier.Load.dll nemesis "$@"

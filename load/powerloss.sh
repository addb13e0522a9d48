#!/usr/bin/env bash
# Power loss side by side with nats-server (issue 14), not part of the test run: needs FUSE (root,
# /dev/fuse) and apt-get install -y fuse3 libfuse3-dev pkg-config gcc. Builds tools/lazyfs, mounts it
# over a fresh backing directory, and runs the powerloss verb of load/Courier.Load: per server, N
# cycles of publish + consume, kill -9, power cut, restart, check. A table of the results at the end.
#   load/powerloss.sh --cycles 50 --minutes 15 [--servers courier,nats-server] [--cut crash,torn,reorder] [--seed N] [--out FILE]
# Needs a Release build (dotnet build load/Courier.Load -c Release, which builds the server too).
set -euo pipefail
cd "$(dirname "$0")/.."
make -s -C tools/lazyfs
work=$(mktemp -d /tmp/courier-lazyfs-XXXXXX)
mkdir -p "$work/backing" "$work/mnt"
tools/lazyfs/lazyfs "$work/backing" "$work/mnt" -f 2>"$work/lazyfs.log" &
fs=$!
cleanup() {
    fusermount3 -u "$work/mnt" 2>/dev/null || umount -l "$work/mnt" 2>/dev/null || true
    wait "$fs" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 100); do
    [ -e "$work/mnt/.lazyfs" ] && break
    sleep 0.1
done
[ -e "$work/mnt/.lazyfs" ] || { echo "lazyfs did not mount; see $work/lazyfs.log" >&2; cat "$work/lazyfs.log" >&2; exit 1; }
dotnet run -c Release --no-build --project load/Courier.Load -- powerloss --mount "$work/mnt" "$@"
echo "lazyfs counters:"; cat "$work/mnt/.lazyfs"

#!/usr/bin/env bash
# Coverage-guided fuzzing of one target with AFL++ (Debian's afl++) and SharpFuzz, bounded in time.
#   fuzz/run.sh <target> <seconds> [executions]   e.g. fuzz/run.sh nats 300, fuzz/run.sh nats 3600 10000000
# With executions, the run ends at that many (approximately, AFL++'s -E) or at the time bound, whichever comes first.
# Targets: nats config jsapi filestore mqtt websocket (fuzz/Courier.Fuzz/Targets.cs). Starts from
# fuzz/corpus/<target>; findings go to fuzz/out/<target> (git-ignored); prints the executions done.
# Needs: apt-get install afl++; the sharpfuzz tool (dotnet tool install --tool-path fuzz/.tools SharpFuzz.CommandLine).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?target}; seconds=${2:?seconds}; execs=${3:-}
tools=fuzz/.tools
[ -x "$tools/sharpfuzz" ] || dotnet tool install --tool-path "$tools" SharpFuzz.CommandLine --version 2.3.0 >/dev/null
dotnet build fuzz/Courier.Fuzz -c Release -warnaserror -nologo -v:q >/dev/null
work=fuzz/out/$target
rm -rf "$work"; mkdir -p "$work"
cp -r fuzz/Courier.Fuzz/bin/Release/net10.0 "$work/bin"
for dll in Courier.Protocols.dll Courier.Storage.dll courier.dll; do
  "$tools/sharpfuzz" "$work/bin/$dll" >/dev/null
done
export AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
timeout $((seconds + 60)) afl-fuzz -V "$seconds" ${execs:+-E "$execs"} -i "fuzz/corpus/$target" -o "$work/findings" -t 5000 -m none \
  -- dotnet "$work/bin/Courier.Fuzz.dll" "$target" >"$work/afl.log" 2>&1 || true
stats=$work/findings/default/fuzzer_stats
if [ -f "$stats" ]; then
  awk -F: '/^(execs_done|execs_per_sec|saved_crashes|saved_hangs|corpus_count|bitmap_cvg|run_time)/ { gsub(/ /, "", $1); gsub(/^ +/, "", $2); printf "%s=%s ", $1, $2 }' "$stats"
  echo "target=$target"
else
  echo "target=$target: afl-fuzz did not start; see $work/afl.log" >&2; tail -20 "$work/afl.log" >&2; exit 1
fi

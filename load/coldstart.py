#!/usr/bin/env python3
"""Cold start: process start -> ports file, for courier (or nats-server), alone and eight at once.

Usage: python3 load/coldstart.py [COMMAND ...]
  default COMMAND: dotnet src/Gateway/bin/Release/net10.0/r2r/courier.dll (build Release first)
  e.g.:            python3 load/coldstart.py nats-server
Each server gets -a 127.0.0.1 -p -1 --ports_file_dir DIR -js -sd DIR on a fresh temp DIR. Seven
starts alone, then three rounds of eight started together (the slowest of the eight counts), as
client libraries' test launchers start servers and give each about a second. Bounded: every wait
gives up after 10 s; every server it started is killed.
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

LIMIT_S = 10.0

def start(cmd):
    d = tempfile.mkdtemp(prefix="coldstart-")
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd + ["-a", "127.0.0.1", "-p", "-1", "--ports_file_dir", d, "-js", "-sd", d],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, d, t0

def wait(p, d, t0):
    f = os.path.join(d, "nats-server_%d.ports" % p.pid)
    while time.perf_counter() - t0 < LIMIT_S:
        if os.path.exists(f) and os.path.getsize(f) > 0:
            return (time.perf_counter() - t0) * 1000
        time.sleep(0.001)
    return float("nan")

def stop(p, d):
    p.kill()
    p.wait()
    shutil.rmtree(d, ignore_errors=True)

def main():
    cmd = sys.argv[1:] or ["dotnet", "src/Gateway/bin/Release/net10.0/r2r/courier.dll"]
    alone = []
    for _ in range(7):
        p, d, t0 = start(cmd)
        alone.append(wait(p, d, t0))
        stop(p, d)
    together = []
    for _ in range(3):
        procs = [start(cmd) for _ in range(8)]
        together.append(max(wait(*x) for x in procs))
        for p, d, _ in procs:
            stop(p, d)
    print("alone: median %.0f ms (min %.0f, max %.0f); eight at once, slowest of eight: median %.0f ms (min %.0f, max %.0f)"
          % (statistics.median(alone), min(alone), max(alone), statistics.median(together), min(together), max(together)))

if __name__ == "__main__":
    main()

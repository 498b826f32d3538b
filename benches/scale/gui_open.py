#!/usr/bin/env python3
"""Open a dataset in the GUI under Xvfb until its screenshot (every pane drawn), timing it and
sampling the process tree's RSS every 0.2 s; the memscape process is killed (by its pid) when
its RSS passes LIMIT_GB, or its wall time MAX_S when given. Usage: gui_open.py BIN DATASET LABEL LIMIT_GB [MAX_S]
(results in $OUT/LABEL, default /tmp; $GUI_OPEN_RUST_LOG replaces the log filter)"""
import os, subprocess, sys, time, shutil

binary, dataset, label, limit_gb = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
max_s = float(sys.argv[5]) if len(sys.argv) > 5 else None
out = os.path.join(os.environ.get("OUT", "/tmp"), label)
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
env = dict(os.environ, MEMSCAPE_ADAPTER="cpu", XDG_CONFIG_HOME=out, RUST_LOG=os.environ.get("GUI_OPEN_RUST_LOG", "warn,memscape_views::dataset=info"))
cmd = ["xvfb-run", "-a", "-s", "-screen 0 1680x1040x24 -noreset", "/usr/bin/time", "-v", binary, "view", dataset,
       "--window-size", "1600x1000", "--screenshot-timeout", "3000", "--screenshot", f"{out}/window.png"]
start = time.time()
log = open(f"{out}/log.txt", "w")
p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)

def children(pid):
    kids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    parts = f.read().rsplit(")", 1)[1].split()
                if int(parts[1]) == pid:
                    kids.append(int(d))
            except OSError:
                pass
    return kids

def memscape_pid():
    todo, seen = [p.pid], []
    while todo:
        pid = todo.pop()
        seen.append(pid)
        todo += children(pid)
    for pid in seen:
        try:
            if os.readlink(f"/proc/{pid}/exe") == os.path.realpath(binary):
                return pid
        except OSError:
            pass
    return None

peak, killed = 0.0, None
trace = []
while p.poll() is None:
    pid = memscape_pid()
    if pid:
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS"):
                    rss = int(line.split()[1]) / 1e6
                    peak = max(peak, rss)
                    over_time = max_s is not None and time.time() - start > max_s
                    if (rss > limit_gb or over_time) and killed is None:
                        os.kill(pid, 9)
                        killed = time.time() - start
        except OSError:
            pass
    time.sleep(0.2)
    trace.append((round(time.time() - start, 1), round(peak, 2)))
wall = time.time() - start
open(f"{out}/rss.txt", "w").write("\n".join(f"{t} {r}" for t, r in trace[::25]))
log.close()
text = open(f"{out}/log.txt").read()
maxrss = [l for l in text.splitlines() if "Maximum resident" in l or "Elapsed (wall" in l or "User time" in l or "System time" in l]
print(f"{label}: rc {p.returncode} wall {wall:.1f} s, sampled peak RSS {peak:.2f} GB" + (f", KILLED at {killed:.1f} s (past {limit_gb} GB or {max_s} s)" if killed else ""))
for l in maxrss:
    print("   ", l.strip())
print("    screenshot:", os.path.exists(f"{out}/window.png"))
for l in text.splitlines():
    if "samples read" in l or "blocks read" in l:
        print("   ", l.strip()[-160:])

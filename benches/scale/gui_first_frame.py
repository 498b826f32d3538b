#!/usr/bin/env python3
"""Open a dataset in the GUI under its own Xvfb (display :77, started beforehand:
`Xvfb :77 -screen 0 1680x1040x24 -noreset &`) until its screenshot, grabbing the window at
2, 4, 6, 8, 12, 20 and 30 s (what was drawn before every pane was ready) and printing the log's
milestones from the start (blocks read, first frame, the engine's level, the switch to the
index, the screenshot) with /usr/bin/time -v's CPU and peak RSS. Usage: gui_first_frame.py BIN
DATASET OUT (BENCHMARKS.md, wave 18). GUI_DISPLAY=:N picks another display (wave 19)."""
import sys, time, subprocess, os
from PIL import ImageGrab
binary, dataset, out = sys.argv[1], sys.argv[2], sys.argv[3]
display = os.environ.get("GUI_DISPLAY", ":77")
os.makedirs(out, exist_ok=True)
env = dict(os.environ, DISPLAY=display, MEMSCAPE_ADAPTER="cpu", XDG_CONFIG_HOME=out,
           RUST_LOG="warn,memscape_views::dataset=info,memscape::panes=info,memscape::app=debug,memscape_engine=debug")
start = time.time()
log = open(f"{out}/log.txt", "w")
p = subprocess.Popen(["/usr/bin/time", "-v", binary, "view", dataset, "--window-size", "1600x1000",
     "--screenshot-timeout", "3000", "--screenshot", f"{out}/window.png"], stdout=log, stderr=subprocess.STDOUT, env=env)
k = 0
for t in [2, 4, 6, 8, 12, 20, 30]:
    while time.time() - start < t and p.poll() is None:
        time.sleep(0.2)
    if p.poll() is not None:
        break
    ImageGrab.grab(xdisplay=display).save(f"{out}/at{t:03d}s.png")
p.wait()
print(out, "wall", round(time.time() - start, 1))
import re, datetime
text = open(f"{out}/log.txt").read()
def ts(line):
    m = re.match(r"(\S+Z)", line)
    return datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp() if m else None
for l in text.splitlines():
    if any(k in l for k in ["blocks read", "first frame drawn", "levels built by", "level built by", "newer level-of-detail", "ready frame", "kept at", "heap timeline"]):
        t = ts(l)
        print(f"   +{t - start:6.1f} s" if t else "", l[l.find(" ", 30):][:150])
    if "Maximum resident" in l or "User time" in l or "System time" in l:
        print("   ", l.strip())

# Runs a command; prints its wall time and peak RSS (the device image may lack /usr/bin/time).
import resource, subprocess, sys, time
t = time.time()
r = subprocess.run(sys.argv[1:])
print(f"wall {time.time() - t:.2f} s, peak RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB, rc {r.returncode}")
sys.exit(r.returncode)

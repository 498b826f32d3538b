#!/usr/bin/env bash
# The live view's rate in the real window: `memscape record --live` on gcc's cc1plus compiling
# benches/record/heavy.cpp (e2e.sh's C++ case, ~6 M events, ~3 M blocks), the GUI under
# xvfb-run on lavapipe (MEMSCAPE_ADAPTER=cpu), ended by `--screenshot` once the finished file
# is drawn. Prints the snapshots the views showed while the program ran and their rate
# (`live snapshot shown` log lines: each is a snapshot every pane of the recording swapped
# in), the median time from a snapshot handed to the panes to all of them showing it, the
# snapshot side (copy-out with symbolization of the new call-tree nodes, allocation-map
# scene), the peak RSS of the whole run (`/usr/bin/time -v`: memscape, window and
# recorder; the recorded program is a child and not counted) and its CPU time.
#
#   benches/record/live.sh            (MEMSCAPE: the binary, default target/release/memscape,
#                                      built when missing; PROFILE=dev uses target/debug)
#   LIVE_LOG=…,memscape::frames=trace      (the log's filter: default warn,memscape::live=debug,
#                                      memscape::scene=debug; frames= adds each frame's causes)
#   WORKLOAD=small benches/record/live.sh   (instead of cc1plus: a small C program, 60 bursts
#                                      of 2,000 allocations 150 ms apart, ~160 k events)
#
# Needs g++, xvfb-run, Mesa's lavapipe, /usr/bin/time; cargo.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
profile=${PROFILE:-release}
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
memscape=${MEMSCAPE:-$CARGO_TARGET_DIR/$dir/memscape}
if [ -z "${MEMSCAPE:-}" ]; then
    (cd "$root" && CARGO_INCREMENTAL=0 cargo build -q --profile "$profile" -p memscape -p memscape-recorder)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/benches/record/heavy.cpp" "$work/heavy.cpp"
cd "$work"
if [ "${WORKLOAD:-cc1plus}" = small ]; then
    cat > grow.c <<'C'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void *keep[65536];
static void *make_node(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
int main(void) {
    for (int round = 0; round < 60; round++) {
        for (int i = 0; i < 2000; i++) {
            int k = round * 2000 + i;
            keep[k % 65536] = make_node(32 + (k % 13) * 40);
            if (k % 3 == 0) { free(keep[(k * 7) % 65536]); keep[(k * 7) % 65536] = 0; }
        }
        usleep(150000);
    }
    return 0;
}
C
    gcc -O1 -g -o grow grow.c
    program=(./grow)
else
    cc1plus=$(g++ -print-prog-name=cc1plus)
    program=("$cc1plus" -quiet -imultiarch x86_64-linux-gnu -D_GNU_SOURCE heavy.cpp -quiet
        -dumpbase heavy.cpp -dumpbase-ext .cpp -mtune=generic -march=x86-64 -O2 -o heavy.s)
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
RUST_LOG=${LIVE_LOG:-warn,memscape::live=debug,memscape::scene=debug},memscape_record=info MEMSCAPE_ADAPTER=cpu \
    /usr/bin/time -v -o time.txt \
    xvfb-run -a -s "-screen 0 1600x1000x24" "$memscape" record --live --screenshot "$work/shot.png" \
    -o cc.msc -- "${program[@]}" > log.txt 2>&1
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -o 'recorded [0-9]* events.*' log.txt || { tail -20 log.txt; exit 1; }
# ISO time of a log line → seconds.
secs() { sed -E 's/^([0-9-]+)T([0-9:.]+)Z.*/\2/' | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }'; }
shown=$(grep 'live snapshot shown' log.txt | grep -v 'events=0 ' || true)
count=$(printf '%s' "$shown" | grep -c . || true)
first=$(grep -m1 'live snapshot handed' log.txt | secs)
last=$(grep -m1 'the finished recording handed' log.txt | secs)
span=$(echo "$last - $first" | bc -l)
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
apply=$(printf '%s\n' "$shown" | grep -o 'apply_ms=[0-9.]*' | cut -d= -f2 | median)
snap=$(grep 'snapshot made' log.txt | grep -o 'snapshot_and_symbolize_ms=[0-9.]*' | cut -d= -f2 | median)
scene=$(grep 'snapshot made' log.txt | grep -o 'scene_ms=[0-9.]*' | cut -d= -f2 | median)
rss=$(grep 'Maximum resident' time.txt | grep -o '[0-9]*$')
printf 'snapshots shown while recording: %s in %.1f s = %.2f updates/s\n' "$count" "$span" \
    "$(echo "if ($span > 0) $count / $span else 0" | bc -l)"
# The same while the program ran: the span above also holds what follows the program's exit
# (the last segment and the footer written, the finished dataset made from the recording's
# trace: about a second in a dev build, BENCHMARKS "wave 23"; before, the whole file encoded and
# read back), in which no update can be shown. The program's end: memscape_record's "run" phase.
ran=$(grep -m1 'phase="run"' log.txt | secs || true)
if [ -n "$ran" ]; then
    during=$(printf '%s\n' "$shown" | secs | awk -v end="$ran" '$1 <= end' | grep -c . || true)
    rspan=$(echo "$ran - $first" | bc -l)
    printf 'while the program ran: %s shown in %.1f s = %.2f updates/s (%.1f s from its exit to the finished view)\n' \
        "$during" "$rspan" "$(echo "if ($rspan > 0) $during / $rspan else 0" | bc -l)" \
        "$(echo "$last - $ran" | bc -l)"
fi
printf 'median: handed → shown %.0f ms; snapshot + symbolization %.0f ms; scene %.0f ms\n' \
    "$apply" "$snap" "$scene"
echo "peak RSS: $((rss / 1024)) MiB"
echo "file: $(stat -c %s cc.msc) bytes"
# CPU of the whole run (memscape, its window, the recorder, Xvfb and the recorded program): on
# a shared machine the wall-clock rate measures the other work too, the CPU much less.
user=$(grep 'User time' time.txt | grep -o '[0-9.]*$')
sys=$(grep 'System time' time.txt | grep -o '[0-9.]*$')
printf 'CPU: %.1f s user + %.1f s system = %.2f CPU-s per snapshot shown\n' "$user" "$sys" \
    "$(echo "if ($count > 0) ($user + $sys) / $count else 0" | bc -l)"
grep 'the finished recording handed' log.txt | grep -o 'shown=.*'
# The scene's occupancy sweep per snapshot (ms; where it started: 0 = from the first event).
metrics=$(grep 'allocation-map scene' log.txt | grep -o '"region metrics", [0-9.]*' | grep -o '[0-9.]*$' || true)
# ("blocks continued": the last snapshot's arrays continued, only the new blocks laid out.)
blocksms=$(grep 'allocation-map scene' log.txt | grep -o '("blocks[a-z ]*", [0-9.]*' | grep -o '[0-9.]*$' || true)
if [ -n "$metrics" ]; then
    echo "scene phases' ends (ms from the scene's start), per snapshot: blocks $(echo $blocksms), region metrics $(echo $metrics)"
fi
swept=$(grep 'allocation-map scene' log.txt | grep -o 'swept_from=[0-9]*' | tr '\n' ' ' || true)
[ -n "$swept" ] && echo "occupancy sweep of each scene started at event: $swept"

[ -n "${KEEP_LOG:-}" ] && cp log.txt "$KEEP_LOG"
true

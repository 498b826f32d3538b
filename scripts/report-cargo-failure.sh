#!/usr/bin/env bash
# Printed when a cargo step of `make test` fails: cargo's error lines without the linker's
# command line (one line of many KB that pushes the cause out of a log's tail), then the disk
# and memory, since a full disk shows up as a linker crash (SIGBUS) rather than as ENOSPC.
#   scripts/report-cargo-failure.sh STEP LOG
step=$1
log=$2
echo
echo "memscape: \`$step\` failed; its error lines (the whole output: $log):"
if [ -f "$log" ]; then
  grep -E '^error|^warning: build failed|^ += note: |panicked at|^test .* FAILED|^failures:|signal [0-9]+|No space left|Bus error|Killed|out of memory' "$log" \
    | cut -c1-400 | grep -v '^ *= note: .*"-Wl,' | tail -n 60
fi
echo "memscape: disk and memory at the failure:"
df -h . /tmp 2>/dev/null
du -sh target 2>/dev/null
free -g 2>/dev/null

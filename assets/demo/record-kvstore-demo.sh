#!/usr/bin/env bash
# Records memscape's embedded demo allocation trace with memscape's own recorder: the
# multi-threaded key-value service of kvstore.c (threads, call stacks, nanosecond times; the
# call sites are symbolized at record time, so the demo needs no binary to show them).
# Needs gcc and a built memscape (make build).
#
#   assets/demo/record-kvstore-demo.sh [MEMSCAPE]    (default: target/debug/memscape)
#
# Writes assets/demo/kvstore.msc next to this script.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
memscape=$(realpath "${1:-$here/../../target/debug/memscape}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# -O0 keeps every function its own frame (call sites read as the functions of the source);
# compiled from its own directory with the prefix mapped away, so that the recorded file name
# is plain `kvstore.c`, not this machine's path.
(cd "$here" && gcc -O0 -g -pthread -fdebug-prefix-map="$here"=. -o "$work/kvstore" kvstore.c)
# Run as ./kvstore, which is the command line the trace keeps.
(cd "$work" && "$memscape" record -o kvstore.msc -- ./kvstore)
cp "$work/kvstore.msc" "$here/kvstore.msc"
echo "wrote $here/kvstore.msc: $(stat -c %s "$here/kvstore.msc") bytes"

#!/bin/sh
# Records assets/demo/sort.lackey.zst: a valgrind lackey trace of sort.c, trimmed to the
# instructions of the program's own code (.text of the executable: main, insertion_sort,
# bubble_sort), which drops the dynamic loader and libc (most of a whole-process trace).
# Needs gcc, valgrind, binutils (readelf) and zstd. Also writes assets/demo/sort, the traced binary.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# -no-pie: the trace's instruction addresses are the link addresses, so `memscape cycles
# --binary sort` works without a load base and the trimming below needs no relocation.
# The binary is kept as assets/demo/sort (embedded beside the trace, so that the demo's cycle
# views show functions and source lines); -fdebug-prefix-map makes its source path `./sort.c`,
# which memscape resolves beside the binary.
(cd "$here" && gcc -O0 -g -no-pie -fdebug-prefix-map="$here"=. -o sort sort.c)
valgrind --tool=lackey --trace-mem=yes --log-file="$work/sort.lackey" "$here/sort" >/dev/null

# .text of the executable: "[Nr] .text PROGBITS <addr> <off>" and size on the next line.
read -r text_start text_size <<EOF2
$(readelf -SW "$here/sort" | awk '$2 == ".text" { print $4, $6 }')
EOF2
# Keep valgrind's header lines, every `I` line inside .text and the data accesses that follow
# it (they belong to that instruction).
awk -v lo="$((0x$text_start))" -v size="$((0x$text_size))" '
    function hex(s,   i, c, v) { v = 0; s = tolower(s)
        for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
        return v }
    /^==/ { if (header++ < 8) print; next }
    /^I  / { split(substr($0, 4), f, ","); a = hex(f[1]); keep = (a >= lo && a < lo + size); if (keep) print; next }
    keep { print }
' "$work/sort.lackey" > "$work/sort.trimmed.lackey"

zstd -q -19 -f "$work/sort.trimmed.lackey" -o "$here/sort.lackey.zst"
echo "wrote $here/sort.lackey.zst: $(wc -l < "$work/sort.trimmed.lackey") lines," \
     "$(wc -c < "$here/sort.lackey.zst") bytes compressed"

#!/usr/bin/env bash
# Writes the fuzzers' seed inputs to fuzz/seeds/<target>/ from the real files in
# ../shared/data and the embedded demo (assets/demo), each cut to its first 16 KiB (at a line
# end for text; BGV and profiles 64 KiB), plus a few crafted ones for formats without a real file here. Other
# projects' files are read from ../shared/data at run time, never committed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${MEMSCAPE_DATA:-$root/../shared/data}
demo=$root/assets/demo
out=$root/fuzz/seeds
rm -rf "$out"
mkdir -p "$out"
seed() { # target name < content
    mkdir -p "$out/$1"
    head -c 16384 >"$out/$1/$2" || true
}
text() { # target name file: decompressed, cut to 16 KiB at a line end
    mkdir -p "$out/$1"
    {
        case "$3" in
        *.zst) zstd -dc "$3" ;; *.gz) gzip -dc "$3" ;; *.bz2) bzip2 -dc "$3" ;; *) cat "$3" ;;
        esac || true # the reader stops at 16 KiB: SIGPIPE is expected
    } | head -c 16384 | sed '$ { /[^\n]$/d }' >"$out/$1/$2" || true
}
text heaptrack sqlite_1M.raw "$data/heaptrack/sqlite_1M.raw.zst"
text heaptrack test_sysroot.raw "$data/heaptrack/test_sysroot.raw"
text heaptrack david.processed "$data/heaptrack/heaptrack.david.18594.gz"
text heaptrack sqlite-small.raw "$demo/sqlite-small.heaptrack.raw.zst"
printf 'time,op,address,size,thread,site,old_address,usable_size\n1,alloc,0x1000,16,main,"std::map<int, double>::insert",,24\n2,realloc,0x2000,32,main,"f (a.c:1)",0x1000,40\n3,free,0x2000,,main,,,\n4,alloc,4096,8,"worker, 2","two\nlines",,\n' | seed alloc_csv quoted.csv
printf 'time,op,address,size\n1,alloc,0x10,8\n2,free,0x10,\n' | seed alloc_csv minimal.csv
mkdir -p "$out/msc" "$out/msc_mapped"
head -c 16384 "$demo/kvstore.msc" >"$out/msc/kvstore-head.msc"
# Small whole files in both layouts, from the heaptrack test file.
bin=${MEMSCAPE_BIN:-$root/target/debug/memscape}
if [ -x "$bin" ]; then
    "$bin" convert "$data/heaptrack/test_sysroot.raw" "$out/msc/test_sysroot.msc" >/dev/null
    "$bin" convert "$demo/sqlite-small.heaptrack.raw.zst" "$out/msc/sqlite-small.msc" >/dev/null
fi
for f in "$out"/msc/*; do cp "$f" "$out/msc_mapped/"; done
# The recorder's raw files: record a small program through the shim.
shim=${MEMSCAPE_SHIM:-$root/target/debug/libmemscape_recorder.so}
if [ -f "$shim" ]; then
    rec=$(mktemp -d)
    LD_PRELOAD=$shim MEMSCAPE_RECORD_DIR=$rec MEMSCAPE_STACK_DEPTH=4 sh -c 'ls / >/dev/null; sort </dev/null' || true
    mkdir -p "$out/msr"
    n=0
    for f in "$rec"/*.msr; do
        [ -f "$f" ] || continue
        head -c 16384 "$f" >"$out/msr/rec$n.msr"
        n=$((n + 1))
    done
    rm -rf "$rec"
fi
text massif kate "$data/massif/massif.out.kate"
text massif stack "$data/massif/massif.out.stack"
text massif 32406 "$data/massif/massif.out.32406"
text reference_trace sort.lackey "$demo/sort.lackey.zst"
printf '0x4005d6: W 0x7ffd8d1c\n0x4005da: R 0x601040 8\n#eof\n' | seed reference_trace pinatrace.out
printf 'ip,address,kind,size\n0x10,0x20,load,8\n17,32,S,4\n"0x11","0x28",modify,8\n' | seed reference_trace refs.csv
text samples_csv lulesh.samples "$data/memaxes/lulesh/samples.out"
printf 'source,line,instruction,bytes,ip,variable,buffer_size,dims,xidx,yidx,zidx,pid,tid,time,addr,cpu,latency,data_src\na.c,3,mov,8,4198400,buf,64,1,0,0,0,10,11,1000,140000,1,12,2\n"b.c",4,"mov",8,4198404,"std::map<int, double>",64,1,1,0,0,10,11,1001,140008,1,30,68100142\n' | seed samples_csv mitos.csv
printf '            lulesh 4242 [003] 12345.678901:      30 cpu/mem-loads,ldlat=30/P:     7ffd0a1b2c30         68100142 |OP LOAD|LVL L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A        34 401a2b CalcForce+0x2b (/home/u/lulesh)\nmy prog 17/18 [000] 1.5: cpu/mem-loads/P: 1000 0 |OP LOAD|LVL N/A|SNP N/A| 120 0 0 ffffffff81001234 [unknown] ([kernel.kallsyms])\n' | seed perf_script perf.txt
for f in "$data"/hwloc/*.xml; do text hwloc_xml "$(basename "$f")" "$f"; done
if command -v lstopo >/dev/null; then
    lstopo --input "pack:1 l3:1 group:2 [numa] core:2 pu:1" --of xml --export-xml-flags v1 - | seed hwloc_xml v1-numa-under-l3.xml
fi
text memaxes_hardware hardware.xml "$data/memaxes/lulesh/hardware.xml"
text igv_xml example.xml "$data/igv/example.xml"
text dot tokenize-cfg.dot "$demo/tokenize-cfg.dot.zst"
printf 'strict digraph "g" {\n  a -> b [label="x, y"];\n  subgraph cluster_0 { c; d -> a }\n  /* comment */ e [shape=record, label="{<p> one | two}"];\n}\n' | seed dot crafted.dot
text ripser random16 "$data/ripser/random16.lower_distance_matrix"
text ripser sphere "$data/ripser/sphere_3_192.lower_distance_matrix"
# Graal's BGV dumps: whole when under 64 KiB (fib-java), else their first 64 KiB.
mkdir -p "$out/bgv"
for f in "$data"/bgv/*.bgv.gz; do
    { gzip -dc "$f" || true; } | head -c 65536 >"$out/bgv/$(basename "$f" .gz)"
done
# Heap profiles: pprof and the legacy text profile from a Go program (runtime/pprof, Debian's
# golang-go), pprof exported by memscape from the demo's sqlite trace, DHAT JSON from valgrind.
mkdir -p "$out/pprof" "$out/heap_text" "$out/dhat"
if command -v go >/dev/null; then
    gotmp=$(mktemp -d)
    cat >"$gotmp/leak.go" <<'GO'
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var leaked [][]byte

//go:noinline
func leak(n int) { leaked = append(leaked, make([]byte, n)) }

func main() {
	runtime.MemProfileRate = 1
	for i := 0; i < 300; i++ {
		leak(64 + i)
	}
	runtime.GC()
	f, _ := os.Create(os.Args[1] + "/heap.pb.gz")
	pprof.WriteHeapProfile(f)
	f.Close()
	f, _ = os.Create(os.Args[1] + "/legacy.heap")
	pprof.Lookup("heap").WriteTo(f, 1)
	f.Close()
}
GO
    if GOCACHE=$gotmp/cache GOPATH=$gotmp/path HOME=$gotmp GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local \
        go run "$gotmp/leak.go" "$gotmp" >/dev/null 2>&1; then
        gzip -dc "$gotmp/heap.pb.gz" | head -c 65536 >"$out/pprof/go-heap.pb"
        text heap_text go-legacy.heap "$gotmp/legacy.heap"
    fi
    rm -rf "$gotmp"
fi
if [ -x "$bin" ]; then
    "$bin" export --to pprof -o "$out/pprof/sqlite.pb.gz" "$demo/sqlite-small.heaptrack.raw.zst" >/dev/null 2>&1 &&
        gzip -dc "$out/pprof/sqlite.pb.gz" | head -c 65536 >"$out/pprof/sqlite.pb" || true
    rm -f "$out/pprof/sqlite.pb.gz"
fi
printf 'heap profile:   2:   96 [   3:  160] @ heapprofile\n   1:   64 [   2:  128] @ 0x401000 0x402000\n   1:   32 [   1:   32] @ 0x401000\n\nMAPPED_LIBRARIES:\n00400000-00403000 r-xp 00000000 08:01 123 /usr/bin/prog\n' | seed heap_text gperftools.heap
if command -v valgrind >/dev/null; then
    dhat=$(mktemp)
    valgrind --tool=dhat --dhat-out-file="$dhat" ls / >/dev/null 2>&1 || true
    head -c 65536 "$dhat" >"$out/dhat/ls.dhat.json"
    rm -f "$dhat"
fi
for f in "$root"/crates/memscape-graph/profiles/*.toml; do text filter_profile "$(basename "$f")" "$f"; done
# Tours: the shipped demo tour and a tour recorded from the GUI (the test fixture).
text tour demo-tour.toml "$root/assets/demo/tour.toml"
text tour gui-recorded-tour.toml "$root/tests/fixtures/gui-recorded-tour.toml"
# Every view, and lists as arrays (the text form is what tours are written in; arrays of
# items with spaces or commas once wrote back as other lists).
printf '[[step]]\nfile = "demo"\nview = "alloc-map"\npanels = ["main", " occupancy"]\ncursors = [10, 20]\n[[step]]\nview = "timeline"\n[[step]]\nview = "sunburst"\npeak = true\n[[step]]\nfile = "demo:sort"\nview = "barcode"\n[[step]]\nview = "projection"\n[[step]]\nfile = "s.csv"\nview = "offenders"\nselect = ["latency=1..30"]\naxes = ["latency", "cpu, node"]\n[[step]]\nview = "histogram"\n' | seed tour every-view.toml
mkdir -p "$out/decompress"
printf 'hello\nworld\n' | zstd -q -c >"$out/decompress/a.zst"
printf 'hello\nworld\n' | gzip -c >"$out/decompress/a.gz"
printf 'hello\nworld\n' | bzip2 -c >"$out/decompress/a.bz2"
echo "seeds in $out: $(find "$out" -type f | wc -l) files"

#!/usr/bin/env bash
# Benchmark simrec on a large Elodin replay (see docs/performance.md, section Elodin).
#
# Generates bench-data/elodin/gen (gitignored) with bench/gen_elodin.rs: body.parquet with
# BODIES x (TICKS+1) rows (default 2000 x 601, about 150 MB with ZSTD), then measures, each
# RUNS times (best wall time kept) with /usr/bin/time -v:
#   read : simrec validate gen   (every row and value decoded and checked)
#   write: simrec convert gen -o out/ --force   (read + write of the whole replay)
# and prints MB/s of body.parquet and peak RSS.
#
# Usage: bench/elodin.sh [BODIES] [TICKS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
bodies="${1:-2000}"
ticks="${2:-600}"
runs="${3:-3}"
data=bench-data/elodin
mkdir -p "$data"
cargo build --release --quiet --bin simrec --example gen_elodin
bin=target/release/simrec
if [ ! -f "$data/gen/body.parquet" ] || [ "$(cat "$data/gen.params" 2>/dev/null)" != "$bodies $ticks" ]; then
    rm -rf "$data/gen"
    target/release/examples/gen_elodin "$data/gen" "$bodies" "$ticks"
    echo "$bodies $ticks" > "$data/gen.params"
fi
size=$(stat -c %s "$data/gen/body.parquet")
echo "body.parquet: $size bytes ($bodies bodies x $((ticks + 1)) ticks)"

measure() { # label, command...
    local label=$1; shift
    local best="" rss=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -v "$@" > /dev/null 2> "$data/time.log" || { cat "$data/time.log"; exit 1; }
        local wall kb
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$data/time.log" |
            awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
        kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$data/time.log")
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; fi
        if [ -z "$rss" ] || [ "$kb" -gt "$rss" ]; then rss=$kb; fi
    done
    awk -v l="$label" -v s="$size" -v t="$best" -v r="$rss" \
        'BEGIN { printf "%-6s %6.2f s  %7.1f MB/s of body.parquet  peak RSS %.1f MiB\n", l, t, s / 1e6 / t, r / 1024 }'
}

measure read "$bin" validate "$data/gen"
measure write "$bin" convert "$data/gen" -o "$data/out/" --to elodin --force
out=$(stat -c %s "$data/out/body.parquet")
echo "written body.parquet: $out bytes"
"$bin" validate "$data/out" | head -1

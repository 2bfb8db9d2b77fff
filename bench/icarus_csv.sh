#!/usr/bin/env bash
# Benchmark the Icarus CSV reader and writer (see docs/performance.md, section Icarus CSV).
#
# Generates bench-data/icarus-csv/full.csv (gitignored) with bench/gen_icarus_csv.rs: ROWS
# rows of time + COLS full-precision doubles (default 75 000 x 200, about 290 MB), and its
# Icarus-style copy short.csv (every value %.15g, written by simrec). Then measures, each
# RUNS times (best wall time kept) with /usr/bin/time -v:
#   read     : simrec validate short.csv   (every cell parsed, every rule checked)
#   convert  : simrec convert full.csv -o out.csv   (read + %.15g of every value: the
#              formatting-bound conversion; exit 3, the digits beyond 15 are counted)
#   roundtrip: simrec convert short.csv -o out.csv  (Icarus style in and out; exit 0)
# and prints MB/s of the input, values/s and peak RSS. bench/g15_speed.rs times the
# formatter alone against snprintf.
#
# Usage: bench/icarus_csv.sh [ROWS] [COLS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
rows="${1:-75000}"
cols="${2:-200}"
runs="${3:-3}"
data=bench-data/icarus-csv
mkdir -p "$data"
cargo build --release --quiet --bin simrec --example gen_icarus_csv --example g15_speed
bin=target/release/simrec
if [ ! -f "$data/full.csv" ] || [ "$(cat "$data/gen.params" 2>/dev/null)" != "$rows $cols" ]; then
    target/release/examples/gen_icarus_csv "$data/full.csv" "$rows" "$cols"
    "$bin" convert "$data/full.csv" -o "$data/short.csv" --force 2>/dev/null || [ $? = 3 ]
    echo "$rows $cols" > "$data/gen.params"
fi
values=$((rows * cols))

measure() { # label, input, command...
    local label=$1 input=$2; shift 2
    local best="" cpu="" rss="" size
    size=$(stat -c %s "$input")
    for _ in $(seq "$runs"); do
        /usr/bin/time -v "$@" > /dev/null 2> "$data/time.log" || [ $? = 3 ] || { cat "$data/time.log"; exit 1; }
        local wall kb used
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$data/time.log" |
            awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
        used=$(awk -F': ' '/User time|System time/ {t += $2} END {print t}' "$data/time.log")
        kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$data/time.log")
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; fi
        if [ -z "$cpu" ] || awk "BEGIN{exit !($used < $cpu)}"; then cpu=$used; fi
        if [ -z "$rss" ] || [ "$kb" -gt "$rss" ]; then rss=$kb; fi
    done
    # On a shared machine the wall time includes other processes' turns: the CPU time (user
    # + system) is the work simrec did, and the throughput is given on both.
    awk -v l="$label" -v s="$size" -v t="$best" -v c="$cpu" -v r="$rss" -v n="$values" \
        'BEGIN { printf "%-9s wall %6.2f s (%6.1f MB/s)  CPU %6.2f s (%6.1f MB/s, %5.1f M values/s) of %d MB  peak RSS %.1f MiB\n", l, t, s / 1e6 / t, c, s / 1e6 / c, n / 1e6 / c, s / 1e6, r / 1024 }'
}

echo "$rows rows x $cols signals ($values values); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
measure read "$data/short.csv" "$bin" validate "$data/short.csv"
measure convert "$data/full.csv" "$bin" convert "$data/full.csv" -o "$data/out.csv" --force
measure roundtrip "$data/short.csv" "$bin" convert "$data/short.csv" -o "$data/out.csv" --force
cmp "$data/short.csv" "$data/out.csv" && echo "roundtrip output identical to its input"
rm -f "$data/out.csv"
target/release/examples/g15_speed 2000000

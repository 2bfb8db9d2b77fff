#!/usr/bin/env bash
# Benchmark simrec on a large Elodin DB directory (docs/performance.md, "Elodin DB").
#
# Generates WORKDIR/gen (default bench-data/elodin-db/gen, gitignored) with
# bench/elodin_db_gen.py: 100 entities x 4 components x 90,000 rows, about 1.0 GB of rows,
# then measures with /usr/bin/time, each RUNS times (best wall and CPU kept, largest RSS):
#   inspect : headers and first/last timestamps only
#   validate: every row and timestamp decoded and checked (the full decode)
#   write   : simrec convert gen -o out/ --force (a full read plus a full write of the DB)
# and prints MB/s of committed bytes (rows + index) by wall and by CPU time.
#
# Usage: bench/elodin_db.sh [WORKDIR] [ENTITIES] [ROWS]   (RUNS, SIMREC from the environment)
set -euo pipefail
cd "$(dirname "$0")/.."
work="${1:-bench-data/elodin-db}"
entities="${2:-100}"
rows="${3:-90000}"
runs="${RUNS:-3}"
if [ -z "${SIMREC:-}" ]; then
    cargo build --release --quiet --bin simrec
    SIMREC=target/release/simrec
fi
mkdir -p "$work"
if [ ! -f "$work/gen/db_state" ] || [ "$(cat "$work/gen.params" 2>/dev/null)" != "$entities $rows" ]; then
    rm -rf "$work/gen"
    python3 bench/elodin_db_gen.py "$work/gen" "$entities" "$rows" >/dev/null
    echo "$entities $rows" > "$work/gen.params"
fi
bytes=$(find "$work/gen" -name data -o -name index | xargs stat -c %s | awk '{s += $1 - 16} END {print s}')
echo "DB: $bytes bytes of committed rows and timestamps ($entities entities x 4 components x $rows rows); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %9s %9s %10s %10s %9s\n' command "wall s" "cpu s" "MB/s wall" "MB/s cpu" "RSS MiB"
measure() { # label, command...
    local label=$1; shift
    local wall="" cpu="" rss=0
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %U %S %M" -o "$work/time.out" "$@" >/dev/null 2>&1 || true
        read -r w u s kb < <(tail -n 1 "$work/time.out")
        c=$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')
        if [ -z "$wall" ] || awk -v a="$w" -v b="$wall" 'BEGIN {exit !(a < b)}'; then wall=$w; fi
        if [ -z "$cpu" ] || awk -v a="$c" -v b="$cpu" 'BEGIN {exit !(a < b)}'; then cpu=$c; fi
        [ "$kb" -gt "$rss" ] && rss=$kb
    done
    awk -v l="$label" -v w="$wall" -v c="$cpu" -v b="$bytes" -v r="$rss" 'BEGIN {
        printf "%-9s %9.3f %9.2f %10.0f %10.0f %9.1f\n", l, w, c, (w > 0 ? b / w / 1e6 : 0), (c > 0 ? b / c / 1e6 : 0), r / 1024 }'
}
measure inspect "$SIMREC" inspect "$work/gen"
measure validate "$SIMREC" validate "$work/gen"
measure write "$SIMREC" convert "$work/gen" -o "$work/out/" --force
rm -rf "$work/out"

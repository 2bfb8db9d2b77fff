#!/usr/bin/env bash
# Benchmark of the lake (`--to lake`, issue 30 item 5; docs/performance.md, "Lake"), side by
# side with the wide table (`--to parquet`) on the same inputs: one large recording of every
# format (bench/inputs.sh; made in WORKDIR the first time, only read after that). Per input
# and output: the best wall time and the best user+sys CPU seconds over RUNS runs (default 3),
# MB/s of input by wall time and CPU-s per MB (what a busy machine does not change), and the
# peak RSS (GNU time). Then `convert --each` of all the inputs to one lake with `--jobs 2`:
# its peak RSS. The goals: the lake at >= 150 MB/s of input for every family, <= 128 MiB
# peak RSS with --jobs 2. The load average is printed before and after. To check that a change
# keeps the lake's contents, write the inputs' lake with both binaries and compare them:
# python3 bench/lake-compare.py LAKE_BEFORE LAKE_AFTER (pyarrow; same rows in the same order).
#
# With LARGE_ELODIN=1, also the Elodin family's large inputs, after the --each run (not in
# it): the replay bench/elodin.sh makes (bench-data/elodin/gen, 157.6 MB) and the DB
# bench/elodin_db.sh makes (bench-data/elodin-db/gen, 1.37 GB).
#
# Usage: bench/lake.sh [WORKDIR]   (default bench-data/compare; SIMREC=binary, default
# target/release/simrec; outputs go to a temporary folder under bench-data/, deleted at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
simrec="$(realpath "${SIMREC:-target/release/simrec}")"
work="${1:-bench-data/compare}"
runs="${RUNS:-3}"
mkdir -p "$work" bench-data
work="$(realpath "$work")"
out="$(mktemp -d "$PWD/bench-data/lake-out.XXXXXX")"
trap 'rm -rf "$out"' EXIT
# shellcheck source=bench/inputs.sh
. bench/inputs.sh
make_inputs "$simrec" "$work"

# label|inputs (a NanoVer pair is one recording)
inputs=(
    "nanover legacy|$work/legacy.traj $work/legacy.state"
    "nanover zip|$work/run.nanover.zip"
    "icarec|$work/run.icarec"
    "icarus hdf5|$work/run.h5"
    "icarus csv|$work/run.csv"
    "elodin replay|$work/elodin"
    "3es|$work/run.3es"
    "xrec|$work/run.xrec"
)

bytes() { du -cbL "$@" | tail -1 | cut -f1; }

# One run: prints "wall cpu rss_kib exit".
once() {
    rm -rf "$out/lake" "$out/wide.parquet"
    local code=0
    /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$@" >/dev/null 2>"$out/err" || code=$?
    tail -1 "$out/time" | awk -v code="$code" '{ printf "%s %.2f %s %s\n", $1, $2 + $3, $4, code }'
}

# label, bytes, command...: the best of RUNS runs, as a row of the table.
measure() {
    local label="$1" size="$2"; shift 2
    local best_wall="" best_cpu="" max_rss=0 code=0 wall cpu rss
    for _ in $(seq "$runs"); do
        read -r wall cpu rss code <<<"$(once "$@")"
        best_wall=$(awk -v a="${best_wall:-$wall}" -v b="$wall" 'BEGIN { print (b < a) ? b : a }')
        best_cpu=$(awk -v a="${best_cpu:-$cpu}" -v b="$cpu" 'BEGIN { print (b < a) ? b : a }')
        max_rss=$(( rss > max_rss ? rss : max_rss ))
    done
    awk -v l="$label" -v s="$size" -v w="$best_wall" -v c="$best_cpu" -v r="$max_rss" -v e="$code" 'BEGIN {
        mb = s / 1e6
        printf "%-30s %7.1f %7.2f %8.1f %7.2f %8.4f %8.1f %4s\n", l, mb, w, mb / w, c, c / mb, r / 1024, e }'
}

echo "simrec: $simrec ($("$simrec" --version 2>/dev/null || echo '?'))"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)"
printf '%-30s %7s %7s %8s %7s %8s %8s %4s\n' "input -> output" "MB" "wall s" "MB/s" "cpu s" "cpu s/MB" "RSS MiB" "exit"
all=()
for entry in "${inputs[@]}"; do
    label="${entry%%|*}"
    read -r -a paths <<<"${entry#*|}"
    [ -e "${paths[0]}" ] || { echo "$label: ${paths[0]} missing, skipped"; continue; }
    all+=("${paths[@]}")
    size=$(bytes "${paths[@]}")
    measure "$label -> lake" "$size" "$simrec" convert "${paths[@]}" -o "$out/lake/" --to lake
    measure "$label -> parquet" "$size" "$simrec" convert "${paths[@]}" -o "$out/wide.parquet"
done
size=$(bytes "${all[@]}")
measure "all, --each --jobs 2 -> lake" "$size" "$simrec" convert --each "${all[@]}" -o "$out/lake/" --to lake --jobs 2
if [ "${LARGE_ELODIN:-}" = 1 ]; then
    for entry in "elodin replay large|bench-data/elodin/gen" "elodin db|bench-data/elodin-db/gen"; do
        label="${entry%%|*}"
        path="${entry#*|}"
        [ -e "$path" ] || { echo "$label: $path missing, skipped"; continue; }
        size=$(bytes "$path")
        measure "$label -> lake" "$size" "$simrec" convert "$path" -o "$out/lake/" --to lake
        measure "$label -> parquet" "$size" "$simrec" convert "$path" -o "$out/wide.parquet"
    done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

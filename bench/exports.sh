#!/usr/bin/env bash
# Benchmark of issue 14's matrix (docs/performance.md): the large generated recording of
# each format converted to MCAP and to a Parquet table, one run each; wall time, CPU time
# (user + system), MB/s of input, peak RSS (GNU time) and the output's size. Inputs under
# bench-data/ (a symlink to /work/main/bench-data does), made by bench/nanover_legacy.sh,
# bench/nanover_zip.sh, bench/elodin.sh, bench/xrec.sh, bench/tes.sh and bench/icarec.sh;
# a missing one is skipped.
# Usage: bench/exports.sh [SIMREC] [FORMAT...]   (FORMAT: an output extension, default
# `mcap parquet`; `nanover.zip 3es` measures issue 16's mappings between families)
set -euo pipefail
cd "$(dirname "$0")/.."
simrec="${1:-target/release/simrec}"
shift || true
targets=("${@:-mcap parquet}")
data=bench-data
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

inputs=(
  "nanover:$data/legacy-w1000-f3000.traj"
  "nanover.zip:$data/icarec/legacy-w1000-f3000.nanover.zip"
  "elodin:$data/elodin/gen"
  "xrec:$data/xrec/bench-2400000.xrec"
  "3es:$data/tes/bench_plain.3es"
  "icarec:$data/icarec/bench-60000.icarec"
)

for to in ${targets[*]}; do
  for entry in "${inputs[@]}"; do
    name="${entry%%:*}" input="${entry#*:}"
    [ -e "$input" ] || { echo "$name: $input missing, skipped"; continue; }
    size=$(du -sbL "$input" | cut -f1)
    # A .traj is read with its .state beside it.
    state="${input%.traj}.state"
    [ "$input" != "$state" ] && [ -e "$state" ] && size=$((size + $(stat -Lc %s "$state")))
    out="$work/out.$to"
    sync
    code=0
    /usr/bin/time -o "$work/time" -f "%e %U %S %M" \
      "$simrec" convert "$input" "$out" --force >/dev/null 2>"$work/err" || code=$?
    read -r wall user sys rss < <(tail -1 "$work/time") || true
    [ "$code" -le 3 ] || { echo "$name -> $to: exit $code"; cat "$work/err"; continue; }
    awk -v n="$name -> $to" -v b="$size" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" \
      -v o="$(du -sb "$out" | cut -f1)" -v c="$code" \
      'BEGIN { printf "%-22s %7.1f MB %6.2f s %6.2f CPU-s %6.0f MB/s %6.1f MiB  out %7.1f MB  exit %d\n",
               n, b / 1e6, w, u + s, b / 1e6 / w, r / 1024, o / 1e6, c }'
    rm -rf "$out"
  done
done

#!/usr/bin/env bash
# Benchmark of the analysis exports (docs/performance.md, "Parquet table, CSV, --each"):
# convert the large generated recordings to a Parquet table and to CSV (wall time, MB/s of
# input, peak RSS from GNU time), and `convert --each` over 8 inputs against a loop of 8
# sequential converts. Inputs: bench-data/legacy-w1000-f3000.traj/.state (the 109 MB NanoVer
# pair, bench/nanover_legacy.sh makes it) and bench-data/elodin/gen (the 157.6 MB replay,
# bench/elodin.sh); a symlink to /work/main/bench-data does. When they are there, also the
# Icarus recordings to Parquet: bench-data/icarec/bench-{60000,600000}.icarec (97 and 965 MB,
# bench/icarec.sh) and bench-data/icarus-hdf5/gen.h5 (970 MB, bench/icarus_hdf5.sh), by frames
# and (`--channel '*'`) by records. Usage: bench/tables.sh [SIMREC]
set -euo pipefail
cd "$(dirname "$0")/.."
simrec="${1:-target/release/simrec}"
data=bench-data
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
nv=("$data/legacy-w1000-f3000.traj" "$data/legacy-w1000-f3000.state")
elodin="$data/elodin/gen"

bytes() { du -cbL "$@" | tail -1 | cut -f1; }

measure() { # label, input bytes, command...
  local label="$1" size="$2"; shift 2
  local t0 t1 code=0
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$work/rss" "$@" >/dev/null 2>"$work/err" || code=$?
  t1=$(date +%s.%N)
  python3 - "$label" "$size" "$t0" "$t1" "$(tail -1 "$work/rss")" "$code" <<'PY'
import sys
label, size, t0, t1, rss, code = sys.argv[1:]
wall = float(t1) - float(t0)
print(f"{label:<34} {int(size)/1e6:7.1f} MB  {wall:6.2f} s  {int(size)/1e6/wall:7.1f} MB/s  peak RSS {int(rss)/1024:6.1f} MiB  exit {code}")
PY
}

nv_bytes=$(bytes "${nv[@]}")
el_bytes=$(bytes "$elodin")
measure "NanoVer pair -> parquet" "$nv_bytes" "$simrec" convert "${nv[@]}" -o "$work/nv.parquet"
measure "NanoVer pair -> parquet --fold" "$nv_bytes" "$simrec" convert "${nv[@]}" -o "$work/nvf.parquet" --fold
measure "NanoVer pair -> parquet DIR/" "$nv_bytes" "$simrec" convert "${nv[@]}" -o "$work/nvds/" --to parquet
measure "Elodin replay -> parquet" "$el_bytes" "$simrec" convert "$elodin" -o "$work/el.parquet"
measure "NanoVer pair -> csv" "$nv_bytes" "$simrec" convert "${nv[@]}" -o "$work/nv.csv"
measure "Elodin replay -> csv" "$el_bytes" "$simrec" convert "$elodin" -o "$work/el.csv"
ls -l "$work/nv.parquet" "$work/el.parquet" "$work/nv.csv" "$work/el.csv" | awk '{print "  output", $9, $5/1e6, "MB"}'

# Icarus to Parquet: a frame at a time, and (--channel '*') a record per signal and frame.
for input in "$data/icarec/bench-60000.icarec" "$data/icarec/bench-600000.icarec" "$data/icarus-hdf5/gen.h5"; do
  [ -e "$input" ] || continue
  size=$(bytes "$input")
  name="$(basename "$input") $((size / 1000000)) MB"
  measure "$name -> parquet" "$size" "$simrec" convert "$input" -o "$work/icarus.parquet"
  ls -l "$work/icarus.parquet" | awk '{print "  output", $5/1e6, "MB"}'
  rm -f "$work/icarus.parquet"
  measure "$name -> parquet (records)" "$size" "$simrec" convert --channel '*' "$input" -o "$work/icarus.parquet"
  rm -f "$work/icarus.parquet"
done

# --each over 8 inputs: copies of the NanoVer .traj (without its .state) under 8 names.
mkdir -p "$work/in"
for i in 1 2 3 4 5 6 7 8; do ln -s "$(realpath "${nv[0]}")" "$work/in/run$i.traj"; done
each_bytes=$((8 * $(bytes "${nv[0]}")))
measure "--each 8 x 104 MB -> parquet (2 jobs)" "$each_bytes" "$simrec" convert --each "$work"/in/*.traj -o "$work/each/" --to parquet --jobs 2
measure "sequential loop of the same 8" "$each_bytes" bash -c "for f in $work/in/*.traj; do $simrec convert \$f -o $work/seq/\$(basename \$f .traj).parquet || exit 1; done"

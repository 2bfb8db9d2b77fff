#!/usr/bin/env bash
# diff and plot benchmark (issue 15): `diff` of the generated 109 MB NanoVer legacy pair
# against its .nanover.zip conversion (by time and by frame), and `plot` of one key over the
# ~965 MB .icarec of bench/icarec.sh, each beside `validate` of the same inputs (every value
# decoded: what reading costs). Best wall time of RUNS=3, CPU time, peak RSS.
# Usage: bench/diff_plot.sh [WORKDIR]
# Inputs: bench-data/legacy-w1000-f3000.{traj,state} (bench/nanover_legacy.sh makes them; a
# symlink to another checkout's will do) and WORKDIR/bench-600000.icarec (made here with
# bench/icarec_gen.py when missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-${TMPDIR:-/tmp}/simrec-bench-diff}"
mkdir -p "$work"
cd "$here/.."
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
bin="$PWD/target/release/simrec"
runs="${RUNS:-3}"
measure() { # label, bytes, command...: the best wall time of $runs runs, CPU time, peak RSS
    local label="$1" bytes="$2"; shift 2
    local best=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %U %S %M" -o "$work/time.out" "$@" >/dev/null 2>/dev/null || true
        local line; line=$(cat "$work/time.out" | tail -n 1)
        if [ -z "$best" ] || awk -v a="$line" -v b="$best" 'BEGIN{split(a,x," ");split(b,y," ");exit !(x[1]<y[1])}'; then
            best="$line"
        fi
    done
    read -r wall user sys rss <<<"$best"
    printf '%-44s %7s s wall  %7s s user+sys  %7.0f MB/s  %7s KiB peak RSS\n' "$label" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$bytes / 1000000 / ($wall + 0.0001)" | bc -l)" "$rss"
}

traj=bench-data/legacy-w1000-f3000.traj
state=bench-data/legacy-w1000-f3000.state
zip="$work/legacy-w1000-f3000.nanover.zip"
[ -f "$zip" ] || "$bin" convert "$traj" "$state" -o "$zip"
pair_bytes=$(( $(stat -L -c %s "$traj") + $(stat -L -c %s "$state") ))
zip_bytes=$(stat -c %s "$zip")
both=$(( pair_bytes + zip_bytes ))
echo "== diff: legacy pair ($pair_bytes bytes) against its .nanover.zip ($zip_bytes bytes)"
measure "validate pair" "$pair_bytes" "$bin" validate "$traj" "$state"
measure "validate zip" "$zip_bytes" "$bin" validate "$zip"
# The zip writer adds frame.index to every frame (the legacy frames have none): excluded,
# so the run compares everything else and ends `equal`.
measure "diff --align time (both inputs)" "$both" "$bin" diff "$traj,$state" "$zip" --exclude frame.index
measure "diff --align frame (both inputs)" "$both" "$bin" diff "$traj,$state" "$zip" --exclude frame.index --align frame
"$bin" diff "$traj,$state" "$zip" --exclude frame.index | head -n 1

rec="$work/bench-600000.icarec"
[ -f "$rec/metadata.json" ] || python3 "$here/icarec_gen.py" "$rec" 600000
bytes=$(stat -c %s "$rec/dynamic_signals.bin")
echo "== plot: one key of $rec ($bytes bytes of frames)"
measure "validate" "$bytes" "$bin" validate "$rec"
measure "plot --key Bench.Cmp0.s0" "$bytes" "$bin" plot "$rec" --key Bench.Cmp0.s0 --force -o "$work/plot.svg"
measure "plot --channel Bench.Cmp0.s0 --key Bench.Cmp0.s0" "$bytes" "$bin" plot "$rec" --channel Bench.Cmp0.s0 --key Bench.Cmp0.s0 --force -o "$work/plot.svg"

#!/usr/bin/env bash
# .icarec benchmark: generated recordings of 200 double signals at 100 Hz, 60,000 frames
# (~97 MB) and 600,000 frames (~965 MB, issue 12's size). Times validate (every value decoded,
# SHA-256 of the data), inspect (header-only walk), convert to Icarus HDF5 (by frames, and by
# records with --channel '*'), convert directory → archive and archive →
# directory (every frame copied verbatim), convert to an Elodin replay directory (`simrec
# convert run.icarec out/`, then its files and row groups per file) and a 10 s slice from
# the middle, best of RUNS=3, with CPU time and peak RSS.
# Usage: bench/icarec.sh [WORKDIR]   (builds the release binary first; SIZES="60000 600000")
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-${TMPDIR:-/tmp}/simrec-bench-icarec}"
mkdir -p "$work"
cd "$here/.."
cargo build --release --quiet
bin="$PWD/target/release/simrec"
runs="${RUNS:-3}"
measure() { # label, bytes, command...: the best wall time of $runs runs, CPU time, peak RSS
    local label="$1" bytes="$2"; shift 2
    local best=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %U %S %M" -o "$work/time.out" "$@" >/dev/null 2>/dev/null || true
        local line; line=$(cat "$work/time.out")
        if [ -z "$best" ] || awk -v a="$line" -v b="$best" 'BEGIN{split(a,x," ");split(b,y," ");exit !(x[1]<y[1])}'; then
            best="$line"
        fi
    done
    read -r wall user sys rss <<<"$best"
    printf '%-40s %7s s wall  %7s s user+sys  %7.0f MB/s  %7s KiB peak RSS\n' "$label" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$bytes / 1000000 / ($wall + 0.0001)" | bc -l)" "$rss"
}
for frames in ${SIZES:-60000 600000}; do
    rec="$work/bench-$frames.icarec"
    [ -f "$rec/metadata.json" ] || python3 "$here/icarec_gen.py" "$rec" "$frames"
    bytes=$(stat -c %s "$rec/dynamic_signals.bin")
    echo "== $frames frames, $bytes bytes of frames"
    measure "validate" "$bytes" "$bin" validate "$rec"
    measure "inspect" "$bytes" "$bin" inspect "$rec"
    measure "convert dir -> tar" "$bytes" "$bin" convert --force "$rec" -o "$work/out-$frames.icarec.tar"
    measure "convert tar -> dir" "$bytes" "$bin" convert --force "$work/out-$frames.icarec.tar" -o "$work/back-$frames.icarec"
    mid=$(( frames / 200 ))
    # Frame by frame (pipeline::frame_copy); --channel '*' forces the record path.
    measure "convert -> HDF5" "$bytes" "$bin" convert --force "$rec" -o "$work/out-$frames.h5"
    measure "convert -> HDF5 (record path)" "$bytes" "$bin" convert --force --channel '*' "$rec" -o "$work/out-$frames.h5"
    rm -f "$work/out-$frames.h5"
    measure "convert -> Elodin replay dir" "$bytes" "$bin" convert --force "$rec" -o "$work/out-$frames-elodin/" --to elodin
    "$bin" inspect --format json "$work/out-$frames-elodin" | python3 -c '
import json, sys
a = json.load(sys.stdin)["archetypes"]
groups = sorted(x["row_groups"] for x in a)
print(f"  {len(a)} Parquet files, row groups per file {groups[0]}..{groups[-1]} (median {groups[len(groups) // 2]})")'
    rm -rf "$work/out-$frames-elodin"
    measure "slice 10 s from the middle" "$((bytes / frames * 1000))" "$bin" slice --force "$rec" --start "${mid}s" --end "$((mid + 10))s" -o "$work/slice-$frames.icarec"
    rm -rf "$work/out-$frames.icarec.tar" "$work/back-$frames.icarec"
done

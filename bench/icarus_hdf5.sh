#!/usr/bin/env bash
# Benchmark simrec on a large Icarus HDF5 recording (see docs/performance.md, Icarus HDF5).
#
# Generates bench-data/icarus-hdf5/gen.h5 (gitignored) with bench/icarus_hdf5_gen.py (h5py,
# from target/h5py-venv or $H5PY): SIGNALS double signals x FRAMES frames in Vulcan's layout
# (default 200 x 600,000: about 1 GB), then measures, each RUNS times (best wall time kept),
# with /usr/bin/time -v:
#   read   : simrec validate gen.h5         (every value of every dataset read and checked)
#   inspect: simrec inspect gen.h5          (/time only)
#   convert: simrec convert gen.h5 -o out.h5 --force   (read + write in the Vulcan layout)
# and prints MB/s of gen.h5, user+system CPU seconds, and peak RSS.
#
# Usage: bench/icarus_hdf5.sh [SIGNALS] [FRAMES] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
signals="${1:-200}"
frames="${2:-600000}"
runs="${3:-3}"
data=bench-data/icarus-hdf5
mkdir -p "$data"
py="${H5PY:-target/h5py-venv/bin/python}"
cargo build --release --quiet --bin simrec
bin=target/release/simrec
if [ ! -f "$data/gen.h5" ] || [ "$(cat "$data/gen.params" 2>/dev/null)" != "$signals $frames" ]; then
    rm -f "$data/gen.h5"
    "$py" bench/icarus_hdf5_gen.py "$data/gen.h5" "$signals" "$frames"
    echo "$signals $frames" > "$data/gen.params"
fi
size=$(stat -c %s "$data/gen.h5")
echo "gen.h5: $size bytes ($signals signals x $frames frames)"

measure() { # label, command...
    local label=$1; shift
    local best="" rss="" cpu=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -v "$@" > /dev/null 2> "$data/time.log" || { cat "$data/time.log"; exit 1; }
        local wall kb c
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$data/time.log" |
            awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
        kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$data/time.log")
        c=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$data/time.log")
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then best=$wall; cpu=$c; fi
        if [ -z "$rss" ] || [ "$kb" -gt "$rss" ]; then rss=$kb; fi
    done
    awk -v l="$label" -v s="$size" -v t="$best" -v r="$rss" -v c="$cpu" \
        'BEGIN { printf "%-8s %6.2f s  %7.1f MB/s  (CPU %.2f s: %.1f MB/s)  peak RSS %.1f MiB\n", l, t, s / 1e6 / t, c, s / 1e6 / c, r / 1024 }'
}

measure read "$bin" validate "$data/gen.h5"
measure inspect "$bin" inspect "$data/gen.h5"
measure convert "$bin" convert "$data/gen.h5" -o "$data/out.h5" --force
echo "written out.h5: $(stat -c %s "$data/out.h5") bytes"
"$bin" validate "$data/out.h5" | head -1

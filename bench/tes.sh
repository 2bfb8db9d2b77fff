#!/usr/bin/env bash
# 3es benchmark: a generated ~85 MB plain capture (300 spheres updated per frame, a
# 4000-point mesh per frame, 1000 frames) and its collated+gzip conversion; times inspect,
# full decode (validate), conversion and a 10-frame slice from the middle (best of RUNS=5 runs),
# with CPU time, peak RSS and, for the slices, the bytes read from the capture (strace).
# Then inspect against upstream 3esinfo on a large plain capture (LARGE_FRAMES=10000 frames,
# ~846 MB; same per-frame shape as tesgen.cpp's: f32 shape updates and a 4000-point mesh):
# the best user+sys CPU time of RUNS runs of each, one after the other.
# Usage: bench/tes.sh [WORKDIR]   (builds the release binary first; TESINFO=path of 3esinfo,
# default: unpacked from ../shared/tools/tes-ref/3esinfo.xz; without it the comparison is skipped)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-${TMPDIR:-/tmp}/simrec-bench-tes}"
mkdir -p "$work"
cd "$here/.."
cargo build --release --quiet
bin="$PWD/target/release/simrec"
plain="$work/bench_plain.3es"
gz="$work/bench_collated_gzip.3es"
col="$work/bench_collated.3es"
[ -f "$plain" ] || python3 "$here/tes_gen.py" "$plain" 1000
[ -f "$gz" ] || "$bin" convert "$plain" -o "$gz" --force 2>/dev/null
[ -f "$col" ] || "$bin" convert "$plain" -o "$col" --tes-compression collated --force 2>/dev/null

runs="${RUNS:-5}"
measure() { # label, command...: the best wall time of $runs runs, with its CPU time and peak RSS
    local label="$1"; shift
    local best=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%e %U %S %M" -o "$work/time.out" "$@" >/dev/null 2>/dev/null || true
        local line; line=$(cat "$work/time.out")
        if [ -z "$best" ] || awk -v a="$line" -v b="$best" 'BEGIN{split(a,x," ");split(b,y," ");exit !(x[1]<y[1])}'; then
            best="$line"
        fi
    done
    read -r wall user sys rss <<<"$best"
    printf '%-44s %6s s wall  %5s s user+sys  %8s KiB\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$rss"
}

bytes_read() { # label, file, command...: bytes the command read from that file (strace)
    local label="$1" file="$2"; shift 2
    command -v strace >/dev/null || return 0
    strace -f -e trace=openat,read -o "$work/strace.out" "$@" >/dev/null 2>&1 || true
    local n
    n=$(python3 - "$work/strace.out" "$(basename "$file")" <<'PY'
import re, sys
fds, total = set(), 0
for line in open(sys.argv[1]):
    m = re.search(r'openat\(.*"([^"]*)".*= (\d+)$', line)
    if m and m.group(1).endswith(sys.argv[2]):
        fds.add(m.group(2))
    m = re.search(r'\bread\((\d+),.*= (\d+)$', line)
    if m and m.group(1) in fds:
        total += int(m.group(2))
print(total)
PY
)
    printf '%-44s %12s of %12s bytes read\n' "$label" "$n" "$(stat -c %s "$file")"
}

size() { stat -c %s "$1"; }
echo "plain: $(size "$plain") bytes; collated: $(size "$col"); collated+gzip: $(size "$gz"); best of $runs runs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for f in "$plain" "$col" "$gz"; do
    n=$(basename "$f")
    measure "inspect $n" "$bin" inspect "$f"
    measure "validate (full decode) $n" "$bin" validate "$f"
done
measure "convert plain -> collated+gzip" "$bin" convert "$plain" -o "$work/out.3es" --force
measure "merge plain + collated -> plain" "$bin" merge "$plain" "$col" -o "$work/m.3es" --tes-compression plain --force
measure "slice --frames 500..510 plain" "$bin" slice "$plain" --frames 500..510 -o "$work/s1.3es" --force
measure "slice --frames 500..510 collated" "$bin" slice "$col" --frames 500..510 -o "$work/s2.3es" --force
measure "slice --frames 500..510 collated+gzip" "$bin" slice "$gz" --frames 500..510 -o "$work/s3.3es" --force
bytes_read "slice 500..510 plain" "$plain" "$bin" slice "$plain" --frames 500..510 -o "$work/s1.3es" --force
bytes_read "slice 500..510 collated" "$col" "$bin" slice "$col" --frames 500..510 -o "$work/s2.3es" --force
bytes_read "slice 500..510 collated+gzip" "$gz" "$bin" slice "$gz" --frames 500..510 -o "$work/s3.3es" --force

large="$work/bench_plain_large.3es"
[ -f "$large" ] || python3 "$here/tes_gen.py" "$large" "${LARGE_FRAMES:-10000}"
# 3esinfo is 3es-core's reader, shipped packed in ../shared/tools/tes-ref (not with simrec).
tesinfo="${TESINFO:-}"
if [ -z "$tesinfo" ] && [ -f "$here/../../shared/tools/tes-ref/3esinfo.xz" ]; then
    tesinfo="$work/3esinfo"
    [ -x "$tesinfo" ] || { xz -dc "$here/../../shared/tools/tes-ref/3esinfo.xz" > "$tesinfo" && chmod +x "$tesinfo"; }
fi
cpu() { # label, command...: the best user+sys CPU time of $runs runs
    local label="$1"; shift
    local best=""
    for _ in $(seq "$runs"); do
        /usr/bin/time -f "%U %S" -o "$work/time.out" "$@" >/dev/null 2>/dev/null || true
        local t; t=$(awk '{print $1 + $2}' "$work/time.out")
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best="$t"; fi
    done
    printf '%-44s %6s s user+sys (best of %s)\n' "$label" "$best" "$runs"
}
if [ -x "$tesinfo" ]; then
    echo "large plain: $(size "$large") bytes; load: $(cut -d' ' -f1-3 /proc/loadavg)"
    for _ in 1 2; do # interleaved, so that both see the same load
        cpu "simrec inspect (large plain)" "$bin" inspect "$large"
        cpu "3esinfo (large plain)" "$tesinfo" "$large"
    done
else
    echo "skipped the comparison with 3esinfo: it needs 3es-core's 3esinfo, from ../shared/tools/tes-ref/3esinfo.xz beside the repository or TESINFO=PATH" >&2
fi

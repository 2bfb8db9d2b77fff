#!/usr/bin/env bash
# 3es benchmark: a generated ~85 MB plain capture (300 spheres updated per frame, a
# 4000-point mesh per frame, 1000 frames) and its collated+gzip conversion; times inspect,
# full decode (validate), conversion and a 10-frame slice from the middle, with peak RSS.
# Usage: bench/tes.sh [WORKDIR]   (builds the release binary first)
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

measure() { # label, command...
    local label="$1"; shift
    local out
    out=$( { /usr/bin/time -v "$@" >/dev/null 2>/dev/null; } 2>&1 || true)
    # /usr/bin/time -v writes to stderr; rerun capturing it alone.
    out=$( /usr/bin/time -v "$@" 2>&1 >/dev/null | grep -E 'Elapsed|Maximum resident' || true)
    local secs rss
    secs=$(echo "$out" | sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p')
    rss=$(echo "$out" | sed -n 's/.*Maximum resident set size (kbytes): //p')
    printf '%-44s %10s  %8s KiB\n' "$label" "$secs" "$rss"
}

size() { stat -c %s "$1"; }
echo "plain: $(size "$plain") bytes; collated: $(size "$col"); collated+gzip: $(size "$gz")"
for f in "$plain" "$col" "$gz"; do
    n=$(basename "$f")
    measure "inspect $n" "$bin" inspect "$f"
    measure "validate (full decode) $n" "$bin" validate "$f"
done
measure "convert plain -> collated+gzip" "$bin" convert "$plain" -o "$work/out.3es" --force
measure "slice --frames 500..510 plain" "$bin" slice "$plain" --frames 500..510 -o "$work/s1.3es" --force
measure "slice --frames 500..510 collated" "$bin" slice "$col" --frames 500..510 -o "$work/s2.3es" --force
measure "slice --frames 500..510 collated+gzip" "$bin" slice "$gz" --frames 500..510 -o "$work/s3.3es" --force

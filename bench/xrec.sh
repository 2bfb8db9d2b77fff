#!/usr/bin/env bash
# .xrec benchmark: a generated recording of EVENTS transform events (default 2,400,000, ~504 MB;
# 100 objects at 90 Hz, ~267 s, 1 MiB packets), plain and gzip. Times validate (every packet
# decompressed, every event and body decoded), inspect (records without bodies), convert
# (verbatim event copy) and a 1 s query from the middle (cat --start/--end), best of RUNS=3,
# with CPU time and peak RSS; the query's bytes read are counted with strace (pread/read).
# Usage: bench/xrec.sh [WORKDIR]   (builds the release binary first)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-${TMPDIR:-/tmp}/simrec-bench-xrec}"
mkdir -p "$work"
cd "$here/.."
cargo build --release --quiet
bin="$PWD/target/release/simrec"
runs="${RUNS:-3}"
events="${EVENTS:-2400000}"
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
    printf '%-34s %7s s wall  %7s s user+sys  %7.0f MB/s  %7s KiB peak RSS\n' "$label" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$bytes / 1000000 / ($wall + 0.0001)" | bc -l)" "$rss"
}
bytes_read() { # file command...: bytes the process read from `file` (read and pread64 results)
    local file="$1"; shift
    strace -f -e trace=openat,close,read,pread64 -o "$work/strace.out" "$@" >/dev/null 2>&1 || true
    # Only reads of descriptors opened on the recording (not the shared libraries'): an
    # openat of the file marks its descriptor until it is closed.
    awk -v file="\"$file\"" '
        /openat\(/ { split($0, r, "= "); fd = r[2] + 0; if (index($0, file) && fd >= 0) mine[fd] = 1; next }
        /close\(/ { split($0, a, "("); split(a[2], b, ")"); delete mine[b[1] + 0]; next }
        /(read|pread64)\(/ { split($0, a, "("); split(a[2], b, ","); split($0, r, "= ");
            if ((b[1] + 0) in mine && r[2] + 0 > 0) s += r[2] + 0 }
        END { print s + 0 }' "$work/strace.out"
}
plain="$work/bench-$events.xrec"
gz="$work/bench-$events-gzip.xrec"
[ -f "$plain" ] || python3 "$here/xrec_gen.py" "$plain" "$events"
[ -f "$gz" ] || "$bin" convert "$plain" -o "$gz" --compression gzip 2>/dev/null
for rec in "$plain" "$gz"; do
    size=$(stat -c %s "$rec")
    echo "== $(basename "$rec"): $size bytes"
    measure "validate (full decode)" "$size" "$bin" validate "$rec"
    measure "inspect" "$size" "$bin" inspect "$rec"
    measure "convert (same format)" "$size" "$bin" convert --force "$rec" -o "$work/out.xrec"
    measure "cat --start 133s --end 134s" "$size" "$bin" cat --format ndjson "$rec" --start 133s --end 134s
    read_bytes=$(bytes_read "$rec" "$bin" cat --format ndjson "$rec" --start 133s --end 134s)
    printf '%-34s %d of %d bytes (%.3f%%)\n' "  bytes read by the 1 s query" "$read_bytes" "$size" \
        "$(echo "100 * $read_bytes / $size" | bc -l)"
    rm -f "$work/out.xrec"
done

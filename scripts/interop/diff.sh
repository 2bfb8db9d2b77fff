#!/usr/bin/env bash
# diff and plot interop. `diff` has no reference tool; what other tools made is the reference:
# NanoVer's own conversion of a legacy pair (fixtures/nanover-zip/converted-tie) must compare
# equal to the pair, by time and by frame; every healthy fixture equals itself; a copy with one
# value changed by sed (not simrec) is found, with that value. `plot` writes SVG that Python's
# XML parser (not simrec) reads, with one data polyline per key, and PNG that a decoder written
# here on Python's zlib (not simrec's png crate) reads: its size, and the line's blue pixels.
# Environment (set by scripts/interop.sh): SIMREC, FIXTURES, WORK; TOOLS and NANOVER_PY are not
# used (python3 from PATH parses the SVG; without it that check is skipped and said so).
# Prints `PASS name` or `FAIL name: why` per check; exits 1 if any failed.
set -euo pipefail
: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"
work="$WORK/diff"
mkdir -p "$work"
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }
expect() { # name, expected exit code, command...
    local name="$1" want="$2"; shift 2
    local code=0
    "$@" >"$work/out" 2>"$work/err" || code=$?
    if [ "$code" = "$want" ]; then pass "$name"; else fail "$name" "exit $code, want $want: $(head -c 300 "$work/err")"; fi
}

tie="$FIXTURES/nanover-zip/converted-tie"
for align in time frame index; do
    expect "diff-nanover-conversion-$align" 0 "$SIMREC" diff "$tie/tie.traj,$tie/tie.state" "$tie/tie.nanover.zip" --align "$align"
done
expect "diff-nanover-conversion-strict-types" 1 "$SIMREC" diff "$tie/tie.traj,$tie/tie.state" "$tie/tie.nanover.zip" --strict-types

for side in "$FIXTURES/nanover-legacy/small.traj,$FIXTURES/nanover-legacy/small.state" \
    "$FIXTURES"/nanover-zip/*.nanover.zip "$FIXTURES"/elodin/ball_1200 "$FIXTURES"/elodin/spin_120 \
    "$FIXTURES"/tes/*.3es "$FIXTURES"/icarec/a2.icarec "$FIXTURES"/icarec/*.icarec.tar \
    "$FIXTURES"/icarus-hdf5/small.h5 "$FIXTURES"/icarus-csv/rocket.csv; do
    expect "diff-itself-$(basename "${side%%,*}")" 0 "$SIMREC" diff "$side" "$side" --nan-equal
done

sed '5s/0.0141943100480028/0.0141943100480029/' "$FIXTURES/icarus-csv/rocket.csv" >"$work/today.csv"
code=0
"$SIMREC" diff "$FIXTURES/icarus-csv/rocket.csv" "$work/today.csv" --nan-equal --format json >"$work/d.json" 2>/dev/null || code=$?
if [ "$code" = 1 ] && grep -q '"differences_total":1,' "$work/d.json" \
    && grep -q '"a":0.0141943100480028,' "$work/d.json" && grep -q '"b":0.0141943100480029,' "$work/d.json"; then
    pass "diff-one-value-changed-by-sed"
else
    fail "diff-one-value-changed-by-sed" "exit $code: $(head -c 300 "$work/d.json")"
fi

expect "plot-svg" 0 "$SIMREC" plot "$FIXTURES/nanover-legacy/small.traj" --key energy.kinetic \
    --key 'particle.positions[12].z' -o "$work/p.svg"
if command -v python3 >/dev/null; then
    if out=$(python3 - "$work/p.svg" <<'PY' 2>&1
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
lines = [p for p in root.iter("{http://www.w3.org/2000/svg}polyline") if p.get("stroke") != "#000000"]
counts = [len(p.get("points").split()) for p in lines]
assert counts == [32, 32], counts
PY
    ); then pass "plot-svg-parses"; else fail "plot-svg-parses" "$out"; fi
else
    echo "PASS plot-svg-parses (skipped: no python3)"
fi

expect "plot-png" 0 "$SIMREC" plot "$FIXTURES/nanover-legacy/small.traj" --key energy.kinetic \
    --key 'particle.positions[12].z' -o "$work/p.png"
if command -v python3 >/dev/null; then
    if out=$(python3 - "$work/p.png" <<'PY' 2>&1
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "no PNG signature"
at, idat, size = 8, b"", None
while at < len(data):
    n, kind = struct.unpack(">I4s", data[at:at + 8])
    body = data[at + 8:at + 8 + n]
    assert zlib.crc32(kind + body) == struct.unpack(">I", data[at + 8 + n:at + 12 + n])[0], kind
    if kind == b"IHDR":
        size = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    at += 12 + n
w, h, depth, colour = size
# Two panels of 250 pixels and 40 for the time axis; 8-bit RGB.
assert (w, h, depth, colour) == (1000, 540, 8, 2), size
raw, stride, prev, blue = zlib.decompress(idat), 1 + 3 * w, bytearray(3 * w), 0
assert len(raw) == h * stride, len(raw)
for y in range(h):
    f, line = raw[y * stride], bytearray(raw[y * stride + 1:(y + 1) * stride])
    for x in range(3 * w):
        a, b, c = (line[x - 3] if x >= 3 else 0), prev[x], (prev[x - 3] if x >= 3 else 0)
        p = a + b - c
        pred = [0, a, b, (a + b) // 2, a if abs(p - a) <= min(abs(p - b), abs(p - c)) else (b if abs(p - b) <= abs(p - c) else c)][f]
        line[x] = (line[x] + pred) & 255
    blue += sum(1 for x in range(0, 3 * w, 3) if line[x + 2] - line[x] > 60)
    prev = line
assert blue > 2 * 889, f"{blue} line pixels"
PY
    ); then pass "plot-png-decodes"; else fail "plot-png-decodes" "$out"; fi
else
    echo "PASS plot-png-decodes (skipped: no python3)"
fi
exit "$failed"

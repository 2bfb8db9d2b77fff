#!/usr/bin/env bash
# Icarus CSV interop: what simrec writes as CSV, from every fixture it can convert, must be
# byte for byte what Vulcan's own export_to_csv (the code Icarus runs for `export_csv`,
# compiled here from vulcan_export.cpp with the machine's C++ standard library) writes for
# the same doubles. Two directions:
#   - simrec's output re-exported by Vulcan's loop is unchanged (it is in Icarus's style);
#   - a source of full-precision (17-digit) doubles, exported by Vulcan's loop and converted
#     by simrec, gives the same bytes (simrec's %.15g is C++'s precision-15 general format).
# Environment (set by scripts/interop.sh): SIMREC, FIXTURES, WORK; TOOLS and NANOVER_PY are
# not used (Icarus ships no reader of its CSV). Needs a C++ compiler (c++) and python3.
# Prints `PASS name` or `FAIL name: why` per check; exits 1 if any failed.
set -euo pipefail
: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$WORK/icarus_csv"
mkdir -p "$work"
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

if ! c++ -O2 -std=c++17 -o "$work/vulcan_export" "$here/vulcan_export.cpp" 2>"$work/cc.log"; then
    fail "build vulcan_export" "$(head -c 300 "$work/cc.log")"
    exit 1
fi

# name, csv written by simrec: Vulcan's loop over its doubles writes the same bytes, and
# simrec validates it clean.
same_as_vulcan() {
    local name="$1" csv="$2" out
    if ! "$work/vulcan_export" "$csv" >"$csv.vulcan" 2>"$work/err"; then
        fail "$name" "vulcan_export: $(head -c 200 "$work/err")"
    elif grep -q -E ',,|,$' "$csv"; then
        # Empty cells (a channel with no record at that time, from a non-Icarus source):
        # Vulcan's loop writes every cell, so only simrec's own validation applies.
        if out=$("$SIMREC" validate "$csv" 2>&1); then pass "$name (has empty cells: validated)"
        else fail "$name" "simrec validate: ${out:0:200}"; fi
    elif [ -s "$csv" ] && [ "$(wc -l <"$csv")" -gt 1 ] && ! cmp -s "$csv" "$csv.vulcan"; then
        fail "$name" "differs from Vulcan's export at $(cmp "$csv" "$csv.vulcan" | head -1)"
    elif ! out=$("$SIMREC" validate "$csv" 2>&1); then
        fail "$name" "simrec validate: ${out:0:200}"
    else
        pass "$name"
    fi
}

# name, source path(s)...: converted to CSV (exit 0, or 3 with the loss reported), then
# compared with Vulcan's export.
convert_and_check() {
    local name="$1" out="$work/$1.csv" code=0
    shift
    "$SIMREC" convert "$@" -o "$out" --force >"$work/$name.out" 2>"$work/$name.err" || code=$?
    if [ "$code" != 0 ] && [ "$code" != 3 ]; then
        fail "$name" "convert exit $code: $(head -c 300 "$work/$name.err")"
        return
    fi
    same_as_vulcan "$name → csv (exit $code)" "$out"
}

# The hand-made Icarus-style export, and every other fixture simrec reads.
convert_and_check icarus-csv-rocket "$FIXTURES/icarus-csv/rocket.csv"
if cmp -s "$work/icarus-csv-rocket.csv" "$FIXTURES/icarus-csv/rocket.csv"; then
    pass "rocket.csv → csv is byte-identical"
else
    fail "rocket.csv → csv is byte-identical" "$(cmp "$work/icarus-csv-rocket.csv" "$FIXTURES/icarus-csv/rocket.csv")"
fi
for world in "$FIXTURES"/elodin/*/; do
    convert_and_check "elodin-$(basename "$world")" "$world"
done
convert_and_check nanover-small "$FIXTURES/nanover-legacy/small.traj" "$FIXTURES/nanover-legacy/small.state"
convert_and_check nanover-zip-small "$FIXTURES/nanover-zip/small.nanover.zip"
convert_and_check tes-small "$FIXTURES/tes/small_plain.3es"

# Full-precision doubles: random bit patterns (finite, NaN and infinities included), exact
# ties at the 16th digit, subnormals, powers of ten, integers past 2^53; written with 17
# digits (Python's repr). Vulcan's loop and simrec must print each the same.
python3 - "$work/full.csv" <<'PY'
import math, random, struct, sys
rng = random.Random(12)
def bits(u):
    return struct.unpack("<d", struct.pack("<Q", u))[0]
values = [bits(rng.getrandbits(64)) for _ in range(20000)]
values += [(2**49 + k) + 0.5 for k in range(200)]
values += [bits(k) for k in range(1, 200)] + [10.0**e for e in range(-300, 300)]
values += [float(2**53 + 2 * k) for k in range(100)] + [0.1 + 0.2, 2 / 3, 1e-5, 805.0]
cols = 8
with open(sys.argv[1], "w") as f:
    f.write("time," + ",".join(f"S.v{j}" for j in range(cols)) + "\n")
    for i in range(0, len(values) - cols, cols):
        row = values[i:i + cols]
        f.write(repr(i / 100) + "," + ",".join(
            "nan" if math.isnan(v) else ("-inf" if v == -math.inf else "inf" if v == math.inf else repr(v))
            for v in row) + "\n")
PY
code=0
"$SIMREC" convert "$work/full.csv" -o "$work/full.simrec.csv" --force 2>"$work/full.err" || code=$?
"$work/vulcan_export" "$work/full.csv" >"$work/full.vulcan.csv"
if [ "$code" != 3 ]; then
    fail "17-digit doubles → csv exits 3" "exit $code: $(head -c 300 "$work/full.err")"
else
    pass "17-digit doubles → csv exits 3"
fi
# Vulcan prints NaN by its sign (nan, -nan) and simrec reads `nan` as positive: the sources
# hold no negative NaN, so the two agree everywhere.
if cmp -s "$work/full.simrec.csv" "$work/full.vulcan.csv"; then
    pass "17-digit doubles: simrec's %.15g = Vulcan's setprecision(15) ($(($(wc -l <"$work/full.csv") - 1)) rows)"
else
    fail "17-digit doubles: simrec's %.15g = Vulcan's setprecision(15)" \
        "$(diff "$work/full.simrec.csv" "$work/full.vulcan.csv" | head -4 | tr '\n' ' ')"
fi

# Zero frames: Icarus writes an empty file; --csv-style icarus-strict does too.
printf 'time,A.x\n' >"$work/none.csv"
"$SIMREC" convert "$work/none.csv" -o "$work/none.strict.csv" --csv-style icarus-strict --force 2>/dev/null
vulcan_none=$("$work/vulcan_export" "$work/none.csv")
if [ ! -s "$work/none.strict.csv" ] && [ -z "$vulcan_none" ]; then
    pass "zero frames, icarus-strict: an empty file like Vulcan's"
else
    fail "zero frames, icarus-strict: an empty file like Vulcan's" "$(wc -c <"$work/none.strict.csv") bytes"
fi

exit "$failed"

#!/usr/bin/env bash
# Every source format into every target format (docs/formats/mapping.md, issue 16), and each
# output opened by the target format's own software where there is one:
#   .nanover.zip  NanoVer's NanoverRecordingReader reads every message (NANOVER_PY)
#   .3es          3es-core's tesplay replays it with no error and no bad CRC (TOOLS)
#   DIR/          an Elodin DB: Elodin 0.18's own server and client serve every component
#                 (../shared/tools/elodin-db/dbcheck.py; simrec validate when its venv
#                 cannot be had)
#   DIR/ --to elodin  the legacy replay: Elodin's loader (readcheck, World::read_from_dir)
#                 loads it (TOOLS)
#   .h5           h5py reads every dataset (scripts/interop/icarus_hdf5_check.py)
#   .icarec       a reader written from the spec (scripts/interop/icarec_check.py --written)
#   .xrec         a reader written from the spec (scripts/interop/xrec_check.py)
#   .parquet      pyarrow reads the table; .mcap: the Python mcap reader reads every message
#   .csv, .jsonl  Python's csv and json modules parse every row and line
#   .traj         (no NanoVer legacy reader exists outside simrec) simrec validate, no error
# A tool that cannot be had is skipped, and a line says so.
# Environment (set by scripts/interop.sh): SIMREC, TOOLS, FIXTURES, WORK, NANOVER_PY.
set -euo pipefail
: "${SIMREC:?}" "${TOOLS:?}" "${FIXTURES:?}" "${WORK:?}"
NANOVER_PY="${NANOVER_PY:-}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/scripts/interop"
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }
python_with() { # venv, module: the venv's python when it imports the module, else nothing
    if [ -x "$root/target/$1/bin/python" ] && "$root/target/$1/bin/python" -c "import $2" 2>/dev/null; then
        echo "$root/target/$1/bin/python"
    fi
}
H5PY="${H5PY:-$(python_with h5py-venv h5py)}"
MCAP_PY="${MCAP_PY:-$(python_with mcap-venv mcap)}"
ARROW_PY="$(python_with venv-analysis pyarrow)"
db_tools="${SHARED:-$root/../shared}/tools/elodin-db"
DB_PY=""
if [ -f "$db_tools/setup.sh" ]; then
    DB_PY="$(bash "$db_tools/setup.sh" 2>/dev/null | tail -1)" || DB_PY=""
    [ -x "$DB_PY" ] || DB_PY=""
fi
[ -n "$DB_PY" ] || echo "PASS matrix-skipped: no Elodin 0.18 venv, so DIR/ (DB) outputs are checked by simrec validate only"
for need in NANOVER_PY:.nanover.zip H5PY:.h5 MCAP_PY:.mcap ARROW_PY:.parquet; do
    var="${need%%:*}"
    [ -n "${!var}" ] || echo "PASS matrix-skipped: no $var, so ${need#*:} outputs are not opened"
done

sources=(
    "nanover-legacy:nanover-legacy/small.traj nanover-legacy/small.state"
    "nanover-zip:nanover-zip/small.nanover.zip"
    "icarec:icarec/a2.icarec"
    "icarus-hdf5:icarus-hdf5/vulcan.h5"
    "icarus-csv:icarus-csv/rocket.csv"
    "elodin:elodin/ball_1200"
    "3es:tes/small_plain.3es"
    "xrec:xrec/session.xrec"
    "elodin-db:elodin-db/three_body_v0180"
)
# A target, and after `:` the --to it needs (the name says the format otherwise).
targets=(out.traj out.nanover.zip out.icarec out.h5 out.csv out/ replay/:elodin out.3es out.xrec out.jsonl out.parquet out.mcap)

# Opens `out` with its format's own software; prints why not and fails when it cannot.
opens() { # out
    local out="$1"
    case "$out" in
        *.nanover.zip)
            [ -z "$NANOVER_PY" ] && return 0
            "$NANOVER_PY" "$here/nanover_read_check.py" "$out" | grep -q "^ok " ;;
        *.3es)
            local r
            r=$("$TOOLS/tesplay" "$out" 2>&1) && grep -q '"errors":{}' <<<"$r" \
                && grep -q '"crc_bad_outer":0' <<<"$r" && grep -q '"crc_bad_inner":0' <<<"$r" ;;
        */out/)
            if [ -z "$DB_PY" ]; then "$SIMREC" validate "$out" >/dev/null; return; fi
            "$DB_PY" "$db_tools/dbcheck.py" "$out" "$WORK/dbcheck.json" | grep -q '^LOADED' ;;
        */replay/)
            # An Elodin export copied as it is keeps its world/ beside tick_exec/.
            local world="$out"
            [ -d "$out/world" ] && world="$out/world"
            "$TOOLS/readcheck" "$world" "$WORK/readcheck.json" | grep -q '^LOADED' ;;
        *.h5) [ -z "$H5PY" ] && return 0; "$H5PY" "$here/icarus_hdf5_check.py" "$out" >/dev/null ;;
        *.icarec)
            "$SIMREC" cat --format json "$out" >"$out.jsonl" 2>/dev/null || true
            # A same-format copy keeps the source's schema.json byte for byte (spec §A14), so
            # the writer's own rules (--written) hold only for a conversion from elsewhere.
            local written="--written"
            [ "$name" = icarec ] && written="--copied"
            python3 "$here/icarec_check.py" $written "$out" "$out.jsonl" >/dev/null ;;
        *.xrec) python3 "$here/xrec_check.py" "$out" | grep -q '^OK' ;;
        *.parquet)
            [ -z "$ARROW_PY" ] && return 0
            "$ARROW_PY" -c 'import sys, pyarrow.parquet as pq; assert pq.read_table(sys.argv[1]).num_rows > 0' "$out" ;;
        *.mcap)
            [ -z "$MCAP_PY" ] && return 0
            "$MCAP_PY" -c '
import sys
from mcap.reader import make_reader
with open(sys.argv[1], "rb") as f:
    n = sum(1 for _ in make_reader(f).iter_messages())
assert n > 0' "$out" ;;
        *.csv) python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows and all(len(r) == len(rows[0]) for r in rows[1:]), "ragged rows"' "$out" ;;
        *.jsonl) python3 -c '
import json, sys
n = sum(1 for line in open(sys.argv[1]) if json.loads(line))
assert n > 0' "$out" ;;
        *.traj) "$SIMREC" validate "$out" "${out%.traj}.state" >/dev/null ;;
    esac
}

for entry in "${sources[@]}"; do
    name="${entry%%:*}"
    read -r -a inputs <<<"${entry#*:}"
    paths=()
    for i in "${inputs[@]}"; do paths+=("$FIXTURES/$i"); done
    for spec in "${targets[@]}"; do
        target="${spec%%:*}"
        to=()
        [ "$spec" != "$target" ] && to=(--to "${spec#*:}")
        dir="$WORK/$name-${target%/}"
        mkdir -p "$dir"
        out="$dir/$target"
        code=0
        "$SIMREC" convert "${paths[@]}" -o "$out" "${to[@]}" -q >"$dir/log" 2>&1 || code=$?
        label="$name -> ${target#out}"
        if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then
            fail "$label" "convert exited $code: $(tail -1 "$dir/log")"
        elif opens "$out" >"$dir/check" 2>&1; then
            pass "$label (exit $code; opens)"
        else
            fail "$label" "exit $code, but it does not open: $(tail -2 "$dir/check" | tr '\n' ' ' | cut -c1-300)"
        fi
    done
done
exit "$failed"

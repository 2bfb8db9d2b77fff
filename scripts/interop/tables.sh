#!/usr/bin/env bash
# Interop of the analysis exports: every fixture format converted to a Parquet table (one file,
# and one file per channel) and opened with pyarrow and DuckDB, the row counts per channel
# compared with `simrec inspect`. Called by scripts/interop.sh with SIMREC, FIXTURES, WORK
# (TOOLS and NANOVER_PY are not needed). pyarrow and duckdb come from PyPI into a venv under
# target/ (made once); without network the checks are skipped and say so.
set -euo pipefail
: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/target/venv-analysis"
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

if ! "$venv/bin/python" -c 'import pyarrow, duckdb' 2>/dev/null; then
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet pyarrow duckdb; } >/dev/null 2>&1; then
    echo "SKIP tables: no pyarrow/duckdb (pip install failed)"
    exit 0
  fi
fi

check() { # name, inputs...
  local name="$1"; shift
  local out="$WORK/$name.parquet" ds="$WORK/$name-ds/"
  local code=0
  "$SIMREC" convert "$@" -o "$out" >/dev/null 2>&1 || code=$?
  if [ "$code" != 0 ] && [ "$code" != 3 ]; then fail "parquet $name" "convert exit $code"; return; fi
  "$SIMREC" convert "$@" -o "$ds" --to parquet >/dev/null 2>&1 || true
  "$SIMREC" inspect --format json "$@" > "$WORK/$name.inspect.jsonl"
  local why
  if why=$("$venv/bin/python" - "$out" "$ds" "$WORK/$name.inspect.jsonl" <<'PY'
import json, sys, collections, glob
import pyarrow.parquet as pq, duckdb
table, ds, inspect = sys.argv[1:4]
want = collections.Counter()
for line in open(inspect):
    for c in json.loads(line)["channels"]:
        if c["records"]:
            want[c["name"]] += c["records"]
got = collections.Counter(pq.read_table(table).column("channel").to_pylist())
if got != want:
    sys.exit(f"pyarrow rows per channel {dict(got)} != inspect {dict(want)}")
rows = dict(duckdb.sql(f"SELECT channel, count(*) FROM read_parquet('{table}') GROUP BY 1").fetchall())
if rows != dict(want):
    sys.exit(f"duckdb rows per channel {rows} != inspect {dict(want)}")
per = collections.Counter()
for f in glob.glob(ds + "*.parquet"):
    for c in pq.read_table(f).column("channel").to_pylist():
        per[c] += 1
if per != want:
    sys.exit(f"dataset rows per channel {dict(per)} != inspect {dict(want)}")
meta = pq.read_metadata(table).metadata
if b"simrec.version" not in meta:
    sys.exit("no simrec.version in the metadata")
PY
  ); then pass "parquet $name"; else fail "parquet $name" "$why"; fi
}

check nanover-legacy "$FIXTURES/nanover-legacy/small.traj" "$FIXTURES/nanover-legacy/small.state"
check nanover-zip "$FIXTURES/nanover-zip/small.nanover.zip"
check elodin "$FIXTURES/elodin/ball_1200"
check elodin-types "$FIXTURES/elodin/types_300"
check tes "$FIXTURES/tes/small_plain.3es"
check tes-collate "$FIXTURES/tes/small_collate.3es"
check icarec "$FIXTURES/icarec/a2.icarec"
check icarus-hdf5 "$FIXTURES/icarus-hdf5/vulcan.h5"
check icarus-csv "$FIXTURES/icarus-csv/rocket.csv"
check xrec "$FIXTURES/xrec/session.xrec"

# The wide CSV read by DuckDB's CSV reader: every column typed as a number (or empty), the
# rows simrec wrote, and per tracked object (XREC) or body (Elodin) the filled cells its own
# records make.
csv_check() { # name, column, filled cells expected, inputs...
  local name="$1" column="$2" want="$3"; shift 3
  local out="$WORK/$name.csv" code=0 why
  "$SIMREC" convert "$@" -o "$out" --force >/dev/null 2>&1 || code=$?
  if [ "$code" != 0 ] && [ "$code" != 3 ]; then fail "csv $name" "convert exit $code"; return; fi
  if why=$("$venv/bin/python" - "$out" "$column" "$want" <<'PY'
import sys, duckdb
path, column, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
rel = duckdb.read_csv(path, header=True)
lines = sum(1 for _ in open(path)) - 1
count = duckdb.sql(f"SELECT count(*) FROM rel").fetchall()[0][0]
if count != lines:
    sys.exit(f"duckdb reads {count} rows, the file has {lines}")
bad = [(n, t) for n, t in zip(rel.columns, rel.types) if str(t) not in ("DOUBLE", "BIGINT", "VARCHAR")]
if bad:
    sys.exit(f"columns of unexpected types: {bad[:5]}")
filled = duckdb.sql(f'SELECT count("{column}") FROM rel').fetchall()[0][0]
if filled != want:
    sys.exit(f"{column}: {filled} filled cells, expected {want}")
PY
  ); then pass "csv $name ($column: $want)"; else fail "csv $name" "$why"; fi
}
csv_check xrec-cube xrec.Transform.cube.position.x 5 "$FIXTURES/xrec/session.xrec"
csv_check xrec-head xrec.Transform.head.rotation.w 3 "$FIXTURES/xrec/session.xrec"
csv_check elodin-types-body body.2.world_pos.qw 301 "$FIXTURES/elodin/types_300"
exit $failed

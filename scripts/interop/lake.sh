#!/usr/bin/env bash
# Interop of the lake (docs/formats/lake.md): a recording of every fixture family written with
# one `convert --each --to lake`, then each table read whole, with no options, by pandas,
# pyarrow.dataset, polars and DuckDB, and by Spark when pyspark is importable (SKIPPED
# otherwise): the rows each reads equal the sum of the files' row counts, and no column is
# dropped. Called by scripts/interop.sh with SIMREC, FIXTURES, WORK; runs on its own too:
#   SIMREC=target/release/simrec FIXTURES=fixtures WORK=$(mktemp -d) scripts/interop/lake.sh
# pandas, pyarrow, polars and duckdb come from PyPI into a venv under target/ (made once;
# without network the checks are skipped and say so). Spark: `target/venv-lake/bin/pip install
# pyspark` (it runs on the machine's Java 17).
set -euo pipefail
: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${LAKE_VENV:-$root/target/venv-lake}"

if ! "$venv/bin/python" -c 'import pandas, pyarrow, polars, duckdb' 2>/dev/null; then
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet pandas pyarrow polars duckdb; } >/dev/null 2>&1; then
    echo "SKIP lake: no pandas/pyarrow/polars/duckdb (pip install failed)"
    exit 0
  fi
fi

lake="$WORK/lake"
code=0
"$SIMREC" convert --each \
  "$FIXTURES/nanover-legacy/small.traj" "$FIXTURES/nanover-legacy/small.state" \
  "$FIXTURES/nanover-zip/small.nanover.zip" "$FIXTURES/elodin/ball_1200" \
  "$FIXTURES/tes/small_plain.3es" "$FIXTURES/icarec/a2.icarec" \
  "$FIXTURES/icarus-hdf5/small.h5" "$FIXTURES/icarus-csv/rocket.csv" \
  "$FIXTURES/xrec/session.xrec" -o "$lake/" --to lake >/dev/null 2>&1 || code=$?
if [ "$code" != 0 ] && [ "$code" != 3 ]; then
  echo "FAIL lake: convert --each exit $code"
  exit 1
fi
exec "$venv/bin/python" - "$lake" <<'PY'
import glob, os, sys
import pyarrow.parquet as pq, pyarrow.dataset as pads
import pandas as pd, polars as pl, duckdb

lake = sys.argv[1]
failed = False

def check(name, rows, columns, want_rows, want_columns):
    global failed
    if rows == want_rows and list(columns) == want_columns:
        print(f"PASS lake {name}: {rows} rows, {len(want_columns)} columns")
    else:
        failed = True
        print(f"FAIL lake {name}: {rows} rows (want {want_rows}), columns {list(columns)} (want {want_columns})")

readers = {
    "pandas": lambda d: (lambda df: (len(df), df.columns))(pd.read_parquet(d)),
    "pyarrow.dataset": lambda d: (lambda t: (t.num_rows, t.column_names))(pads.dataset(d).to_table()),
    "polars": lambda d: (lambda df: (df.height, df.columns))(pl.scan_parquet(f"{d}/*.parquet").collect()),
    "duckdb": lambda d: (lambda r: (r.shape[0], r.columns))(duckdb.sql(f"SELECT * FROM read_parquet('{d}/*.parquet')")),
}
spark = None
try:
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[1]").appName("simrec-lake")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    readers["spark"] = lambda d: (lambda df: (df.count(), df.columns))(spark.read.parquet(d))
except ImportError:
    print("SKIPPED lake spark: pyspark is not importable")

for table in ["values", "poses"]:
    d = os.path.join(lake, table)
    files = sorted(glob.glob(f"{d}/*.parquet"))
    want_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    want_columns = pq.read_schema(files[0]).names
    schemas = {str(pq.read_schema(f).remove_metadata()) for f in files}
    if len(schemas) != 1:
        failed = True
        print(f"FAIL lake {table}: {len(schemas)} different schemas in {len(files)} files")
    for name, read in readers.items():
        try:
            rows, columns = read(d)
        except Exception as e:  # a reader that refuses the folder is the failure to report
            failed = True
            print(f"FAIL lake {table} {name}: {type(e).__name__}: {str(e)[:300]}")
            continue
        check(f"{table} {name} ({len(files)} files)", rows, columns, want_rows, want_columns)
if spark is not None:
    spark.stop()
sys.exit(1 if failed else 0)
PY

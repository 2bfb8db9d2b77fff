#!/usr/bin/env bash
# Runs the docs/analysis.md example on the fixtures: writes a lake of a recording of every
# family with `convert --each --to lake` into target/analysis-example/, then runs the queries
# with DuckDB, pandas and (when pyspark is importable) Spark SQL, from PyPI in a venv under
# target/ (pyspark: `target/venv-lake/bin/pip install pyspark`; Java 17).
# Usage: scripts/analysis_example.sh [SIMREC]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
simrec="${1:-$root/target/debug/simrec}"
venv="$root/target/venv-lake"
if ! "$venv/bin/python" -c 'import duckdb, pandas, pyarrow' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet duckdb pandas pyarrow polars
fi
cd "$root"
lake="target/analysis-example"
rm -rf "$lake"
"$simrec" convert --each fixtures/nanover-legacy/small.traj fixtures/nanover-legacy/small.state \
  fixtures/nanover-zip/small.nanover.zip fixtures/elodin/ball_1200 fixtures/tes/small_plain.3es \
  fixtures/icarec/a2.icarec.tar fixtures/xrec/session.xrec -o "$lake/" --to lake
"$venv/bin/python" scripts/analysis_example.py "$lake" 2> >(grep -v -e WARN -e log4j -e setLogLevel -e FutureWarning -e require_minimum >&2)

#!/usr/bin/env bash
# Runs the docs/analysis.md example on the fixtures: converts them with `convert --each`
# into target/analysis-example/, then queries the tables with DuckDB and pandas (from PyPI,
# in a venv under target/). Usage: scripts/analysis_example.sh [SIMREC]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
simrec="${1:-$root/target/debug/simrec}"
venv="$root/target/venv-analysis"
if ! "$venv/bin/python" -c 'import duckdb, pandas, pyarrow' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet duckdb pandas pyarrow
fi
cd "$root"
out="target/analysis-example"
rm -rf "$out"
"$simrec" convert --each fixtures/nanover-legacy/small.traj fixtures/nanover-legacy/small.state \
  fixtures/elodin/ball_1200 fixtures/tes/small_plain.3es fixtures/icarec/a2.icarec.tar \
  -o "$out/" --to parquet
"$venv/bin/python" scripts/analysis_example.py "$out"

#!/usr/bin/env bash
# Benchmark: every family's large input (bench/compare.sh's WORKDIR, default
# bench-data/compare) to MCAP, to MCAP with --mcap-encoding json, and to the Parquet table;
# a Markdown summary table (docs/performance.md, "MCAP, protobuf"). Usage:
# bench/mcap.sh [WORKDIR] [--repeat N] [--only FAMILIES] [--no-build] [--simrec BIN]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/mcap.py "$@"

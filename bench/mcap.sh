#!/usr/bin/env bash
# Benchmark: convert the large generated NanoVer pair and Elodin replay to MCAP, and the
# NanoVer pair to JSON Lines (docs/performance.md, "MCAP and JSON Lines"). See --help.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/mcap.py "$@"

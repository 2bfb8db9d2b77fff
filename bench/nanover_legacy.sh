#!/usr/bin/env bash
# Benchmark simrec on large NanoVer legacy recordings (see docs/performance.md).
#
# READS ../shared/bench/gen_traj.py (relative to the repository root, i.e.
# /work/shared/bench/gen_traj.py in the usual checkout) to generate its inputs
# into bench-data/ (gitignored). Benchmarks may read ../shared; tests may not.
# Override with --gen PATH or SIMREC_GEN_TRAJ=PATH (relative to the repo root).
#
# This is the entry point; the work is done by bench/nanover_legacy.py (Python 3
# standard library only). All arguments are passed through; see --help.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/nanover_legacy.py "$@"

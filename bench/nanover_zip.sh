#!/usr/bin/env bash
# Benchmark simrec on large NanoVer .nanover.zip recordings (see docs/performance.md,
# section "NanoVer .nanover.zip").
#
# READS ../shared/bench/gen_traj.py (relative to the repository root, i.e.
# /work/shared/bench/gen_traj.py in the usual checkout) to generate legacy
# .traj/.state inputs into bench-data/ (gitignored), which simrec then converts
# to .nanover.zip. Benchmarks may read ../shared; tests may not.
# Override with --gen PATH or SIMREC_GEN_TRAJ=PATH (relative to the repo root).
#
# The baseline, NanoVer's own Python reader, is loaded from an unpacked
# nanover-server wheel (--upstream DIR or NANOVER_WHEEL=DIR, default /tmp/nvwheel)
# and needs msgpack and numpy; without them that row is skipped with a message.
#
# This is the entry point; the work is done by bench/nanover_zip.py (Python 3
# standard library only, apart from the optional baseline). All arguments are
# passed through; see --help.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/nanover_zip.py "$@"

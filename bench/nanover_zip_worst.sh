#!/usr/bin/env bash
# `simrec inspect` on worst-case NanoVer recordings: 50,000 resets (.nanover.zip and
# .traj) and a 5-million-key state message (finished and crashed archives). Generates
# them into bench-data/worst/ (gitignored); see bench/nanover_zip_worst.py --help.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/nanover_zip_worst.py "$@"

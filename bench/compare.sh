#!/usr/bin/env bash
# A/B benchmark of two simrec binaries on the same inputs, interleaved run by run, for a
# refactor that must keep its speed (issue 28 item 9: a loss over 5 % is a defect). Prints,
# per command, the best user+sys CPU seconds and the best wall time of each binary over RUNS
# runs, and the ratio B/A of CPU time. Interleaving (A, B, A, B, …) puts both binaries under
# the same load, so the ratio holds even when the machine is busy.
#
# Usage: bench/compare.sh A_BINARY B_BINARY [WORKDIR]
# Inputs are generated into WORKDIR (default bench-data/compare) the first time, and
# converted by binary A into the other formats (bench/inputs.sh).
set -euo pipefail
a="$(realpath "$1")"
b="$(realpath "$2")"
cd "$(dirname "$0")/.."
here="$PWD/bench"
work="${3:-bench-data/compare}"
runs="${RUNS:-5}"
mkdir -p "$work"
work="$(realpath "$work")"

# label, command with BIN where the binary goes (a word of its own), OUT for an output path
commands=(
    "nanover legacy validate|BIN validate $work/legacy.traj $work/legacy.state"
    "nanover legacy -> .nanover.zip|BIN convert $work/legacy.traj $work/legacy.state -o OUT.nanover.zip --force"
    "nanover legacy slice 10..20s|BIN slice $work/legacy.traj $work/legacy.state --start 10s --end 20s -o OUT.traj --force"
    ".nanover.zip validate|BIN validate $work/run.nanover.zip"
    ".nanover.zip -> jsonl|BIN convert $work/run.nanover.zip -o OUT.jsonl --force"
    ".nanover.zip -> mcap|BIN convert $work/run.nanover.zip -o OUT.mcap --force"
    ".icarec validate|BIN validate $work/run.icarec"
    ".icarec -> .icarec|BIN convert $work/run.icarec -o OUT.icarec --force"
    ".icarec -> .h5|BIN convert $work/run.icarec -o OUT.h5 --force"
    ".icarec -> .csv|BIN convert $work/run.icarec -o OUT.csv --force"
    ".icarec -> parquet|BIN convert $work/run.icarec -o OUT.parquet --force"
    ".h5 validate|BIN validate $work/run.h5"
    ".csv validate|BIN validate $work/run.csv"
    "elodin validate|BIN validate $work/elodin"
    "elodin -> jsonl|BIN convert $work/elodin -o OUT.jsonl --force"
    "3es validate|BIN validate $work/run.3es"
    "3es -> 3es slice|BIN slice $work/run.3es --start 5s --end 15s -o OUT.3es --force"
    "3es -> mcap|BIN convert $work/run.3es -o OUT.mcap --force"
    "xrec validate|BIN validate $work/run.xrec"
    "xrec -> jsonl|BIN convert $work/run.xrec -o OUT.jsonl --force"
)

# One run: prints "wall cpu" (seconds).
once() { # binary, command template
    local bin="$1" template="$2" out="$work/out-$(basename "$1")"
    local cmd=${template//BIN/$bin}
    cmd=${cmd//OUT/$out}
    /usr/bin/time -f "%e %U %S" -o "$work/time.out" $cmd >/dev/null 2>&1 || true
    # The last line: a command that exits non-zero (3: finished with loss) gets a line
    # "Command exited with non-zero status N" before it.
    awk 'END { printf "%s %.2f\n", $1, $2 + $3 }' "$work/time.out"
}

# shellcheck source=bench/inputs.sh
. "$here/inputs.sh"
make_inputs "$a" "$work"
printf '%-34s %9s %9s %9s %9s %7s\n' "command" "A cpu s" "B cpu s" "A wall" "B wall" "B/A"
for entry in "${commands[@]}"; do
    label="${entry%%|*}" template="${entry#*|}"
    best_a="" best_b="" wall_a="" wall_b=""
    for _ in $(seq "$runs"); do
        for side in a b; do
            bin=$a; [ "$side" = b ] && bin=$b
            read -r wall cpu <<<"$(once "$bin" "$template")"
            if [ "$side" = a ]; then
                best_a=$(echo "${best_a:-$cpu} $cpu" | awk '{print ($2 < $1) ? $2 : $1}')
                wall_a=$(echo "${wall_a:-$wall} $wall" | awk '{print ($2 < $1) ? $2 : $1}')
            else
                best_b=$(echo "${best_b:-$cpu} $cpu" | awk '{print ($2 < $1) ? $2 : $1}')
                wall_b=$(echo "${wall_b:-$wall} $wall" | awk '{print ($2 < $1) ? $2 : $1}')
            fi
        done
    done
    ratio=$(awk -v a="$best_a" -v b="$best_b" 'BEGIN { printf (a > 0) ? "%.3f" : "-", b / a }')
    printf '%-34s %9s %9s %9s %9s %7s\n' "$label" "$best_a" "$best_b" "$wall_a" "$wall_b" "$ratio"
done

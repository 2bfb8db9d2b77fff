#!/usr/bin/env bash
# The Icarus CSV reader, two builds interleaved (docs/performance.md, "Icarus CSV", "The
# reader by frames"): for each input, RUNS rounds of, per build in turn,
#   validate  : simrec validate IN                          (every cell parsed and checked)
#   inspect   : simrec inspect IN                           (by frames, without values)
#   parquet   : simrec convert IN -o out.parquet            (the Parquet table)
#   mcap      : simrec convert IN -o out.mcap --compression none
#   mcapz     : simrec convert IN -o out.mcap               (zstd, as users get it)
#   lake      : simrec convert IN -o out/ --to lake
# with /usr/bin/time; prints the median CPU seconds (user + system: the machine is shared,
# so wall time includes other processes' turns), MB/s of input per CPU second, the median
# wall time and MB/s of input per wall second, and the largest peak RSS. Then checks that
# both builds wrote the same MCAP, byte for byte. CMDS (default "validate parquet mcap lake")
# picks the commands.
#
# Usage: [CMDS="…"] bench/icarus_csv_read.sh BEFORE_BIN AFTER_BIN RUNS INPUT.csv...
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1 after=$2 runs=$3
shift 3
out=bench-data/csv-read
mkdir -p "$out"

one() { # build label, command label, input, args... ; prints "cpu rss wall"
    local input=$3
    shift 3
    /usr/bin/time -f "%U %S %M %e" -o "$out/time.log" "$@" > /dev/null 2> "$out/err.log" ||
        [ $? = 3 ] || { cat "$out/err.log"; exit 1; }
    awk '{ printf "%.2f %d %.2f\n", $1 + $2, $3, $4 }' "$out/time.log"
}

run() { # build label, bin, command label, input
    local b=$1 bin=$2 c=$3 in=$4
    case $c in
    validate) one "$b" "$c" "$in" "$bin" validate "$in" ;;
    inspect) one "$b" "$c" "$in" "$bin" inspect "$in" ;;
    parquet) one "$b" "$c" "$in" "$bin" convert "$in" -o "$out/$b.parquet" --force ;;
    mcap) one "$b" "$c" "$in" "$bin" convert "$in" -o "$out/$b.mcap" --compression none --force ;;
    mcapz) one "$b" "$c" "$in" "$bin" convert "$in" -o "$out/$b.mcap" --force ;;
    lake) rm -rf "$out/$b-lake" && one "$b" "$c" "$in" "$bin" convert "$in" -o "$out/$b-lake/" --to lake ;;
    esac
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for in in "$@"; do
    mb=$(stat -c %s "$in" | awk '{ print $1 / 1e6 }')
    for c in ${CMDS:-validate parquet mcap lake}; do
        : > "$out/before.txt"
        : > "$out/after.txt"
        for _ in $(seq "$runs"); do
            run before "$before" "$c" "$in" >> "$out/before.txt"
            run after "$after" "$c" "$in" >> "$out/after.txt"
        done
        for b in before after; do
            w=$(sort -n -k3 "$out/$b.txt" | awk '{ w[NR] = $3 } END { print w[int((NR + 1) / 2)] }')
            sort -n "$out/$b.txt" | awk -v b="$b" -v c="$c" -v mb="$mb" -v w="$w" -v name="$(basename "$in")" '
                { cpu[NR] = $1; if ($2 > rss) rss = $2 }
                END { m = cpu[int((NR + 1) / 2)];
                      printf "%-10s %-8s %-6s %6.2f CPU s  %6.0f MB/s  %6.2f wall s  %6.0f MB/s  %6.1f MiB  (%.1f MB)\n",
                             name, c, b, m, mb / m, w, mb / w, rss / 1024, mb }'
        done
    done
    [ ! -e "$out/before.mcap" ] || cmp "$out/before.mcap" "$out/after.mcap" && echo "$(basename "$in"): the same MCAP"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$out"

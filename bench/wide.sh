#!/usr/bin/env bash
# Wide and hostile inputs (issue 27, items D, E and F): costs that grow with the number of
# signals, columns, event types or chapters, or with what a length field claims.
#
# Generates in WORKDIR (default ${TMPDIR:-/tmp}/simrec-bench-wide), with bench/wide_gen.py
# (h5py from target/venv, or $H5PY):
#   wide.csv      1,000,000 Icarus CSV columns          -> inspect
#   wide.h5       20,000 HDF5 signal datasets            -> inspect, convert -> .h5
#   wide.icarec   100,000 .icarec signals                -> convert -> .icarec, .h5
#   types.xrec    20,000 XREC event types in 10 frames   -> convert -> .h5
#   chapters.xrec 100,000 XREC chapters                  -> inspect (text)
# and the issue's hostile files: an .icarec whose schema.json is 8 MB of 4 million bad
# signal elements (validate, recover) and an XREC gzip bomb of 1 GiB of zeros in 1 MB
# (inspect, validate). Each command runs once under /usr/bin/time with a TIMEOUT (default
# 300 s): wall, user+sys CPU, peak RSS.
#
# Usage: bench/wide.sh [WORKDIR]   (BIN=path/to/simrec to time another build, e.g. an older
# one; SCALE=0.1 for smaller inputs)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="${1:-${TMPDIR:-/tmp}/simrec-bench-wide}"
mkdir -p "$work"
cd "$here/.."
if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet --bin simrec
    BIN="$PWD/target/release/simrec"
fi
py="${H5PY:-$PWD/target/venv/bin/python}"
timeout="${TIMEOUT:-300}"
if [ ! -f "$work/chapters.xrec" ]; then
    "$py" "$here/wide_gen.py" "$work" "${SCALE:-1}"
fi
if [ ! -f "$work/bad-schema.icarec/schema.json" ]; then
    python3 - "$work" <<'PY'
import gzip, os, struct, sys
work = sys.argv[1]
d = os.path.join(work, "bad-schema.icarec")
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "schema.json"), "w") as f:
    f.write('{"schema_version":"1","icarus_version":"1","signals":[' + ",".join(["0"] * (4 << 20)) + "]}")
open(os.path.join(d, "dynamic_signals.bin"), "wb").close()
# XREC: one gzip packet declaring 1 GiB of events, all zeros, then an End.
area = gzip.compress(bytes(1 << 30), compresslevel=9, mtime=0)
start = b"XREC" + struct.pack("<HHB3sqd", 1, 0, 1, b"\0\0\0", 1_700_000_000_000_000_000, 10.0)
start += struct.pack("<H", 4) + b"bomb" + struct.pack("<I", 2) + b"{}"
bounds = struct.pack("<qqddII", 0, 0, 10.0, 10.0, 1, 1 << 30)
end = struct.pack("<qdIQI", 1_700_000_001_000_000_000, 11.0, 1, 1, 0)
with open(os.path.join(work, "bomb.xrec"), "wb") as f:
    f.write(struct.pack("<BBHI", 1, 0, 0, len(start)) + start)
    f.write(struct.pack("<BBHI", 2, 1, 0, 40 + len(area)) + bounds + area)
    f.write(struct.pack("<BBHI", 3, 0, 0, len(end)) + end)
PY
fi
measure() { # label, command...
    local label="$1"; shift
    local rc=0
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.out" timeout "$timeout" "$@" >/dev/null 2>&1 || rc=$?
    read -r wall user sys rss < <(tail -1 "$work/time.out")
    local note=""
    [ "$rc" = 124 ] && note="  (stopped by the ${timeout} s timeout)"
    printf '%-36s %8s s wall %8.2f s CPU %9.1f MiB peak RSS%s\n' "$label" "$wall" \
        "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc -l)" "$note"
}
cd "$work"
measure "inspect wide.csv" "$BIN" inspect wide.csv
measure "inspect wide.h5" "$BIN" inspect wide.h5
measure "convert wide.h5 -> .h5" "$BIN" convert wide.h5 -o out.h5 --force
measure "convert wide.icarec -> .icarec" "$BIN" convert wide.icarec -o out.icarec --force
measure "convert types.xrec -> .h5" "$BIN" convert types.xrec -o types.h5 --force
measure "convert wide.icarec -> .h5" "$BIN" convert wide.icarec -o icarec.h5 --force
measure "inspect chapters.xrec" "$BIN" inspect chapters.xrec
measure "validate bad-schema.icarec" "$BIN" validate bad-schema.icarec
measure "recover bad-schema.icarec" "$BIN" recover bad-schema.icarec -o fixed.icarec --force
measure "inspect bomb.xrec" "$BIN" inspect bomb.xrec
measure "validate bomb.xrec" "$BIN" validate bomb.xrec
rm -rf out.h5 out.icarec types.h5 icarec.h5 fixed.icarec

#!/usr/bin/env bash
# MCAP: every small fixture converted to .mcap by simrec, then opened with the Python `mcap`
# reader (mcap 1.x, with mcap-protobuf-support decoding the protobuf topics): the summary
# has statistics and chunk indexes, no topic is empty or has a dot in its name, every
# message decodes, and the values of simrec's topics equal `simrec cat`'s, value for value
# (mcap_check.py). For 3es captures, each mesh shape is drawn on /3es/scene (a triangle list
# with the source's indices and points) and each mesh set whose resources are finalised is
# drawn. With `rerun-sdk` in the venv (RERUN=1 installs it), `rerun mcap convert` then `rerun
# rrd print` must show no `McapMessage:data` column (an opaque message); SKIPPED without.
#
# Environment: SIMREC, FIXTURES, WORK (see scripts/interop.sh); MCAP_PY, a python with
# `mcap` and `mcap-protobuf-support` (default: a venv made in target/mcap-venv from PyPI;
# the checks are skipped, with a SKIPPED line, when none can be made).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"

if [ -z "${MCAP_PY:-}" ]; then
  venv="$root/target/mcap-venv"
  if ! "$venv/bin/python" -c 'import mcap, mcap_protobuf' 2>/dev/null; then
    python3 -m venv "$venv" >/dev/null 2>&1 \
      && "$venv/bin/pip" install --quiet mcap mcap-protobuf-support >/dev/null 2>&1 || true
  fi
  if "$venv/bin/python" -c 'import mcap, mcap_protobuf' 2>/dev/null; then
    MCAP_PY="$venv/bin/python"
  else
    echo "SKIPPED mcap: no python with mcap and mcap-protobuf-support (set MCAP_PY)"
    exit 0
  fi
fi

failed=0
check() { # name, inputs...
  local name="$1"; shift
  local out="$WORK/$name.mcap" why
  if ! why="$("$SIMREC" convert "$@" -o "$out" --force 2>&1)"; then
    # Exit 3 (values with no Foxglove 3D counterpart) still writes the file.
    if [ ! -f "$out" ]; then
      echo "FAIL $name: simrec convert: $(echo "$why" | tail -1)"; failed=1; return
    fi
  fi
  # Exit 3 (JSON has no NaN: cat writes null) still prints every record.
  "$SIMREC" cat --format ndjson "$@" > "$WORK/$name.cat.ndjson" 2>/dev/null || true
  if why="$("$MCAP_PY" "$here/mcap_check.py" "$out" "$WORK/$name.cat.ndjson" 2>&1)"; then
    echo "PASS $name ($why)"
  else
    echo "FAIL $name: $(echo "$why" | tail -1 | cut -c1-300)"; failed=1
  fi
  rerun_check "$name" "$out"
}

rerun="$(dirname "$MCAP_PY")/rerun"
if [ "${RERUN:-0}" = 1 ] && [ ! -x "$rerun" ]; then
  "$(dirname "$MCAP_PY")/pip" install --quiet rerun-sdk >/dev/null 2>&1 || true
fi
[ -x "$rerun" ] || echo "SKIPPED rerun: no rerun-sdk beside $MCAP_PY (RERUN=1 installs it)"
rerun_check() { # name, file.mcap
  [ -x "$rerun" ] || return 0
  local rrd="$WORK/$1.rrd"
  if ! "$rerun" mcap convert "$2" -o "$rrd" >/dev/null 2>&1; then
    echo "FAIL $1 rerun: mcap convert failed"; failed=1; return
  fi
  if "$rerun" rrd print "$rrd" 2>&1 | grep -q 'McapMessage:data'; then
    echo "FAIL $1 rerun: a McapMessage:data column (a topic Rerun cannot decode)"; failed=1
  else
    echo "PASS $1 rerun"
  fi
}

check nanover-legacy-small "$FIXTURES/nanover-legacy/small.traj" "$FIXTURES/nanover-legacy/small.state"
check nanover-legacy-hello "$FIXTURES/nanover-legacy/upstream/hello.traj"
check nanover-legacy-ala "$FIXTURES/nanover-legacy/upstream/17-ala-recording-multiple.traj" \
  "$FIXTURES/nanover-legacy/upstream/17-ala-recording-multiple.state"
check nanover-zip-small "$FIXTURES/nanover-zip/small.nanover.zip"
check nanover-zip-vel-force "$FIXTURES/nanover-zip/upstream/test_mdanalysis-test_vel_force.nanover.zip"
for d in ball_1200 ball_1200_v0.9.0 ball_build_only spin_120 types_300; do
  check "elodin-$d" "$FIXTURES/elodin/$d"
done
# Elodin DBs: of one time grid (written from ticks) and not (written from records).
for d in ball_v0162 three_body_v0180 upstream/bools-alternating-db-linux ball_v0142 crash_v0180 \
  types_v0180; do
  check "elodin-db-$(basename "$d")" "$FIXTURES/elodin-db/$d"
done
for f in small_plain small_compress small_collate small_filegzip; do
  check "3es-$f" "$FIXTURES/tes/$f.3es"
done
check icarec-a2 "$FIXTURES/icarec/a2.icarec"
check icarec-a2-tar "$FIXTURES/icarec/a2.icarec.tar"
check icarec-types "$FIXTURES/icarec/types.icarec"
check xrec-session "$FIXTURES/xrec/session.xrec"
check xrec-session-gzip "$FIXTURES/xrec/session_gzip.xrec"
for f in small vulcan escape noschema unescaped; do
  check "icarus-hdf5-$f" "$FIXTURES/icarus-hdf5/$f.h5"
done
check icarus-csv-rocket "$FIXTURES/icarus-csv/rocket.csv"
exit "$failed"

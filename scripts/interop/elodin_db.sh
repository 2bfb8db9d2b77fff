#!/usr/bin/env bash
# Elodin DB interop: what simrec writes as an Elodin DB (`--to elodin-db`) opens in Elodin
# 0.18.0 itself (../shared/tools/elodin-db/dbcheck.py: Elodin's embedded server and client),
# which serves the source's components, timestamps, values and messages
# (scripts/interop/elodin_db_check.py says how they are compared).
#
# Environment (set by scripts/interop.sh): SIMREC, FIXTURES, WORK; SHARED (default:
# ../shared beside the project). The venv with Elodin's Python package comes from the
# tools' own setup.sh (it reuses ${XDG_CACHE_HOME:-~/.cache}/simrec-elodin-venv, or makes it
# with a Python 3.13, about 30 s); without the tools or a Python 3.13 this part prints
# SKIPPED and passes.
# Prints `PASS name` or `FAIL name: why` per fixture; exits 1 if any failed.
set -euo pipefail

: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"
here="$(cd "$(dirname "$0")" && pwd)"
shared="${SHARED:-$here/../../../shared}"
tools="$shared/tools/elodin-db"
if [ ! -f "$tools/dbcheck.py" ] || [ ! -f "$tools/setup.sh" ]; then
  echo "SKIPPED elodin_db: $tools (dbcheck.py, setup.sh) is absent"; exit 0
fi
if ! py="$(bash "$tools/setup.sh" 2>"$WORK/setup.err" | tail -1)" || [ ! -x "$py" ]; then
  echo "SKIPPED elodin_db: no venv with Elodin 0.18 ($(tail -1 "$WORK/setup.err"))"; exit 0
fi

failed=0
# An epoch for sources that store none, so the times Elodin serves can be checked.
epoch=2026-01-01T00:00:00Z
epoch_us=1767225600000000

# µs since the Unix epoch of an ISO-8601 UTC instant (`2026-03-01T12:00:00.010000Z`).
iso_us() {
  python3 -c 'import sys, datetime as d
whole, _, frac = sys.argv[1].rstrip("Z").partition(".")
t = d.datetime.fromisoformat(whole).replace(tzinfo=d.timezone.utc)
print(int(t.timestamp()) * 10**6 + int((frac + "000000")[:6]))' "$1"
}

check() { # check NAME FIXTURE [output]: compare with the source, or with simrec's read of the DB
  local name="$1" src="$FIXTURES/$2" out="$WORK/$1" own
  own="$("$SIMREC" inspect --format json "$src" | python3 -c \
    'import json,sys; print((json.loads(sys.stdin.readline()).get("origin") or {}).get("epoch") or "")')"
  local args=(convert "$src" -o "$out/" --to elodin-db) start_us="$epoch_us"
  if [ -z "$own" ]; then
    args+=(--epoch "$epoch")
  else
    start_us="$(iso_us "$own")"
  fi
  local code=0
  "$SIMREC" "${args[@]}" >"$WORK/$name.log" 2>&1 || code=$?
  if [ "$code" != 0 ] && [ "$code" != 3 ]; then fail "$name" "convert exit $code: $(tail -1 "$WORK/$name.log")"; return; fi
  "$SIMREC" cat --format json "$src" >"$WORK/$name.jsonl" 2>/dev/null || true
  if [ "${3:-}" = output ]; then
    # The family's model (NanoVer particles as bodies, a replay's named entities) is checked
    # against simrec's own read of the DB; tests/it/formats/elodin/db_write.rs checks that
    # read against the source.
    "$SIMREC" cat --format json "$out" >"$WORK/$name.jsonl" 2>/dev/null || true
    start_us="$(iso_us "$("$SIMREC" inspect --format json "$out" | python3 -c \
      'import json,sys; print(json.loads(sys.stdin.readline())["origin"]["epoch"])')")"
  fi
  # A copy: Elodin's open rewrites db_state.
  cp -R "$out" "$out.copy"
  if ! timeout 600 "$py" "$tools/dbcheck.py" "$out.copy" "$WORK/$name.json" >"$WORK/$name.dbcheck" 2>&1 \
    || ! grep -q '^LOADED' "$WORK/$name.dbcheck"; then
    fail "$name" "Elodin did not open it: $(grep -m1 'LOAD' "$WORK/$name.dbcheck" || tail -1 "$WORK/$name.dbcheck")"; return
  fi
  local logs
  logs="$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).get("msgs", {})))' "$WORK/$name.json")"
  # shellcheck disable=SC2086
  if why="$(python3 "$here/elodin_db_check.py" "$WORK/$name.jsonl" "$start_us" "$WORK/$name.json" $logs)"; then
    pass "$name ($(grep -m1 '^LOADED' "$WORK/$name.dbcheck" | cut -d' ' -f2-))"
  else
    fail "$name" "$(echo "$why" | head -3 | tr '\n' ';')"
  fi
}
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

check icarec icarec/a2.icarec
check icarus_hdf5 icarus-hdf5/small.h5
check icarus_csv icarus-csv/rocket.csv
check nanover nanover-zip/small.nanover.zip output
check tes tes/small_plain.3es
check xrec xrec/session.xrec
check replay elodin/ball_1200 output
check db elodin-db/types_v0180
exit "$failed"

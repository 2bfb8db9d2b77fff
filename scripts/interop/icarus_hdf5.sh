#!/usr/bin/env bash
# Icarus HDF5 interop: simrec writes HDF5 from every Icarus HDF5 fixture (HDF5 -> HDF5, and the
# crashed one through `recover`, a time slice of vulcan.h5), from every .icarec fixture (frame
# by frame, compared with the record path's output) and from every Elodin fixture
# (Elodin -> icarus-hdf5), and h5py
# reads each output and checks the Vulcan layout (scripts/interop/icarus_hdf5_check.py): every
# dataset's values (bit for bit against an HDF5 source), dtype, chunking, maximum shape,
# filters, attributes, and the schema JSON. One line per check: PASS name / FAIL name: why.
#
# Environment: SIMREC, FIXTURES, WORK (see scripts/interop.sh); H5PY, a python with h5py
# (default: target/h5py-venv, made from PyPI with h5py 3.16.0 when absent; the checks are
# skipped, and say so, when none can be made); H5PY_110, optionally a python whose h5py is built
# on HDF5 1.10 (default: target/h5py110-venv when it exists), which reads every output too.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"
check="$here/icarus_hdf5_check.py"

if [ -z "${H5PY:-}" ]; then
  venv="$root/target/h5py-venv"
  if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import h5py' 2>/dev/null; then
    H5PY="$venv/bin/python"
  else
    H5PY=""
    for candidate in python3.13 "$HOME"/.pyenv/versions/3.13*/bin/python3.13 python3; do
      if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 9))' >/dev/null 2>&1 \
        && "$candidate" -m venv "$venv" >/dev/null 2>&1 \
        && "$venv/bin/pip" install --quiet "h5py==3.16.0" numpy >/dev/null 2>&1; then
        H5PY="$venv/bin/python"
        break
      fi
    done
  fi
fi
if [ -z "$H5PY" ]; then
  echo "SKIPPED icarus_hdf5: no Python with h5py could be made (set H5PY)"
  exit 0
fi
if [ -z "${H5PY_110:-}" ] && [ -x "$root/target/h5py110-venv/bin/python" ]; then
  H5PY_110="$root/target/h5py110-venv/bin/python"
fi

failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

# Runs simrec ARGS, expecting one of the exit codes in $1 ("0" or "0 3").
simrec_ok() {
  local codes="$1"; shift
  local code=0
  "$SIMREC" "$@" >"$WORK/last.out" 2>"$WORK/last.err" || code=$?
  for c in $codes; do [ "$code" = "$c" ] && return 0; done
  echo "exit $code: $(head -c 300 "$WORK/last.err" | tr '\n' ' ')"
  return 1
}

# h5py (and the HDF5 1.10 one, when there is one) checks OUT [SOURCE].
h5py_check() {
  local name="$1"; shift
  local why
  if why="$("$H5PY" "$check" "$@" 2>&1)"; then
    pass "$name (h5py: $why)"
  else
    fail "$name" "$(echo "$why" | head -5 | tr '\n' ';')"
  fi
  if [ -n "${H5PY_110:-}" ]; then
    if why="$("$H5PY_110" "$check" "$1" 2>&1)"; then
      pass "$name, read by HDF5 1.10 ($why)"
    else
      fail "$name, read by HDF5 1.10" "$(echo "$why" | head -5 | tr '\n' ';')"
    fi
  fi
}

src="$FIXTURES/icarus-hdf5"
for f in vulcan unescaped escape noschema small; do
  out="$WORK/$f.h5"
  if why="$(simrec_ok 0 convert "$src/$f.h5" -o "$out")"; then
    h5py_check "hdf5-to-hdf5 $f" "$out" "$src/$f.h5"
  else
    fail "hdf5-to-hdf5 $f" "$why"
  fi
done

# A crashed run (datasets one frame apart): recover keeps the frames every dataset has.
if why="$(simrec_ok 3 recover "$src/crashed.h5" -o "$WORK/crashed.h5")"; then
  h5py_check "recover crashed" "$WORK/crashed.h5" "$src/crashed.h5"
else
  fail "recover crashed" "$why"
fi

# A time slice (binary search on /time, only its rows read): h5py finds the Vulcan layout, the
# 200 frames of [10 s, 12 s) of vulcan.h5 with their values bit for bit, and /time kept as
# recorded (a window keeps the recording's times; --rebase would start it at 0).
if why="$(simrec_ok 0 slice "$src/vulcan.h5" --start 10s --end 12s -o "$WORK/slice.h5")"; then
  h5py_check "slice vulcan 10s..12s" "$WORK/slice.h5"
  if why="$("$H5PY" - "$src/vulcan.h5" "$WORK/slice.h5" 2>&1 <<'PY'
import sys, h5py, numpy as np
src, cut = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
t = src["time"][:]
rows = np.nonzero((t >= 10.0) & (t < 12.0))[0]
assert len(rows) == 200 and cut["time"].shape == (200,), (len(rows), cut["time"].shape)
assert cut["time"][:].tobytes() == t[rows].tobytes(), "time not kept bit for bit"
names = sorted(src["signals"].keys())
assert sorted(cut["signals"].keys()) == names
for n in names:
    a, b = src["signals"][n][rows[0]:rows[-1] + 1], cut["signals"][n][:]
    assert a.tobytes() == b.tobytes(), n
print(f"{len(rows)} frames, {len(names)} signals bit for bit")
PY
  )"; then
    pass "slice vulcan 10s..12s rows (h5py: $why)"
  else
    fail "slice vulcan 10s..12s rows" "$(echo "$why" | tail -3 | tr '\n' ';')"
  fi
else
  fail "slice vulcan 10s..12s" "$why"
fi

# .icarec -> HDF5 goes frame by frame (a frame's block, not a record per signal): h5py finds
# the Vulcan layout, and the output equals the record path's (`--channel '*'` reads records)
# object for object and bit for bit (bench/h5_same.py; only /metadata created_at differs).
for rec in "$FIXTURES"/icarec/*.icarec "$FIXTURES"/icarec/*.icarec.tar; do
  name="$(basename "$rec")"
  out="$WORK/frames-$name.h5" ref="$WORK/records-$name.h5"
  if why="$(simrec_ok 0 convert "$rec" -o "$out")" \
    && why="$(simrec_ok 0 convert "$rec" --channel '*' -o "$ref")"; then
    h5py_check "icarec-to-hdf5 by frames $name" "$out"
    if why="$("$H5PY" "$root/bench/h5_same.py" "$out" "$ref" 2>&1)"; then
      pass "icarec-to-hdf5 $name: frames = records (h5py: $why)"
    else
      fail "icarec-to-hdf5 $name: frames = records" "$(echo "$why" | head -3 | tr '\n' ';')"
    fi
  else
    fail "icarec-to-hdf5 $name" "$why"
  fi
done

# Another source: every Elodin replay becomes Vulcan-layout HDF5 (signals the profile cannot
# type are in the loss report, exit 3).
for world in "$FIXTURES"/elodin/*/; do
  name="$(basename "$world")"
  out="$WORK/elodin-$name.h5"
  if why="$(simrec_ok "0 3" convert "$world" -o "$out")"; then
    h5py_check "elodin-to-hdf5 $name" "$out"
    if why="$(simrec_ok 0 validate "$out")"; then
      pass "elodin-to-hdf5 $name (simrec validate)"
    else
      fail "elodin-to-hdf5 $name (simrec validate)" "$why"
    fi
  else
    fail "elodin-to-hdf5 $name" "$why"
  fi
done

exit "$failed"

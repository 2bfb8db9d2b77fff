# The large inputs of one recording per format, shared by bench/compare.sh and bench/lake.sh
# (sourced): made into WORK the first time by the generators the other bench scripts use
# (and ../shared/bench/gen_traj.py), the other formats converted by SIMREC: a ~109 MB NanoVer
# legacy pair, its .nanover.zip, a ~100 MB .icarec (200 signals, 60,000 frames) and its HDF5,
# CSV and Elodin copies, a ~85 MB 3es capture and a ~126 MB XREC recording.
# Usage: make_inputs SIMREC WORK (WORK must exist; nothing is written there when every input is).
make_inputs() {
    local bin="$1" work="$2" here
    here="$(dirname "${BASH_SOURCE[0]}")"
    local nv="$work/legacy" rec="$work/run.icarec"
    [ -f "$nv.traj" ] || python3 "$here/../../shared/bench/gen_traj.py" "$nv" --waters 1000 --frames 3000 >/dev/null
    [ -f "$work/run.nanover.zip" ] || "$bin" convert "$nv.traj" "$nv.state" -o "$work/run.nanover.zip" >/dev/null 2>&1
    [ -f "$rec/metadata.json" ] || python3 "$here/icarec_gen.py" "$rec" 60000 >/dev/null
    [ -f "$work/run.h5" ] || "$bin" convert "$rec" -o "$work/run.h5" >/dev/null 2>&1
    [ -f "$work/run.csv" ] || "$bin" convert "$rec" -o "$work/run.csv" >/dev/null 2>&1 || true
    [ -d "$work/elodin" ] || "$bin" convert "$rec" -o "$work/elodin/" --to elodin >/dev/null 2>&1 || true
    [ -f "$work/run.3es" ] || python3 "$here/tes_gen.py" "$work/run.3es" 1000 >/dev/null
    [ -f "$work/run.xrec" ] || python3 "$here/xrec_gen.py" "$work/run.xrec" 600000 >/dev/null
}

#!/usr/bin/env bash
# Elodin interop: what simrec writes as an Elodin replay loads in Elodin 0.10.1's own loader
# (`readcheck`, its World::read_from_dir), with the values it should hold.
#
# Environment (set by scripts/interop.sh): SIMREC (a built simrec), TOOLS (readcheck, …),
# NANOVER_PY (unused here), FIXTURES (the project's fixtures/), WORK (an empty scratch dir).
# Prints `PASS name` or `FAIL name: why` per check; exits 1 if any check failed.
#
# Checks:
# - convert: every small healthy fixture of every format simrec reads (NanoVer legacy pairs
#   and upstream recordings, .nanover.zip files, 3es captures, Elodin replays, Icarus
#   recordings, and a generated .icarec of 40 signals in 4 components) to a replay
#   directory; readcheck loads it, and no component is a scalar U8/U16 (Elodin cannot load
#   those; simrec widens them). A recording without records is refused (exit 2, nothing
#   written): Elodin cannot load a replay without ticks.
# - recover of every Elodin fixture: exit 0, and readcheck's dump of the output equals its
#   dump of the input.
# - slice: ticks 10..20 of spin_120 equal the input's ticks 10..19 (simulation_tick
#   renumbered); a window into an Elodin output is rebased (ticks start at 0), and stderr
#   says so.
# - merge: end to end and side by side load, validate clean, and hold the inputs' values
#   (entity ids and asset handles moved as docs/formats/elodin.md says); a merge that is
#   neither is refused (exit 2, nothing written).
# - v0.9.0: outputs of a v0.9.0 replay keep its metadata flavour (`output_time_step`, no
#   `default_playback_speed`). Elodin 0.10.1 requires `default_playback_speed`, so readcheck
#   loads such an output only with that one key switched (in a copy); that copy is what is
#   loaded and compared, and the switch is all that differs from the 0.10 flavour.
set -euo pipefail

: "${SIMREC:?}" "${TOOLS:?}" "${FIXTURES:?}" "${WORK:?}"
readcheck="$TOOLS/readcheck"
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

command -v python3 >/dev/null || { echo "FAIL elodin: python3 is needed to compare readcheck dumps"; exit 1; }

# The world dir of a replay dir (exec dirs hold it in world/).
world() { if [ -d "$1/world" ]; then echo "$1/world"; else echo "$1"; fi; }

# A copy of world dir $1 at $2 whose metadata.json is in the 0.10 flavour (for readcheck):
# only `output_time_step` → `default_playback_speed: 1.0`, and `time_step` → the two steps.
flavour_010_copy() {
    rm -rf "$2"; cp -r "$1" "$2"
    python3 - "$2/metadata.json" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
if "time_step" in m:
    m["sim_time_step"] = m["run_time_step"] = m.pop("time_step")
m.pop("output_time_step", None)
m.setdefault("default_playback_speed", 1.0)
m.setdefault("max_ticks", 2**64 - 1)
open(p, "w").write(json.dumps(m, separators=(",", ":")))
PY
}

# readcheck WORLD OUT.json, switching a non-0.10 flavour in a copy first; prints its line.
load() {
    local w=$1 out=$2
    if python3 -c 'import json,sys; sys.exit(0 if "default_playback_speed" in json.load(open(sys.argv[1])) else 1)' "$w/metadata.json"; then
        "$readcheck" "$w" "$out" 2>&1 | head -c 400
    else
        flavour_010_copy "$w" "$out.world"
        "$readcheck" "$out.world" "$out" 2>&1 | head -c 400
    fi
}

# No scalar U8/U16 (and no Bool) component in metadata.json.
no_small_scalars() {
    python3 - "$1/metadata.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
bad = [f"{a}.{c['name']} {c['component_type']['primitive_ty']}"
       for a, cs in m["archetypes"].items() for c in cs
       if c["component_type"]["primitive_ty"] in ("U8", "U16", "Bool") and c["component_type"]["shape"] == []
       or c["component_type"]["primitive_ty"] == "Bool"]
if bad:
    print(", ".join(bad)); sys.exit(1)
PY
}

check_convert() { # name, inputs...
    local name=$1; shift
    local out="$WORK/convert/$name"
    local log="$WORK/convert/$name.log"
    mkdir -p "$WORK/convert"
    local rc=0
    "$SIMREC" convert "$@" -o "$out/" --to elodin >"$log" 2>&1 || rc=$?
    if [ "$rc" != 0 ] && [ "$rc" != 3 ]; then
        fail "convert $name" "simrec exit $rc: $(tail -n 2 "$log" | tr '\n' ' ')"; return
    fi
    local w; w=$(world "$out")
    local bad
    if ! bad=$(no_small_scalars "$w"); then fail "convert $name" "scalar U8/U16/Bool components: $bad"; return; fi
    local line; line=$(load "$w" "$out.json")
    case "$line" in
        LOADED*) pass "convert $name (exit $rc; readcheck: $line)";;
        *) fail "convert $name" "readcheck: $line";;
    esac
}

F=$FIXTURES
# NanoVer legacy: the small pair, the upstream pairs and single recording, the tie pair.
check_convert legacy-small "$F/nanover-legacy/small.traj" "$F/nanover-legacy/small.state"
for t in "$F"/nanover-legacy/upstream/*.traj; do
    s="${t%.traj}.state"
    if [ -f "$s" ]; then check_convert "legacy-$(basename "${t%.traj}")" "$t" "$s"
    else check_convert "legacy-$(basename "${t%.traj}")" "$t"; fi
done
check_convert legacy-tie "$F/nanover-zip/converted-tie/tie.traj" "$F/nanover-zip/converted-tie/tie.state"
# .nanover.zip: every healthy one (crash/ holds damaged remnants for recover).
for z in "$F"/nanover-zip/*.nanover.zip "$F"/nanover-zip/upstream/*.nanover.zip \
         "$F"/nanover-zip/split/*.nanover.zip "$F"/nanover-zip/deflated/*.nanover.zip \
         "$F"/nanover-zip/converted-tie/*.nanover.zip; do
    name="zip-$(basename "$z" .nanover.zip)"
    if [ "$("$SIMREC" inspect --format json "$z" | python3 -c 'import json,sys; print(json.load(sys.stdin)["records"])')" = 0 ]; then
        # No records: refused, nothing written.
        rc=0; "$SIMREC" convert "$z" -o "$WORK/convert/$name/" --to elodin >/dev/null 2>&1 || rc=$?
        if [ "$rc" = 2 ] && [ ! -e "$WORK/convert/$name" ]; then pass "convert $name (no records: refused, exit 2, nothing written)"
        else fail "convert $name" "a recording without records gave exit $rc"; fi
        continue
    fi
    check_convert "$name" "$z"
done
# 3es captures.
for t in "$F"/tes/*.3es; do check_convert "tes-$(basename "$t" .3es)" "$t"; done
# Elodin replays (same format).
for e in "$F"/elodin/*/; do check_convert "elodin-$(basename "$e")" "$e"; done
# Icarus: `simrec convert run.icarec out/`, both forms, and the HDF5 and CSV files when present.
for i in "$F"/icarec/*.icarec "$F"/icarec/*.icarec.tar "$F"/icarus-hdf5/*.h5 "$F"/icarus-csv/*.csv; do
    [ -e "$i" ] || continue
    case "$("$SIMREC" validate --format json "$i" | python3 -c 'import json,sys; print(json.load(sys.stdin)["ok"])')" in
        # The output directory's name drops the extension: `out.h5/` would name an HDF5 file.
        True) check_convert "icarus-$(basename "$i" | tr . -)" "$i" ;;
        *) ;; # damaged fixtures are for validate and recover
    esac
done
# A generated Icarus recording of several components with the same signal names (the
# benchmark's shape, bench/icarec_gen.py: 40 signals `Bench.Cmp<k>.s<j>` and a static one):
# one archetype per component, the repeated names prefixed, row groups shared out.
gen="$WORK/gen.icarec"
python3 "$(dirname "$0")/../../bench/icarec_gen.py" "$gen" 3000 40
check_convert icarus-generated "$gen"

# Two readcheck dumps hold the same replay (every component at every tick, entity ids, steps,
# assets).
same_dump() {
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
if diff:
    print("differ in " + ", ".join(diff)); sys.exit(1)
PY
}

# recover: exit 0 on every healthy fixture, and the same values as the input.
mkdir -p "$WORK/recover"
for e in "$F"/elodin/*/; do
    name=$(basename "$e"); out="$WORK/recover/$name"
    rc=0; "$SIMREC" recover "$e" -o "$out/" >"$out.log" 2>&1 || rc=$?
    if [ "$rc" != 0 ]; then fail "recover $name" "exit $rc: $(tail -n 3 "$out.log" | tr '\n' ' ')"; continue; fi
    a=$(load "$(world "$e")" "$out.in.json"); b=$(load "$(world "$out")" "$out.out.json")
    case "$a/$b" in LOADED*/LOADED*) ;; *) fail "recover $name" "readcheck: $a / $b"; continue;; esac
    if why=$(same_dump "$out.in.json" "$out.out.json"); then pass "recover $name (exit 0, readcheck values equal)"
    else fail "recover $name" "readcheck dumps $why"; fi
done

# v0.9.0 keeps its flavour.
for out in "$WORK/recover/ball_1200_v0.9.0" "$WORK/convert/elodin-ball_1200_v0.9.0"; do
    kind=$(basename "$(dirname "$out")")
    m=$(world "$out")/metadata.json
    if python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(0 if "output_time_step" in m and "default_playback_speed" not in m else 1)' "$m"; then
        pass "$kind ball_1200_v0.9.0 keeps the v0.9 flavour (output_time_step, no default_playback_speed)"
    else fail "$kind ball_1200_v0.9.0" "metadata.json mixes or changes the flavour"; fi
done

# slice: ticks 10..20.
mkdir -p "$WORK/slice"
spin="$F/elodin/spin_120"
"$SIMREC" slice "$spin" --frames 10..20 -o "$WORK/slice/cut/" >/dev/null 2>&1 || true
a=$(load "$(world "$spin")" "$WORK/slice/in.json"); b=$(load "$(world "$WORK/slice/cut")" "$WORK/slice/cut.json")
if why=$(python3 - "$WORK/slice/in.json" "$WORK/slice/cut.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["n_ticks"] == 10, b["n_ticks"]
for name, c in a["components"].items():
    want = c["ticks"][10:20]
    if name == "simulation_tick":
        want = [[t] for t in range(10)]
    if b["components"][name]["ticks"] != want:
        print(f"{name} differs"); sys.exit(1)
PY
); then pass "slice spin_120 --frames 10..20 (readcheck: ticks 10..19 of the input, simulation_tick from 0)"
else fail "slice spin_120" "$a / $b: $why"; fi
rc=0; said=$("$SIMREC" slice "$spin" --frames 10..20 -o "$WORK/slice/kept/" 2>&1 >/dev/null) || rc=$?
if [ "$rc" = 0 ] && grep -q "the window is rebased to start at 0" <<<"$said"; then pass "a window into an Elodin replay is rebased, and stderr says so"
else fail "slice into an Elodin replay" "exit $rc: $said"; fi

# merge.
mkdir -p "$WORK/merge"
m="$WORK/merge"
"$SIMREC" slice "$F/elodin/ball_1200" --frames 0..121 -o "$m/ball121/" >/dev/null 2>&1
merge_check() { # name, compare-script, inputs...
    local name=$1 script=$2; shift 2
    local out="$m/$name" rc=0
    "$SIMREC" merge "$@" -o "$out/" >"$out.log" 2>&1 || rc=$?
    if [ "$rc" != 0 ]; then fail "merge $name" "exit $rc: $(tail -n 2 "$out.log" | tr '\n' ' ')"; return; fi
    local vrc=0; "$SIMREC" validate "$out" >"$out.validate" 2>&1 || vrc=$?
    if [ "$vrc" != 0 ]; then fail "merge $name" "validate exit $vrc: $(head -n 3 "$out.validate" | tr '\n' ' ')"; return; fi
    local dumps=() i=0
    for input in "$@"; do
        load "$(world "$input")" "$out.in$i.json" >/dev/null; dumps+=("$out.in$i.json"); i=$((i + 1))
    done
    local line; line=$(load "$(world "$out")" "$out.json")
    case "$line" in LOADED*) ;; *) fail "merge $name" "readcheck: $line"; return;; esac
    local why
    if why=$(python3 -c "$script" "$out.json" "${dumps[@]}"); then pass "merge $name (validates clean; readcheck: $line; values as the inputs')"
    else fail "merge $name" "$why"; fi
}
end_to_end='
import json, sys
out, *ins = (json.load(open(p)) for p in sys.argv[1:])
n = [i["n_ticks"] for i in ins]
assert out["n_ticks"] == sum(n), (out["n_ticks"], n)
for name, c in out["components"].items():
    want = []
    for i in ins:
        want += i["components"][name]["ticks"]
    if name == "simulation_tick":
        want = [[t] for t in range(sum(n))]
    if c["ticks"] != want:
        print(f"{name} differs"); sys.exit(1)
'
side_by_side='
import json, sys
out, *ins = (json.load(open(p)) for p in sys.argv[1:])
assert out["n_assets"] == sum(i["n_assets"] for i in ins), out["n_assets"]
for name, c in out["components"].items():
    shift, want = 0, None
    for i in ins:
        ic = i["components"].get(name)
        if ic is not None:
            ticks = ic["ticks"]
            if name.startswith("asset_handle"):
                ticks = [[h + shift for h in t] for t in ticks]
            want = ticks if want is None else [a + b for a, b in zip(want, ticks)]
        shift += i["n_assets"]
    if c["ticks"] != want:
        print(f"{name} differs"); sys.exit(1)
'
merge_check end-to-end "$end_to_end" "$spin" "$spin"
merge_check side-by-side "$side_by_side" "$spin" "$m/ball121"
merge_check end-to-end-v0.9.0 "$end_to_end" "$F/elodin/ball_1200_v0.9.0" "$F/elodin/ball_1200_v0.9.0"
mv0=$(world "$m/end-to-end-v0.9.0")/metadata.json
if python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(0 if "output_time_step" in m and "default_playback_speed" not in m and m["max_ticks"] == 2401 else 1)' "$mv0"; then
    pass "merge of v0.9.0 replays keeps the v0.9 flavour, max_ticks 2401"
else fail "merge end-to-end-v0.9.0" "metadata.json flavour or max_ticks"; fi
rc=0; "$SIMREC" merge "$spin" "$F/elodin/ball_1200" -o "$m/neither/" >"$m/neither.log" 2>&1 || rc=$?
if [ "$rc" = 2 ] && [ ! -e "$m/neither" ]; then pass "merge of replays neither end to end nor side by side is refused (exit 2, nothing written)"
else fail "merge neither" "exit $rc"; fi

exit $failed

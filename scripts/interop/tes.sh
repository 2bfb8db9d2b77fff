#!/usr/bin/env bash
# 3es interop: what simrec writes from every 3es fixture (recover of intact and damaged
# captures, conversions in each scheme, slices, split parts at a Control/Reset) replayed by
# tesplay (3es-core's own readers: every CRC, every message, the scene) with no error.
# Environment (set by scripts/interop.sh): SIMREC, TOOLS, FIXTURES, WORK; NANOVER_PY is not
# used here. Prints `PASS name` or `FAIL name: why` per check; exits 1 if any failed.
set -euo pipefail
: "${SIMREC:?}" "${TOOLS:?}" "${FIXTURES:?}" "${WORK:?}"
src="$FIXTURES/tes"
work="$WORK/tes"
mkdir -p "$work"
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }

# tesplay cannot read whole-file gzip (an upstream limit, like 3esinfo): such a capture is
# rewritten plain by simrec first and that is replayed.
replay() { # name, file: tesplay reports no error and no bad CRC
    local name="$1" file="$2" out
    if [ "$("$SIMREC" inspect --format json "$file" | grep -o '"compression":"[^"]*"')" = '"compression":"whole-file gzip"' ]; then
        "$SIMREC" convert "$file" -o "$file.plain.3es" --tes-compression plain --force 2>/dev/null
        file="$file.plain.3es"
        name="$name (rewritten plain for tesplay)"
    fi
    if ! out=$("$TOOLS/tesplay" "$file" 2>&1); then
        fail "$name" "tesplay failed: ${out:0:300}"
    elif ! grep -q '"errors":{}' <<<"$out" || ! grep -q '"crc_bad_outer":0' <<<"$out" \
        || ! grep -q '"crc_bad_inner":0' <<<"$out"; then
        fail "$name" "tesplay: $(grep -o '"crc_bad_[a-z]*":[0-9]*\|"errors":{[^}]*}' <<<"$out" | tr '\n' ' ')"
    else
        pass "$name"
    fi
}

scheme() { "$SIMREC" inspect --format json "$1" | grep -o '"compression":"[^"]*"'; }

flip() { # file, offset: inverts the byte at offset
    local b
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "$(printf '\\x%02x' $((b ^ 0xff)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

expect_exit() { # name, code, command...: the command exits with code
    local name="$1" want="$2" got=0
    shift 2
    "$@" >"$work/out.txt" 2>&1 || got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$name" "exit $got, expected $want: $(head -c 300 "$work/out.txt")"
        return 1
    fi
}

# Intact fixtures: recover exits 0 in the input's own scheme (byte-identical for plain and
# lib3escore's collated files) and replays cleanly; so does a conversion into each scheme.
for f in small_plain small_collate small_compress small_filegzip medium_collate; do
    in="$src/$f.3es"
    out="$work/recovered-$f.3es"
    if expect_exit "recover $f exits 0" 0 "$SIMREC" recover "$in" -o "$out" --force; then
        if [ "$(scheme "$out")" != "$(scheme "$in")" ]; then
            fail "recover $f keeps its scheme" "$(scheme "$in") became $(scheme "$out")"
        else
            pass "recover $f exits 0 and keeps its scheme ($(scheme "$in" | cut -d'"' -f4))"
        fi
        case "$f" in
        small_plain | small_collate | medium_collate)
            if cmp -s "$in" "$out"; then pass "recover $f is byte-identical"; else fail "recover $f is byte-identical" "bytes differ"; fi ;;
        esac
        replay "tesplay recover $f" "$out"
    fi
    for s in plain collated collated-gzip file-gzip; do
        "$SIMREC" convert "$in" -o "$work/$f.$s.3es" --tes-compression "$s" --force 2>/dev/null
        replay "tesplay convert $f --tes-compression $s" "$work/$f.$s.3es"
    done
done

# Damaged copies (one byte inverted): recover exits 3, its output validates clean with simrec
# and replays with no error and no bad CRC, in the input's scheme.
for spec in small_plain:295 small_collate:30124 small_compress:6124 small_filegzip:11100 medium_collate:2000000; do
    f="${spec%%:*}"
    at="${spec##*:}"
    bad="$work/damaged-$f.3es"
    cp "$src/$f.3es" "$bad"
    flip "$bad" "$at"
    out="$work/recovered-damaged-$f.3es"
    if expect_exit "recover damaged $f exits 3" 3 "$SIMREC" recover "$bad" -o "$out" --force; then
        pass "recover damaged $f (byte $at inverted) exits 3"
        # No error. A warning can remain where what was lost is only known to be missing at
        # the end (a MeshSet whose mesh resource, sent a frame later, was in the lost part).
        if v=$("$SIMREC" validate "$out" 2>&1) && grep -q ': ok (0 errors' <<<"$v"; then
            pass "recovered $f validates with no error ($(head -1 <<<"$v" | grep -o '0 errors[^)]*'))"
        else
            fail "recovered $f validates with no error" "$v"
        fi
        [ "$(scheme "$out")" = "$(scheme "$src/$f.3es")" ] && pass "recovered $f keeps its scheme" \
            || fail "recovered $f keeps its scheme" "$(scheme "$out")"
        replay "tesplay recovered damaged $f" "$out"
    fi
done

# A Control/Reset between two copies of small_plain: split at it, and slice across it.
reset='\x03\xe5\x5e\x30\x00\x00\x00\x04\x00\x02\x00\x05\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x2f\x14'
cap="$work/reset.3es"
{ cat "$src/small_plain.3es"; printf "$reset"; tail -c +101 "$src/small_plain.3es"; } >"$cap"
rm -f "$work"/part-*.3es
if expect_exit "split at the Reset" 0 "$SIMREC" slice "$cap" --split-at-resets -o "$work/part.3es"; then
    n=$(ls "$work"/part-*.3es | wc -l)
    [ "$n" -eq 2 ] && pass "split at the Reset writes 2 parts" || fail "split at the Reset writes 2 parts" "$n parts"
    for p in "$work"/part-*.3es; do replay "tesplay split part $(basename "$p")" "$p"; done
fi
for frames in 45..55 50..60 60..70; do
    "$SIMREC" slice "$cap" --frames "$frames" -o "$work/slice-$frames.3es" --force 2>/dev/null
    replay "tesplay slice --frames $frames across the Reset" "$work/slice-$frames.3es"
done

# Recordings of every other family mapped into 3es (docs/formats/mapping.md): exit 3 (what
# has no 3es counterpart counted), and tesplay replays the shapes, point clouds and frames
# with no error; the frame count it plays equals simrec's.
for rel in nanover-legacy/small.traj nanover-zip/small.nanover.zip elodin/ball_1200/world \
    elodin/types_300 icarec/a2.icarec icarus-csv/rocket.csv icarus-hdf5/vulcan.h5 \
    xrec/session.xrec; do
    out="$work/mapped-$(echo "$rel" | tr '/.' '--').3es"
    if expect_exit "convert $rel to 3es exits 3" 3 "$SIMREC" convert "$FIXTURES/$rel" -o "$out" --force; then
        pass "convert $rel to 3es exits 3"
        replay "tesplay mapped $rel" "$out"
        played=$("$TOOLS/tesplay" "$out" | grep -o '"frames":[0-9]*' | cut -d: -f2)
        mine=$("$SIMREC" inspect --format json "$out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["frames"])')
        [ "$played" = "$mine" ] && pass "tesplay plays the $mine frames of mapped $rel" \
            || fail "tesplay plays the frames of mapped $rel" "tesplay $played, simrec $mine"
    fi
done

exit "$failed"

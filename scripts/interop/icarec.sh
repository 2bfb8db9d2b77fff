#!/usr/bin/env bash
# .icarec interop. Icarus never implemented the profile, so there is no Icarus software to
# open what simrec writes; the checks use other implementations of what it is made of: GNU tar
# and Python's tarfile read the archives, and scripts/interop/icarec_check.py (a reader written
# from the spec, not from simrec) checks every rule and compares every value with simrec's own
# JSON Lines. From every .icarec fixture (both forms, GNU and pax archives too): convert to the
# archive form and back to the directory form; the data files stay byte-identical to the
# source's; recover of a cut copy keeps the whole frames.
# Environment (set by scripts/interop.sh): SIMREC, FIXTURES, WORK; TOOLS and NANOVER_PY are not
# used (python3 from PATH runs the checker; without it those checks are skipped and said so).
# Prints `PASS name` or `FAIL name: why` per check; exits 1 if any failed.
set -euo pipefail
: "${SIMREC:?}" "${FIXTURES:?}" "${WORK:?}"
src="$FIXTURES/icarec"
here="$(cd "$(dirname "$0")" && pwd)"
work="$WORK/icarec"
mkdir -p "$work"
failed=0
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; failed=1; }
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    echo "SKIP icarec python checks: no python3 on PATH"
fi

expect_exit() { # name, code, command...: the command exits with code
    local name="$1" want="$2" got=0
    shift 2
    "$@" >"$work/out.txt" 2>&1 || got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$name" "exit $got, expected $want: $(head -c 300 "$work/out.txt")"
        return 1
    fi
}

check() { # name, recording[, --written | --copied]: the spec's reader agrees with simrec on every value
    local name="$1" rec="$2" out
    [ -n "$PY" ] || return 0
    # Exit 3: JSON Lines has no place for the recording's absolute start (counted as lost).
    "$SIMREC" convert "$rec" -o "$work/values.jsonl" --force 2>/dev/null || [ "$?" -eq 3 ]
    if out=$("$PY" "$here/icarec_check.py" ${3:-} "$rec" "$work/values.jsonl" 2>&1); then
        pass "$name ($(tail -1 <<<"$out"))"
    else
        fail "$name" "$(head -c 400 <<<"$out")"
    fi
}

same_data() { # name, dir-or-extracted a, dir b: both data files byte-identical
    local name="$1" a="$2" b="$3" part
    for part in static_signals.bin dynamic_signals.bin; do
        if ! cmp -s "$a/$part" "$b/$part"; then
            fail "$name" "$part differs"
            return
        fi
    done
    pass "$name"
}

for fixture in a2.icarec types.icarec a2.icarec.tar a2-gnu.icarec.tar a2-pax.icarec.tar; do
    in="$src/$fixture"
    base="${fixture%%.*}"
    tag="$fixture"
    # The source's data files, for comparison.
    ref="$work/ref-$fixture"
    rm -rf "$ref" && mkdir -p "$ref"
    if [ -d "$in" ]; then cp "$in"/* "$ref/"; else tar -xf "$in" -C "$ref"; fi
    check "$tag: the source read by the spec's reader" "$in"

    tarout="$work/$base-from-$fixture.icarec.tar"
    if expect_exit "$tag: convert to the archive exits 0" 0 "$SIMREC" convert "$in" -o "$tarout" --force; then
        names=$(tar -tf "$tarout" | tr '\n' ' ')
        if [ "$names" = "schema.json static_signals.bin dynamic_signals.bin metadata.json " ]; then
            pass "$tag: GNU tar lists the four members in order"
        else
            fail "$tag: GNU tar lists the four members in order" "$names"
        fi
        ext="$work/extracted-$fixture"
        rm -rf "$ext" && mkdir -p "$ext"
        if tar -xf "$tarout" -C "$ext"; then
            same_data "$tag: GNU tar extracts the source's data files byte for byte" "$ext" "$ref"
            (cd "$ext" && sha256sum static_signals.bin dynamic_signals.bin) >"$work/sums.txt"
            if grep -q "$(cut -c1-64 "$work/sums.txt" | head -1)" "$ext/metadata.json" \
                && grep -q "$(cut -c1-64 "$work/sums.txt" | tail -1)" "$ext/metadata.json"; then
                pass "$tag: sha256sum agrees with metadata.json's digests"
            else
                fail "$tag: sha256sum agrees with metadata.json's digests" "$(cat "$work/sums.txt")"
            fi
        else
            fail "$tag: GNU tar extracts the archive" "tar -x failed"
        fi
        check "$tag: the archive simrec wrote" "$tarout" --copied
        dirout="$work/$base-back-$fixture.icarec"
        if expect_exit "$tag: convert the archive back to a directory exits 0" 0 "$SIMREC" convert "$tarout" -o "$dirout" --force; then
            same_data "$tag: archive → directory keeps the data files byte for byte" "$dirout" "$ref"
            if cmp -s <(grep -o '"checksum": "[^"]*"' "$dirout/schema.json") <(grep -o '"checksum": "[^"]*"' "$ext/schema.json"); then
                pass "$tag: the checksum is unchanged"
            else
                fail "$tag: the checksum is unchanged" "$(grep checksum "$dirout/schema.json" "$ext/schema.json")"
            fi
            check "$tag: the directory simrec wrote" "$dirout" --copied
        fi
    fi
done

# A crashed run: a cut dynamic file and complete: false. recover keeps the whole frames
# (exit 3) in an archive that GNU tar and the spec's reader take.
cut="$work/cut.icarec"
rm -rf "$cut" && cp -r "$src/types.icarec" "$cut"
truncate -s 200 "$cut/dynamic_signals.bin"
echo '{"complete": false}' >"$cut/metadata.json"
expect_exit "a cut recording fails validate (exit 1)" 1 "$SIMREC" validate "$cut" && pass "a cut recording fails validate (exit 1)"
if expect_exit "recover of a cut recording exits 3" 3 "$SIMREC" recover "$cut" -o "$work/recovered.icarec.tar" --force; then
    pass "recover of a cut recording exits 3"
    if tar -tf "$work/recovered.icarec.tar" >/dev/null; then
        pass "GNU tar reads the recovered archive"
    else
        fail "GNU tar reads the recovered archive" "tar -t failed"
    fi
    check "the recovered archive (1 whole frame)" "$work/recovered.icarec.tar" --written
fi

# The profile's two merge kinds (spec §A14), and a signal selection's new layout: the spec's
# reader takes what simrec wrote, and the merged parts give back a2's blocks.
a2="$src/a2.icarec"
"$SIMREC" slice "$a2" --end 0.02 -o "$work/early.icarec" --force 2>/dev/null
"$SIMREC" slice "$a2" --start 0.02 --rebase -o "$work/late.icarec" --force 2>/dev/null
"$SIMREC" merge "$work/early.icarec" "$work/late.icarec" -o "$work/continued.icarec" --force 2>/dev/null
check "a continuation merge (early + rebased late)" "$work/continued.icarec" --copied
same_data "the continuation gives back a2's blocks" "$work/continued.icarec" "$a2"
"$SIMREC" convert "$a2" --channel 'Vehicle.Nav.*' -o "$work/nav.icarec" --force 2>/dev/null
"$SIMREC" convert "$a2" --exclude-channel 'Vehicle.Nav.*' -o "$work/rest.icarec" --force 2>/dev/null
check "a selection of signals, laid out again" "$work/rest.icarec" --written
"$SIMREC" merge "$work/nav.icarec" "$work/rest.icarec" -o "$work/union.icarec" --force 2>/dev/null
check "a union merge (disjoint signals)" "$work/union.icarec" --written
same_data "the union gives back a2's blocks" "$work/union.icarec" "$a2"

exit "$failed"

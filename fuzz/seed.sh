#!/usr/bin/env bash
# Seeds the fuzz corpus (gitignored) with every NanoVer legacy fixture.
# Usage: fuzz/seed.sh   (from anywhere)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
corpus="$here/corpus/nanover_legacy"
mkdir -p "$corpus"
find "$here/../fixtures/nanover-legacy" -type f \( -name '*.traj' -o -name '*.state' \) -print0 |
    while IFS= read -r -d '' f; do
        rel="${f#"$here/../fixtures/nanover-legacy/"}"
        cp "$f" "$corpus/${rel//\//__}"
    done
echo "seeded $(find "$corpus" -type f | wc -l) files into $corpus"

# Record payloads of the small pair as well, so the payload decoder (which the target also
# feeds directly) starts from real GetFrameResponse and StateUpdate messages.
if command -v python3 >/dev/null; then
    python3 - "$here/../fixtures/nanover-legacy" "$corpus" <<'PY'
import struct, sys, pathlib
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for name in ("small.traj", "small.state"):
    data = (src / name).read_bytes()
    p = 16
    while p + 24 <= len(data):
        length = struct.unpack_from("<Q", data, p + 16)[0]
        (out / f"payload__{name}__{n:03}").write_bytes(data[p + 24 : p + 24 + length])
        p += 24 + length
        n += 1
print(f"and {n} record payloads")
PY
fi

# .nanover.zip: the small fixtures (the crash remnants too) for the nanover_zip target.
zcorpus="$here/corpus/nanover_zip"
mkdir -p "$zcorpus"
for f in "$here"/../fixtures/nanover-zip/*.nanover.zip "$here"/../fixtures/nanover-zip/split/*.nanover.zip "$here"/../fixtures/nanover-zip/converted-tie/*.nanover.zip "$here"/../fixtures/nanover-zip/deflated/*.nanover.zip; do
    cp "$f" "$zcorpus/$(basename "$f")"
done
head -c 4000 "$here/../fixtures/nanover-zip/crash/crashed-after-100.nanover.zip" > "$zcorpus/crashed-head.nanover.zip"
# small.nanover.zip with an emptied index (NVZIP_INDEX_SHORT: read by a scan that keeps
# no times), written by Python's zipfile.
if command -v python3 >/dev/null; then
    python3 - "$here/../fixtures/nanover-zip/small.nanover.zip" "$zcorpus/small-empty-index.nanover.zip" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as src, zipfile.ZipFile(sys.argv[2], "w") as dst:
    dst.writestr("messages.msgpack", src.read("messages.msgpack"))
    dst.writestr("index.msgpack", b"\x90")
PY
fi
echo "seeded $(find "$zcorpus" -type f | wc -l) files into $zcorpus"
# Elodin side files: each fixture's metadata.json and assets.bin, as the elodin_side_files
# target splits its input (two little-endian bytes giving the split, then both files).
ecorpus="$here/corpus/elodin_side_files"
mkdir -p "$ecorpus"
if command -v python3 >/dev/null; then
    python3 - "$here/../fixtures/elodin" "$ecorpus" <<'PY'
import sys, pathlib
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
n = 0
for meta in sorted(src.glob("**/world/metadata.json")):
    m, a = meta.read_bytes(), (meta.parent / "assets.bin").read_bytes()
    total = len(m) + len(a) + 2
    split = (len(m) + 2 - 2) % (total - 1)  # the target adds 2 back
    (out / f"{meta.parent.parent.name}").write_bytes(split.to_bytes(2, "little") + m + a)
    n += 1
print(f"seeded {n} Elodin side-file pairs into {out}")
PY
fi
# 3es: the small captures (the medium one is too big to be a useful seed).
tes="$here/corpus/tes"
mkdir -p "$tes"
for f in "$here"/../fixtures/tes/small_*.3es; do
    cp "$f" "$tes/"
done
echo "seeded $(find "$tes" -type f | wc -l) files into $tes"

# Elodin archetype files for elodin_parquet: every Parquet file of the fixtures up to 64 KB.
pcorpus="$here/corpus/elodin_parquet"
mkdir -p "$pcorpus"
find "$here/../fixtures/elodin" -name '*.parquet' -size -65537c -print0 |
    while IFS= read -r -d '' f; do
        rel="${f#"$here/../fixtures/elodin/"}"
        cp "$f" "$pcorpus/${rel//\//__}"
    done
echo "seeded $(find "$pcorpus" -type f | wc -l) files into $pcorpus"

# .icarec: the archives (first byte 0: the rest is an archive) and the directories packed as
# the target unpacks them (first byte 1, three u16 lengths, then schema.json,
# static_signals.bin, metadata.json and dynamic_signals.bin).
icorpus="$here/corpus/icarec"
mkdir -p "$icorpus"
for f in "$here"/../fixtures/icarec/*.icarec.tar; do
    { printf '\0'; cat "$f"; } > "$icorpus/$(basename "$f")"
done
# The hostile ones of issue 27 too (an empty signal name, 1000 bad signal elements); a part
# they lack is packed empty.
python3 - "$here/../fixtures/icarec" "$icorpus" <<'PY'
import pathlib, struct, sys
src, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def part(d, name):
    return (d / name).read_bytes() if (d / name).exists() else b""
for d in sorted([*src.glob("*.icarec"), *src.glob("hostile/*.icarec")]):
    parts = [part(d, n) for n in ("schema.json", "static_signals.bin", "metadata.json")]
    dynamic = part(d, "dynamic_signals.bin")
    (out / d.name).write_bytes(b"\1" + struct.pack("<3H", *map(len, parts)) + b"".join(parts) + dynamic)
PY
echo "seeded $(find "$icorpus" -type f | wc -l) files into $icorpus"
# Icarus HDF5: the h5py fixtures (version 0 superblock, B-tree chunk index) and, when a simrec
# binary is built, small.h5 as simrec writes it (hdf5-pure: version 3 superblock, extensible
# array index), so both layouts are in the corpus.
hcorpus="$here/corpus/icarus_hdf5"
mkdir -p "$hcorpus"
cp "$here"/../fixtures/icarus-hdf5/*.h5 "$hcorpus/"
# The hostile files of issue 27: gzip and big-endian datasets declaring 10^12 rows.
for f in "$here"/../fixtures/icarus-hdf5/hostile/*.h5; do
    cp "$f" "$hcorpus/hostile-$(basename "$f")"
done
for bin in "$here/../target/release/simrec" "$here/../target/debug/simrec"; do
    if [ -x "$bin" ]; then
        "$bin" convert "$here/../fixtures/icarus-hdf5/small.h5" -o "$hcorpus/small-simrec.h5" --force >/dev/null 2>&1 || true
        break
    fi
done
echo "seeded $(find "$hcorpus" -type f | wc -l) files into $hcorpus"
# Icarus CSV: the hand-made export, and small damaged variants of it.
ccorpus="$here/corpus/icarus_csv"
mkdir -p "$ccorpus"
cp "$here/../fixtures/icarus-csv/rocket.csv" "$ccorpus/"
printf 'time,a.b,"c,d"\n0.01,nan,-inf\n0.02,,1e-05\n0.01,abc,2\n' > "$ccorpus/rules.csv"
printf 'time\n0\n1\n' > "$ccorpus/no-signals.csv"
echo "seeded $(find "$ccorpus" -type f | wc -l) files into $ccorpus"
# XREC: the fixtures built from the spec's tables (plain, gzip, unfinished, truncated, native).
xcorpus="$here/corpus/xrec"
mkdir -p "$xcorpus"
cp "$here"/../fixtures/xrec/*.xrec "$xcorpus/"
# The gzip bombs of issue 27 (16 MiB of events in 16 KB; a 1 GiB claim of 100 bytes).
for f in "$here"/../fixtures/xrec/hostile/*.xrec; do
    cp "$f" "$xcorpus/hostile-$(basename "$f")"
done
echo "seeded $(find "$xcorpus" -type f | wc -l) files into $xcorpus"

# The Elodin DB record files (db_state, schema, metadata, the first bytes of each log).
corpus="$here/corpus/elodin_db"
mkdir -p "$corpus"
n=0
while IFS= read -r -d '' f; do
    head -c 64 "$f" > "$corpus/$n"
    n=$((n + 1))
done < <(find "$here/../fixtures/elodin-db" -type f -print0)
echo "seeded $n files into $corpus"

# elodin-db export files: the small ones of each kind (one component each).
corpus="$here/corpus/elodin_db_export"
mkdir -p "$corpus"
find "$here/../fixtures/elodin-db/exports" -type f -size -12k -exec cp {} "$corpus/" \;
echo "seeded $(find "$corpus" -type f | wc -l) files into $corpus"

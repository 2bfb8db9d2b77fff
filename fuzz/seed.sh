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

# 3es: the small captures (the medium one is too big to be a useful seed).
tes="$here/corpus/tes"
mkdir -p "$tes"
for f in "$here"/../fixtures/tes/small_*.3es; do
    cp "$f" "$tes/"
done
echo "seeded $(find "$tes" -type f | wc -l) files into $tes"

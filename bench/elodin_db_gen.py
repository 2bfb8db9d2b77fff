#!/usr/bin/env python3
"""A large Elodin DB directory (the 0.15 – 0.18 layout) for bench/elodin_db.sh, written with
the byte layout of scripts/elodin-db/make_tiny_db.py (docs/formats/elodin-db-bytes.md).

usage: elodin_db_gen.py OUTDIR [ENTITIES] [ROWS] [--sparse]

Each entity gets the components a rigid-body simulation records at 120 Hz: `world_pos`
f64[7], `world_vel` f64[6], `mass` f64 and `tick` i64, so ENTITIES x ROWS x 112 bytes of
rows (default 100 x 90,000: about 1.0 GB of data, 1.1 GB with the index logs). Values repeat
a 1 MiB block of finite numbers: decoding does not depend on them. --sparse extends every log
to 8 GiB + 1 byte, as Elodin leaves them.
"""
import os
import struct
import sys
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts" / "elodin-db"))
from make_tiny_db import (  # noqa: E402
    I64_MAX, PRIMS, SPARSE_LEN, T0, component_id, pmap, pstr, varint)

STEP_US = 8_333  # 120 Hz, in whole microseconds
COMPONENTS = [("world_pos", "f64", [7]), ("world_vel", "f64", [6]), ("mass", "f64", []),
              ("tick", "i64", [])]
BLOCK = array("d", (i * 0.001 for i in range(131072))).tobytes()  # 1 MiB


def log_file(path, extra, size, fill, sparse):
    """An append log: header (committed length incl. header, head 0), `extra`, `size` bytes
    of body written by `fill(file)`."""
    with open(path, "wb") as f:
        f.write(struct.pack("<QQ", 16 + len(extra) + size, 0) + extra)
        fill(f)
        if sparse:
            f.truncate(SPARSE_LEN)


def repeat(block, size):
    def fill(f):
        left = size
        while left:
            n = min(left, len(block))
            f.write(block[:n])
            left -= n
    return fill


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sparse = "--sparse" in sys.argv
    db = Path(args[0])
    entities = int(args[1]) if len(args) > 1 else 100
    rows = int(args[2]) if len(args) > 2 else 90_000
    db.mkdir(parents=True)
    index = array("q", range(T0, T0 + rows * STEP_US, STEP_US)).tobytes()
    order = 0
    for e in range(entities):
        entity = f"body{e}"
        for key, ty, shape in COMPONENTS:
            name = f"{entity}.{key}"
            cid = component_id(name)
            d = db / str(cid)
            d.mkdir()
            (d / "schema").write_bytes(
                varint(PRIMS.index(ty)) + varint(len(shape)) + b"".join(varint(x) for x in shape))
            (d / "metadata").write_bytes(
                varint(cid) + pstr(name) + pmap({"_creation_index": str(order)}))
            order += 1
            n = 1
            for x in shape:
                n *= x
            row = 8 * n
            log_file(d / "index", struct.pack("<q", I64_MAX), len(index),
                     lambda f: f.write(index), sparse)
            log_file(d / "data", struct.pack("<Q", row), row * rows, repeat(BLOCK, row * rows),
                     sparse)
        cid = component_id(entity)
        (db / str(cid)).mkdir()
        (db / str(cid) / "metadata").write_bytes(varint(cid) + pstr(entity) + pmap({}))
    state = b"\x01" + varint(0) + varint(8_333_333) + pmap(
        {"version.created": "simrec-bench", "time.start_timestamp": str(T0)})
    (db / "db_state").write_bytes(state)
    print(f"wrote {db}: {entities} entities x {len(COMPONENTS)} components x {rows} rows")


if __name__ == "__main__":
    main()

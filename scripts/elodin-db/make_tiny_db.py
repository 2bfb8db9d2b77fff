#!/usr/bin/env python3
"""Hand-build a tiny Elodin DB directory (0.15-0.18 layout) from the spec in
docs/formats/elodin-db-bytes.md, stdlib only, to prove the writer side of the spec:
`dbcheck.py OUT out.json` must print LOADED and serve exactly these values.

usage: python3 make_tiny_db.py OUTDIR [--sparse] [--no-entity] [--bare-state]
  --sparse      extend every append log to 8 GiB + 1 byte (sparse), as Elodin itself does
  --no-entity   omit the metadata-only entity dir
  --bare-state  write the minimal 7-byte db_state (no metadata map)
What it writes: one component `tiny.vec` f32[3] (x,y,z) with 3 rows, one scalar `tiny.count`
u16 (3 rows), a metadata-only dir for the entity `tiny`, and one message log `note` with a
short (inline) and a long (data_log) payload.
"""
import os, struct, sys

T0 = 1_700_000_000_000_000  # 2023-11-14T22:13:20Z in us since the Unix epoch
I64_MAX = (1 << 63) - 1
PRIMS = ["u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64", "bool", "f32", "f64"]
PFMT = dict(zip(PRIMS, "BHIQbhiq?fd"))
SPARSE_LEN = 8 * 1024 ** 3 + 1


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F; n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b); return bytes(out)


def pstr(s):
    b = s.encode(); return varint(len(b)) + b


def pmap(d):  # HashMap<String,String>: count, then key, value (order irrelevant)
    return varint(len(d)) + b"".join(pstr(k) + pstr(v) for k, v in d.items())


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def component_id(name):
    return fnv1a64(name.encode()) & ~(1 << 63)


def msg_dir(name):
    h = 0x811c9dc5
    for c in name.encode():
        h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
    b = ((h >> 16) ^ (h & 0xFFFF)).to_bytes(2, "little")
    if b[0] == 224:
        b = bytes([223, b[1]])
    return str(int.from_bytes(b, "little"))


def append_log(path, body, extra=b"", sparse=False):
    """16-byte header (committed_len incl. header, head_len 0) + extra + body."""
    hdr_len = 16 + len(extra)
    with open(path, "wb") as f:
        f.write(struct.pack("<QQ", hdr_len + len(body), 0) + extra + body)
        if sparse:
            f.truncate(SPARSE_LEN)


def component(db, name, ty, shape, rows, times, meta, sparse):
    cid = component_id(name)
    d = os.path.join(db, str(cid)); os.makedirs(d)
    open(os.path.join(d, "schema"), "wb").write(
        varint(PRIMS.index(ty)) + varint(len(shape)) + b"".join(varint(x) for x in shape))
    open(os.path.join(d, "metadata"), "wb").write(varint(cid) + pstr(name) + pmap(meta))
    n = 1
    for x in shape:
        n *= x
    esize = struct.calcsize("<" + PFMT[ty]) * n
    data = b"".join(struct.pack("<" + PFMT[ty] * n, *(r if isinstance(r, (list, tuple)) else [r]))
                    for r in rows)
    assert len(data) == esize * len(rows)
    append_log(os.path.join(d, "index"), struct.pack(f"<{len(times)}q", *times),
               struct.pack("<q", I64_MAX), sparse)
    append_log(os.path.join(d, "data"), data, struct.pack("<Q", esize), sparse)


def msg_log(db, name, msgs, sparse):
    d = os.path.join(db, "msgs", msg_dir(name)); os.makedirs(d)
    # MsgMetadata { name, schema: OwnedNamedType "Vec<T>" = Seq(NamedType "u8" = U8), metadata }
    schema = pstr("Vec<T>") + varint(22) + pstr("u8") + varint(2)
    open(os.path.join(d, "metadata"), "wb").write(pstr(name) + schema + pmap({}))
    ts, offs, log = b"", b"", b""
    for t, p in msgs:
        ts += struct.pack("<q", t)
        if len(p) <= 12:
            offs += struct.pack("<I", len(p)) + p.ljust(12, b"\0")
        else:
            offs += struct.pack("<I4sII", len(p), p[:4], 0, len(log))
            log += p
    append_log(os.path.join(d, "timestamps"), ts, sparse=sparse)
    append_log(os.path.join(d, "offsets"), offs, sparse=sparse)
    append_log(os.path.join(d, "data_log"), log, sparse=sparse)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sparse = "--sparse" in sys.argv
    db = args[0]
    os.makedirs(db)
    times = [T0, T0 + 10_000, T0 + 20_000]
    component(db, "tiny.vec", "f32", [3], [[1.5, -2.0, 3.25], [4.0, 5.0, 6.0], [7.0, 8.0, 9.5]],
              times, {"element_names": "x,y,z", "_creation_index": "0"}, sparse)
    component(db, "tiny.count", "u16", [], [1, 2, 65535], times, {"_creation_index": "1"}, sparse)
    if "--no-entity" not in sys.argv:  # metadata-only dir: the entity's name, no schema
        cid = component_id("tiny")
        os.makedirs(os.path.join(db, str(cid)))
        open(os.path.join(db, str(cid), "metadata"), "wb").write(varint(cid) + pstr("tiny") + pmap({}))
    msg_log(db, "note", [(T0, b"hi"), (T0 + 15_000, b"a payload longer than twelve bytes")], sparse)
    # db_state: DbConfig { recording: bool, default_stream_time_step: Duration{secs varint,
    # nanos varint}, metadata: HashMap<String,String> }
    state = b"\x01" + varint(0) + varint(16_666_667)
    state += b"\x00" if "--bare-state" in sys.argv else pmap(
        {"version.created": "simrec-test", "time.start_timestamp": str(T0)})
    open(os.path.join(db, "db_state"), "wb").write(state)
    print(f"wrote {db}")


if __name__ == "__main__":
    main()

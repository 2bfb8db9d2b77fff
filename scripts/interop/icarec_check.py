#!/usr/bin/env python3
"""An .icarec reader written from the spec (icarec.md Part A), not from simrec: checks a
recording simrec wrote and compares every value with simrec's own JSON Lines of it.

    icarec_check.py [--written | --copied] RECORDING RECORDS.jsonl

RECORDING is a directory or a ustar archive (read with Python's tarfile; members in any order,
names with or without ./). With --written (a recording simrec wrote) the writer's rules hold
too: the archive's members are regular ustar files (mode 0644, uid/gid 0, no user names) in
the order schema.json, static_signals.bin, dynamic_signals.bin, metadata.json, and the schema
states byte_order little and both block sizes. --copied is --written for a same-format copy,
whose schema.json is the source's byte for byte (spec §A14): the archive's rules, not the
schema's keys. Always: the schema's checksum is the §A7 digest;
signals lie inside their blocks with the §A3 sizes (block sizes derived when absent); metadata.json says
complete, counts the whole frames, gives the first and last times and the SHA-256 and size of
both data files; times strictly increase; and every value decoded here (Quat w first, Mat3
column-major) equals simrec's record of it (float signals compared as float32). Prints one line
per problem and exits 1 if there is any.
"""

import hashlib
import json
import math
import os
import struct
import sys
import tarfile

PARTS = ["schema.json", "static_signals.bin", "dynamic_signals.bin", "metadata.json"]
ELEM = {"double": ("d", 8), "float": ("f", 4), "int32": ("i", 4), "int64": ("q", 8), "bool": ("B", 1)}
COUNT = {"Vec3": 3, "Quat": 4, "Mat3": 9}

problems = []


def problem(text):
    problems.append(text)
    print(text)


def load(path, written):
    if os.path.isdir(path):
        return {p: open(os.path.join(path, p), "rb").read() for p in PARTS}
    files = {}
    with tarfile.open(path, "r:") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        if written and names != PARTS:
            problem(f"archive members {names}, expected {PARTS}")
        for m in members:
            if not m.isreg():
                problem(f"member {m.name} is not a regular file")
            if written and (m.mode != 0o644 or m.uid != 0 or m.gid != 0 or m.uname or m.gname):
                problem(f"member {m.name}: mode {oct(m.mode)} uid {m.uid} gid {m.gid} {m.uname!r} {m.gname!r}")
            name = m.name[2:] if m.name.startswith("./") else m.name
            files[name] = tar.extractfile(m).read()
    if written:
        with open(path, "rb") as f:
            if f.read(265)[257:265] != b"ustar\x0000":
                problem("the first header is not POSIX ustar (magic ustar\\0 00)")
    return files


def type_of(text):
    if text in ELEM:
        return ("scalar", text, 1)
    for k, n in COUNT.items():
        if text.startswith(k + "<") and text.endswith(">"):
            return (k, text[len(k) + 1 : -1], n)
    raise ValueError(text)


def checksum(signals):
    lines = []
    for s in signals:
        units = s["units"] if "units" in s else s.get("unit")
        lines.append("\t".join([s["name"], s["type"], units or "", s["lifecycle"], str(s["offset"]), str(s["size"])]) + "\n")
    return "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()


def decode(sig, block):
    kind, elem, n = type_of(sig["type"])
    code, size = ELEM[elem]
    at = sig["offset"]
    if kind == "scalar" and sig["size"] == 8 and elem in ("int32", "bool"):
        raw = block[at : at + 8]
        return struct.unpack("<i", raw[:4])[0] if elem == "int32" else raw[0] != 0
    vals = list(struct.unpack("<%d%s" % (n, code), block[at : at + n * size]))
    if elem == "bool":
        vals = [v != 0 for v in vals]
    if kind == "scalar":
        return vals[0]
    if kind == "Mat3":
        return [[vals[3 * c + r] for c in range(3)] for r in range(3)]
    return vals


def same(elem, a, b):
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same(elem, x, y) for x, y in zip(a, b))
    if elem == "float":
        return struct.pack("<f", a) == struct.pack("<f", b)
    if elem == "double":
        # simrec's JSON Lines writes a non-finite number as null.
        return a == b or (math.isnan(a) and (b is None or math.isnan(b)))
    return a == b


def main(path, jsonl, written, schema_keys):
    files = load(path, written)
    schema = json.loads(files["schema.json"])
    meta = json.loads(files["metadata.json"])
    signals = schema["signals"]
    if schema.get("checksum") != checksum(signals):
        problem(f"checksum {schema.get('checksum')} is not the §A7 digest {checksum(signals)}")
    if schema.get("byte_order", "little") != "little" or (schema_keys and "byte_order" not in schema):
        problem("byte_order is not little")
    blocks = {}
    for life in ("dynamic", "static"):
        key = life + "_block_bytes"
        derived = max([s["offset"] + s["size"] for s in signals if s["lifecycle"] == life], default=0)
        if schema_keys and key not in schema:
            problem(f"no {key}")
        blocks[life] = schema.get(key, derived)
    for s in signals:
        kind, elem, n = type_of(s["type"])
        canonical = n * ELEM[elem][1]
        if s["size"] != canonical and not (kind == "scalar" and elem in ("int32", "bool") and s["size"] == 8):
            problem(f"{s['name']}: size {s['size']} for {s['type']}")
        if s["offset"] + s["size"] > blocks[s["lifecycle"]]:
            problem(f"{s['name']} lies outside its block")
    static, dynamic = files["static_signals.bin"], files["dynamic_signals.bin"]
    if len(static) != blocks["static"]:
        problem(f"static_signals.bin has {len(static)} bytes, the block {blocks['static']}")
    r = 8 + blocks["dynamic"]
    if len(dynamic) % r:
        problem(f"dynamic_signals.bin's {len(dynamic)} bytes are not whole {r}-byte frames")
    frames = [dynamic[i : i + r] for i in range(0, len(dynamic) - len(dynamic) % r, r)]
    times = [struct.unpack("<d", f[:8])[0] for f in frames]
    if any(b <= a for a, b in zip(times, times[1:])):
        problem("frame times do not strictly increase")
    if meta.get("complete") is not True:
        problem("metadata.json is not complete: true")
    if meta.get("frame_count") != len(frames):
        problem(f"frame_count {meta.get('frame_count')}, {len(frames)} frames")
    if frames and (meta.get("t_first") != times[0] or meta.get("t_last") != times[-1]):
        problem(f"t_first/t_last {meta.get('t_first')}/{meta.get('t_last')}, data {times[0]}/{times[-1]}")
    for name, data in (("static_signals.bin", static), ("dynamic_signals.bin", dynamic)):
        want = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        if meta.get("files", {}).get(name) != want:
            problem(f"files.{name} is {meta.get('files', {}).get(name)}, the file's {want}")

    # Every value against simrec's records (channel = signal name, frame = frame index).
    records = {}
    for line in open(jsonl):
        rec = json.loads(line)
        (value,) = rec["values"].values()
        records[(rec["channel"], rec["frame"])] = (rec["time_ns"], value)
    expected = 0
    for s in signals:
        elem = type_of(s["type"])[1]
        if s["lifecycle"] == "static":
            todo = [(0, static, times[0] if times else 0.0)]
        else:
            todo = [(i, f[8:], times[i]) for i, f in enumerate(frames)]
        for i, block, t in todo:
            expected += 1
            got = records.get((s["name"], i))
            if got is None:
                problem(f"simrec has no record of {s['name']} frame {i}")
                continue
            if got[0] != round(t * 1e9):
                problem(f"{s['name']} frame {i}: time {got[0]} ns, the frame's {t} s")
            if not same(elem, decode(s, block), got[1]):
                problem(f"{s['name']} frame {i}: simrec {got[1]}, here {decode(s, block)}")
    if expected != len(records):
        problem(f"simrec has {len(records)} records, the recording {expected} values")
    print(f"{len(frames)} frames, {len(signals)} signals, {expected} values checked")
    return 1 if problems else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    flag = args[0] if args[:1] in (["--written"], ["--copied"]) else None
    if flag:
        args = args[1:]
    sys.exit(main(args[0], args[1], flag is not None, flag == "--written"))

#!/usr/bin/env python3
"""Generates the wide inputs of bench/wide.sh (issue 27, item F): recordings with many
signals, columns, event types or chapters and few frames, where a cost quadratic in their
number shows. Python 3 standard library, and h5py for the HDF5 file.

    wide_gen.py OUTDIR [SCALE]   (SCALE 1: the sizes below; 0.1 for a quick look)

- wide.csv          Icarus CSV, 1,000,000 signal columns, 3 rows
- wide.h5           Icarus HDF5 (Vulcan's layout), 20,000 signal datasets, 10 frames
- wide.icarec       .icarec directory, 100,000 double signals, 10 frames
- types.xrec        XREC-S, 20,000 event types, one event each, in 10 frames
- chapters.xrec     XREC-S, 100,000 xrec.Chapter events
"""

import hashlib
import json
import os
import struct
import sys

BEGIN_NS = 1_700_000_000_000_000_000
BEGIN_RTSS = 10.0
PACKET = 1 << 20


def csv(path, columns):
    with open(path, "w") as f:
        f.write("time," + ",".join(f"Wide.C{c // 100}.s{c % 100}" for c in range(columns)) + "\n")
        for row in range(3):
            f.write(f"{(row + 1) * 0.01!r}," + ",".join([str(row)] * columns) + "\n")


def hdf5(path, signals, frames=10):
    import h5py
    import numpy as np

    names = [f"Wide.C{s // 100}.s{s % 100}" for s in range(signals)]
    with h5py.File(path, "w") as f:
        f.create_dataset("time", data=(np.arange(frames) + 1) * 0.01, chunks=(1000,), maxshape=(None,))
        g = f.create_group("signals")
        for n in names:
            g.create_dataset(n, data=np.zeros(frames), chunks=(16,), maxshape=(None,))
        schema = {
            "signals": [{"name": n, "type": "double", "lifecycle": "dynamic", "offset": 8 * i}
                        for i, n in enumerate(names)],
            "frame_size_bytes": 8 * signals,
        }
        f.create_group("metadata").attrs["schema"] = json.dumps(schema)


def icarec(path, signals, frames=10):
    os.makedirs(path, exist_ok=True)
    sigs = [{"name": f"Wide.C{k // 100}.s{k % 100}", "type": "double", "units": "m",
             "lifecycle": "dynamic", "offset": 8 * k, "size": 8} for k in range(signals)]
    lines = "".join("\t".join([s["name"], s["type"], s["units"], s["lifecycle"],
                               str(s["offset"]), str(s["size"])]) + "\n" for s in sigs)
    schema = {
        "schema_version": "1.0.0", "icarus_version": "0.6.0", "created_at": "2026-03-01T12:00:00Z",
        "time": {"epoch": "2026-03-01T12:00:00Z", "system": "UTC", "units": "seconds"},
        "signals": sigs, "byte_order": "little",
        "dynamic_block_bytes": 8 * signals, "static_block_bytes": 0,
        "checksum": "sha256:" + hashlib.sha256(lines.encode()).hexdigest(),
    }
    with open(os.path.join(path, "schema.json"), "w") as f:
        json.dump(schema, f)
    dynamic = b"".join(struct.pack("<d", (i + 1) * 0.01) + bytes(8 * signals) for i in range(frames))
    with open(os.path.join(path, "dynamic_signals.bin"), "wb") as f:
        f.write(dynamic)
    open(os.path.join(path, "static_signals.bin"), "wb").close()
    meta = {"frame_count": frames, "t_first": 0.01, "t_last": frames * 0.01, "complete": True,
            "files": {"static_signals.bin": {"bytes": 0, "sha256": hashlib.sha256(b"").hexdigest()},
                      "dynamic_signals.bin": {"bytes": len(dynamic),
                                              "sha256": hashlib.sha256(dynamic).hexdigest()}}}
    with open(os.path.join(path, "metadata.json"), "w") as f:
        json.dump(meta, f)


def msgpack_str(s):
    b = s.encode()
    return (bytes([0xA0 | len(b)]) if len(b) < 32 else b"\xd9" + bytes([len(b)])) + b


def xrec(path, events, per_frame=1):
    """`events`: (type name, msgpack body), `per_frame` to a frame, frames 1/90 s apart."""
    with open(path, "wb") as f:
        meta = b'{"scene":"wide"}'
        start = b"XREC" + struct.pack("<HHB3sqd", 1, 0, 0, b"\0\0\0", BEGIN_NS, BEGIN_RTSS)
        start += struct.pack("<H", 4) + b"wide" + struct.pack("<I", len(meta)) + meta
        f.write(struct.pack("<BBHI", 1, 0, 0, len(start)) + start)
        packets, area, first, last = 0, [], None, None

        def flush():
            nonlocal packets, area, first
            data = b"".join(area)
            bounds = struct.pack("<qqddII", first[0], last[0], first[1], last[1], len(area), len(data))
            f.write(struct.pack("<BBHI", 2, 0, 0, 40 + len(data)) + bounds + data)
            packets, area, first = packets + 1, [], None

        size = 0
        for i, (name, body) in enumerate(events):
            frame = i // per_frame
            t = BEGIN_RTSS + frame / 90.0
            name = name.encode()
            ev = struct.pack("<H", len(name)) + name + struct.pack("<qddI", frame, t, t, len(body)) + body
            if area and size + len(ev) > PACKET:
                flush()
                size = 0
            first = first or (frame, t)
            last = (frame, t)
            area.append(ev)
            size += len(ev)
        count = i + 1
        if area:
            flush()
        end_ns = BEGIN_NS + round((last[1] - BEGIN_RTSS) * 1e9)
        f.write(struct.pack("<BBHI", 3, 0, 0, 32) + struct.pack("<qdIQI", end_ns, last[1], packets, count, 0))


def main():
    out = sys.argv[1]
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    n = lambda x: max(1, int(x * scale))
    os.makedirs(out, exist_ok=True)
    csv(os.path.join(out, "wide.csv"), n(1_000_000))
    hdf5(os.path.join(out, "wide.h5"), n(20_000))
    icarec(os.path.join(out, "wide.icarec"), n(100_000))
    value = b"\x81" + msgpack_str("value") + b"\x01"
    # Ten frames: each type is a column of the HDF5 table, whose every frame holds all.
    types = n(20_000)
    xrec(os.path.join(out, "types.xrec"), ((f"Wide.Type{i}", value) for i in range(types)),
         per_frame=max(1, types // 10))
    xrec(os.path.join(out, "chapters.xrec"),
         (("xrec.Chapter", b"\x81" + msgpack_str("name") + msgpack_str(f"chapter {i}"))
          for i in range(n(100_000))))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Generates an XREC-S 1.0 benchmark recording (uncompressed): transform events of
ENTITIES objects at 90 Hz, packed in arrival order into Event packets of at most 1 MiB,
then an End. Usage: xrec_gen.py OUT EVENTS [ENTITIES]. 2,400,000 events is about 500 MB."""

import struct
import sys

LIMIT = 1 << 20
BEGIN_NS = 1_700_000_000_000_000_000
BEGIN_RTSS = 10.0
TYPE = b"xrec.Transform"


def f64s(xs):
    return bytes([0x90 | len(xs)]) + b"".join(b"\xcb" + struct.pack(">d", x) for x in xs)


def body(ident, i):
    x = float(i)
    return (
        b"\x85\xa2id" + bytes([0xA0 | len(ident)]) + ident
        + b"\xa8position" + f64s([x, x * 0.5, 1.25])
        + b"\xa8rotation" + f64s([0.0, 0.0, 0.0, 1.0])
        + b"\xa5scale" + f64s([1.0, 1.0, 1.0])
        + b"\xa8velocity" + f64s([0.1, 0.2, 0.3])
    )


def main():
    out, events = sys.argv[1], int(sys.argv[2])
    entities = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    idents = [b"obj%04d" % i for i in range(entities)]
    head = struct.pack("<H", len(TYPE)) + TYPE
    packets = 0
    with open(out, "wb") as f:
        meta = b'{"scene":"bench"}'
        start = b"XREC" + struct.pack("<HHB3sqd", 1, 0, 0, b"\0\0\0", BEGIN_NS, BEGIN_RTSS)
        start += struct.pack("<H", 5) + b"bench" + struct.pack("<I", len(meta)) + meta
        f.write(struct.pack("<BBHI", 1, 0, 0, len(start)) + start)
        area, count, first = [], 0, None
        size = 0
        last_t = BEGIN_RTSS

        def flush():
            nonlocal area, count, size, packets, first
            data = b"".join(area)
            bounds = struct.pack("<qqddII", first[0], last[0], first[1], last[1], count, len(data))
            f.write(struct.pack("<BBHI", 2, 0, 0, 40 + len(data)) + bounds + data)
            packets += 1
            area, count, size, first = [], 0, 0, None

        for i in range(events):
            frame = i // entities
            t = BEGIN_RTSS + frame / 90.0
            b = body(idents[i % entities], frame)
            ev = head + struct.pack("<qddI", frame, t, t + 0.0005, len(b)) + b
            if count and size + len(ev) > LIMIT:
                flush()
            if first is None:
                first = (frame, t)
            last = (frame, t)
            area.append(ev)
            size += len(ev)
            count += 1
            last_t = t
        if count:
            flush()
        end_ns = BEGIN_NS + round((last_t - BEGIN_RTSS) * 1e9)
        f.write(struct.pack("<BBHI", 3, 0, 0, 32) + struct.pack("<qdIQI", end_ns, last_t, packets, events, 0))


if __name__ == "__main__":
    main()

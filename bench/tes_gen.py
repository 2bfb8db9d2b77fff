#!/usr/bin/env python3
"""Writes a synthetic plain .3es capture for the benchmark (spec tes.md).

Per frame: 300 persistent spheres updated (f32 attributes), one transient 4000-point
MeshShape (vertices f32 and colours u32 as DataBuffers, then End), and a Frame message.
1000 frames by default: about 85 MB. CRCs are CRC-16/CCITT-FALSE (binascii.crc_hqx with
init 0xFFFF).

Usage: tes_gen.py OUT [FRAMES]
"""
import binascii
import math
import struct
import sys

MARKER = b"\x03\xe5\x5e\x30"


def packet(routing, message, payload):
    head = MARKER + struct.pack(">HHHHHBB", 0, 4, routing, message, len(payload), 0, 0)
    body = head + payload
    return body + struct.pack(">H", binascii.crc_hqx(body, 0xFFFF))


def attrs(colour, pos, rot=(0.0, 0.0, 0.0, 1.0), scale=(1.0, 1.0, 1.0)):
    return struct.pack(">I10f", colour, *pos, *rot, *scale)


def main():
    out = sys.argv[1]
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    shapes, points = 300, 4000
    with open(out, "wb") as f:
        f.write(packet(1, 0, struct.pack(">QIB", 1000, 33, 0) + bytes(35)))
        f.write(packet(2, 3, struct.pack(">IIQ", 0, frames, 0)))
        f.write(packet(6, 0, struct.pack(">HHHH", 1, 0, 1, 5) + b"bench"))
        for i in range(shapes):
            f.write(packet(64, 1, struct.pack(">IHHH", i + 1, 1, 0, 0) + attrs(0xFF0000FF, (i, 0.0, 0.0))))
        frame_ctl = packet(2, 1, struct.pack(">IIQ", 0, 33, 0))
        colours = struct.pack(">%dI" % points, *([0x00FF00FF] * points))
        for k in range(frames):
            parts = []
            for i in range(shapes):
                pos = (i, math.sin(k * 0.01 + i), math.cos(k * 0.01 + i))
                parts.append(packet(64, 2, struct.pack(">IH", i + 1, 512 | 1024) + attrs(0xFF0000FF, pos)))
            # A transient point mesh: create, vertices, colours, end.
            parts.append(packet(72, 1, struct.pack(">IHHH", 0, 1, 0, 0) + attrs(0xFFFFFFFF, (0.0, 0.0, 0.0))
                                + struct.pack(">IIfB", points, 0, 1.0, 0)))
            verts = struct.pack(">%df" % (3 * points), *[(k + j) * 0.001 for j in range(3 * points)])
            parts.append(packet(72, 4, struct.pack(">IHIHBB", 0, 0, 0, points, 3, 9) + verts))
            parts.append(packet(72, 4, struct.pack(">IHIHBB", 0, 3, 0, points, 1, 6) + colours))
            parts.append(packet(72, 4, struct.pack(">IHIH", 0, 0xFFFF, 0, 0)))
            parts.append(frame_ctl)
            f.write(b"".join(parts))


if __name__ == "__main__":
    main()

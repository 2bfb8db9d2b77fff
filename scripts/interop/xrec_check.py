#!/usr/bin/env python3
"""An independent XREC-S 1.0 reader (spec xrec.md §3-§10), for interop: checks a file's
framing, order, tight bounds, counts and gzip areas, and prints its events.
Usage: xrec_check.py FILE            -> "OK <packets> <events>" or "ERROR <why>" (exit 1)
       xrec_check.py --events FILE   -> one line per event: type frame create capture body-hex"""

import gzip
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    if len(data) < 12 or data[0] != 1 or data[1:4] != b"\0\0\0" or data[8:12] != b"XREC":
        raise ValueError("not XREC-S")
    pos, packets, events, end, codec, first = 0, 0, [], None, None, True
    while pos < len(data):
        if len(data) - pos < 8:
            raise ValueError(f"partial header at {pos}")
        kind, flags, reserved, n = struct.unpack_from("<BBHI", data, pos)
        payload = data[pos + 8 : pos + 8 + n]
        if len(payload) != n:
            raise ValueError(f"truncated packet at {pos}")
        if reserved or flags & ~1:
            raise ValueError(f"reserved bits at {pos}")
        if end is not None:
            raise ValueError(f"packet after End at {pos}")
        if first != (kind == 1):
            raise ValueError(f"Start not first, or twice, at {pos}")
        first = False
        if kind == 1:
            version, revision, codec = struct.unpack_from("<HHB", payload, 4)
            if version != 1 or codec > 1:
                raise ValueError("version or codec")
        elif kind == 2:
            f0, f1, t0, t1, count, nbytes = struct.unpack_from("<qqddII", payload, 0)
            area = payload[40:]
            if flags & 1:
                if codec != 1:
                    raise ValueError("compressed without codec")
                area = gzip.decompress(area)
            if len(area) != nbytes:
                raise ValueError(f"events_bytes at {pos}")
            p, got = 0, []
            while p < len(area):
                (ln,) = struct.unpack_from("<H", area, p)
                name = area[p + 2 : p + 2 + ln].decode()
                frame, ct, cp, bl = struct.unpack_from("<qddI", area, p + 2 + ln)
                body = area[p + 30 + ln : p + 30 + ln + bl]
                if len(body) != bl or not name:
                    raise ValueError(f"event at {pos}")
                got.append((name, frame, ct, cp, body))
                p += 30 + ln + bl
            if len(got) != count or count == 0:
                raise ValueError(f"event_count at {pos}")
            frames = [e[1] for e in got]
            times = [e[2] for e in got]
            if (min(frames), max(frames), min(times), max(times)) != (f0, f1, t0, t1):
                raise ValueError(f"bounds not tight at {pos}")
            if times != sorted(times):
                raise ValueError(f"events out of time order at {pos}")
            if nbytes > (1 << 20) and count > 1:
                raise ValueError(f"packet over 1 MiB at {pos}")
            packets += 1
            events += got
        elif kind == 3:
            end = struct.unpack_from("<qdIQ", payload, 0)
            if end[2] != packets or end[3] != len(events):
                raise ValueError("End counts")
        elif kind < 0x80:
            raise ValueError(f"reserved packet type {kind}")
        pos += 8 + n
    if end is None:
        raise ValueError("no End packet")
    return packets, events


def main():
    if sys.argv[1] == "--events":
        for name, frame, ct, cp, body in read(sys.argv[2])[1]:
            print(name, frame, repr(ct), repr(cp), body.hex())
        return
    try:
        packets, events = read(sys.argv[1])
    except Exception as e:  # noqa: BLE001 - any failure is the verdict
        print("ERROR", e)
        sys.exit(1)
    print("OK", packets, len(events))


if __name__ == "__main__":
    main()

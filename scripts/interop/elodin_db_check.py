#!/usr/bin/env python3
"""Compare what Elodin 0.18 serves from a DB simrec wrote (dbcheck.py's OUT.json) with the
source recording as simrec reads it (`simrec cat --format json`, one record a line).

usage: elodin_db_check.py SOURCE.jsonl EPOCH_US DBCHECK.json [EVENT_CHANNEL ...]

The writer's rule (docs/formats/elodin-db.md, "Writing"): each numeric value of a record is
a row of component `<entity>.<key>` (`<channel>.<id>.<key>` for a numbered entity,
`<channel>.<key>` without one) at EPOCH_US + time (whole µs, rounded down); a key keeps the
shape of its first value; each record of an event channel is one message of the log named
after the channel. Prints nothing and exits 0 when Elodin serves exactly that."""
import json
import struct
import sys


def shape(v):
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return ()
    if isinstance(v, list) and v:
        first = shape(v[0])
        if first is None or any(shape(x) != first for x in v):
            return None
        return (len(v),) + first
    return None


def name(record, key):
    channel, entity = record["channel"], record.get("entity")
    if isinstance(entity, str):
        return f"{entity}.{key}"
    if isinstance(entity, int):
        return f"{channel}.{entity}.{key}"
    return key if key == channel else f"{channel}.{key}"


def same(a, b):
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return bool(a) == bool(b) and not (isinstance(a, float) or isinstance(b, float))
    if isinstance(a, float) and isinstance(b, float) and a != b:
        # simrec prints a float32 by its own shortest digits; Elodin serves it widened.
        return struct.unpack("<f", struct.pack("<f", a))[0] == b
    return a == b


def nan(v):
    return v == "NaN" or (isinstance(v, list) and any(nan(x) for x in v))


def main():
    source, epoch_us, served = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
    events = set(sys.argv[4:])
    want, shapes, msgs = {}, {}, {}
    for line in open(source):
        r = json.loads(line)
        us = (epoch_us * 1000 + r["time_ns"]) // 1000
        if r["channel"] in events:
            msgs[r["channel"]] = msgs.get(r["channel"], 0) + 1
        for key, v in r["values"].items():
            s = shape(v)
            if s is None or 0 in s:
                continue
            n = name(r, key)
            if shapes.setdefault(n, s) != s:
                continue
            want.setdefault(n, []).append((us, v))
    problems = []
    got = served["components"]
    if set(got) != set(want):
        problems.append(f"components: Elodin has {sorted(set(got) - set(want))[:5]} more, "
                        f"{sorted(set(want) - set(got))[:5]} fewer")
    for n, rows in want.items():
        c = got.get(n)
        if c is None:
            continue
        # simrec prints a NaN as null, which the source side skips as no number.
        kept = [(t, v) for t, v in zip(c["timestamps"], c["values"]) if not nan(v)]
        c = {"timestamps": [t for t, _ in kept], "values": [v for _, v in kept]}
        if c["timestamps"] != [t for t, _ in rows]:
            problems.append(f"{n}: timestamps differ")
        elif not all(same(v, w) for (_, v), w in zip(rows, c["values"])) or len(rows) != len(c["values"]):
            problems.append(f"{n}: values differ")
    served_msgs = {k: m["count"] for k, m in served.get("msgs", {}).items()}
    if served_msgs != msgs:
        problems.append(f"messages: Elodin {served_msgs}, source {msgs}")
    for p in problems[:10]:
        print(p)
    sys.exit(1 if problems else 0)


main()

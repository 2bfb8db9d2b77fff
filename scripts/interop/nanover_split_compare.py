"""Compares simrec's split parts with nanover-split-recording's, part by part and message
by message, decoding both with msgpack.

usage: nanover_split_compare.py UPSTREAM_DIR SIMREC_DIR STEM

Parts are matched by name (`STEM-NN.nanover.zip`). Upstream writes an empty part `-00`
(253 bytes, no messages) when the recording starts with a reset; simrec does not write
it, so an upstream part with no messages and no simrec counterpart is not a difference.
Each message must have the same timestamp, the same index `types` and `frame.index`, and
decode to the same value, except that `state.removals` is compared as a set (upstream
builds it from a Python set, so its order is arbitrary). Prints one line per part and
`identical`/`equal` counts (byte-identical messages / equal after decoding); exits 1 on
the first difference.
"""

import os
import sys
import zipfile
from pathlib import Path

import msgpack


def read(path):
    with zipfile.ZipFile(path) as z:
        index = msgpack.unpackb(z.read("index.msgpack"))
        data = z.read("messages.msgpack")
    out = []
    for e in index:
        raw = data[e["offset"] : e["offset"] + e["length"]]
        out.append((e["metadata"], raw, msgpack.unpackb(raw, strict_map_key=False)))
    return out


def canonical(message):
    m = dict(message)
    state = m.get("state")
    if isinstance(state, dict) and isinstance(state.get("removals"), list):
        state = dict(state)
        state["removals"] = sorted(state["removals"])
        m["state"] = state
    return m


def main():
    upstream, mine, stem = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    theirs = sorted(upstream.glob(f"{stem}-[0-9][0-9].nanover.zip"))
    ours = sorted(mine.glob(f"{stem}-[0-9][0-9].nanover.zip"))
    names = sorted({p.name for p in theirs} | {p.name for p in ours})
    if not names:
        # An empty recording: upstream writes nothing, and neither does simrec.
        print("no parts on either side (a recording without messages)")
        return 0
    for name in names:
        a = read(upstream / name) if (upstream / name).exists() else None
        b = read(mine / name) if (mine / name).exists() else None
        if a is not None and b is None and len(a) == 0:
            print(f"{name}: upstream's empty part, not written by simrec (documented)")
            continue
        if a is None or b is None:
            print(f"{name}: only in {'simrec' if a is None else 'upstream'}'s output")
            return 1
        if len(a) != len(b):
            print(f"{name}: {len(a)} messages upstream, {len(b)} from simrec")
            return 1
        identical = 0
        for i, ((ma, ra, va), (mb, rb, vb)) in enumerate(zip(a, b)):
            if ma != mb:
                print(f"{name}: message {i}: index metadata {ma} != {mb}")
                return 1
            if canonical(va) != canonical(vb):
                keys = set(va) | set(vb)
                detail = []
                for k in sorted(keys):
                    x, y = va.get(k), vb.get(k)
                    if isinstance(x, dict) and isinstance(y, dict):
                        detail += [f"{k}.{kk}" for kk in sorted(set(x) | set(y)) if x.get(kk) != y.get(kk)]
                    elif x != y:
                        detail.append(k)
                print(f"{name}: message {i} differs: {detail[:8]}")
                return 1
            identical += ra == rb
            if ra != rb and os.environ.get("SPLIT_COMPARE_VERBOSE"):
                print(f"  {name}: message {i} equal but not byte-identical: {ra[:60]!r} / {rb[:60]!r}")
        print(f"{name}: {len(a)} messages equal, {identical} byte-identical")
    return 0


if __name__ == "__main__":
    sys.exit(main())

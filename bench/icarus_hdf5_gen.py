"""Writes a large Icarus HDF5 recording in Vulcan's layout (spec icarec.md §B1) with h5py:
/time and SIGNALS double signals of FRAMES frames, chunked (1000,), unlimited, no filters,
`unit` attributes and a Vulcan schema. Written a chunk at a time (bounded memory).

Usage: python icarus_hdf5_gen.py OUT.h5 [SIGNALS] [FRAMES]
"""
import json
import sys

import h5py
import numpy as np

out = sys.argv[1]
signals = int(sys.argv[2]) if len(sys.argv) > 2 else 200
frames = int(sys.argv[3]) if len(sys.argv) > 3 else 600_000
names = [f"Rocket.Body{s // 10:02}.sig{s % 10}" for s in range(signals)]
with h5py.File(out, "w") as f:
    time = f.create_dataset("time", shape=(frames,), dtype="<f8", chunks=(1000,), maxshape=(None,))
    g = f.create_group("signals")
    ds = []
    for n in names:
        d = g.create_dataset(n, shape=(frames,), dtype="<f8", chunks=(1000,), maxshape=(None,))
        d.attrs.create("unit", b"m", dtype=h5py.string_dtype("ascii"))
        ds.append(d)
    schema = {
        "signals": [
            {"name": n, "type": "double", "lifecycle": "dynamic", "offset": 8 * i, "unit": "m"}
            for i, n in enumerate(names)
        ],
        "frame_size_bytes": 8 * signals,
    }
    m = f.create_group("metadata")
    m.attrs.create("schema", json.dumps(schema, indent=2).encode(), dtype=h5py.string_dtype("ascii"))
    m.attrs.create("created_at", b"2026-03-01T12:00:00Z", dtype=h5py.string_dtype("ascii"))
    for start in range(0, frames, 1000):
        i = np.arange(start, min(start + 1000, frames))
        t = (i + 1) * 0.001
        time[start : start + len(i)] = t
        for k, d in enumerate(ds):
            d[start : start + len(i)] = np.sin(t * (k + 1)) * 100.0

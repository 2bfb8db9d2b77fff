"""Checks an HDF5 file simrec wrote against the Vulcan layout (spec icarec.md §B1, §B2, §B5),
with h5py: /time and every /signals dataset 1-D, float64/int32/int64, chunked (1000,), maximum
shape unlimited, no filters, as long as /time; `unit` / `semantic` scalar string attributes;
/metadata `schema` valid JSON in Vulcan's shape (signals in order, offset 8 x index, types
matching the datasets, frame_size_bytes) and `created_at` in UTC.

With a SOURCE (an HDF5 file simrec read), also: the same datasets in the same schema order,
every value bit for bit (a float32 source compared after exact widening to float64), and the
same units, semantics and lifecycles.

Usage: python icarus_hdf5_check.py OUT.h5 [SOURCE.h5]
Prints one line per problem and exits 1 if there is any, else prints a summary and exits 0.
"""
import json
import re
import sys

import h5py
import numpy as np

TYPES = {"float64": "double", "int32": "int32", "int64": "int64"}


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def attrs(d):
    return {k: text(d.attrs[k]) for k in ("unit", "semantic") if k in d.attrs}


def check_layout(f, problems):
    if "time" not in f or "signals" not in f or "metadata" not in f:
        problems.append("missing /time, /signals or /metadata")
        return None
    t = f["time"]
    n = t.shape[0] if len(t.shape) == 1 else -1
    for path in ["time"] + ["signals/" + k for k in f["signals"]]:
        d = f[path]
        if len(d.shape) != 1 or d.shape[0] != n:
            problems.append(f"{path}: shape {d.shape}, /time has {n} rows")
        if d.dtype.name not in TYPES or (path == "time" and d.dtype.name != "float64"):
            problems.append(f"{path}: dtype {d.dtype}")
        if d.dtype.byteorder not in "<=|":
            problems.append(f"{path}: byte order {d.dtype.byteorder}")
        if d.chunks != (1000,):
            problems.append(f"{path}: chunks {d.chunks}")
        if d.maxshape != (None,):
            problems.append(f"{path}: maxshape {d.maxshape}")
        if d.compression is not None or d.shuffle or d.fletcher32 or d.scaleoffset:
            problems.append(f"{path}: filters")
        for k in ("unit", "semantic"):
            if k in d.attrs:
                v = d.attrs[k]
                if not isinstance(v, (str, bytes)) or d.attrs.get_id(k).shape != ():
                    problems.append(f"{path}: attribute {k} is not a scalar string")
                if not d.attrs.get_id(k).get_type().is_variable_str():
                    problems.append(f"{path}: attribute {k} is not a variable-length string")
    m = f["metadata"]
    created = text(m.attrs.get("created_at", ""))
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created):
        problems.append(f"created_at {created!r}")
    schema = json.loads(text(m.attrs["schema"]))
    signals = schema["signals"]
    names = [s["name"] for s in signals]
    if sorted(names) != sorted(f["signals"].keys()):
        problems.append("schema names differ from the datasets")
    if schema["frame_size_bytes"] != 8 * len(signals):
        problems.append(f"frame_size_bytes {schema['frame_size_bytes']}")
    for i, s in enumerate(signals):
        d = f["signals"].get(s["name"])
        if d is None:
            continue
        if s["offset"] != 8 * i:
            problems.append(f"{s['name']}: offset {s['offset']}")
        if s["type"] != TYPES.get(d.dtype.name):
            problems.append(f"{s['name']}: schema type {s['type']}, dataset {d.dtype}")
        if s["lifecycle"] not in ("static", "dynamic"):
            problems.append(f"{s['name']}: lifecycle {s['lifecycle']}")
        for k in ("unit", "semantic"):
            if s.get(k) != attrs(d).get(k):
                problems.append(f"{s['name']}: schema {k} {s.get(k)!r}, attribute {attrs(d).get(k)!r}")
        if set(s) - {"name", "type", "lifecycle", "offset", "unit", "semantic"}:
            problems.append(f"{s['name']}: unexpected keys {sorted(s)}")
    return names, n


def same_bits(a, b):
    if a.dtype == np.float32:
        a = a.astype(np.float64)
    return a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def compare(f, src, names, n, problems):
    frames = min([src["time"].shape[0]] + [src["signals"][k].shape[0] for k in src["signals"]])
    if n != frames:
        problems.append(f"{n} frames, the source has {frames}")
    if not same_bits(src["time"][:frames], f["time"][()]):
        problems.append("/time differs from the source")
    for k in src["signals"]:
        if k not in f["signals"]:
            problems.append(f"{k} missing")
            continue
        a, b = src["signals"][k], f["signals"][k]
        if not same_bits(a[:frames], b[()]):
            problems.append(f"{k}: values differ from the source")
        if attrs(a) != attrs(b):
            problems.append(f"{k}: attributes {attrs(b)}, the source has {attrs(a)}")
    if "metadata" in src and "schema" in src["metadata"].attrs:
        try:
            order = [s["name"] for s in json.loads(text(src["metadata"].attrs["schema"]))["signals"]]
        except ValueError:
            order = None  # Vulcan's unescaped text: simrec's tests check its order
        # A schema whose names the datasets have (`a\tb` in Vulcan's text parses as a tab).
        if order and set(order) <= set(src["signals"].keys()) and order != names:
            problems.append(f"schema order {names}, the source's {order}")


def main():
    out = sys.argv[1]
    problems = []
    with h5py.File(out, "r") as f:
        checked = check_layout(f, problems)
        if checked and len(sys.argv) > 2:
            with h5py.File(sys.argv[2], "r") as src:
                compare(f, src, checked[0], checked[1], problems)
        datasets = len(f["signals"]) if "signals" in f else 0
        frames = checked[1] if checked else 0
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(f"{datasets} signals x {frames} frames, HDF5 {h5py.version.hdf5_version}")


if __name__ == "__main__":
    main()

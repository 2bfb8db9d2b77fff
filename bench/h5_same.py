"""Compares two HDF5 files as h5py sees them: every group, dataset (dtype, shape, chunks,
maxshape, every value bit for bit) and attribute, except /metadata's `created_at` (the
write time). Exit 0 when they match; prints the differences otherwise.

Usage: h5_same.py A.h5 B.h5
"""
import sys

import h5py
import numpy as np


def walk(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj))
    out["/"] = f
    return out


def attrs(obj):
    return {k: obj.attrs[k] for k in obj.attrs if not (obj.name == "/metadata" and k == "created_at")}


def same_value(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return type(a) == type(b) and a == b


def main(pa, pb):
    bad = []
    with h5py.File(pa, "r") as fa, h5py.File(pb, "r") as fb:
        a, b = walk(fa), walk(fb)
        if sorted(a) != sorted(b):
            bad.append(f"objects differ: {sorted(set(a) ^ set(b))}")
        for name in sorted(set(a) & set(b)):
            x, y = a[name], b[name]
            if type(x) != type(y):
                bad.append(f"{name}: {type(x)} vs {type(y)}")
                continue
            ax, ay = attrs(x), attrs(y)
            if sorted(ax) != sorted(ay):
                bad.append(f"{name}: attributes {sorted(ax)} vs {sorted(ay)}")
            for k in set(ax) & set(ay):
                if not same_value(ax[k], ay[k]):
                    bad.append(f"{name}: attribute {k}: {ax[k]!r} vs {ay[k]!r}")
            if isinstance(x, h5py.Dataset):
                for p in ("dtype", "shape", "chunks", "maxshape", "compression"):
                    if getattr(x, p) != getattr(y, p):
                        bad.append(f"{name}: {p} {getattr(x, p)} vs {getattr(y, p)}")
                # Bit for bit, a chunk's rows at a time (the bench files hold 1 GB).
                n = x.shape[0] if x.shape else 0
                step = 100_000
                for i in range(0, max(n, 1), step):
                    if x[i:i + step].tobytes() != y[i:i + step].tobytes():
                        bad.append(f"{name}: values differ in rows {i}..{i + step}")
                        break
        print(f"{len(a)} objects compared")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

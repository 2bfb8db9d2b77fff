#!/usr/bin/env python3
"""Generates a large .icarec directory for the benchmark: SIGNALS double signals
(`Bench.Cmp<k>.s<j>`, dynamic) and one static one, FRAMES frames at dt = 0.01 s.

    icarec_gen.py OUT.icarec FRAMES [SIGNALS]   (200 signals × 600,000 frames ≈ 965 MB)

Written in chunks of 1,000 frames; metadata.json carries the SHA-256 of both files, so the
recording validates clean.
"""

import array
import hashlib
import json
import os
import sys


def main(out, frames, signals):
    os.makedirs(out, exist_ok=True)
    sigs = [
        {"name": f"Bench.Cmp{k // 10}.s{k % 10}", "type": "double", "units": "m",
         "lifecycle": "dynamic", "offset": 8 * k, "size": 8}
        for k in range(signals)
    ]
    sigs.append({"name": "Bench.mass", "type": "double", "units": "kg",
                 "lifecycle": "static", "offset": 0, "size": 8})
    lines = "".join(
        "\t".join([s["name"], s["type"], s["units"], s["lifecycle"], str(s["offset"]), str(s["size"])]) + "\n"
        for s in sigs
    )
    schema = {
        "schema_version": "1.0.0", "icarus_version": "0.6.0", "created_at": "2026-03-01T12:00:00Z",
        "time": {"epoch": "2026-03-01T12:00:00Z", "system": "UTC", "units": "seconds"},
        "signals": sigs, "byte_order": "little",
        "dynamic_block_bytes": 8 * signals, "static_block_bytes": 8,
        "checksum": "sha256:" + hashlib.sha256(lines.encode()).hexdigest(),
    }
    with open(os.path.join(out, "schema.json"), "w") as f:
        json.dump(schema, f, indent=1)
    static = array.array("d", [1250.0]).tobytes()
    with open(os.path.join(out, "static_signals.bin"), "wb") as f:
        f.write(static)
    width = signals + 1
    chunk = 1000
    base = array.array("d", [float(k) for k in range(width)] * chunk)
    h = hashlib.sha256()
    size = 0
    with open(os.path.join(out, "dynamic_signals.bin"), "wb") as f:
        for start in range(0, frames, chunk):
            n = min(chunk, frames - start)
            block = base[: n * width]
            block[0::width] = array.array("d", [(start + i + 1) * 0.01 for i in range(n)])
            block[1::width] = array.array("d", [((start + i) % 997) * 0.5 for i in range(n)])
            data = block.tobytes()
            h.update(data)
            size += len(data)
            f.write(data)
    meta = {
        "producer": "bench/icarec_gen.py", "frame_count": frames,
        # The same float expressions as the frames' times.
        "t_first": 0.01, "t_last": frames * 0.01, "complete": True,
        "files": {
            "static_signals.bin": {"bytes": len(static), "sha256": hashlib.sha256(static).hexdigest()},
            "dynamic_signals.bin": {"bytes": size, "sha256": h.hexdigest()},
        },
    }
    with open(os.path.join(out, "metadata.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 200)

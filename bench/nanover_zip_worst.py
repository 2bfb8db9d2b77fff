#!/usr/bin/env python3
"""Worst-case NanoVer recordings for `simrec inspect` (issue item 11), and their numbers.

Generates into bench-data/worst/ (gitignored), when missing:
  resets-50000.nanover.zip   50,000 frame messages, every one a reset (frame.index 0),
                             with particle.count and 3 float32 positions, 1 ms apart;
  state-5M.nanover.zip       a reset frame, then one state message whose `updates` map
                             holds 5,000,000 keys (`k0000000`: int), ~70 MB;
  state-5M-crashed.nanover.zip  the same messages with no index and no directory (a
                             recorder killed before closing), read by a scan;
  resets-50000.traj          the first converted to legacy by the freshly built simrec.
The archives are written here by hand in NanoVer's writer layout (spec nanover-zip
§2.1): msgpack is encoded with the standard library, so no dependency is needed and
the 5M-key map is streamed, never held in memory.

Then runs, on each, `simrec inspect` (text) and `simrec inspect --format json` once to
warm up and --repeat times (default 3), reporting the median wall time and the peak
RSS (GNU time %M of a separate run), and for the crashed archive `simrec recover` too.

Usage: bench/nanover_zip_worst.sh [--repeat N] [--skip-build]
"""

from __future__ import annotations

import argparse
import statistics
import struct
import subprocess
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402
from benchlib import REPO, build, log, peak_rss_kib, run_once  # noqa: E402


def mp_str(s: str) -> bytes:
    b = s.encode()
    if len(b) < 32:
        return bytes([0xA0 | len(b)]) + b
    if len(b) < 256:
        return bytes([0xD9, len(b)]) + b
    return b"\xda" + struct.pack(">H", len(b)) + b


def mp_uint(i: int) -> bytes:
    if i < 128:
        return bytes([i])
    if i < 256:
        return bytes([0xCC, i])
    if i < 65536:
        return b"\xcd" + struct.pack(">H", i)
    return b"\xce" + struct.pack(">I", i)


def mp_map(n: int) -> bytes:
    if n < 16:
        return bytes([0x80 | n])
    if n < 65536:
        return b"\xde" + struct.pack(">H", n)
    return b"\xdf" + struct.pack(">I", n)


def mp_array(n: int) -> bytes:
    if n < 16:
        return bytes([0x90 | n])
    if n < 65536:
        return b"\xdc" + struct.pack(">H", n)
    return b"\xdd" + struct.pack(">I", n)


def mp_bin(b: bytes) -> bytes:
    return bytes([0xC4, len(b)]) + b


class Archive:
    """NanoVer's writer layout: messages streamed behind a patched local header."""

    def __init__(self, path: Path, finish: bool = True):
        self.f = open(path, "wb")
        self.finish_archive = finish
        self.f.write(self.local(45, 0, 0xFFFFFFFF, b"messages.msgpack", 20))
        self.f.write(struct.pack("<HHQQ", 1, 16, 0, 0))
        self.size = 0
        self.crc = 0
        self.index = bytearray()
        self.entries = 0

    @staticmethod
    def local(version, crc, size, name, extra):
        return struct.pack("<IHHHHHIIIHH", 0x04034B50, version, 0, 0, 0, 0x21, crc, size, size,
                           len(name), extra) + name

    @staticmethod
    def central(version, crc, size, name, offset):
        return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0300 | version, version, 0, 0,
                           0, 0x21, crc, size, size, len(name), 0, 0, 0, 0, 0x01800000,
                           offset) + name

    def write(self, chunks, types, frame_index, timestamp):
        length = 0
        for c in chunks:
            self.f.write(c)
            self.crc = zlib.crc32(c, self.crc)
            length += len(c)
        e = mp_map(3) + mp_str("offset") + mp_uint(self.size) + mp_str("length") + mp_uint(length)
        e += mp_str("metadata") + mp_map(3 if frame_index is not None else 2)
        e += mp_str("types") + mp_array(len(types)) + b"".join(mp_str(t) for t in types)
        if frame_index is not None:
            e += mp_str("frame.index") + mp_uint(frame_index)
        e += mp_str("timestamp") + mp_uint(timestamp)
        self.index += e
        self.entries += 1
        self.size += length

    def close(self):
        if self.finish_archive:
            index = mp_array(self.entries) + bytes(self.index)
            icrc = zlib.crc32(index)
            at = 66 + self.size
            self.f.write(self.local(20, icrc, len(index), b"index.msgpack", 0) + index)
            cd = self.central(45, self.crc, self.size, b"messages.msgpack", 0)
            cd += self.central(20, icrc, len(index), b"index.msgpack", at)
            cd_at = at + 43 + len(index)
            self.f.write(cd + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 2, 2, len(cd), cd_at, 0))
            self.f.seek(0)
            self.f.write(self.local(45, self.crc, 0xFFFFFFFF, b"messages.msgpack", 20))
            self.f.write(struct.pack("<HHQQ", 1, 16, self.size, self.size))
        self.f.close()


def reset_frame(i: int) -> bytes:
    positions = struct.pack("<9f", *(float(i % 7 + k) for k in range(9)))
    return (mp_map(1) + mp_str("frame") + mp_map(4) + mp_str("frame.index") + mp_uint(0)
            + mp_str("particle.count") + mp_uint(3) + mp_str("particle.positions")
            + mp_bin(positions) + mp_str("server.timestamp") + b"\xcb" + struct.pack(">d", i / 1000))


def make_resets(path: Path, n: int) -> None:
    a = Archive(path)
    for i in range(n):
        a.write([reset_frame(i)], ["frame"], 0, 1000 * i + 100)
    a.close()


def make_state(path: Path, keys: int, finish: bool) -> None:
    a = Archive(path, finish)
    a.write([reset_frame(0)], ["frame"], 0, 100)

    def chunks():
        yield mp_map(1) + mp_str("state") + mp_map(2) + mp_str("updates") + mp_map(keys)
        batch = bytearray()
        for i in range(keys):
            batch += mp_str(f"k{i:07d}") + mp_uint(i)
            if len(batch) > 1 << 20:
                yield bytes(batch)
                batch = bytearray()
        yield bytes(batch) + mp_str("removals") + mp_array(0)

    a.write(chunks(), ["state"], None, 2000)
    a.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--resets", type=int, default=50_000)
    p.add_argument("--state-keys", type=int, default=5_000_000)
    p.add_argument("--skip-build", action="store_true")
    a = p.parse_args()
    binary = benchlib.target_dir() / "release" / "simrec" if a.skip_build else build()
    data = REPO / "bench-data" / "worst"
    data.mkdir(parents=True, exist_ok=True)
    resets = data / f"resets-{a.resets}.nanover.zip"
    state = data / f"state-{a.state_keys}.nanover.zip"
    crashed = data / f"state-{a.state_keys}-crashed.nanover.zip"
    traj = data / f"resets-{a.resets}.traj"
    if not resets.exists():
        log(f"generating {resets.name}")
        make_resets(resets, a.resets)
    if not state.exists():
        log(f"generating {state.name}")
        make_state(state, a.state_keys, True)
    if not crashed.exists():
        log(f"generating {crashed.name}")
        make_state(crashed, a.state_keys, False)
    log(f"converting {resets.name} to {traj.name}")
    subprocess.run([str(binary), "convert", str(resets), "-o", str(traj), "--force"], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = data / "out"
    out.mkdir(exist_ok=True)
    rows = []
    for f in (resets, traj, state, crashed):
        for label, args in (("inspect", ["inspect"]), ("inspect --format json", ["inspect", "--format", "json"])):
            rows.append((f, label, [str(binary), *args, str(f)]))
    rows.append((crashed, "recover", [str(binary), "recover", str(crashed), "-o",
                                      str(out / "recovered.nanover.zip"), "--force"]))
    print("| file | size | command | median wall | peak RSS | exit |")
    print("|---|---:|---|---:|---:|---:|")
    for f, label, argv in rows:
        log_path = out / "run.log"
        runs = [run_once(argv, log_path) for _ in range(a.repeat + 1)][1:]
        wall = statistics.median(r["wall_s"] for r in runs)
        rss, code = peak_rss_kib(argv, log_path)
        size = f.stat().st_size / 1e6
        print(f"| {f.name} | {size:.1f} MB | {label} | {benchlib.fmt_ms(wall)} | {rss / 1024:.1f} MiB | {code} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: MCAP (protobuf, the default) of every family's large input, side by side with
`--mcap-encoding json` (the old layout) and with the Parquet table (`--to parquet`) of the
same input (issue 31 item 5: >= 150 MB/s of input, CPU <= 1.5 x the Parquet table's, peak
RSS <= 64 MiB). Python 3 standard library only.

Inputs: the files bench/compare.sh makes in its WORKDIR (default bench-data/compare): the
NanoVer legacy pair and its .nanover.zip, run.icarec and its .h5, .csv and elodin/ copies,
run.3es, run.xrec. Outputs go to --out (default bench-data/mcap-out) and are deleted after
each run. Each command runs --repeat times: median wall, median user+sys CPU, MB/s of input
by CPU time and by wall time, and the peak RSS (GNU time) of one more run. Prints a
Markdown table, and the load average before and after (the machine may be shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import REPO, build, log, peak_rss_kib, resolve_repo_path, run_once, target_dir  # noqa: E402

# family, inputs (relative to WORKDIR)
FAMILIES = [
    ("nanover-legacy", ["legacy.traj", "legacy.state"]),
    ("nanover-zip", ["run.nanover.zip"]),
    ("icarec", ["run.icarec"]),
    ("icarus-hdf5", ["run.h5"]),
    ("icarus-csv", ["run.csv"]),
    ("elodin", ["elodin"]),
    ("3es", ["run.3es"]),
    ("xrec", ["run.xrec"]),
]
# The Elodin family's large inputs (`--large-elodin`; relative to the repository): the replay
# bench/elodin.sh makes (2,000 bodies × 601 ticks, 157.6 MB of Parquet) and the DB
# bench/elodin_db.sh makes (100 entities × 4 components × 90,000 rows, 1.37 GB).
LARGE_ELODIN = [
    ("elodin-replay-large", ["bench-data/elodin/gen"]),
    ("elodin-db", ["bench-data/elodin-db/gen"]),
]
# writer, output name, extra flags
WRITERS = [
    ("mcap", "out.mcap", []),
    ("mcap-json", "out-json.mcap", ["--mcap-encoding", "json"]),
    ("parquet", "out.parquet", ["--to", "parquet"]),
]


def size_of(p: Path) -> int:
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return p.stat().st_size


def remove(p: Path) -> None:
    if p.is_dir():
        shutil.rmtree(p, ignore_errors=True)
    elif p.exists():
        p.unlink()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workdir", nargs="?", default="bench-data/compare")
    ap.add_argument("--out", default="bench-data/mcap-out")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated families (nanover-legacy, icarec, ...)")
    ap.add_argument("--writers", default="", help="comma-separated: mcap, mcap-json, parquet")
    ap.add_argument("--no-build", action="store_true", help="use target/release/simrec as it is")
    ap.add_argument("--simrec", help="a simrec binary to run instead")
    ap.add_argument("--json", help="also write the numbers to this file")
    ap.add_argument("--large-elodin", action="store_true",
                    help="also the large Elodin replay and DB (bench/elodin.sh, bench/elodin_db.sh)")
    args = ap.parse_args()

    simrec = Path(args.simrec) if args.simrec else (
        target_dir() / "release" / "simrec" if args.no_build else build())
    work = resolve_repo_path(args.workdir)
    out = resolve_repo_path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    writers = set(filter(None, args.writers.split(",")))
    load_before = os.getloadavg()
    rows = []
    families = [(f, [work / n for n in names]) for f, names in FAMILIES]
    if args.large_elodin:
        families += [(f, [REPO / n for n in names]) for f, names in LARGE_ELODIN]
    for family, inputs in families:
        if only and family not in only:
            continue
        missing = [str(p) for p in inputs if not p.exists()]
        if missing:
            log(f"skipping {family}: missing {', '.join(missing)} (bench/compare.sh, "
                "bench/elodin.sh or bench/elodin_db.sh makes them)")
            continue
        size = sum(size_of(p) for p in inputs)
        for writer, name, flags in WRITERS:
            if writers and writer not in writers:
                continue
            target = out / name
            argv = [str(simrec), "convert", *map(str, inputs), "-o", str(target), "--force", *flags]
            logf = out / f"{family}-{writer}.log"
            runs = []
            for _ in range(args.repeat):
                remove(target)
                r = run_once(argv, logf)
                if r["exit"] not in (0, 3):
                    log(f"{family} {writer}: exit {r['exit']}, see {logf}")
                    return 1
                runs.append(r)
            out_mb = size_of(target) / 1e6
            remove(target)
            rss, _ = peak_rss_kib(argv, logf)
            remove(target)
            wall = statistics.median(r["wall_s"] for r in runs)
            cpu = statistics.median(r["cpu_s"] for r in runs)
            row = {
                "family": family, "writer": writer, "input_mb": size / 1e6, "output_mb": out_mb,
                "wall_s": wall, "cpu_s": cpu, "user_s": statistics.median(r["user_s"] for r in runs),
                "sys_s": statistics.median(r["sys_s"] for r in runs),
                "mb_s_cpu": size / 1e6 / cpu, "mb_s_wall": size / 1e6 / wall, "rss_mib": rss / 1024,
            }
            rows.append(row)
            log(f"{family:15} {writer:9} {row['cpu_s']:.2f} CPU-s {row['wall_s']:.2f} s "
                f"{row['rss_mib']:.1f} MiB")
    load_after = os.getloadavg()

    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f}; "
          f"{args.repeat} runs each, medians; {simrec}")
    print()
    print("| input | MB | writer | user+sys CPU s | wall s | MB/s (CPU) | MB/s (wall) | peak RSS MiB | out MB | CPU ÷ parquet |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    parquet = {r["family"]: r["cpu_s"] for r in rows if r["writer"] == "parquet"}
    for r in rows:
        ratio = r["cpu_s"] / parquet[r["family"]] if r["family"] in parquet else float("nan")
        print(f"| {r['family']} | {r['input_mb']:.1f} | {r['writer']} | {r['cpu_s']:.2f} | "
              f"{r['wall_s']:.2f} | {r['mb_s_cpu']:.0f} | {r['mb_s_wall']:.0f} | "
              f"{r['rss_mib']:.1f} | {r['output_mb']:.1f} | {ratio:.2f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": [load_before, load_after], "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

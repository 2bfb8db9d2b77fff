#!/usr/bin/env python3
"""Benchmark simrec on large NanoVer legacy (.traj + .state) recordings.

READS ../shared/bench/gen_traj.py (relative to the repository root, i.e.
/work/shared/bench/gen_traj.py in the usual checkout) to generate its inputs.
Benchmarks may read ../shared; tests may not. Override the generator with
--gen PATH or the SIMREC_GEN_TRAJ environment variable (a relative path is
taken relative to the repository root).

What it does:
  1. `cargo build --release` (waits on the build lock if another build holds it);
  2. generates deterministic inputs into bench-data/ (gitignored) when missing:
     bench-data/legacy-w{WATERS}-f{FRAMES}.traj/.state for each --frames size
     (default 1000, 3000, 9000 frames of 1000 waters: ~36, ~110, ~330 MB);
  3. runs inspect, validate, convert (.traj+.state -> .traj+.state and -> .jsonl),
     slice (the middle 30% of the recording: --start F/100 s --end F/50 s, i.e.
     30s..60s for 3000 frames) and merge (.traj+.state -> .jsonl), each once to
     warm up and then --repeat (7) times, writing outputs with --force into
     bench-data/out/;
  4. prints Markdown tables: median wall time, throughput (input MB/s), median
     CPU time (user+sys), peak RSS, and the targets (met / missed).

Timing is warm-cache: the page cache cannot be dropped here, so inputs are
served from memory after the warm-up run. Wall time is measured around
spawn+wait of a fresh child, and CPU time (user+sys) comes from that child's
own rusage (os.wait4). Peak RSS comes from separate runs under GNU time
(/usr/bin/time -f %M: the warm-up run and one after the timed runs, the larger
is reported), because a child forked from Python inherits Python's RSS as its
high-water mark. The table also gives the floor: `simrec --version`.

Units: MB = 10^6 bytes, GB/s = 1000 MB/s, RSS in MiB (2^20 bytes).

Usage (bench/nanover_legacy.sh runs this script from the repository root):
  bench/nanover_legacy.sh
  bench/nanover_legacy.sh --repeat 3 --frames 3000 --only inspect,validate
  bench/nanover_legacy.sh --markdown bench-data/results.md --json bench-data/results.json

Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

from benchlib import (
    GNU_TIME,
    REPO,
    build,
    ensure_legacy,
    fmt_ms,
    log,
    machine_info,
    peak_rss_kib,
    require_generator,
    resolve_repo_path,
    rss_by_size,
    run_once,
)

DEFAULT_GEN = "../shared/bench/gen_traj.py"  # relative to REPO

# Targets (this 2-core machine).
INSPECT_MAX_MS_PER_100MB = 50.0
VALIDATE_MIN_MB_S = 1000.0
RSS_MAX_MIB = 64.0


def check_exit(argv: list[str], code: int, log_path: Path) -> None:
    if code != 0:
        sys.stderr.write(log_path.read_text(errors="replace"))
        sys.exit(f"`{' '.join(argv)}` exited {code}")


def commands(stem: Path, out: Path, frames: int) -> list[tuple[str, list[str], list[Path]]]:
    """(name, simrec arguments, outputs) for one input size."""
    traj, state = str(stem.with_suffix(".traj")), str(stem.with_suffix(".state"))
    tag = f"f{frames}"
    # Frames are 33.333 ms apart, so the recording lasts ~frames/30 s; the middle 30%.
    start, end = f"{frames / 100:g}s", f"{frames / 50:g}s"
    return [
        ("inspect", ["inspect", traj, state], []),
        ("validate", ["validate", traj, state], []),
        (
            "convert → .traj+.state",
            ["convert", traj, state, "-o", str(out / f"convert-{tag}.traj"), "--force"],
            [out / f"convert-{tag}.traj", out / f"convert-{tag}.state"],
        ),
        (
            "convert → .jsonl",
            ["convert", traj, state, "-o", str(out / f"convert-{tag}.jsonl"), "--force"],
            [out / f"convert-{tag}.jsonl"],
        ),
        (
            f"slice {start}..{end} → .traj+.state",
            ["slice", traj, state, "--start", start, "--end", end,
             "-o", str(out / f"slice-{tag}.traj"), "--force"],
            [out / f"slice-{tag}.traj", out / f"slice-{tag}.state"],
        ),
        (
            "merge → .jsonl",
            ["merge", traj, state, "-o", str(out / f"merge-{tag}.jsonl"), "--force"],
            [out / f"merge-{tag}.jsonl"],
        ),
    ]


def short_name(name: str) -> str:
    """The command family a row belongs to, for --only: inspect, validate, convert, slice, merge."""
    return name.split()[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gen", default=os.environ.get("SIMREC_GEN_TRAJ", DEFAULT_GEN),
                    help=f"gen_traj.py, relative to the repository root (default {DEFAULT_GEN})")
    ap.add_argument("--data", default="bench-data", help="inputs and outputs (default bench-data/)")
    ap.add_argument("--waters", type=int, default=1000)
    ap.add_argument("--frames", default="1000,3000,9000",
                    help="comma-separated input sizes in frames (default 1000,3000,9000)")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per command (default 7)")
    ap.add_argument("--only", default="", help="comma-separated: inspect,validate,convert,slice,merge")
    ap.add_argument("--no-build", action="store_true", help="use target/release/simrec as it is")
    ap.add_argument("--markdown", help="also write the report to this file")
    ap.add_argument("--json", help="also write every run's numbers to this file")
    a = ap.parse_args()

    gen = resolve_repo_path(a.gen)
    require_generator(gen)
    data = resolve_repo_path(a.data)
    out = data / "out"
    logs = data / "logs"
    for d in (data, out, logs):
        d.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in a.frames.split(",") if x.strip()]
    only = {x.strip() for x in a.only.split(",") if x.strip()}

    binary = (REPO / "target" / "release" / "simrec") if a.no_build else build()
    info = machine_info()
    stems = {f: ensure_legacy(gen, data, a.waters, f) for f in sizes}

    floor_kib, code = peak_rss_kib([str(binary), "--version"], logs / "version.stderr")
    info["rss_floor_mib"] = floor_kib / 1024
    info["rss_method"] = "GNU time %M" if GNU_TIME else "os.wait4 ru_maxrss (upper bound: includes Python's RSS)"

    results = []  # one dict per (size, command)
    for frames in sizes:
        stem = stems[frames]
        in_bytes = stem.with_suffix(".traj").stat().st_size + stem.with_suffix(".state").stat().st_size
        for k, (name, args, outputs) in enumerate(commands(stem, out, frames)):
            if only and short_name(name) not in only:
                continue
            argv = [str(binary), *args]
            log_path = logs / f"f{frames}-{k}-{short_name(name)}.stderr"
            log(f"f{frames} {name}: 1 warm-up/RSS run, {a.repeat} timed runs, 1 more RSS run")
            rss = []
            kib, code = peak_rss_kib(argv, log_path)  # also warms the page cache
            check_exit(argv, code, log_path)
            rss.append(kib)
            runs = []
            for _ in range(a.repeat):
                r = run_once(argv, log_path)
                check_exit(argv, r["exit"], log_path)
                runs.append(r)
            kib, code = peak_rss_kib(argv, log_path)
            check_exit(argv, code, log_path)
            rss.append(kib)
            wall = statistics.median(r["wall_s"] for r in runs)
            results.append({
                "frames": frames,
                "command": name,
                "argv": ["simrec", *args],
                "input_bytes": in_bytes,
                "output_bytes": sum(p.stat().st_size for p in outputs if p.exists()),
                "wall_s_median": wall,
                "wall_s_min": min(r["wall_s"] for r in runs),
                "wall_s_max": max(r["wall_s"] for r in runs),
                "cpu_s_median": statistics.median(r["cpu_s"] for r in runs),
                "mb_s": in_bytes / 1e6 / wall,
                "rss_mib_max": max(rss) / 1024,
                "rss_kib": rss,
                "runs": runs,
            })
    info["loadavg_end"] = os.getloadavg()

    report = render(results, info, a, gen)
    print(report)
    if a.markdown:
        Path(a.markdown).write_text(report + "\n")
    if a.json:
        Path(a.json).write_text(json.dumps({"machine": info, "results": results}, indent=1) + "\n")
    return 0


def render(results: list[dict], info: dict, a, gen: Path) -> str:
    L = []
    L.append(f"## simrec NanoVer legacy benchmark (warm cache, median of {a.repeat} runs)")
    L.append("")
    L.append(f"- machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}")
    L.append(f"- {info['rustc']}; simrec {info['commit']}{' (uncommitted changes)' if info['dirty'] else ''}")
    la, lb = info["loadavg"], info["loadavg_end"]
    L.append(f"- load average (1/5/15 min) at start {la[0]:.2f}/{la[1]:.2f}/{la[2]:.2f}, "
             f"at end {lb[0]:.2f}/{lb[1]:.2f}/{lb[2]:.2f}")
    L.append(f"- inputs: {gen} --waters {a.waters} --frames N (.traj + .state); MB = 10^6 bytes")
    L.append(f"- peak RSS via {info['rss_method']}; floor (`simrec --version`): {info['rss_floor_mib']:.1f} MiB")
    L.append("")
    L.append("| frames | input MB | command | wall (median) | wall min–max | CPU user+sys | input MB/s | peak RSS | output MB |")
    L.append("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        outmb = f"{r['output_bytes'] / 1e6:.1f}" if r["output_bytes"] else "–"
        L.append(
            f"| {r['frames']} | {r['input_bytes'] / 1e6:.1f} | {r['command']} | {fmt_ms(r['wall_s_median'])} "
            f"| {fmt_ms(r['wall_s_min'])}–{fmt_ms(r['wall_s_max'])} | {fmt_ms(r['cpu_s_median'])} "
            f"| {r['mb_s']:,.0f} | {r['rss_mib_max']:.1f} MiB | {outmb} |"
        )

    # Peak RSS across sizes, per command: is memory flat? (Slice windows differ by size.)
    def row_key(r):
        return "slice (middle 30%) → .traj+.state" if r["command"].startswith("slice") else r["command"]

    sizes = sorted({r["frames"] for r in results})

    if len(sizes) > 1:
        L += rss_by_size(results, sizes, row_key, lambda s: (
            f"{s} frames ({next(r['input_bytes'] for r in results if r['frames'] == s) / 1e6:.0f} MB)"))

    # Targets.
    L.append("")
    L.append("### Targets")
    L.append("")
    L.append("| target | measured | verdict |")
    L.append("|---|---|---|")
    for r in results:
        if r["command"] == "inspect":
            per100 = r["wall_s_median"] * 1000 / (r["input_bytes"] / 1e8)
            ok = per100 <= INSPECT_MAX_MS_PER_100MB
            L.append(f"| inspect ≤ {INSPECT_MAX_MS_PER_100MB:.0f} ms per 100 MB ({r['frames']} frames) "
                     f"| {fmt_ms(r['wall_s_median'])} for {r['input_bytes'] / 1e6:.0f} MB = {per100:.1f} ms/100 MB "
                     f"| {'met' if ok else 'MISSED'} ({INSPECT_MAX_MS_PER_100MB / per100:.1f}× {'under' if ok else 'short of'} the limit) |")
    for r in results:
        if r["command"] == "validate":
            ok = r["mb_s"] >= VALIDATE_MIN_MB_S
            L.append(f"| validate ≥ 1 GB/s ({r['frames']} frames) | {r['mb_s'] / 1000:.2f} GB/s "
                     f"| {'met' if ok else 'MISSED'} ({r['mb_s'] / VALIDATE_MIN_MB_S:.2f}× the target) |")
    worst = max(results, key=lambda r: r["rss_mib_max"]) if results else None
    if worst:
        ok = worst["rss_mib_max"] <= RSS_MAX_MIB
        L.append(f"| peak RSS ≤ {RSS_MAX_MIB:.0f} MiB, any command, any size | highest: {worst['rss_mib_max']:.1f} MiB "
                 f"({worst['command']}, {worst['frames']} frames) "
                 f"| {'met' if ok else 'MISSED'} ({worst['rss_mib_max'] / RSS_MAX_MIB * 100:.0f}% of the limit) |")
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())

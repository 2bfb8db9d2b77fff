"""What the benchmark scripts share: building simrec, generating legacy inputs,
timing one child process and measuring its peak RSS, and describing the machine.
Python 3 standard library only."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GNU_TIME = shutil.which("time", path="/usr/bin:/bin")  # GNU time, not the shell keyword


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def resolve_repo_path(p: str) -> Path:
    path = Path(p)
    return path if path.is_absolute() else (REPO / path).resolve()


def require_generator(gen: Path) -> None:
    """Stops with what the benchmark needs when its input generator is absent (it lives in
    ../shared, beside the repository, which is not shipped with simrec)."""
    if not gen.is_file():
        sys.exit(
            f"this benchmark needs NanoVer's recording generator, gen_traj.py, at {gen}\n"
            "(../shared/bench/gen_traj.py beside the repository). Pass --gen PATH or set\n"
            "SIMREC_GEN_TRAJ to where it is (standard-library Python 3)."
        )


def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def out(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "unavailable"

    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "kernel": platform.release(),
        "rustc": out(["rustc", "--version"]),
        "python": platform.python_version(),
        "commit": out(["git", "rev-parse", "--short", "HEAD"]),
        "dirty": bool(out(["git", "status", "--porcelain", "--untracked-files=no"])),
        "dirty_files": out(["git", "status", "--porcelain", "--untracked-files=no"]).splitlines(),
        "loadavg": os.getloadavg(),
    }


def target_dir() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    return target if target.is_absolute() else REPO / target


def build() -> Path:
    log("building: nice -n 10 cargo build --release (may wait for the build lock)")
    subprocess.run(["nice", "-n", "10", "cargo", "build", "--release"], cwd=REPO, check=True)
    binary = target_dir() / "release" / "simrec"
    if not binary.exists():
        sys.exit(f"built, but {binary} is missing")
    return binary


def ensure_legacy(gen: Path, data: Path, waters: int, frames: int) -> Path:
    """Generates bench-data/legacy-wW-fF.{traj,state} unless both exist; returns the stem."""
    stem = data / f"legacy-w{waters}-f{frames}"
    traj, state = stem.with_suffix(".traj"), stem.with_suffix(".state")
    if traj.exists() and state.exists():
        return stem
    if not gen.exists():
        sys.exit(f"generator not found: {gen} (set --gen or SIMREC_GEN_TRAJ)")
    tmp = data / f".gen-{os.getpid()}-w{waters}-f{frames}"
    log(f"generating {stem.name} ({waters} waters, {frames} frames) with {gen}")
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, str(gen), str(tmp), "--waters", str(waters), "--frames", str(frames)],
        check=True,
    )
    # Rename only when complete, so an interrupted generation is never mistaken for an input.
    os.replace(tmp.with_suffix(".traj"), traj)
    os.replace(tmp.with_suffix(".state"), state)
    log(f"  done in {time.perf_counter() - t0:.1f} s")
    return stem


def run_once(argv: list[str], log_path: Path, out_path: Path | None = None) -> dict:
    """Runs one fresh child: its wall time, and CPU time from its own rusage (os.wait4)."""
    with open(log_path, "wb") as err, open(out_path or os.devnull, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=REPO)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return {
        "wall_s": wall,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "exit": proc.returncode,
    }


def peak_rss_kib(argv: list[str], log_path: Path) -> tuple[int, int]:
    """(peak RSS in KiB, exit code) of one run of argv.

    A child forked from this Python process starts with Python's own RSS as its
    high-water mark (Linux carries ru_maxrss across fork+exec), so wait4 here would
    report at least ~15 MiB for anything. GNU time forks the command from a small
    process instead, so its %M is the command's own peak. Without GNU time, fall back
    to wait4 and say the number is an upper bound.
    """
    if GNU_TIME:
        rss_file = log_path.with_suffix(".rss")
        with open(log_path, "wb") as err, open(os.devnull, "wb") as null:
            code = subprocess.call([GNU_TIME, "-f", "%M", "-o", str(rss_file), *argv],
                                   stdout=null, stderr=err, cwd=REPO)
        return int(rss_file.read_text().split()[-1]), code
    with open(log_path, "wb") as err, open(os.devnull, "wb") as null:
        proc = subprocess.Popen(argv, stdout=null, stderr=err, cwd=REPO)
        _, status, ru = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_maxrss, proc.returncode


def fmt_ms(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s >= 0.1 else f"{s * 1000:.1f} ms"


def rss_by_size(results: list[dict], sizes: list[int], row_key, size_label) -> list[str]:
    """Markdown lines: peak RSS per command (rows, by `row_key`) and input size (columns,
    headed by `size_label(frames)`), with the largest ÷ smallest ratio."""
    cmds = list(dict.fromkeys(row_key(r) for r in results))
    lines = ["", "### Peak RSS by input size", ""]
    lines.append("| command | " + " | ".join(size_label(s) for s in sizes) + " | largest ÷ smallest |")
    lines.append("|---|" + "---:|" * (len(sizes) + 1))
    for c in cmds:
        vals = {r["frames"]: r["rss_mib_max"] for r in results if row_key(r) == c}
        cells = [f"{vals[s]:.1f} MiB" if s in vals else "–" for s in sizes]
        ratio = (f"{vals[sizes[-1]] / vals[sizes[0]]:.2f}×"
                 if sizes[0] in vals and sizes[-1] in vals else "–")
        lines.append(f"| {c} | " + " | ".join(cells) + f" | {ratio} |")
    return lines


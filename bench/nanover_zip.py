#!/usr/bin/env python3
"""Benchmark simrec on NanoVer .nanover.zip recordings, against NanoVer's own reader.

READS ../shared/bench/gen_traj.py (relative to the repository root, i.e.
/work/shared/bench/gen_traj.py in the usual checkout) to generate its inputs.
Benchmarks may read ../shared; tests may not. Override the generator with
--gen PATH or the SIMREC_GEN_TRAJ environment variable (a relative path is
taken relative to the repository root).

What it does:
  1. `nice -n 10 cargo build --release` (waits on the build lock if another
     build holds it; the machine is shared);
  2. generates deterministic legacy inputs into bench-data/ (gitignored) when
     missing: bench-data/legacy-w{WATERS}-f{FRAMES}.traj/.state for each
     --frames size (default 1000, 3000, 9000 frames of 1000 waters: ~36, ~110,
     ~330 MB; the same files bench/nanover_legacy.sh uses), then converts each
     pair with the freshly built simrec into bench-data/nanover-w{W}-f{F}.nanover.zip
     (always redone, so the input matches the writer being measured) and checks
     it with `simrec validate`;
  3. runs, on each size, each once to warm up and then --repeat (3) times:
       convert .traj+.state → .nanover.zip   (legacy → zip, the migration)
       inspect Z                             (index only, plus the CRC-32 of both members)
       validate Z                            (every message decoded, every rule checked)
       inspect --deep Z                      (every message decoded, keys/dtypes/shapes)
       convert Z → .nanover.zip              (same format)
       convert Z → .traj+.state              (zip → legacy; exits 3: ints stored as doubles)
       convert Z → .jsonl
       slice Z --start F/100 s --end F/50 s → .nanover.zip (the middle 30%: 30s..60s for 3000 frames)
       NanoVer's reader: a full decode of Z in Python (see "Baseline" below)
     writing outputs with --force into bench-data/out/zip-*;
  4. prints Markdown tables: median wall time, throughput (MB/s of the input
     file), median CPU time (user+sys), peak RSS, the index's size per message,
     and the issue's targets (met / missed).

Timing is warm-cache: the page cache cannot be dropped here, so inputs are
served from memory after the warm-up run. Wall time is measured around
spawn+wait of a fresh child, and CPU time (user+sys) comes from that child's
own rusage (os.wait4). Peak RSS comes from separate runs under GNU time
(/usr/bin/time -f %M: the warm-up run and one after the timed runs, the larger
is reported), because a child forked from Python inherits Python's RSS as its
high-water mark. The floors are given too: `simrec --version`, and a Python
that only imports msgpack and numpy.

Baseline: NanoVer's own reader (nanover-server 0.1.3018, unpacked from its
wheel into --upstream DIR, default $NANOVER_WHEEL or /tmp/nvwheel). The wheel
declares Python >= 3.13, so on an older Python two things are done in memory
only, in the child process that runs the decode (no upstream code is copied
into this repository, and the reading code itself runs unchanged):
  - the packages nanover, nanover.recording, nanover.trajectory and
    nanover.utilities are registered as bare packages, so their __init__.py
    files (which import the server, websocket and psutil) are not run;
    nanover.trajectory.FrameData is set from nanover/trajectory/frame_wrapper.py;
  - before Python 3.12, a PEP 695 class header (`class PackingPair[U, P]:` in
    nanover/utilities/packing.py) is compiled as
    `class PackingPair(typing.Generic[U, P]):`, with U and P made TypeVars.
The decode is upstream's iter_recording_file() loop: MessageZipReader.from_path,
then for every index entry reader.get_message_from_entry(entry), with
FrameData.unpack_from_dict(message["frame"]) for frames and
DictionaryChange.from_dict(message["state"]) for states. When the wheel cannot
be loaded, `--baseline plain` (also the fallback of `auto`) does the same with
zipfile + msgpack.unpackb + numpy.frombuffer by upstream's dtype table. Either
needs msgpack and numpy; without them the baseline is skipped with a message.
The baseline's row gives the child's process wall time (interpreter start and
imports included) and, separately, the decode alone as timed inside the child
(open the zip → last message), the number to compare with the issue's figure.

Units: MB = 10^6 bytes, GB/s = 1000 MB/s, RSS in MiB (2^20 bytes).

Usage (bench/nanover_zip.sh runs this script from the repository root):
  bench/nanover_zip.sh
  bench/nanover_zip.sh --repeat 5 --frames 3000 --only validate,baseline
  bench/nanover_zip.sh --markdown bench-data/zip-results.md --json bench-data/zip-results.json

Python 3.11 standard library only (msgpack and numpy for the baseline only).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
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
    target_dir,
)

DEFAULT_GEN = "../shared/bench/gen_traj.py"  # relative to REPO
DEFAULT_UPSTREAM = "/tmp/nvwheel"

# Targets, from the issue's Performance section (this 2-core machine).
CONVERT_TARGET_S_PER_110MB = 0.4  # legacy → zip of 110 MB: target ≤ 0.4 s
UPSTREAM_CONVERTER_S_110MB = 3.8  # upstream's nanover-convert-recording on 110 MB
ISSUE_UPSTREAM_MB_S = 700.0  # NanoVer's reader: 95.7 MB in ~0.14 s, as the issue measured it
ISSUE_UPSTREAM_RSS_MIB = 38.0
RSS_MAX_MIB = 64.0  # the spine's limit for legacy files, kept as the reference here


# --------------------------------------------------------------------------
# The baseline's child process: NanoVer's reader (or its plain equivalent).
# Only this part imports msgpack and numpy, and only in the child.
# --------------------------------------------------------------------------

def load_upstream(wheel: Path):
    """Imports nanover.recording.reading from an unpacked wheel; returns (reading, FrameData, DictionaryChange)."""
    import importlib.abc
    import importlib.machinery
    import importlib.util
    import re
    import types

    pep695 = re.compile(r"^class (\w+)\[([\w, ]+)\]:", re.M)

    class Loader(importlib.machinery.SourceFileLoader):
        def source_to_code(self, data, path, *, _optimize=-1):  # noqa: D401
            src = data.decode("utf-8")
            if sys.version_info < (3, 12):
                def generic(m):
                    # One line, so tracebacks keep upstream's line numbers.
                    tvs = ", ".join(f"({n.strip()} := __import__('typing').TypeVar({n.strip()!r}))"
                                    for n in m.group(2).split(","))
                    return f"class {m.group(1)}(__import__('typing').Generic[{tvs}]):"
                src = pep695.sub(generic, src)
            return compile(src, path, "exec", dont_inherit=True)

        def get_code(self, fullname):
            # Always from source: never read a bytecode cache compiled without the rewrite,
            # never write the rewritten code into the wheel's __pycache__.
            path = self.get_filename(fullname)
            return self.source_to_code(self.get_data(path), path)

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if not name.startswith("nanover."):
                return None
            f = wheel / (name.replace(".", "/") + ".py")
            if not f.is_file():
                return None
            return importlib.util.spec_from_file_location(name, f, loader=Loader(name, str(f)))

    if not (wheel / "nanover" / "recording" / "reading.py").is_file():
        raise ImportError(f"no nanover/recording/reading.py under {wheel}")
    sys.meta_path.insert(0, Finder())
    for name in ("nanover", "nanover.recording", "nanover.trajectory", "nanover.utilities"):
        m = types.ModuleType(name)
        m.__path__ = [str(wheel / name.replace(".", "/"))]
        sys.modules[name] = m
    from nanover.trajectory.frame_wrapper import FrameData
    sys.modules["nanover.trajectory"].FrameData = FrameData
    from nanover.recording import reading
    from nanover.utilities.change_buffers import DictionaryChange
    return reading, FrameData, DictionaryChange


def decode_upstream(path: str, wheel: Path) -> dict:
    reading, FrameData, DictionaryChange = load_upstream(wheel)
    messages = frames = states = array_bytes = 0
    t0, c0 = time.perf_counter(), time.process_time()
    # upstream's iter_recording_file(), with counting added.
    with reading.MessageZipReader.from_path(path) as reader:
        for entry in reader:
            message = reader.get_message_from_entry(entry)
            messages += 1
            if "frame" in message:
                frame = FrameData.unpack_from_dict(message["frame"])
                frames += 1
                array_bytes += sum(getattr(v, "nbytes", 0) for v in frame.frame_dict.values())
            if "state" in message:
                DictionaryChange.from_dict(message["state"])
                states += 1
    return {"decode_s": time.perf_counter() - t0, "decode_cpu_s": time.process_time() - c0, "messages": messages, "frames": frames,
            "states": states, "array_bytes": array_bytes}


def decode_plain(path: str) -> dict:
    """zipfile + msgpack + numpy, following upstream's FRAME_PACKERS table; no upstream code."""
    import zipfile

    import msgpack
    import numpy as np

    f32x3 = (np.float32, (-1, 3))
    table = {
        "particle.positions": f32x3, "particle.velocities": f32x3, "particle.forces": f32x3,
        "particle.forces.system": f32x3, "system.box.vectors": f32x3, "forces.user.sparse": f32x3,
        "particle.elements": (np.uint8, (-1,)), "bond.orders": (np.uint8, (-1,)),
        "particle.colors": (np.uint8, (-1, 4)), "particle.residues": (np.uint32, (-1,)),
        "residue.chains": (np.uint32, (-1,)), "forces.user.index": (np.uint32, (-1,)),
        "bond.pairs": (np.uint32, (-1, 2)),
    }
    forced_int = {"frame.index", "particle.count", "residue.count", "chain.count"}
    messages = frames = states = array_bytes = 0
    t0, c0 = time.perf_counter(), time.process_time()
    with zipfile.ZipFile(path) as zf:
        index = msgpack.unpackb(zf.read("index.msgpack"))
        with zf.open("messages.msgpack") as mf:
            for entry in index:
                mf.seek(entry["offset"])
                message = msgpack.unpackb(mf.read(entry["length"]))
                messages += 1
                frame = message.get("frame")
                if frame is not None:
                    frames += 1
                    for k, v in frame.items():
                        if k in table:
                            dtype, shape = table[k]
                            a = (np.frombuffer(v, dtype=dtype) if isinstance(v, bytes)
                                 else np.fromiter(v, dtype=dtype)).reshape(shape)
                            array_bytes += a.nbytes
                        elif k in forced_int:
                            int(v)
                if message.get("state") is not None:
                    states += 1
    return {"decode_s": time.perf_counter() - t0, "decode_cpu_s": time.process_time() - c0, "messages": messages, "frames": frames,
            "states": states, "array_bytes": array_bytes}


def decode_child(kind: str, path: str, wheel: Path) -> int:
    """Runs in the child: prints one JSON line with the decode's own timing and counts."""
    if kind == "imports":  # the floor: an interpreter with msgpack and numpy loaded
        import msgpack  # noqa: F401
        import numpy  # noqa: F401
        print(json.dumps({"decode_s": 0.0, "decode_cpu_s": 0.0}))
        return 0
    result = decode_upstream(path, wheel) if kind == "upstream" else decode_plain(path)
    print(json.dumps(result))
    return 0


def baseline_kinds(choice: str, wheel: Path) -> tuple[list[str], list[str]]:
    """(baselines to run, messages about the ones skipped), probing in a child process."""
    notes = []
    probe = subprocess.run([sys.executable, "-B", "-c", "import msgpack, numpy"], capture_output=True, text=True)
    if probe.returncode != 0:
        return [], ["baseline skipped: msgpack and numpy are not importable "
                    f"({probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else 'import failed'}); "
                    "`pip install msgpack numpy` to run it"]
    wanted = ["upstream", "plain"] if choice == "both" else [choice]
    kinds = []
    for k in wanted:
        if k in ("upstream", "auto"):
            code = ("import sys; sys.path.insert(0, sys.argv[1]); import nanover_zip as b; "
                    "from pathlib import Path; b.load_upstream(Path(sys.argv[2]))")
            # -B: importing this file as a module must not leave bench/__pycache__ behind.
            p = subprocess.run([sys.executable, "-B", "-c", code, str(REPO / "bench"), str(wheel)],
                               capture_output=True, text=True)
            if p.returncode == 0:
                kinds.append("upstream")
                continue
            last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "import failed"
            if k == "upstream":
                notes.append(f"upstream baseline skipped: cannot load NanoVer's reader from {wheel} ({last})")
                continue
            notes.append(f"NanoVer's reader cannot be loaded from {wheel} ({last}): "
                         "using the plain zipfile+msgpack+numpy equivalent instead")
            kinds.append("plain")
        else:
            kinds.append("plain")
    return kinds, notes


# --------------------------------------------------------------------------
# The benchmark.
# --------------------------------------------------------------------------

def make_zip(binary: Path, legacy: Path, data: Path, waters: int, frames: int) -> tuple[Path, dict]:
    """Converts the legacy pair to bench-data/nanover-wW-fF.nanover.zip; returns it and its inspect facts."""
    z = data / f"nanover-w{waters}-f{frames}.nanover.zip"
    tmp = data / f".conv-{os.getpid()}-f{frames}.nanover.zip"
    log(f"converting {legacy.name}.traj/.state → {z.name}")
    subprocess.run([str(binary), "convert", str(legacy.with_suffix(".traj")),
                    str(legacy.with_suffix(".state")), "-o", str(tmp), "--force"],
                   cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.replace(tmp, z)
    v = subprocess.run([str(binary), "validate", str(z)], cwd=REPO, capture_output=True, text=True)
    if v.returncode != 0:
        sys.exit(f"`simrec validate {z}` exited {v.returncode} on simrec's own conversion:\n{v.stdout}{v.stderr}")
    p = subprocess.run([str(binary), "inspect", "--format", "json", str(z)], cwd=REPO,
                       capture_output=True, text=True, check=True)
    return z, json.loads(p.stdout.splitlines()[0])


def commands(legacy: Path, z: Path, out: Path, frames: int, binary: Path,
             baselines: list[str], wheel: Path) -> list[dict]:
    """The rows for one input size: name, family (for --only), argv, input, outputs, expected exit."""
    traj, state = str(legacy.with_suffix(".traj")), str(legacy.with_suffix(".state"))
    legacy_bytes = legacy.with_suffix(".traj").stat().st_size + legacy.with_suffix(".state").stat().st_size
    zip_bytes = z.stat().st_size
    tag = f"f{frames}"
    # Frames are 33.333 ms apart, so the recording lasts ~frames/30 s; the middle 30%.
    start, end = f"{frames / 100:g}s", f"{frames / 50:g}s"
    b = str(binary)

    def row(name, family, args, outputs=(), input_bytes=zip_bytes, exit_ok=(0,)):
        return {"command": name, "family": family, "argv": [b, *args], "shown": ["simrec", *args],
                "outputs": list(outputs), "input_bytes": input_bytes, "exit_ok": exit_ok}

    rows = [
        row("convert .traj+.state → .nanover.zip", "convert",
            ["convert", traj, state, "-o", str(out / f"zip-legacy2zip-{tag}.nanover.zip"), "--force"],
            [out / f"zip-legacy2zip-{tag}.nanover.zip"], input_bytes=legacy_bytes),
        row("inspect (index + CRC)", "inspect", ["inspect", str(z)]),
        row("validate", "validate", ["validate", str(z)]),
        row("inspect --deep", "inspect", ["inspect", "--deep", str(z)]),
        row("convert → .nanover.zip", "convert",
            ["convert", str(z), "-o", str(out / f"zip-zip2zip-{tag}.nanover.zip"), "--force"],
            [out / f"zip-zip2zip-{tag}.nanover.zip"]),
        # Exit 3 is expected: frame.index and particle.count are integers, which legacy stores as doubles.
        row("convert → .traj+.state", "convert",
            ["convert", str(z), "-o", str(out / f"zip-zip2legacy-{tag}.traj"), "--force"],
            [out / f"zip-zip2legacy-{tag}.traj", out / f"zip-zip2legacy-{tag}.state"], exit_ok=(3,)),
        row("convert → .jsonl", "convert",
            ["convert", str(z), "-o", str(out / f"zip-zip2jsonl-{tag}.jsonl"), "--force"],
            [out / f"zip-zip2jsonl-{tag}.jsonl"]),
        row(f"slice {start}..{end} → .nanover.zip", "slice",
            ["slice", str(z), "--start", start, "--end", end,
             "-o", str(out / f"zip-slice-{tag}.nanover.zip"), "--force"],
            [out / f"zip-slice-{tag}.nanover.zip"]),
    ]
    for kind in baselines:
        label = ("NanoVer reader (Python, upstream code)" if kind == "upstream"
                 else "plain zipfile+msgpack+numpy (Python)")
        rows.append({
            "command": label, "family": "baseline", "baseline": kind,
            "argv": [sys.executable, "-B", str(Path(__file__).resolve()), "--decode-child", kind, str(z),
                     "--upstream", str(wheel)],
            "shown": ["python3", "bench/nanover_zip.py", "--decode-child", kind, str(z)],
            "outputs": [], "input_bytes": zip_bytes, "exit_ok": (0,),
        })
    return rows


def tail(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def measure(spec: dict, repeat: int, log_path: Path) -> dict:
    """One warm-up/RSS run, `repeat` timed runs, one more RSS run. Records failures instead of stopping."""
    argv = spec["argv"]
    res = {k: v for k, v in spec.items() if k not in ("argv", "outputs", "exit_ok")}
    res["failure"] = None
    rss = []
    kib, code = peak_rss_kib(argv, log_path)  # also warms the page cache
    if code not in spec["exit_ok"]:
        res["failure"] = f"`{' '.join(spec['shown'])}` exited {code}:\n{tail(log_path)}"
        return res
    rss.append(kib)
    runs = []
    child_out = log_path.with_suffix(".stdout") if spec["family"] == "baseline" else None
    for _ in range(repeat):
        r = run_once(argv, log_path, child_out)
        if r["exit"] not in spec["exit_ok"]:
            res["failure"] = f"`{' '.join(spec['shown'])}` exited {r['exit']}:\n{tail(log_path)}"
            return res
        if child_out:
            r["child"] = json.loads(child_out.read_text().splitlines()[-1])
        runs.append(r)
    kib, code = peak_rss_kib(argv, log_path)
    rss.append(kib)
    wall = statistics.median(r["wall_s"] for r in runs)
    res.update({
        "exit": runs[-1]["exit"],
        "stderr_tail": tail(log_path, 8),
        "output_bytes": sum(p.stat().st_size for p in spec["outputs"] if p.exists()),
        "wall_s_median": wall,
        "wall_s_min": min(r["wall_s"] for r in runs),
        "wall_s_max": max(r["wall_s"] for r in runs),
        "cpu_s_median": statistics.median(r["cpu_s"] for r in runs),
        "mb_s": spec["input_bytes"] / 1e6 / wall,
        "rss_mib_max": max(rss) / 1024,
        "rss_kib": rss,
        "runs": runs,
    })
    if child_out:
        res["decode_s_median"] = statistics.median(r["child"]["decode_s"] for r in runs)
        res["decode_mb_s"] = spec["input_bytes"] / 1e6 / res["decode_s_median"]
        res["decode_cpu_s_median"] = statistics.median(r["child"]["decode_cpu_s"] for r in runs)
        res["child"] = runs[-1]["child"]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gen", default=os.environ.get("SIMREC_GEN_TRAJ", DEFAULT_GEN),
                    help=f"gen_traj.py, relative to the repository root (default {DEFAULT_GEN})")
    ap.add_argument("--data", default="bench-data", help="inputs and outputs (default bench-data/)")
    ap.add_argument("--waters", type=int, default=1000)
    ap.add_argument("--frames", default="1000,3000,9000",
                    help="comma-separated input sizes in frames (default 1000,3000,9000)")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per command (default 3)")
    ap.add_argument("--only", default="",
                    help="comma-separated: convert,inspect,validate,slice,baseline")
    ap.add_argument("--baseline", default="auto", choices=["auto", "upstream", "plain", "both", "none"],
                    help="the Python baseline: NanoVer's reader from --upstream (auto: fall back to "
                         "plain when it cannot be loaded), the plain msgpack+numpy equivalent, both, or none")
    ap.add_argument("--upstream", default=os.environ.get("NANOVER_WHEEL", DEFAULT_UPSTREAM),
                    help=f"unpacked nanover-server wheel (default $NANOVER_WHEEL or {DEFAULT_UPSTREAM})")
    ap.add_argument("--no-build", action="store_true", help="use target/release/simrec as it is")
    ap.add_argument("--markdown", help="also write the report to this file")
    ap.add_argument("--json", help="also write every run's numbers to this file")
    ap.add_argument("--decode-child", nargs=2, metavar=("KIND", "ZIP"), help=argparse.SUPPRESS)
    a = ap.parse_args()

    wheel = Path(a.upstream)
    if a.decode_child:
        return decode_child(a.decode_child[0], a.decode_child[1], wheel)

    gen = resolve_repo_path(a.gen)
    require_generator(gen)
    data = resolve_repo_path(a.data)
    out = data / "out"
    logs = data / "logs"
    for d in (data, out, logs):
        d.mkdir(parents=True, exist_ok=True)
    sizes = [int(x) for x in a.frames.split(",") if x.strip()]
    only = {x.strip() for x in a.only.split(",") if x.strip()}

    binary = (target_dir() / "release" / "simrec") if a.no_build else build()
    info = machine_info()
    baselines, notes = ([], []) if a.baseline == "none" or (only and "baseline" not in only) \
        else baseline_kinds(a.baseline, wheel)
    for n in notes:
        log(n)
    info["baseline_notes"] = notes
    legacy = {f: ensure_legacy(gen, data, a.waters, f) for f in sizes}
    zips = {f: make_zip(binary, legacy[f], data, a.waters, f) for f in sizes}

    floor_kib, _ = peak_rss_kib([str(binary), "--version"], logs / "zip-version.stderr")
    info["rss_floor_mib"] = floor_kib / 1024
    info["rss_method"] = "GNU time %M" if GNU_TIME else "os.wait4 ru_maxrss (upper bound: includes Python's RSS)"
    if baselines:
        kib, _ = peak_rss_kib([sys.executable, "-B", str(Path(__file__).resolve()), "--decode-child", "imports", "-"],
                              logs / "zip-python-floor.stderr")
        info["python_floor_mib"] = kib / 1024

    inputs = []
    for f in sizes:
        z, facts = zips[f]
        members = {m["name"]: m for m in facts.get("zip", {}).get("members", [])}
        idx = members.get("index.msgpack", {}).get("size_bytes", 0)
        inputs.append({
            "frames": f,
            "legacy_bytes": legacy[f].with_suffix(".traj").stat().st_size
            + legacy[f].with_suffix(".state").stat().st_size,
            "zip_bytes": z.stat().st_size,
            "messages": facts.get("messages"),
            "messages_member_bytes": members.get("messages.msgpack", {}).get("size_bytes", 0),
            "index_bytes": idx,
            "index_bytes_per_message": idx / facts["messages"] if facts.get("messages") else None,
            "duration_s": facts.get("duration_ns", 0) / 1e9,
        })

    results = []
    for f in sizes:
        for k, spec in enumerate(commands(legacy[f], zips[f][0], out, f, binary, baselines, wheel)):
            if only and spec["family"] not in only:
                continue
            log(f"f{f} {spec['command']}: 1 warm-up/RSS run, {a.repeat} timed runs, 1 more RSS run")
            r = measure(spec, a.repeat, logs / f"zip-f{f}-{k}-{spec['family']}.stderr")
            r["frames"] = f
            if r["failure"]:
                log("  FAILED: " + r["failure"])
            elif r["family"] == "baseline":
                c, inp = r["child"], next(i for i in inputs if i["frames"] == f)
                if c["messages"] != inp["messages"]:
                    r["failure"] = (f"the baseline read {c['messages']} messages, "
                                    f"simrec inspect says {inp['messages']}")
                    log("  MISMATCH: " + r["failure"])
            results.append(r)
    info["loadavg_end"] = os.getloadavg()

    report = render(results, inputs, info, a, gen, wheel)
    print(report)
    if a.markdown:
        Path(a.markdown).write_text(report + "\n")
    if a.json:
        Path(a.json).write_text(json.dumps({"machine": info, "inputs": inputs, "results": results},
                                           indent=1, default=str) + "\n")
    return 1 if any(r["failure"] for r in results) else 0


def render(results: list[dict], inputs: list[dict], info: dict, a, gen: Path, wheel: Path) -> str:
    L = []
    ok = [r for r in results if not r["failure"]]
    L.append(f"## simrec NanoVer .nanover.zip benchmark (warm cache, median of {a.repeat} runs)")
    L.append("")
    L.append(f"- machine: {info['nproc']} CPUs, {info['cpu']}, Linux {info['kernel']}; Python {info['python']}")
    dirty = f" (uncommitted changes: {', '.join(x.split(maxsplit=1)[-1] for x in info['dirty_files'])})" if info["dirty"] else ""
    L.append(f"- {info['rustc']}; simrec {info['commit']}{dirty}")
    la, lb = info["loadavg"], info["loadavg_end"]
    L.append(f"- load average (1/5/15 min) at start {la[0]:.2f}/{la[1]:.2f}/{la[2]:.2f}, "
             f"at end {lb[0]:.2f}/{lb[1]:.2f}/{lb[2]:.2f}")
    L.append(f"- inputs: {gen} --waters {a.waters} --frames N (.traj + .state), converted by "
             "`simrec convert` to .nanover.zip; MB = 10^6 bytes")
    L.append(f"- peak RSS via {info['rss_method']}; floor (`simrec --version`): {info['rss_floor_mib']:.1f} MiB"
             + (f"; Python with msgpack+numpy imported: {info['python_floor_mib']:.1f} MiB"
                if "python_floor_mib" in info else ""))
    for n in info.get("baseline_notes", []):
        L.append(f"- {n}")

    L.append("")
    L.append("### Inputs")
    L.append("")
    L.append("| frames | legacy pair MB | .nanover.zip MB | messages | messages.msgpack MB | index.msgpack | index bytes/message | duration |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i in inputs:
        bpm = f"{i['index_bytes_per_message']:.1f}" if i["index_bytes_per_message"] else "–"
        L.append(f"| {i['frames']} | {i['legacy_bytes'] / 1e6:.1f} | {i['zip_bytes'] / 1e6:.1f} | {i['messages']} "
                 f"| {i['messages_member_bytes'] / 1e6:.1f} | {i['index_bytes'] / 1e3:.0f} kB | {bpm} "
                 f"| {i['duration_s']:.0f} s |")

    L.append("")
    L.append("### Results")
    L.append("")
    L.append("| frames | input MB | command | wall (median) | wall min–max | CPU user+sys | input MB/s | peak RSS | output MB |")
    L.append("|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        if r["failure"]:
            L.append(f"| {r['frames']} | {r['input_bytes'] / 1e6:.1f} | {r['command']} | FAILED | | | | | |")
            continue
        outmb = f"{r['output_bytes'] / 1e6:.1f}" if r["output_bytes"] else "–"
        name = r["command"] + (" (exit 3, loss report)" if r.get("exit") == 3 else "")
        L.append(
            f"| {r['frames']} | {r['input_bytes'] / 1e6:.1f} | {name} | {fmt_ms(r['wall_s_median'])} "
            f"| {fmt_ms(r['wall_s_min'])}–{fmt_ms(r['wall_s_max'])} | {fmt_ms(r['cpu_s_median'])} "
            f"| {r['mb_s']:,.0f} | {r['rss_mib_max']:.1f} MiB | {outmb} |"
        )
        if r["family"] == "baseline":
            L.append(f"| {r['frames']} | {r['input_bytes'] / 1e6:.1f} | ↳ its decode alone (timed in the child) "
                     f"| {fmt_ms(r['decode_s_median'])} | | {fmt_ms(r['decode_cpu_s_median'])} "
                     f"| {r['decode_mb_s']:,.0f} | | |")

    # Full decode: simrec against the baseline, per size.
    sizes = sorted({r["frames"] for r in results})
    # The upstream reader when it ran, else the plain equivalent.
    base = {r["frames"]: r for r in ok if r.get("baseline") == "plain"}
    base.update({r["frames"]: r for r in ok if r.get("baseline") == "upstream"})
    if base:
        L.append("")
        L.append("### Full decode: simrec against NanoVer's reader")
        L.append("")
        L.append("simrec's times are the whole process (start-up included); the baseline's are its decode "
                 "alone, timed inside the child (interpreter start and imports left out): the comparison "
                 "least favourable to simrec. Wall time depends on the other work on the machine; CPU "
                 "time (user+sys; `time.process_time()` in the child) much less.")
        L.append("")
        L.append("| frames | zip MB | baseline | decode wall | decode CPU | simrec validate wall / CPU | × wall | × CPU "
                 "| simrec inspect --deep wall / CPU | × wall | × CPU |")
        L.append("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for f in sizes:
            b = base.get(f)
            if not b:
                continue
            cells = []
            for name in ("validate", "inspect --deep"):
                r = next((x for x in ok if x["frames"] == f and x["command"] == name), None)
                cells += ([f"{fmt_ms(r['wall_s_median'])} ({r['mb_s']:,.0f} MB/s) / {fmt_ms(r['cpu_s_median'])}",
                           f"{b['decode_s_median'] / r['wall_s_median']:.1f}×",
                           f"{b['decode_cpu_s_median'] / r['cpu_s_median']:.1f}×"] if r else ["–", "–", "–"])
            L.append(f"| {f} | {b['input_bytes'] / 1e6:.1f} | {b['baseline']} | {fmt_ms(b['decode_s_median'])} "
                     f"({b['decode_mb_s']:,.0f} MB/s) | {fmt_ms(b['decode_cpu_s_median'])} | " + " | ".join(cells) + " |")

    def row_key(r):
        return "slice (middle 30%) → .nanover.zip" if r["command"].startswith("slice") else r["command"]

    if len(sizes) > 1:
        L += rss_by_size(ok, sizes, row_key, lambda s: (
            f"{s} frames ({next(i['zip_bytes'] for i in inputs if i['frames'] == s) / 1e6:.0f} MB zip)"))

    # Targets (the issue's Performance section).
    L.append("")
    L.append("### Targets")
    L.append("")
    L.append("| target | measured | verdict |")
    L.append("|---|---|---|")
    for r in ok:
        if r["command"].startswith("convert .traj+.state"):
            target = CONVERT_TARGET_S_PER_110MB * r["input_bytes"] / 110e6
            met = r["wall_s_median"] <= target
            L.append(f"| legacy → zip ≤ 0.4 s per 110 MB ({r['frames']} frames: ≤ {fmt_ms(target)}); "
                     f"upstream's converter: 3.8 s for 110 MB | {fmt_ms(r['wall_s_median'])} for "
                     f"{r['input_bytes'] / 1e6:.0f} MB ({r['mb_s']:,.0f} MB/s; CPU {fmt_ms(r['cpu_s_median'])}) "
                     f"| {'met' if met else 'MISSED'} ({target / r['wall_s_median']:.2f}× the target's speed; "
                     f"{UPSTREAM_CONVERTER_S_110MB * r['input_bytes'] / 110e6 / r['wall_s_median']:.1f}× "
                     "upstream's converter) |")
    for r in ok:
        if r["command"] in ("validate", "inspect --deep"):
            b = base.get(r["frames"])
            ref = b["decode_mb_s"] if b else ISSUE_UPSTREAM_MB_S
            what = "the baseline's decode here" if b else "the issue's 700 MB/s"
            x = r["mb_s"] / ref
            verdict = "met, ≥ 2× (ideal)" if x >= 2 else "met (< 2×, the ideal)" if x >= 1 else "MISSED"
            cpu = (f"; CPU {fmt_ms(r['cpu_s_median'])} vs {fmt_ms(b['decode_cpu_s_median'])}, "
                   f"{b['decode_cpu_s_median'] / r['cpu_s_median']:.1f}×") if b else ""
            L.append(f"| full decode ({r['command']}, {r['frames']} frames) ≥ NanoVer's reader, ideally ≥ 2× "
                     f"| {r['mb_s']:,.0f} MB/s vs {ref:,.0f} MB/s ({what}; issue: ~700 MB/s){cpu} "
                     f"| {verdict} ({x:.2f}× in wall time) |")
    simrec_ok = [r for r in ok if r["family"] != "baseline"]
    if simrec_ok:
        worst = max(simrec_ok, key=lambda r: r["rss_mib_max"])
        ratios = []
        for c in dict.fromkeys(row_key(r) for r in simrec_ok):
            vals = {r["frames"]: r["rss_mib_max"] for r in simrec_ok if row_key(r) == c}
            if len(vals) > 1:
                ratios.append(vals[max(vals)] / vals[min(vals)])
        grow = f"; largest ÷ smallest input, worst command: {max(ratios):.2f}×" if ratios else ""
        met = worst["rss_mib_max"] <= RSS_MAX_MIB
        L.append(f"| peak RSS bounded independently of input size (≤ {RSS_MAX_MIB:.0f} MiB, the spine's limit) "
                 f"| highest: {worst['rss_mib_max']:.1f} MiB ({worst['command']}, {worst['frames']} frames){grow} "
                 f"| {'met' if met else 'MISSED'} |")
    fails = [r for r in results if r["failure"]]
    if fails:
        L.append("")
        L.append("### Failures")
        L.append("")
        for r in fails:
            L.append(f"- {r['frames']} frames, {r['command']}:")
            L.append("")
            L.append("  ```")
            L.extend("  " + line for line in r["failure"].splitlines())
            L.append("  ```")
    return "\n".join(L)


if __name__ == "__main__":
    sys.exit(main())

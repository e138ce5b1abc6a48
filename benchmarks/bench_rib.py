"""rib-analysis ingest + classify vs `bgpdump -m` and mrtparse, against the `bzip2 -dc` floor.

Files: the RouteViews jinx dump (../shared/data) and, unless --quick, the full-size synthetic
RIB of ../shared/tools/gen_synth_rib.py, generated once into a cache outside the repository
(MAST_BENCH_CACHE, default /var/cache/mast-bench). Every tool runs as a child process so its
wall time and peak RSS (GNU time) are measured the same way. mrtparse (pure Python, ~10k entries/s)
runs on a bounded number of records and its rate is reported per entry.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
JINX = SHARED / "data" / "ribs" / "rv-route-views.jinx-rib.1401487200.bz2"
GENERATOR = SHARED / "tools" / "gen_synth_rib.py"
CACHE = Path(os.environ.get("MAST_BENCH_CACHE", "/var/cache/mast-bench"))
SYNTH = CACHE / "synth-rib.mrt.bz2"
PY = sys.executable
TIME = "/usr/bin/time"  # GNU time (Debian package `time`): per-child peak RSS
GOAL_RATIO = 2.0
GOAL_RSS = 2 << 30

MRTPARSE = """
import sys, mrtparse
limit = int(sys.argv[2]); n = e = 0
for m in mrtparse.Reader(sys.argv[1]):
    n += 1
    e += len(m.data.get("rib_entries") or ())
    if n >= limit:
        break
print(e)
"""


@dataclass
class Run:
    wall: float
    cpu: float  # user + sys of the child and its threads
    rss: int  # bytes
    stdout: bytes


def run(cmd: list[str], *, stdout_null: bool = False) -> Run:
    """Run `cmd` as a child; its peak RSS comes from GNU time, which forks from a small process.

    wait4's ru_maxrss is no good here: a child spawned straight from this (large) interpreter
    carries the interpreter's high-water RSS across exec, so every tool would show ours.
    """
    with tempfile.NamedTemporaryFile("r", prefix="bench-rss-") as rss_file:
        t0 = time.monotonic()
        proc = subprocess.Popen(
            [TIME, "-f", "%M", "-o", rss_file.name, *cmd],
            stdout=subprocess.DEVNULL if stdout_null else subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        out = b"" if stdout_null else proc.stdout.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 2):  # bzip2 exits 2 on a truncated file, after the data
            raise RuntimeError(f"{cmd[0]} exited {proc.returncode}")
        # GNU time writes "Command exited with non-zero status N" before the figure when N != 0.
        peak_kib = int(rss_file.read().split()[-1])
    return Run(wall, usage.ru_utime + usage.ru_stime, peak_kib * 1024, out)


def ensure_synth() -> Path | None:
    if SYNTH.exists():
        return SYNTH
    if not GENERATOR.exists():
        print(f"  (no {GENERATOR}: synthetic RIB skipped)")
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    raw = CACHE / "synth-rib.mrt"
    interp = shutil.which("pypy3") or PY
    print(f"  generating {SYNTH} with {Path(interp).name} (once; ~30 s with pypy3, ~6 min without)")
    subprocess.run(
        [interp, str(GENERATOR), str(raw), "--truth", str(CACHE / "synth-rib.truth.json")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    tmp = SYNTH.with_suffix(".tmp")
    with tmp.open("wb") as f:
        subprocess.run(["bzip2", "-9", "-c", str(raw)], stdout=f, check=True)
    tmp.rename(SYNTH)
    raw.unlink()
    return SYNTH


def bench_file(path: Path, reps: int, mrtparse_records: int) -> bool:
    print(
        f"--- {path.name} ({path.stat().st_size / 1e6:.1f} MB); best of {reps} for floor and ours"
    )
    ours_cmd = [
        str(Path(PY).with_name("rib-analysis")),
        "--log-level",
        "error",
        "classify",
        str(path),
        "--format",
        "json",
    ]
    floor_cmd = ["bzip2", "-dc", str(path)]
    # Interleaved, so a burst of load on the shared machine hits both sides alike.
    floor_runs, our_runs = [], []
    for _ in range(reps):
        floor_runs.append(run(floor_cmd, stdout_null=True))
        our_runs.append(run(ours_cmd))
    floor = min(floor_runs, key=lambda r: r.wall)
    ours = min(our_runs, key=lambda r: r.wall)
    print(f"  floor  bzip2 -dc                 {floor.wall:8.2f} s  (cpu {floor.cpu:.2f} s)")
    if shutil.which("lbzip2"):
        lb = run(["lbzip2", "-dc", "-n2", str(path)], stdout_null=True)
        print(f"  (info) lbzip2 -dc -n2            {lb.wall:8.2f} s  (cpu {lb.cpu:.2f} s)")
    doc = json.loads(ours.stdout)
    entries = doc["entries"]
    rows = [("rib-analysis classify", ours, entries)]
    if shutil.which("bgpdump"):
        rows.append(("bgpdump -m", run(["bgpdump", "-m", str(path)], stdout_null=True), entries))
    mp = run([PY, "-c", MRTPARSE, str(path), str(mrtparse_records)])
    rows.append((f"mrtparse ({mrtparse_records:,} records)", mp, int(mp.stdout)))
    ours_rate = entries / ours.wall
    print(
        f"  {'tool':34}{'wall s':>9}{'cpu s':>8}{'entries':>12}{'entries/s':>12}{'vs ours':>9}"
        f"{'peak RSS':>10}"
    )
    for name, r, n in rows:
        rate = n / r.wall
        print(
            f"  {name:34}{r.wall:9.2f}{r.cpu:8.2f}{n:12,}{rate:12,.0f}{ours_rate / rate:8.1f}x"
            f"{r.rss / 2**20:8.0f} MB"
        )
    ratio = ours.wall / floor.wall
    ok = ratio <= GOAL_RATIO and ours.rss < GOAL_RSS
    print(
        f"  classify / bzip2 -dc floor = {ratio:.2f} (goal <= {GOAL_RATIO}); "
        f"peak RSS {ours.rss / 2**20:.0f} MB (goal < 2048 MB): {'MET' if ok else 'MISSED'}"
    )
    print(
        f"  entries {entries:,}; ASes {doc['ases']['total']:,}; GRT {doc['grt']['today']:,} -> "
        f"{doc['grt']['mast']:,} under MAST"
    )
    return ok


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks rib", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="jinx dump only, mrtparse on 20k records"
    )
    args = parser.parse_args(argv)
    if not JINX.exists():
        print(f"no {JINX}: nothing to benchmark")
        return 0
    files = [JINX]
    if not args.quick:
        synth = ensure_synth()
        if synth:
            files.append(synth)
    for f in files:
        big = f.stat().st_size > 20e6
        bench_file(f, 1 if big else 3, 20_000 if args.quick else 50_000)
    return 0

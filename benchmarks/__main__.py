"""Run benchmarks: each benchmarks/bench_<name>.py has `main(argv: list[str]) -> int`.

Every benchmark compares against its named peer in the same run and prints ratios.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def available() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"default: all of {available()}")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, for smoke runs")
    args = parser.parse_args()
    names = args.names or available()
    failed = []
    for name in names:
        if name not in available():
            parser.error(f"no benchmark {name!r}; known: {available()}")
        print(f"=== benchmark {name}", flush=True)
        t0 = time.monotonic()
        module = importlib.import_module(f"benchmarks.bench_{name}")
        rc = module.main(["--quick"] if args.quick else [])
        print(f"=== {name}: exit {rc} in {time.monotonic() - t0:.1f} s", flush=True)
        if rc:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

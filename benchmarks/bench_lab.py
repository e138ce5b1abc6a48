"""Failover lab timings: the embedded lab (SRMS watches r1's BGP session on BIRD's control socket
and r1's SNMP traps) against its peer, the same lab with SRMS on SNMP traps only (the event
source a separate SRMS host has under containerlab; net-snmp's `monitor -r 1` polls each second).

Each round runs `mast-lab failover` end to end (bring-up, measure, tear-down) and reads its JSON.
Prints the median of every measurement and the peer/lab ratios for the control-plane timings.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

LABS = Path(__file__).resolve().parent.parent / "labs"
METRICS = (
    ("loss window (s)", lambda m: m["stream"]["loss_window_s"]),
    ("tunnel in use after cut (s)", lambda m: m["tunnel_in_use_after_cut_s"]),
    ("hosts deprecated (s)", lambda m: m.get("hosts_deprecated_s")),
    ("DNS without A-addresses (s)", lambda m: m.get("dns_stopped_s")),
    ("return to direct path (s)", lambda m: m["return_to_direct_s"]),
    ("TCP longest stall (s)", lambda m: m["tcp"]["longest_stall_s"]),
)


def snmp_only_copy(dest: Path) -> Path:
    """The embedded lab with SRMS's BIRD event source removed."""
    shutil.copytree(LABS / "configs", dest / "configs")
    lab = dest / "mast-failover.clab.yml"
    shutil.copy(LABS / "mast-failover.clab.yml", lab)
    srms = dest / "configs" / "srms" / "srms.toml"
    text = srms.read_text()
    text = text.replace(', bird_protocol = "a"', "")
    text = re.sub(r"\n\[bird\]\n[^\[]*", "\n", text)
    srms.write_text(text)
    return lab


def run_once(lab: Path, work: Path, n: int) -> tuple[dict[str, Any] | None, float, str]:
    out = work / f"out-{lab.parent.name}-{n}"
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "mast_lab.cli", "--run-root", str(work / "run"),
         "failover", str(lab), "--output", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    took = time.monotonic() - t0
    try:
        data = json.loads((out / "failover.json").read_text())
    except (OSError, ValueError):
        return None, took, proc.stdout[-2000:] + proc.stderr[-2000:]
    return data, took, ""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks lab", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="one round each instead of three")
    parser.add_argument("--rounds", type=int, default=0)
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory(prefix="bench-lab-") as tmp:
        work = Path(tmp)
        peer_dir = work / "snmp-only"
        peer_dir.mkdir()
        variants = {"lab (BIRD + SNMP)": LABS / "mast-failover.clab.yml",
                    "peer (SNMP only)": snmp_only_copy(peer_dir)}  # fmt: skip
        results: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
        wall: dict[str, list[float]] = {name: [] for name in variants}
        for n in range(rounds):
            for name, lab in variants.items():
                data, took, error = run_once(lab, work, n)
                if data is None:
                    print(f"{name}: round {n} produced no report:\n{error}")
                    return 69
                results[name].append(data["measurements"])
                wall[name].append(took)
                failed = [c["name"] for c in data["checks"] if c["status"] == "fail"]
                print(f"{name} round {n}: {took:.1f} s" + (f", failed: {failed}" if failed else ""))
    medians: dict[str, dict[str, float | None]] = {}
    print(f"\nmedians over {rounds} round(s)")
    print(f"{'measurement':32}" + "".join(f"{name:>22}" for name in variants))
    for label, get in METRICS:
        row = {}
        for name in variants:
            values = [get(m) for m in results[name]]
            numbers = [v for v in values if isinstance(v, int | float)]
            row[name] = statistics.median(numbers) if numbers else None
        medians[label] = row
        cells = "".join(f"{'—' if v is None else f'{v:.3f}':>22}" for v in row.values())
        print(f"{label:32}{cells}")
    cells = "".join(f"{statistics.median(w):>22.1f}" for w in wall.values())
    print(f"{'whole run incl. bring-up (s)':32}{cells}")
    lab_name, peer_name = list(variants)
    for label in ("hosts deprecated (s)", "DNS without A-addresses (s)"):
        ours, peer = medians[label][lab_name], medians[label][peer_name]
        if ours and peer:
            print(f"ratio peer/lab, {label}: {peer / ours:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

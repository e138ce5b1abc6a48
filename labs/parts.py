"""Which MAST components are present on this machine, detected at run time.

The lab runs the data plane (BIRD, BFD, backup tunnel) on its own; the control-plane parts
(SRMS, the Kea hook, mast-client, the Knot module, ITMP) are built by other parts of the toolkit
and join the lab when they are installed/built. Every measurement that needs an absent part is
reported as "not measured: <part> absent" instead of failing.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build"


@dataclass
class Part:
    name: str
    present: bool
    reason: str = ""
    path: str | None = None

    def describe(self) -> str:
        return f"{self.name}: {'present' if self.present else 'absent'}" + (
            f" ({self.reason})" if self.reason else ""
        )


@dataclass
class Parts:
    srms: Part
    kea_hook: Part
    mast_client: Part
    knot_module: Part
    itmp: Part

    def all(self) -> list[Part]:
        return [self.srms, self.kea_hook, self.mast_client, self.knot_module, self.itmp]

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {
            p.name: {"present": p.present, "reason": p.reason, "path": p.path} for p in self.all()
        }


def _shared_object(folder: str, stems: tuple[str, ...]) -> Path | None:
    root = BUILD / folder
    if not root.is_dir():
        return None
    for path in sorted(root.rglob("*.so")):
        if any(stem in path.name for stem in stems):
            return path
    return None


def _module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def detect() -> Parts:
    """Look for each part where its build or package puts it; never raises."""
    srms = _python_part("srms", "srms.daemon", "srms/ has no daemon yet", "srms")
    return Parts(
        srms=srms,
        kea_hook=_native_part("kea-hook", "dhcp-hooks", ("mast",), srms),
        mast_client=_python_part(
            "mast-client", "mast_client.listener", "no push client yet", "mast-client"
        ),
        knot_module=_native_part("knot-module", "dns-plugins", ("mod_mast",), srms),
        itmp=_itmp_part(),
    )


def _itmp_part() -> Part:
    # Only topologies whose nodes run itmp-* daemons use it (mast-failover-itmp.clab.yml): its
    # stub client provisions one border router holding both access links.
    for module in ("itmp.tms", "itmp.stub", "itmp.router.agent", "itmp.pki"):
        if not _module(module):
            return Part("itmp", False, f"{module} not installed")
    return Part("itmp", True, "", "python -m itmp")


def _native_part(name: str, folder: str, stems: tuple[str, ...], driver: Part) -> Part:
    lib = _shared_object(folder, stems)
    if lib is None:
        return Part(name, False, f"not built (nothing under {BUILD / folder})")
    if not driver.present:
        # Loaded but never driven it would prove nothing the failover measures.
        return Part(name, False, f"built ({lib.name}) but not loaded: {driver.name} absent")
    return Part(name, True, "", str(lib))


def _python_part(name: str, module: str, why_absent: str, command: str) -> Part:
    if not _module(module):
        return Part(name, False, why_absent)
    beside = Path(sys.executable).parent / command  # the virtualenv's console script
    path = str(beside) if beside.exists() else shutil.which(command)
    if path is None:
        return Part(name, False, f"{module} found but no {command} command")
    return Part(name, True, "", path)


def kernel_encapsulations() -> str:
    """What ITMP's router agent would offer on this kernel, in its own words (its probe makes a
    test link in a throw-away namespace); '' when ITMP is not installed."""
    try:
        from itmp.router.kernel import probe_encapsulations
    except ImportError:
        return ""
    try:
        supported, reasons = probe_encapsulations()
    except Exception as exc:  # a probe must never stop the lab
        return f"ITMP's probe failed: {exc}"
    best = supported[0].value if supported else "none"
    detail = "; ".join(f"{name}: {why}" for name, why in reasons.items())
    return f"ITMP would negotiate {best} here ({detail})"

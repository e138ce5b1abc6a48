"""`rib-analysis classify` on every real dump agrees with an independent computation.

The reference below is deliberately simple and slow: it reads `bgpdump -m` text (a decoder
written by other people), applies METHOD.md's rules with dicts and sets, and tests coverage by
masking integers. Nothing is shared with the native path but the rules themselves.
"""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rib_analysis.analysis import analyse

pytestmark = pytest.mark.realdata

RIBS = [
    "rv-route-views.jinx-rib.1401487200.bz2",
    "rv2-rib.20140523.0600_firstMB.bz2",
    "rv6-rib.20151101.0600_firstMB.bz2",
    "bgpdump-td-bview.20020722.2337.gz",
]
BRACKETED = re.compile(r"\{[^}]*\}|\([^)]*\)|\[[^\]]*\]")  # AS_SET, confederation segments


def special(asn: int) -> bool:
    return asn in (0, 23456) or 64496 <= asn <= 131071 or asn >= 4200000000


def reference(lines: list[str]) -> dict[str, Any]:
    entries = 0
    flags: dict[int, set[str]] = {}
    upstream_pairs: set[tuple[int, int]] = set()
    origins: dict[tuple[int, int, int], set[int]] = {}
    for line in lines:
        f = line.split("|")
        if not f[0].startswith("TABLE_DUMP"):
            continue
        entries += 1
        net = ipaddress.ip_network(f[5], strict=False)
        key = (net.version, int(net.network_address), net.prefixlen)
        origins.setdefault(key, set())
        path: list[int] = []
        for tok in BRACKETED.sub(" ", f[6]).split():
            asn = int(tok)
            if special(asn) or (path and path[-1] == asn):
                continue
            path.append(asn)
        if not path:
            continue
        origins[key].add(path[-1])
        flags.setdefault(path[-1], set()).add("origin")
        for asn in path[:-1]:
            flags.setdefault(asn, set()).add("transit")
        if len(path) > 1:
            upstream_pairs.add((path[-1], path[-2]))
    providers = {a for a, fl in flags.items() if "transit" in fl}
    ups: dict[int, set[int]] = {}
    for o, u in upstream_pairs:
        if u in providers:
            ups.setdefault(o, set()).add(u)
    lengths = {v: sorted({k[2] for k in origins if k[0] == v}) for v in (4, 6)}
    pa: dict[int, int] = Counter()
    pi: dict[int, int] = Counter()
    for (v, addr, plen), os_ in origins.items():
        width = 32 if v == 4 else 128
        for o in os_:
            if o in providers:
                continue
            mine = ups.get(o, set())
            covered = False
            for ln in lengths[v]:
                if ln > plen:
                    break
                masked = addr >> (width - ln) << (width - ln) if ln else 0
                if origins.get((v, masked, ln), set()) & mine:
                    covered = True
                    break
            (pa if covered else pi)[o] += 1
    aggregates = 0
    for (v, addr, plen), os_ in origins.items():
        width = 32 if v == 4 else 128
        for o in os_ & providers:
            inside_own = any(
                o in origins.get((v, addr >> (width - ln) << (width - ln) if ln else 0, ln), ())
                for ln in lengths[v]
                if ln < plen
            )
            if not inside_own:
                aggregates += 1
                break
    table = {k: {"pi": 0, "pa": 0, "both": 0} for k in ("single", "multi")}
    per_provider: Counter[int] = Counter()
    stubs = [a for a in flags if a not in providers]
    for s in stubs:
        n = len(ups.get(s, ()))
        if n == 0:
            continue
        kind = "both" if pa[s] and pi[s] else "pa" if pa[s] else "pi"
        table["single" if n == 1 else "multi"][kind] += 1
        for p in ups[s]:
            per_provider[p] += 1
    return {
        "entries": entries,
        "ases": {"total": len(flags), "stubs": len(stubs), "providers": len(providers)},
        "stubs_table": table,
        "grt": {
            "today": len(origins),
            "mast_prefixes": sum(1 for os_ in origins.values() if os_ & providers),
            "mast": aggregates,
        },
        "max_stubs": max(per_provider.values(), default=0),
    }


@pytest.mark.parametrize("name", RIBS)
def test_classify_agrees_with_bgpdump_reference(shared_data: Path, name: str) -> None:
    rib = shared_data / "ribs" / name
    if not rib.exists():
        pytest.skip(f"{rib} is absent")
    if shutil.which("bgpdump") is None:
        pytest.skip("bgpdump is not installed")
    text = subprocess.run(
        ["bgpdump", "-m", str(rib)], capture_output=True, text=True, timeout=240, check=False
    ).stdout
    want = reference(text.splitlines())
    got = analyse([rib]).as_json()
    assert got["entries"] == want["entries"]
    assert got["ases"]["total"] == want["ases"]["total"]
    assert got["ases"]["stubs"] == want["ases"]["stubs"]
    assert got["ases"]["providers"] == want["ases"]["providers"]
    for kind in ("single", "multi"):
        got_row = {k: got["stubs_table"][kind][k] for k in ("pi", "pa", "both")}
        assert got_row == want["stubs_table"][kind], kind
    assert got["grt"]["today"] == want["grt"]["today"]
    assert got["grt"]["mast"] == want["grt"]["mast"]
    assert got["grt"]["mast_rib_prefixes"] == want["grt"]["mast_prefixes"]
    assert got["providers"]["max_stubs"] == want["max_stubs"]

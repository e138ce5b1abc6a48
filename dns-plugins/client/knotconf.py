"""knotd configuration for mod-mast zones: TSIG key, update ACL, module sections, zone text.

Used by tests, benchmarks and labs; README.md shows the same snippets for operators.
"""

from __future__ import annotations

import re
from pathlib import Path

from mast_common.daemons.knot import Knot
from mast_common.prefix import PrefixStatus
from mast_common.waiting import wait_for

from .update import TsigKey
from .zonedata import StatusEntry, host_record_text, prefix_from_text, status_text

DEFAULT_MODULE = Path("/work/main/build/dns-plugins/mod_mast.so")
UPDATE_ACL = "mast-update"


def key_and_acl(key: TsigKey) -> str:
    """`key:` and `acl:` sections: updates only with this TSIG key."""
    return (
        "key:\n"
        f"  - id: {key.name}\n"
        f"    algorithm: {key.algorithm}\n"
        f"    secret: {key.secret}\n"
        "acl:\n"
        f"  - id: {UPDATE_ACL}\n"
        f"    key: {key.name}\n"
        "    action: update\n"
    )


def module_sections(module: Path = DEFAULT_MODULE, *, ttl: int = 60, lima: bool = False) -> str:
    """`module:` (load the shared object) and `mod-mast:` (one configuration, id `default`)."""
    return (
        "module:\n"
        "  - id: mod-mast\n"
        f"    file: {module}\n"
        "mod-mast:\n"
        "  - id: default\n"
        f"    ttl: {ttl}\n"
        f"    lima: {'on' if lima else 'off'}\n"
    )


def zone_options(*, module: bool = True, acl: bool = True) -> str:
    """Per-zone lines for `start_knot(zone_options=...)`."""
    return (f"    acl: {UPDATE_ACL}\n" if acl else "") + (
        "    module: mod-mast/default\n" if module else ""
    )


def zone_text(
    origin: str,
    *,
    hosts: dict[str, int],
    prefixes: list[tuple[str, PrefixStatus]] | None,
    literal: bool = False,
    mapped: bool = True,
    status_record: bool = True,
    ttl: int = 60,
    serial: int = 1,
    extra: str = "",
) -> str:
    """A zone with a status RRset (`prefixes`; none if None or not `status_record`), the host
    IFID map (`mapped`) and, with `literal`, each host's literal AAAA records (one per preferred
    prefix: what a zone without the module would hold)."""
    entries = [StatusEntry(prefix_from_text(p), PrefixStatus(s)) for p, s in prefixes or []]
    lines = [
        f"$ORIGIN {origin}",
        f"$TTL {ttl}",
        f"@ SOA ns hostmaster {serial} 3600 600 86400 {ttl}",
        "@ NS ns",
        "ns AAAA ::1",
    ]
    if prefixes is not None and status_record:
        lines.append(f"@ APL {status_text(entries)}")
    for name, ifid in hosts.items():
        if mapped:
            lines.append(f"@ TXT {host_record_text(name, ifid)}")
        if literal:
            for entry in entries:
                if entry.status is PrefixStatus.PREFERRED:
                    lines.append(f"{name} AAAA {entry.prefix.network_address + ifid}")
    return "\n".join(lines) + "\n" + extra


def wait_loaded(knot: Knot, origin: str, *, timeout: float = 30) -> None:
    """Block until knotd has loaded `origin` (start_knot returns once the control socket is up,
    which can be before a large zone is in memory)."""
    wait_for(
        lambda: re.search(r"serial: \d+", knot.knotc("zone-status", origin, timeout=5)),
        timeout=timeout,
        what=f"zone {origin} loaded",
    )

"""The Linux side of the router: tunnel links, their addresses, underlay routes, address lifetimes.

Everything goes through iproute2 (`ip`), the tool operators use to check the result by hand.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mast_common.log import get_logger
from mast_common.prefix import PrefixStatus

from itmp.router.model import Encapsulation, Tunnel

log = get_logger(__name__)

VXLAN_PORT = 4789
FOREVER = 4294967295  # iproute2's "forever" lifetime


class KernelError(RuntimeError):
    """An `ip` command failed; the message carries the command and the kernel's words."""


def run_ip(args: Sequence[str], *, check: bool = True, timeout: float = 10) -> str:
    try:
        proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise KernelError(f"ip {' '.join(args)}: timed out after {timeout} s") from None
    if check and proc.returncode != 0:
        raise KernelError(f"ip {' '.join(args)}: {(proc.stderr or proc.stdout).strip()}")
    return proc.stdout


def probe_encapsulations() -> tuple[list[Encapsulation], dict[str, str]]:
    """Which tunnel types this kernel can create, found by creating one in a scratch namespace.

    Returns the supported list (in preference order) and, for each, the reason (kernel's words).
    `unshare -n` gives a throw-away network namespace, so the probe touches nothing real.
    """
    probes = {
        Encapsulation.GRE: "ip link add p0 type ip6gre local 2001:db8::1 remote 2001:db8::2",
        Encapsulation.VXLAN: f"ip link add p0 type vxlan id 1 local 2001:db8::1 remote 2001:db8::2 dstport {VXLAN_PORT}",
    }
    supported: list[Encapsulation] = []
    reasons: dict[str, str] = {}
    for encap, command in probes.items():
        try:
            proc = subprocess.run(
                ["unshare", "-n", "sh", "-c", command],
                capture_output=True,
                text=True,
                timeout=10,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            reasons[encap.value] = f"probe failed to run: {exc}"
            continue
        if proc.returncode == 0:
            supported.append(encap)
            reasons[encap.value] = "kernel created a test link"
        else:
            reasons[encap.value] = "kernel refused: " + (
                proc.stderr.strip() or f"exit {proc.returncode}"
            )
    return supported, reasons


def _link_add_args(t: Tunnel) -> list[str]:
    if t.encapsulation is Encapsulation.GRE:
        return [
            "link",
            "add",
            t.name,
            "type",
            "ip6gre",
            "local",
            str(t.local),
            "remote",
            str(t.remote),
        ]
    return [
        "link", "add", t.name, "type", "vxlan", "id", str(t.vni), "local", str(t.local),
        "remote", str(t.remote), "dstport", str(VXLAN_PORT),
    ]  # fmt: skip


def add_tunnel(t: Tunnel) -> None:
    # A link of that name left from before an agent restart is ours: rebuild it from the model.
    run_ip(["link", "del", t.name], check=False)
    run_ip(_link_add_args(t))
    try:
        run_ip(["link", "set", t.name, "mtu", str(t.effective_mtu())])
        # Addresses on a tunnel are point-to-point: duplicate address detection only delays BGP.
        for a in t.addresses:
            run_ip(["-6", "addr", "add", a.with_prefixlen, "dev", t.name, "nodad"])
        run_ip(["link", "set", t.name, "up"])
        if t.underlay_next_hop is not None:
            run_ip(_pin_args(t))
    except KernelError:
        remove_tunnel(t)
        raise


def remove_tunnel(t: Tunnel) -> None:
    if t.underlay_next_hop is not None:
        run_ip(
            ["-6", "route", "del", f"{t.remote}/128", "via", str(t.underlay_next_hop)], check=False
        )
    run_ip(["link", "del", t.name], check=False)


def _pin_args(t: Tunnel) -> list[str]:
    return ["-6", "route", "replace", f"{t.remote}/128", "via", str(t.underlay_next_hop)]


def _same_address(text: str, addr: ipaddress.IPv6Address | None) -> bool:
    try:
        return ipaddress.IPv6Address(text) == addr
    except ValueError:  # no gateway (a blackhole, a device route) or not IPv6
        return False


def underlay_gateways() -> dict[str, str]:
    """Host routes of the main table: destination (as `ip` prints it) → gateway."""
    raw = json.loads(run_ip(["-6", "-j", "route", "show", "table", "main"]) or "[]")
    return {r["dst"]: r.get("gateway", "") for r in raw if "dst" in r}


def restore_underlay_routes(tunnels: Iterable[Tunnel]) -> tuple[list[str], list[str]]:
    """Put back the underlay pins the kernel dropped; return (restored, still missing).

    Linux deletes every route through an interface that is set down and does not bring it back
    on up, so after an access link flaps a backup tunnel would ride its default path, the very
    link it backs up. While the pinning link is down the pin cannot be installed (the next hop is
    not on-link): it stays missing and the next pass tries again.
    """
    pinned = [t for t in tunnels if t.underlay_next_hop is not None]
    if not pinned:
        return [], []
    present = underlay_gateways()
    restored: list[str] = []
    missing: list[str] = []
    for t in pinned:
        gateway = present.get(str(t.remote), present.get(f"{t.remote}/128"))
        if gateway is not None and _same_address(gateway, t.underlay_next_hop):
            continue
        what = f"{t.remote}/128 via {t.underlay_next_hop} (tunnel {t.name})"
        try:
            run_ip(_pin_args(t))
        except KernelError as exc:
            missing.append(f"{what}: {exc}")
            continue
        restored.append(what)
    for line in restored:
        log.info("underlay.route_restored", route=line)
    return restored, missing


@dataclass(frozen=True)
class LinkState:
    name: str
    kind: str
    oper_state: str
    mtu: int
    addresses: tuple[str, ...]


def link_states() -> dict[str, LinkState]:
    raw = json.loads(run_ip(["-d", "-j", "addr", "show"]) or "[]")
    out: dict[str, LinkState] = {}
    for link in raw:
        name = link.get("ifname", "")
        kind = (link.get("linkinfo") or {}).get("info_kind", "")
        addrs = tuple(
            f"{a['local']}/{a['prefixlen']}"
            for a in link.get("addr_info", [])
            if a.get("family") == "inet6" and a.get("scope") == "global"
        )
        out[name] = LinkState(
            name, kind, link.get("operstate", "UNKNOWN"), int(link.get("mtu", 0)), addrs
        )
    return out


@dataclass(frozen=True)
class KernelAddress:
    interface: str
    address: ipaddress.IPv6Interface
    preferred: int
    valid: int
    flags: tuple[str, ...]


def global_addresses() -> list[KernelAddress]:
    raw = json.loads(run_ip(["-6", "-j", "addr", "show", "scope", "global"]) or "[]")
    out = []
    for link in raw:
        for a in link.get("addr_info", []):
            if a.get("family") != "inet6":
                continue
            flags = tuple(f for f in ("nodad", "noprefixroute") if a.get(f))
            out.append(
                KernelAddress(
                    link["ifname"],
                    ipaddress.IPv6Interface(f"{a['local']}/{a['prefixlen']}"),
                    int(a.get("preferred_life_time", FOREVER)),
                    int(a.get("valid_life_time", FOREVER)),
                    flags,
                )
            )
    return out


def _lifetime(value: int) -> str:
    return "forever" if value >= FOREVER else str(value)


def address_status(addr: KernelAddress) -> PrefixStatus:
    return PrefixStatus.DISCOURAGED if addr.preferred == 0 else PrefixStatus.PREFERRED


def apply_prefix_statuses(
    statuses: Mapping[ipaddress.IPv6Network, PrefixStatus],
    addresses: Iterable[KernelAddress] | None = None,
) -> list[str]:
    """Bring every global address inside a managed prefix to its status; return what changed.

    Discouraged keeps the valid lifetime (live connections go on) and zeroes the preferred one;
    preferred sets the preferred lifetime back to the valid lifetime (forever for static ones).
    """
    changed: list[str] = []
    if not statuses:
        return changed
    # Longest match wins, so a /64 entry can override its /48.
    ordered = sorted(statuses.items(), key=lambda kv: kv[0].prefixlen, reverse=True)
    for addr in global_addresses() if addresses is None else addresses:
        status = next((s for p, s in ordered if addr.address.ip in p), None)
        if status is None:
            continue
        where = ["dev", addr.interface]
        if status is PrefixStatus.WITHDRAWN:
            run_ip(["-6", "addr", "del", addr.address.with_prefixlen, *where], check=False)
            changed.append(f"{addr.address} on {addr.interface}: removed (withdrawn)")
            continue
        target = 0 if status is PrefixStatus.DISCOURAGED else addr.valid
        if addr.preferred == target:
            continue
        run_ip([
            "-6", "addr", "change", addr.address.with_prefixlen, *where,
            "valid_lft", _lifetime(addr.valid), "preferred_lft", _lifetime(target), *addr.flags,
        ])  # fmt: skip
        changed.append(f"{addr.address} on {addr.interface}: {status.value}")
    for line in changed:
        log.info("prefix_status.applied", change=line)
    return changed

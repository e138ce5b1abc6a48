"""The router data model `urn:mast:router:1` (see itmp/ROUTER-MODEL.md): plain values plus XML.

A configuration is three keyed lists: tunnel interfaces, BGP neighbours and prefix statuses.
Values are immutable, so the datastores can share entries between running and candidate and a
commit only touches what changed.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lxml import etree
from mast_common.prefix import PrefixStatus

NS = "urn:mast:router:1"
NC_NS = "urn:ietf:params:xml:ns:netconf:base:1.0"
_Q = "{" + NS + "}"
_NC_OPERATION = "{" + NC_NS + "}operation"

IFNAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")
# Neighbour names become BIRD protocol names.
SYMBOL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


class ModelError(ValueError):
    """Configuration data does not fit the model; the message names the element."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        super().__init__(f"{path}: {message}")


class Encapsulation(enum.StrEnum):
    """Tunnel encapsulations in order of preference (DESIGN.md: GRE first, then VXLAN)."""

    GRE = "gre"
    VXLAN = "vxlan"


ENCAPSULATION_PREFERENCE = (Encapsulation.GRE, Encapsulation.VXLAN)

# Outer IPv6 header plus encapsulation, subtracted from a 1500-byte underlay.
ENCAPSULATION_OVERHEAD = {Encapsulation.GRE: 48, Encapsulation.VXLAN: 70}


def default_mtu(encap: Encapsulation, underlay_mtu: int = 1500) -> int:
    return underlay_mtu - ENCAPSULATION_OVERHEAD[encap]


@dataclass(frozen=True)
class Tunnel:
    name: str
    encapsulation: Encapsulation
    local: ipaddress.IPv6Address
    remote: ipaddress.IPv6Address
    vni: int | None = None
    mtu: int | None = None
    addresses: tuple[ipaddress.IPv6Interface, ...] = ()
    # Pins the path to `remote` (a /128 route): a backup tunnel must not ride the link it backs up.
    underlay_next_hop: ipaddress.IPv6Address | None = None

    def effective_mtu(self) -> int:
        return self.mtu if self.mtu is not None else default_mtu(self.encapsulation)


@dataclass(frozen=True)
class Neighbor:
    name: str
    address: ipaddress.IPv6Address
    remote_as: int
    local_as: int
    local_pref: int | None = None
    med: int | None = None
    bfd: bool = False
    tunnel: str | None = None
    import_prefixes: tuple[ipaddress.IPv6Network, ...] = ()
    export_prefixes: tuple[ipaddress.IPv6Network, ...] = ()
    hold_time: int | None = None


@dataclass(frozen=True)
class RouterConfig:
    tunnels: Mapping[str, Tunnel] = field(default_factory=dict)
    neighbors: Mapping[str, Neighbor] = field(default_factory=dict)
    prefix_status: Mapping[ipaddress.IPv6Network, PrefixStatus] = field(default_factory=dict)

    def validate(self) -> None:
        """Cross-entry rules: a neighbour's tunnel exists, VXLAN tunnels have distinct VNIs."""
        vnis: dict[int, str] = {}
        for t in self.tunnels.values():
            path = f"tunnel[{t.name}]"
            if t.encapsulation is Encapsulation.VXLAN:
                if t.vni is None:
                    raise ModelError(path, "a vxlan tunnel needs a vni")
                if t.vni in vnis:
                    raise ModelError(path, f"vni {t.vni} already used by tunnel {vnis[t.vni]}")
                vnis[t.vni] = t.name
        for n in self.neighbors.values():
            if n.tunnel is not None and n.tunnel not in self.tunnels:
                raise ModelError(f"bgp-neighbor[{n.name}]", f"unknown tunnel {n.tunnel!r}")


# ---------------------------------------------------------------------------------------------
# XML → values


def _local(tag: Any) -> str:
    return str(tag).rpartition("}")[2] if isinstance(tag, str) else ""


def _children(elem: Any) -> list[Any]:
    return [c for c in elem if isinstance(c.tag, str)]


def _text(elem: Any, path: str) -> str:
    text = (elem.text or "").strip()
    if not text:
        raise ModelError(path, "empty value")
    return text


def _int(text: str, path: str, lo: int, hi: int) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise ModelError(path, f"expected an integer, got {text!r}") from None
    if not lo <= value <= hi:
        raise ModelError(path, f"{value} out of range {lo}..{hi}")
    return value


def _addr(text: str, path: str) -> ipaddress.IPv6Address:
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        raise ModelError(path, f"expected an IPv6 address, got {text!r}") from None


def _net(text: str, path: str) -> ipaddress.IPv6Network:
    try:
        return ipaddress.IPv6Network(text, strict=True)
    except ValueError:
        raise ModelError(path, f"expected an IPv6 prefix, got {text!r}") from None


def _iface(text: str, path: str) -> ipaddress.IPv6Interface:
    try:
        return ipaddress.IPv6Interface(text)
    except ValueError:
        raise ModelError(path, f"expected an IPv6 address/length, got {text!r}") from None


def _bool(text: str, path: str) -> bool:
    if text in ("true", "on", "1"):
        return True
    if text in ("false", "off", "0"):
        return False
    raise ModelError(path, f"expected true/false, got {text!r}")


def _fields(elem: Any, path: str, known: Iterable[str]) -> dict[str, list[str]]:
    """Leaf name → texts (leaf-lists repeat); unknown leaves are errors, not silently dropped."""
    allowed = set(known)
    out: dict[str, list[str]] = {}
    for child in _children(elem):
        name = _local(child.tag)
        if name not in allowed:
            raise ModelError(
                f"{path}/{name}", f"unknown element (known: {', '.join(sorted(allowed))})"
            )
        out.setdefault(name, []).append(_text(child, f"{path}/{name}"))
    return out


def _one(fields: dict[str, list[str]], name: str, path: str) -> str | None:
    values = fields.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise ModelError(f"{path}/{name}", "given more than once")
    return values[0]


def _need(fields: dict[str, list[str]], name: str, path: str) -> str:
    value = _one(fields, name, path)
    if value is None:
        raise ModelError(f"{path}/{name}", "missing")
    return value


_TUNNEL_LEAVES = (
    "name",
    "encapsulation",
    "local",
    "remote",
    "vni",
    "mtu",
    "address",
    "underlay-next-hop",
)
_NEIGHBOR_LEAVES = (
    "name", "address", "remote-as", "local-as", "local-pref", "med", "bfd", "tunnel",
    "import-prefix", "export-prefix", "hold-time",
)  # fmt: skip


def tunnel_fields(elem: Any, path: str) -> dict[str, Any]:
    """The leaves present in a <tunnel> element, as typed values (for merge)."""
    f = _fields(elem, path, _TUNNEL_LEAVES)
    out: dict[str, Any] = {}
    name = _need(f, "name", path)
    if not IFNAME_RE.match(name):
        raise ModelError(f"{path}/name", f"bad interface name {name!r} (1-15 of [A-Za-z0-9_.-])")
    out["name"] = name
    if (v := _one(f, "encapsulation", path)) is not None:
        try:
            out["encapsulation"] = Encapsulation(v)
        except ValueError:
            raise ModelError(f"{path}/encapsulation", f"expected gre or vxlan, got {v!r}") from None
    for leaf in ("local", "remote", "underlay-next-hop"):
        if (v := _one(f, leaf, path)) is not None:
            out[leaf.replace("-", "_")] = _addr(v, f"{path}/{leaf}")
    if (v := _one(f, "vni", path)) is not None:
        out["vni"] = _int(v, f"{path}/vni", 1, (1 << 24) - 1)
    if (v := _one(f, "mtu", path)) is not None:
        out["mtu"] = _int(v, f"{path}/mtu", 1280, 9000)
    if "address" in f:
        out["addresses"] = tuple(_iface(v, f"{path}/address") for v in f["address"])
    return out


def neighbor_fields(elem: Any, path: str) -> dict[str, Any]:
    f = _fields(elem, path, _NEIGHBOR_LEAVES)
    out: dict[str, Any] = {}
    name = _need(f, "name", path)
    if not SYMBOL_RE.match(name):
        raise ModelError(
            f"{path}/name", f"bad neighbour name {name!r} (a BIRD symbol: [A-Za-z_][A-Za-z0-9_]*)"
        )
    out["name"] = name
    if (v := _one(f, "address", path)) is not None:
        out["address"] = _addr(v, f"{path}/address")
    for leaf in ("remote-as", "local-as"):
        if (v := _one(f, leaf, path)) is not None:
            out[leaf.replace("-", "_")] = _int(v, f"{path}/{leaf}", 1, (1 << 32) - 1)
    for leaf in ("local-pref", "med"):
        if (v := _one(f, leaf, path)) is not None:
            out[leaf.replace("-", "_")] = _int(v, f"{path}/{leaf}", 0, (1 << 32) - 1)
    if (v := _one(f, "hold-time", path)) is not None:
        out["hold_time"] = _int(v, f"{path}/hold-time", 3, 65535)
    if (v := _one(f, "bfd", path)) is not None:
        out["bfd"] = _bool(v, f"{path}/bfd")
    if (v := _one(f, "tunnel", path)) is not None:
        if not IFNAME_RE.match(v):
            raise ModelError(f"{path}/tunnel", f"bad interface name {v!r}")
        out["tunnel"] = v
    for leaf in ("import-prefix", "export-prefix"):
        if leaf in f:
            out[leaf.replace("-", "_") + "es"] = tuple(_net(v, f"{path}/{leaf}") for v in f[leaf])
    return out


def prefix_status_fields(elem: Any, path: str) -> tuple[ipaddress.IPv6Network, PrefixStatus | None]:
    f = _fields(elem, path, ("prefix", "status"))
    prefix = _net(_need(f, "prefix", path), f"{path}/prefix")
    status = None
    if (v := _one(f, "status", path)) is not None:
        try:
            status = PrefixStatus(v)
        except ValueError:
            raise ModelError(
                f"{path}/status", f"expected preferred, discouraged or withdrawn, got {v!r}"
            ) from None
    return prefix, status


def _build_tunnel(values: Mapping[str, Any], path: str) -> Tunnel:
    for leaf in ("encapsulation", "local", "remote"):
        if leaf not in values:
            raise ModelError(f"{path}/{leaf}", "missing")
    return Tunnel(**values)


def _build_neighbor(values: Mapping[str, Any], path: str) -> Neighbor:
    for leaf in ("address", "remote_as", "local_as"):
        if leaf not in values:
            raise ModelError(f"{path}/{leaf.replace('_', '-')}", "missing")
    return Neighbor(**values)


class EditOperation(enum.StrEnum):
    MERGE = "merge"
    REPLACE = "replace"
    CREATE = "create"
    DELETE = "delete"
    REMOVE = "remove"
    NONE = "none"


def _operation(elem: Any, inherited: EditOperation, path: str) -> EditOperation:
    raw = elem.get(_NC_OPERATION)
    if raw is None:
        return inherited
    try:
        return EditOperation(raw)
    except ValueError:
        raise ModelError(path, f"bad operation {raw!r}") from None


class EditConflict(ModelError):
    """create of an existing entry or delete of a missing one (NETCONF data-exists/data-missing)."""

    def __init__(self, path: str, message: str, tag: str) -> None:
        super().__init__(path, message)
        self.tag = tag


def apply_edit(
    base: RouterConfig, config_elem: Any, default_operation: EditOperation = EditOperation.MERGE
) -> RouterConfig:
    """Apply an edit-config <config> element to `base` (RFC 6241 7.2 semantics per list entry)."""
    tunnels = dict(base.tunnels)
    neighbors = dict(base.neighbors)
    statuses = dict(base.prefix_status)
    for root in _children(config_elem):
        if root.tag != _Q + "router":
            raise ModelError(
                f"/{_local(root.tag)}", f"unknown top-level element (expected router in {NS})"
            )
        root_op = _operation(root, default_operation, "/router")
        if root_op is EditOperation.REPLACE:
            tunnels, neighbors, statuses = {}, {}, {}
        elif root_op in (EditOperation.DELETE, EditOperation.REMOVE):
            if root_op is EditOperation.DELETE and not (tunnels or neighbors or statuses):
                raise EditConflict("/router", "nothing to delete", "data-missing")
            tunnels, neighbors, statuses = {}, {}, {}
            continue
        child_default = EditOperation.MERGE if root_op is EditOperation.REPLACE else root_op
        for entry in _children(root):
            kind = _local(entry.tag)
            if entry.tag != _Q + kind:
                raise ModelError(f"/router/{kind}", f"element not in namespace {NS}")
            if kind == "tunnel":
                path = "/router/tunnel"
                values = tunnel_fields(entry, path)
                path = f"/router/tunnel[{values['name']}]"
                _edit_entry(tunnels, values["name"], values, _operation(entry, child_default, path),
                            path, _build_tunnel)  # fmt: skip
            elif kind == "bgp-neighbor":
                path = "/router/bgp-neighbor"
                values = neighbor_fields(entry, path)
                path = f"/router/bgp-neighbor[{values['name']}]"
                _edit_entry(neighbors, values["name"], values, _operation(entry, child_default, path),
                            path, _build_neighbor)  # fmt: skip
            elif kind == "prefix-status":
                prefix, status = prefix_status_fields(entry, "/router/prefix-status")
                path = f"/router/prefix-status[{prefix}]"
                op = _operation(entry, child_default, path)
                if op in (EditOperation.DELETE, EditOperation.REMOVE):
                    if prefix not in statuses and op is EditOperation.DELETE:
                        raise EditConflict(path, "no such entry", "data-missing")
                    statuses.pop(prefix, None)
                elif op is EditOperation.NONE:
                    continue
                else:
                    if op is EditOperation.CREATE and prefix in statuses:
                        raise EditConflict(path, "entry exists", "data-exists")
                    if status is None:
                        raise ModelError(f"{path}/status", "missing")
                    statuses[prefix] = status
            else:
                raise ModelError(
                    f"/router/{kind}",
                    "unknown element (known: tunnel, bgp-neighbor, prefix-status)",
                )
    return RouterConfig(tunnels, neighbors, statuses)


def _edit_entry(
    table: dict[str, Any],
    key: str,
    values: dict[str, Any],
    op: EditOperation,
    path: str,
    build: Any,
) -> None:
    existing = table.get(key)
    if op is EditOperation.NONE:
        return
    if op in (EditOperation.DELETE, EditOperation.REMOVE):
        if existing is None and op is EditOperation.DELETE:
            raise EditConflict(path, "no such entry", "data-missing")
        table.pop(key, None)
        return
    if op is EditOperation.CREATE and existing is not None:
        raise EditConflict(path, "entry exists", "data-exists")
    if op is EditOperation.MERGE and existing is not None:
        merged = dict(values)
        # Leaf-lists merge by union (RFC 6241 merge), keeping the existing order first.
        for leaf in ("addresses", "import_prefixes", "export_prefixes"):
            if leaf in values and hasattr(existing, leaf):
                old = getattr(existing, leaf)
                merged[leaf] = tuple(dict.fromkeys((*old, *values[leaf])))
        table[key] = replace(existing, **merged)
        return
    table[key] = build(values, path)


# ---------------------------------------------------------------------------------------------
# values → XML


def _leaf(parent: Any, name: str, value: object) -> None:
    etree.SubElement(parent, _Q + name).text = str(value)


def tunnel_xml(parent: Any, t: Tunnel) -> Any:
    e = etree.SubElement(parent, _Q + "tunnel")
    _leaf(e, "name", t.name)
    _leaf(e, "encapsulation", t.encapsulation.value)
    _leaf(e, "local", t.local)
    _leaf(e, "remote", t.remote)
    if t.vni is not None:
        _leaf(e, "vni", t.vni)
    if t.mtu is not None:
        _leaf(e, "mtu", t.mtu)
    for a in t.addresses:
        _leaf(e, "address", a.with_prefixlen)
    if t.underlay_next_hop is not None:
        _leaf(e, "underlay-next-hop", t.underlay_next_hop)
    return e


def neighbor_xml(parent: Any, n: Neighbor) -> Any:
    e = etree.SubElement(parent, _Q + "bgp-neighbor")
    _leaf(e, "name", n.name)
    _leaf(e, "address", n.address)
    _leaf(e, "remote-as", n.remote_as)
    _leaf(e, "local-as", n.local_as)
    if n.local_pref is not None:
        _leaf(e, "local-pref", n.local_pref)
    if n.med is not None:
        _leaf(e, "med", n.med)
    _leaf(e, "bfd", "true" if n.bfd else "false")
    if n.tunnel is not None:
        _leaf(e, "tunnel", n.tunnel)
    for p in n.import_prefixes:
        _leaf(e, "import-prefix", p)
    for p in n.export_prefixes:
        _leaf(e, "export-prefix", p)
    if n.hold_time is not None:
        _leaf(e, "hold-time", n.hold_time)
    return e


def prefix_status_xml(parent: Any, prefix: ipaddress.IPv6Network, status: PrefixStatus) -> Any:
    e = etree.SubElement(parent, _Q + "prefix-status")
    _leaf(e, "prefix", prefix)
    _leaf(e, "status", status.value)
    return e


def router_xml(cfg: RouterConfig) -> Any:
    root = etree.Element(_Q + "router", nsmap={None: NS})
    for t in sorted(cfg.tunnels.values(), key=lambda t: t.name):
        tunnel_xml(root, t)
    for n in sorted(cfg.neighbors.values(), key=lambda n: n.name):
        neighbor_xml(root, n)
    for p, s in sorted(cfg.prefix_status.items()):
        prefix_status_xml(root, p, s)
    return root


def parse_router(elem: Any) -> RouterConfig:
    """A complete <router> element (persisted state, get-config replies) into a RouterConfig."""
    wrapper = etree.Element("{" + NC_NS + "}config")
    wrapper.append(elem)
    return apply_edit(RouterConfig(), wrapper, EditOperation.MERGE)

"""A containerlab topology file (*.clab.yml), parsed and checked the way containerlab checks it.

Only the fields this lab runner uses are interpreted (kind, image, binds, exec, env, labels, the
brief `endpoints` link form); other containerlab node fields are accepted when they are known to
containerlab and rejected otherwise, so a typo fails here instead of in a container engine.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# Node kinds containerlab knows (https://containerlab.dev/manual/kinds/); mast-lab realises the
# first three in network namespaces and only validates the rest.
NETNS_KINDS = frozenset({"linux", "bridge", "ovs-bridge"})
CLAB_KINDS = NETNS_KINDS | frozenset(
    {
        "host",
        "ext-container",
        "nokia_srlinux",
        "srl",
        "nokia_sros",
        "vr-sros",
        "ceos",
        "arista_ceos",
        "crpd",
        "juniper_crpd",
        "vr-vmx",
        "juniper_vmx",
        "vr-xrv9k",
        "cisco_xrv9k",
        "xrd",
        "cisco_xrd",
        "sonic-vs",
        "vr-veos",
        "k8s-kind",
        "cvx",
        "rare",
        "openbsd",
        "fortinet_fortigate",
        "generic_vm",
    }
)
# Node fields of containerlab's schema (topology.nodes.<name>, also topology.defaults / kinds).
NODE_FIELDS = frozenset(
    {
        "kind",
        "image",
        "image-pull-policy",
        "binds",
        "exec",
        "env",
        "env-files",
        "labels",
        "cmd",
        "entrypoint",
        "group",
        "type",
        "license",
        "startup-config",
        "startup-delay",
        "enforce-startup-config",
        "suppress-startup-config",
        "auto-remove",
        "restart-policy",
        "mgmt-ipv4",
        "mgmt-ipv6",
        "network-mode",
        "ports",
        "user",
        "publish",
        "sysctls",
        "cpu",
        "cpu-set",
        "memory",
        "shm-size",
        "cap-add",
        "devices",
        "dns",
        "extras",
        "wait-for",
        "certificate",
        "healthcheck",
        "aliases",
        "stages",
        "runtime",
        "components",
        "config",
        "mgmt-net",
    }
)
TOP_FIELDS = frozenset({"name", "prefix", "mgmt", "topology", "settings", "debug"})
TOPOLOGY_FIELDS = frozenset({"defaults", "kinds", "groups", "nodes", "links"})
LINK_FIELDS = frozenset({"endpoints", "type", "mtu", "vars", "labels"})
# Endpoint node names that are not nodes of the file (containerlab's special endpoints).
SPECIAL_ENDPOINTS = frozenset({"host", "mgmt-net", "macvlan"})
_NODE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
_IFNAME = re.compile(r"^[^\s/:]+$")
IFNAME_MAX = 15  # IFNAMSIZ - 1 in Linux


class TopologyError(ValueError):
    """The file is not a valid containerlab topology; the message names file and field."""


@dataclass(frozen=True)
class Bind:
    host: Path
    container: str
    mode: str = "rw"


@dataclass
class NodeSpec:
    name: str
    kind: str
    image: str = ""
    binds: list[Bind] = field(default_factory=list)
    exec: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def daemons(self) -> list[str]:
        return self.env.get("MAST_DAEMONS", "").split()

    def host_path(self, container_path: str) -> str:
        """Map a path inside the node's container to the host file bound there (or keep it)."""
        for bind in self.binds:
            root = bind.container.rstrip("/")
            if container_path == root or container_path.startswith(root + "/"):
                return str(bind.host) + container_path[len(root) :]
        return container_path


@dataclass(frozen=True)
class Endpoint:
    node: str
    interface: str

    def __str__(self) -> str:
        return f"{self.node}:{self.interface}"


@dataclass(frozen=True)
class Link:
    a: Endpoint
    b: Endpoint


@dataclass
class Topology:
    name: str
    path: Path
    nodes: dict[str, NodeSpec]
    links: list[Link]

    def interfaces(self, node: str) -> list[str]:
        out = []
        for link in self.links:
            for ep in (link.a, link.b):
                if ep.node == node:
                    out.append(ep.interface)
        return out

    def link_between(self, a: str, b: str) -> Link:
        for link in self.links:
            if {link.a.node, link.b.node} == {a, b}:
                return link
        raise TopologyError(f"{self.path}: no link between {a} and {b}")


def load_topology(path: str | Path) -> Topology:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise TopologyError(f"{path}: cannot read: {exc.strerror}") from None
    return parse_topology(text, path)


class _StrictLoader(yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML keeps the last of duplicate keys; containerlab's YAML parser (yaml.v3) rejects
    them, and so do we: a duplicated `env:` silently replacing the first is a real bug."""


def _mapping_no_duplicates(loader: _StrictLoader, node: yaml.MappingNode) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:
            continue  # an unhashable key: construct_mapping reports it
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _mapping_no_duplicates,
)


def parse_topology(text: str, path: Path) -> Topology:
    try:
        doc = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader: no arbitrary objects
    except yaml.YAMLError as exc:
        raise TopologyError(f"{path}: not YAML: {exc}") from None
    where = str(path)
    doc = _mapping(doc, where)
    _known(doc, TOP_FIELDS, where)
    name = doc.get("name")
    if not isinstance(name, str) or not _NODE_NAME.match(name):
        raise TopologyError(f"{where}: name: expected a lab name ([A-Za-z0-9_-]), got {name!r}")
    topo = _mapping(doc.get("topology"), f"{where}: topology")
    _known(topo, TOPOLOGY_FIELDS, f"{where}: topology")
    defaults = _node_fields(topo.get("defaults", {}), f"{where}: topology.defaults")
    kinds_raw = _mapping(topo.get("kinds", {}), f"{where}: topology.kinds")
    kinds = {str(k): _node_fields(v, f"{where}: topology.kinds.{k}") for k, v in kinds_raw.items()}
    groups_raw = _mapping(topo.get("groups", {}), f"{where}: topology.groups")
    groups = {
        str(k): _node_fields(v, f"{where}: topology.groups.{k}") for k, v in groups_raw.items()
    }
    nodes_raw = _mapping(topo.get("nodes"), f"{where}: topology.nodes")
    if not nodes_raw:
        raise TopologyError(f"{where}: topology.nodes: a lab needs at least one node")
    base = path.parent
    nodes: dict[str, NodeSpec] = {}
    for raw_name, raw in nodes_raw.items():
        node_name = str(raw_name)
        nwhere = f"{where}: topology.nodes.{node_name}"
        if not _NODE_NAME.match(node_name):
            raise TopologyError(f"{nwhere}: bad node name (use [A-Za-z0-9_-])")
        own = _node_fields({} if raw is None else raw, nwhere)
        # containerlab's precedence: node, then its group, then its kind, then defaults.
        kind = own.get("kind") or groups.get(str(own.get("group")), {}).get("kind")
        kind = kind or defaults.get("kind")
        if not isinstance(kind, str) or kind not in CLAB_KINDS:
            raise TopologyError(f"{nwhere}: kind: expected a containerlab kind, got {kind!r}")
        merged: dict[str, Any] = {}
        for layer in (defaults, kinds.get(kind, {}), groups.get(str(own.get("group")), {}), own):
            merged.update(layer)
        nodes[node_name] = _node_spec(node_name, kind, merged, base, nwhere)
    links = _links(topo.get("links", []), nodes, where)
    return Topology(name, path, nodes, links)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TopologyError(f"{where}: expected a mapping, got {type(value).__name__}")
    return dict(value)


def _known(doc: Mapping[str, Any], fields: frozenset[str], where: str) -> None:
    unknown = sorted(str(k) for k in doc if k not in fields)
    if unknown:
        raise TopologyError(f"{where}: unknown field(s) {', '.join(unknown)}")


def _node_fields(value: Any, where: str) -> dict[str, Any]:
    doc = _mapping(value, where)
    _known(doc, NODE_FIELDS, where)
    return doc


def _str_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TopologyError(f"{where}: expected a list of strings")
    return list(value)


def _str_map(value: Any, where: str) -> dict[str, str]:
    doc = _mapping(value, where)
    out = {}
    for k, v in doc.items():
        if isinstance(v, bool) or not isinstance(v, str | int | float):
            raise TopologyError(f"{where}.{k}: expected a string, got {type(v).__name__}")
        out[str(k)] = str(v)
    return out


def _node_spec(name: str, kind: str, doc: dict[str, Any], base: Path, where: str) -> NodeSpec:
    image = doc.get("image", "")
    if not isinstance(image, str):
        raise TopologyError(f"{where}: image: expected a string")
    if kind == "linux" and not image:
        raise TopologyError(f"{where}: image: a linux node needs an image")
    binds = []
    for i, text in enumerate(_str_list(doc.get("binds", []), f"{where}: binds")):
        parts = text.split(":")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1].startswith("/"):
            raise TopologyError(
                f"{where}: binds[{i}]: expected 'host-path:/container-path[:ro|rw]', got {text!r}"
            )
        mode = parts[2] if len(parts) == 3 else "rw"
        if not set(mode.split(",")) <= {"ro", "rw", "z", "Z", "shared", "slave", "private"}:
            raise TopologyError(f"{where}: binds[{i}]: bad mode {mode!r}")
        host = Path(parts[0]) if parts[0].startswith("/") else (base / parts[0])
        if not host.exists():
            raise TopologyError(f"{where}: binds[{i}]: {host} does not exist")
        binds.append(Bind(host.resolve(), parts[1], mode))
    env = _str_map(doc.get("env", {}), f"{where}: env")
    return NodeSpec(
        name=name,
        kind=kind,
        image=image,
        binds=binds,
        exec=_str_list(doc.get("exec", []), f"{where}: exec"),
        env=env,
        labels=_str_map(doc.get("labels", {}), f"{where}: labels"),
    )


def _links(value: Any, nodes: Mapping[str, NodeSpec], where: str) -> list[Link]:
    if not isinstance(value, list):
        raise TopologyError(f"{where}: topology.links: expected a list")
    used: dict[str, set[str]] = {}
    links = []
    for i, raw in enumerate(value):
        lwhere = f"{where}: topology.links[{i}]"
        doc = _mapping(raw, lwhere)
        _known(doc, LINK_FIELDS, lwhere)
        if doc.get("type", "veth") != "veth":
            raise TopologyError(f"{lwhere}: type: mast-lab realises only veth links")
        eps = doc.get("endpoints")
        if not isinstance(eps, list) or len(eps) != 2 or not all(isinstance(e, str) for e in eps):
            raise TopologyError(f"{lwhere}: endpoints: expected two 'node:interface' strings")
        parsed = []
        for ep in eps:
            node, sep, ifname = ep.partition(":")
            if not sep or not node or not ifname or not _IFNAME.match(ifname):
                raise TopologyError(f"{lwhere}: endpoint {ep!r}: expected 'node:interface'")
            if len(ifname) > IFNAME_MAX:
                raise TopologyError(
                    f"{lwhere}: endpoint {ep!r}: interface name longer than {IFNAME_MAX} characters"
                )
            if node not in nodes and node not in SPECIAL_ENDPOINTS:
                raise TopologyError(f"{lwhere}: endpoint {ep!r}: node {node!r} is not defined")
            if ifname in used.setdefault(node, set()):
                raise TopologyError(f"{lwhere}: endpoint {ep!r}: interface used twice on {node}")
            if ifname == "eth0" and node in nodes and nodes[node].kind == "linux":
                raise TopologyError(f"{lwhere}: endpoint {ep!r}: eth0 is the management interface")
            used[node].add(ifname)
            parsed.append(Endpoint(node, ifname))
        links.append(Link(parsed[0], parsed[1]))
    return links

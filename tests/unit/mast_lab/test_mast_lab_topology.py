"""The embedded lab is a valid containerlab topology, and the checker rejects what containerlab
would reject (field names and types, kinds, endpoint format, undefined nodes, interface names)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from mast_lab.cli import DEFAULT_LAB
from mast_lab.realiser import STARTERS
from mast_lab.scenario import ScenarioConfig, load_scenario
from mast_lab.topology import CLAB_KINDS, IFNAME_MAX, TopologyError, load_topology, parse_topology

LAB = DEFAULT_LAB


ITMP_LAB = LAB.with_name("mast-failover-itmp.clab.yml")


@pytest.mark.parametrize("lab", [LAB, ITMP_LAB], ids=["static-tunnel", "itmp"])
def test_embedded_labs_are_containerlab_topologies(lab: Path) -> None:
    raw = yaml.safe_load(lab.read_text())
    # containerlab's own required shape: name, topology.nodes mapping, topology.links list of
    # {endpoints: ["node:iface", "node:iface"]}.
    assert isinstance(raw["name"], str)
    assert isinstance(raw["topology"]["nodes"], dict)
    for link in raw["topology"]["links"]:
        assert set(link) == {"endpoints"}
        assert len(link["endpoints"]) == 2
    topo = load_topology(lab)
    assert topo.name == lab.name.removesuffix(".clab.yml")
    roles = {spec.labels.get("mast.role") for spec in topo.nodes.values()}
    assert {"transit", "provider-a", "provider-b"} <= roles
    assert {"border-a", "border-b"} <= roles or "border" in roles
    assert {"srms", "dhcp", "dns", "remote"} <= roles
    hosts = [s for s in topo.nodes.values() if s.labels.get("mast.role") == "host"]
    assert len(hosts) >= 2
    for spec in topo.nodes.values():
        assert spec.kind in CLAB_KINDS
        for daemon in spec.daemons:
            assert daemon in STARTERS
    per_node: dict[str, list[str]] = {}
    for link in topo.links:
        for ep in (link.a, link.b):
            assert ep.node in topo.nodes
            assert 0 < len(ep.interface) <= IFNAME_MAX
            per_node.setdefault(ep.node, []).append(ep.interface)
    for node, ifaces in per_node.items():
        assert len(ifaces) == len(set(ifaces)), node


@pytest.mark.parametrize("lab", [LAB, ITMP_LAB], ids=["static-tunnel", "itmp"])
def test_every_node_has_its_startup_configs(lab: Path) -> None:
    topo = load_topology(lab)
    needs = {
        "bird": "bird.conf",
        "snmpd": "snmpd.conf",
        "kea": "kea-dhcp6.json",
        "knot": "knot.conf",
        "srms": "srms.toml",
        "itmp-agent": "itmp-agent.toml",
        "itmp-tms": "itmp-tms.toml",
        "itmp-stub": "itmp-stub.toml",
    }
    for spec in topo.nodes.values():
        if spec.kind != "linux":
            continue
        assert spec.binds, spec.name
        assert Path(spec.host_path("/etc/mast/network.sh")).is_file(), spec.name
        for daemon in spec.daemons:
            if daemon in needs:
                assert Path(spec.host_path("/etc/mast/" + needs[daemon])).is_file(), spec.name
    kea = json.loads(Path(topo.nodes["kea"].host_path("/etc/mast/kea-dhcp6.json")).read_text())
    assert kea["Dhcp6"]["control-socket"]["socket-name"].startswith("/run/mast/")


@pytest.mark.skipif(shutil.which("bird") is None, reason="bird2 not installed")
@pytest.mark.parametrize("lab", [LAB, ITMP_LAB], ids=["static-tunnel", "itmp"])
def test_bird_configs_parse(lab: Path, tmp_path: Path) -> None:
    topo = load_topology(lab)
    for spec in topo.nodes.values():
        if "bird" in spec.daemons:
            text = Path(spec.host_path("/etc/mast/bird.conf")).read_text()
            (tmp_path / spec.name / "itmp.d").mkdir(parents=True)
            conf = tmp_path / f"{spec.name}.conf"
            conf.write_text(text.replace("/run/mast", str(tmp_path)))
            proc = subprocess.run(["bird", "-p", "-c", str(conf)], capture_output=True, text=True)
            assert proc.returncode == 0, f"{spec.name}: {proc.stderr}"


@pytest.mark.parametrize("lab", [LAB, ITMP_LAB], ids=["static-tunnel", "itmp"])
def test_scenario_defaults_match_the_lab(lab: Path) -> None:
    topo = load_topology(lab)
    config = load_scenario(lab)
    assert isinstance(config, ScenarioConfig)
    link = topo.link_between(config.stub_router, config.provider)
    ends = {str(link.a), str(link.b)}
    assert f"{config.stub_router}:{config.stub_interface}" in ends
    assert f"{config.provider}:{config.provider_direct_interface}" in ends
    assert config.provider_tunnel_interface == "auto" or lab == LAB
    for name in (config.remote, config.target, *config.hosts):
        assert name in topo.nodes


BASE = """
name: t1
topology:
  nodes:
    a: {kind: linux, image: debian:12}
    b: {kind: linux, image: debian:12}
  links:
    - endpoints: ["a:eth1", "b:eth1"]
"""


def parse(text: str) -> None:
    parse_topology(text, Path("/tmp/x.clab.yml"))


def test_minimal_topology_parses() -> None:
    topo = parse_topology(BASE, Path("/tmp/x.clab.yml"))
    assert [str(link.a) for link in topo.links] == ["a:eth1"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("name: t1", "name: 't 1'", "name"),
        ("name: t1", "nom: t1", "unknown field"),
        ("kind: linux, image: debian:12}\n    b", "kind: nosuch, image: x}\n    b", "kind"),
        ('"a:eth1", "b:eth1"', '"a:eth1", "c:eth1"', "not defined"),
        ('"a:eth1", "b:eth1"', '"a-eth1", "b:eth1"', "node:interface"),
        ('"a:eth1", "b:eth1"', '"a:eth1"', "two"),
        ('"a:eth1", "b:eth1"', '"a:eth1", "b:averyveryverylongname"', "longer than 15"),
        ('"a:eth1", "b:eth1"', '"a:eth1", "a:eth1"', "used twice"),
        ('"a:eth1", "b:eth1"', '"a:eth0", "b:eth1"', "management"),
        ("image: debian:12}\n    b", "image: debian:12, imgae: x}\n    b", "unknown field"),
        ("image: debian:12}\n    b", "image: debian:12, binds: [nothere:/x]}\n    b", "binds"),
        ("image: debian:12}\n    b", "image: debian:12, env: {X: [1]}}\n    b", "env"),
        ("{kind: linux, image: debian:12}\n    b", "{kind: linux}\n    b", "image"),
        ("links:", "links: 3\n  x:", "unknown field"),
    ],
)
def test_checker_rejects(old: str, new: str, message: str) -> None:
    assert old in BASE
    with pytest.raises(TopologyError, match=message):
        parse(BASE.replace(old, new, 1))


def test_defaults_and_kinds_apply() -> None:
    text = """
name: t2
topology:
  defaults: {kind: linux, image: img:1}
  kinds: {linux: {env: {MAST_DAEMONS: bird}}}
  nodes:
    a: {}
    b: {env: {MAST_DAEMONS: ""}}
    br: {kind: bridge}
  links:
    - endpoints: ["a:e1", "br:br-a"]
"""
    topo = parse_topology(text, Path("/tmp/y.clab.yml"))
    assert topo.nodes["a"].image == "img:1"
    assert topo.nodes["a"].daemons == ["bird"]
    assert topo.nodes["b"].daemons == []
    assert topo.nodes["br"].kind == "bridge"


def test_not_yaml_names_the_file() -> None:
    with pytest.raises(TopologyError, match=r"x\.clab\.yml"):
        parse("name: [unclosed")


def test_scenario_file_is_checked(tmp_path: Path) -> None:
    from mast_common.config import ConfigError

    lab = tmp_path / "x.clab.yml"
    lab.write_text(BASE)
    (tmp_path / "x.scenario.toml").write_text('rate_pps = 50\n[expect]\nmax_loss_window_s = "a"\n')
    with pytest.raises(ConfigError, match="max_loss_window_s"):
        load_scenario(lab)
    (tmp_path / "x.scenario.toml").write_text("rate_pps = 50\nhosts = ['a']\n")
    config = load_scenario(lab)
    assert config.rate_pps == 50 and config.hosts == ["a"] and config.target == "h1"


def test_duplicate_keys_are_rejected_like_containerlab() -> None:
    with pytest.raises(TopologyError, match="duplicate key 'env'"):
        parse(
            BASE.replace(
                "image: debian:12}\n    b", "image: debian:12, env: {}, env: {}}\n    b", 1
            )
        )

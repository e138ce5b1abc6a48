"""The failover scenario: steady state → cut the stub—A access link → wait → restore, measured.

Which nodes play which role comes from `<lab>.scenario.toml` beside the topology file (all keys
optional; the defaults fit labs/mast-failover.clab.yml).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mast_common.config import load_config
from mast_common.log import get_logger
from mast_common.netns import Node, Process
from mast_common.waiting import WaitTimeout, wait_for
from mast_lab import measurement
from mast_lab.parts import Parts
from mast_lab.topology import Topology

log = get_logger(__name__)
PATH_WINDOW_S = 0.3


@dataclass(frozen=True)
class Expectations:
    max_loss_window_s: float = 1.0
    max_deprecation_s: float = 2.0
    max_dns_s: float = 1.0
    max_return_to_direct_s: float = 30.0


@dataclass(frozen=True)
class ScenarioConfig:
    stub_router: str = "r1"  # the stub's border router on the link that is cut
    stub_interface: str = "eth1"
    provider: str = "a"  # the provider whose link is cut (owner of A.n)
    provider_direct_interface: str = "eth2"
    provider_tunnel_interface: str = "tun-r2"
    encapsulation: str = "vxlan"  # of the statically configured backup tunnel
    a_prefix: str = "2001:db8:a01::/48"  # A.n
    remote: str = "remote"
    target: str = "h1"  # receives the stream and the TCP connection on its A-address
    hosts: list[str] = field(default_factory=lambda: ["h1", "h2"])
    host_interface: str = "eth1"
    dns_server: str = "2001:db8:b01:1::53"
    dns_names: list[str] = field(default_factory=lambda: ["h1.stub.example.", "h2.stub.example."])
    rate_pps: float = 100.0
    tcp_rate: float = 20.0
    steady_s: float = 3.0
    outage_s: float = 5.0
    converge_timeout_s: float = 90.0
    recovery_timeout_s: float = 15.0  # for the restore side (SRMS hold-down + actions)
    udp_port: int = 5001
    tcp_port: int = 5002
    expect: Expectations = field(default_factory=Expectations)


def scenario_path(topology: Path) -> Path:
    name = topology.name.removesuffix(".yml").removesuffix(".yaml").removesuffix(".clab")
    return topology.with_name(name + ".scenario.toml")


def load_scenario(topology: Path) -> ScenarioConfig:
    path = scenario_path(topology)
    return load_config(path, ScenarioConfig) if path.exists() else ScenarioConfig()


@dataclass
class Event:
    t: float  # seconds since the scenario's start
    what: str


@dataclass
class Check:
    name: str
    status: str  # pass | fail | skipped
    detail: str


@dataclass
class Result:
    lab: str
    started_unix: float
    parts: dict[str, dict[str, Any]]
    encapsulation: str
    target_address: str
    events: list[Event] = field(default_factory=list)
    measurements: dict[str, Any] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    series: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(c.status == "fail" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class ScenarioError(RuntimeError):
    """The scenario could not run (lab not converged, a probe died)."""


def _address_in(node: Node, ifname: str, prefix: str) -> str:
    net = ipaddress.IPv6Network(prefix)
    out = json.loads(node.exec(["ip", "-6", "-j", "addr", "show", "dev", ifname]).stdout)
    for link in out:
        for info in link.get("addr_info", []):
            addr = ipaddress.IPv6Address(info["local"])
            if addr in net:
                return str(addr)
    raise ScenarioError(f"{node.name}: no address in {prefix} on {ifname}")


def _route_dev(node: Node, address: str) -> str:
    out = json.loads(node.exec(["ip", "-6", "-j", "route", "get", address], timeout=5).stdout)
    return str(out[0].get("dev", "")) if out else ""


def _deprecated(node: Node, ifname: str, address: str) -> bool:
    out = json.loads(node.exec(["ip", "-6", "-j", "addr", "show", "dev", ifname]).stdout)
    for link in out:
        for info in link.get("addr_info", []):
            if info.get("local") == address:
                return bool(info.get("deprecated")) or info.get("preferred_life_time") == 0
    return False


def run_failover(
    topology: Topology,
    nodes: dict[str, Node],
    parts: Parts,
    config: ScenarioConfig,
    outdir: Path,
    *,
    encapsulation: str | None = None,
    bird_socket: Callable[[str], Path] | None = None,
) -> Result:
    outdir.mkdir(parents=True, exist_ok=True)
    probes_dir = outdir / "probes"
    probes_dir.mkdir(exist_ok=True)
    for name in (config.stub_router, config.provider, config.remote, config.target, *config.hosts):
        if name not in nodes:
            raise ScenarioError(f"scenario names node {name!r}, not in {topology.path}")
    target = nodes[config.target]
    target_addr = _address_in(target, config.host_interface, config.a_prefix)
    result = Result(
        lab=topology.name,
        started_unix=time.time(),
        parts=parts.as_dict(),
        encapsulation=encapsulation or _static_encapsulation(config),
        target_address=target_addr,
    )
    t0 = time.monotonic()

    def event(what: str, at: float | None = None) -> None:
        at = time.monotonic() if at is None else at
        result.events.append(Event(round(at - t0, 4), what))
        log.info("failover.event", t=round(at - t0, 4), what=what)

    provider = nodes[config.provider]
    stub_router = nodes[config.stub_router]
    tunnel_if = config.provider_tunnel_interface
    try:
        if tunnel_if == "auto":
            tunnel_if, kind = wait_for(
                lambda: _find_tunnel(provider),
                timeout=config.converge_timeout_s,
                what=f"a backup tunnel (provisioned by ITMP) on {config.provider}",
                interval=0.5,
            )
            result.encapsulation = (
                f"{kind} over IPv6, negotiated and provisioned by ITMP ({tunnel_if} on "
                f"{config.provider})"
            )
        if bird_socket is not None:
            wait_for(
                lambda: _bgp_paths(provider, bird_socket(config.provider), target_addr) >= 2,
                timeout=config.converge_timeout_s,
                what=f"{config.provider} to hold a direct and a backup-tunnel route to A.n",
                interval=0.5,
            )
    except WaitTimeout as exc:
        raise ScenarioError(str(exc)) from None

    # Steady state: A reaches A.n over the direct link and the backup tunnel's session is up.
    try:
        wait_for(
            lambda: _route_dev(provider, target_addr) == config.provider_direct_interface,
            timeout=config.converge_timeout_s,
            what=f"{config.provider} to route {target_addr} over {config.provider_direct_interface}",
            interval=0.5,
        )
        wait_for(
            lambda: _ping(nodes[config.remote], target_addr),
            timeout=config.converge_timeout_s,
            what=f"{config.remote} to reach {target_addr}",
            interval=0.5,
        )
    except WaitTimeout as exc:
        raise ScenarioError(str(exc)) from None
    event("lab converged: direct path in use")
    steady = _control_plane_steady(nodes, parts, config)

    python = sys.executable
    files = {
        n: probes_dir / n for n in ("udp-sent", "udp-recv", "tcp-client", "tcp-server", "path")
    }
    probes: list[Process] = []

    def probe(node: Node, *args: str) -> Process:
        proc = node.spawn([python, "-m", "mast_lab.probes", *args], label=f"probe-{args[0]}")
        probes.append(proc)
        return proc

    interval = 1.0 / config.rate_pps
    try:
        probe(target, "udp-recv", "--port", str(config.udp_port), "--out", str(files["udp-recv"]))
        probe(
            target, "tcp-server", "--port", str(config.tcp_port), "--out", str(files["tcp-server"])
        )
        watch = probe(
            provider,
            "path-watch",
            "--direct",
            config.provider_direct_interface,
            "--tunnel",
            tunnel_if,
            "--out",
            str(files["path"]),
        )
        time.sleep(0.5)  # listeners bound
        remote = nodes[config.remote]
        sender = probe(
            remote, "udp-send", "--to", target_addr, "--port", str(config.udp_port),
            "--rate", str(config.rate_pps), "--out", str(files["udp-sent"]),
        )  # fmt: skip
        client = probe(
            remote, "tcp-client", "--to", target_addr, "--port", str(config.tcp_port),
            "--rate", str(config.tcp_rate), "--out", str(files["tcp-client"]),
        )  # fmt: skip
        wait_for(
            lambda: files["udp-recv"].exists() and files["udp-recv"].stat().st_size > 0,
            timeout=15,
            what="the first packets of the stream at the target",
        )
        event(f"stream started: {config.rate_pps:g} pps UDP + TCP from {config.remote}")
        time.sleep(config.steady_s)

        t_cut = time.monotonic()
        stub_router.set_link(config.stub_interface, False)
        event(
            f"cut {config.stub_router}:{config.stub_interface} (stub—{config.provider} link)", t_cut
        )
        deprecation = _watch_control_plane(nodes, parts, config, t_cut, event, steady)
        remaining = t_cut + config.outage_s - time.monotonic()
        if remaining > 0:
            time.sleep(remaining)

        t_restore = time.monotonic()
        stub_router.set_link(config.stub_interface, True)
        event(f"restored {config.stub_router}:{config.stub_interface}", t_restore)
        # 70 % of the stream over 0.3 s: far above what link-up chatter (router solicitations,
        # MLD reports), BFD (10 pps) and BGP keepalives send in that time.
        min_packets = max(5, int(config.rate_pps * PATH_WINDOW_S * 0.7))

        def direct_again() -> float | None:
            if not watch.alive():
                raise ScenarioError(f"path probe died: {watch.log()}")
            samples = measurement.parse_path(files["path"].read_text().splitlines())
            return measurement.path_in_use(
                samples,
                after=t_restore,
                path="direct",
                window=PATH_WINDOW_S,
                min_packets=min_packets,
            )

        try:
            back = wait_for(
                direct_again,
                timeout=config.expect.max_return_to_direct_s + 5,
                what="traffic back on the direct path",
                interval=0.1,
            )
        except WaitTimeout:
            back = None
        recovery = _watch_recovery(nodes, parts, config, t_restore, event, steady)
        time.sleep(1.0)  # a second of steady state after the return
        sender.stop(timeout=5)
        client.stop(timeout=20)
    finally:
        for proc in reversed(probes):
            proc.stop(timeout=5)

    # Analysis.
    sent = measurement.parse_sent(files["udp-sent"].read_text().splitlines())
    received = measurement.parse_received(files["udp-recv"].read_text().splitlines())
    loss = measurement.loss(sent, received, interval)
    samples = measurement.parse_path(files["path"].read_text().splitlines())
    tunnel_at = measurement.path_in_use(
        samples,
        after=t_cut,
        path="tunnel",
        window=PATH_WINDOW_S,
        min_packets=min_packets,
        until=t_restore,
    )
    if loss.window_start is not None and loss.lost:
        event(f"stream: first of {loss.lost} lost packets sent", loss.window_start)
        if loss.window_end is not None:
            event("stream: delivery resumed", loss.window_end)
    if tunnel_at is not None:
        event(f"{config.provider}: traffic on the backup tunnel", tunnel_at)
    if back is not None:
        event(f"{config.provider}: traffic back on the direct link", back)
    result.events.sort(key=lambda e: e.t)

    tcp = _read_json(files["tcp-client"])
    tcp_server = _read_json(files["tcp-server"])
    m = result.measurements
    m["stream"] = {
        "rate_pps": config.rate_pps,
        "sent": loss.sent,
        "received": loss.received,
        "lost": loss.lost,
        "loss_window_s": round(loss.window_s, 4),
    }
    m["tunnel_in_use_after_cut_s"] = None if tunnel_at is None else round(tunnel_at - t_cut, 4)
    m["return_to_direct_s"] = None if back is None else round(back - t_restore, 4)
    m["tcp"] = {
        "connected": tcp.get("connected", False),
        "sent": tcp.get("sent", 0),
        "echoed": tcp.get("echoed", 0),
        "error": tcp.get("error"),
        "longest_stall_s": round(float(tcp.get("longest_stall_s", 0.0)), 4),
        "server_end": tcp_server.get("end"),
    }
    m.update(deprecation)
    m.update(recovery)
    result.series = {
        "t0": t0,
        "received": [[round(t - t0, 4), s] for s, t in sorted(received.items())],
        "lost_sent_at": [round(t - t0, 4) for s, t in sent if s not in received],
        "path": [[round(p.t - t0, 4), p.direct_tx, p.tunnel_tx] for p in samples[::2]],
        "cut": round(t_cut - t0, 4),
        "restore": round(t_restore - t0, 4),
    }
    _judge(result, config)
    return result


def _find_tunnel(node: Node) -> tuple[str, str] | None:
    links = json.loads(node.exec(["ip", "-j", "-d", "link", "show"]).stdout)
    for link in links:
        kind = link.get("linkinfo", {}).get("info_kind", "")
        if kind in ("vxlan", "ip6gre", "ip6gretap", "ip6tnl"):
            return str(link["ifname"]), str(kind)
    return None


def _bgp_paths(node: Node, socket: Path, address: str) -> int:
    """How many BGP routes `node`'s BIRD holds for `address` (direct + backup tunnel = 2)."""
    out = node.exec(["birdc", "-s", str(socket), "show", "route", "for", address], timeout=5)
    return out.stdout.count("\tvia ")


def _static_encapsulation(config: ScenarioConfig) -> str:
    from mast_lab.parts import kernel_encapsulations

    kernel = kernel_encapsulations()
    return f"{config.encapsulation} over IPv6 (static tunnel)" + (f"; {kernel}" if kernel else "")


def _ping(node: Node, address: str) -> bool:
    proc = node.exec(["ping", "-c", "1", "-W", "1", address], check=False, timeout=5)
    return proc.returncode == 0


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _missing(parts: Parts) -> tuple[list[str], list[str]]:
    hosts = [p.name for p in (parts.srms, parts.kea_hook, parts.mast_client) if not p.present]
    dns = [p.name for p in (parts.srms, parts.knot_module) if not p.present]
    return hosts, dns


def _host_addresses(nodes: dict[str, Node], config: ScenarioConfig) -> dict[str, str]:
    return {h: _address_in(nodes[h], config.host_interface, config.a_prefix) for h in config.hosts}


def _hosts_deprecated(nodes: dict[str, Node], config: ScenarioConfig, addrs: dict[str, str]) -> int:
    return sum(_deprecated(nodes[h], config.host_interface, a) for h, a in addrs.items())


def _dns_a_answers(nodes: dict[str, Node], config: ScenarioConfig) -> int:
    """How many of the scenario's names DNS answers with an A-address."""
    net = ipaddress.IPv6Network(config.a_prefix)
    count = 0
    for name in config.dns_names:
        answer = (
            nodes[config.remote]
            .exec(
                ["kdig", "+short", "+time=1", "+retry=0", f"@{config.dns_server}", "AAAA", name],
                check=False,
                timeout=5,
            )
            .stdout.split()
        )
        if any(ipaddress.IPv6Address(a) in net for a in answer if ":" in a):
            count += 1
    return count


def _control_plane_steady(
    nodes: dict[str, Node], parts: Parts, config: ScenarioConfig
) -> dict[str, bool]:
    """Before the cut, A-addresses must be preferred and in DNS, or the later 'deprecated' and
    'gone from DNS' would prove nothing."""
    missing_hosts, missing_dns = _missing(parts)
    steady = {"hosts": False, "dns": False}
    if not missing_hosts:
        addrs = _host_addresses(nodes, config)
        with contextlib.suppress(WaitTimeout):
            steady["hosts"] = wait_for(
                lambda: _hosts_deprecated(nodes, config, addrs) == 0,
                timeout=10,
                what="A-addresses preferred on every host",
                interval=0.2,
            )
    if not missing_dns:
        with contextlib.suppress(WaitTimeout):
            steady["dns"] = wait_for(
                lambda: _dns_a_answers(nodes, config) == len(config.dns_names),
                timeout=10,
                what="DNS answering A-addresses",
                interval=0.2,
            )
    return steady


def _timed(probe: Callable[[], bool], timeout: float, what: str, since: float) -> float | None:
    """Seconds from `since` until `probe` holds, None when it did not within `timeout`."""
    try:
        wait_for(probe, timeout=timeout, what=what, interval=0.05)
    except WaitTimeout:
        return None
    return round(time.monotonic() - since, 4)


def _watch_control_plane(
    nodes: dict[str, Node],
    parts: Parts,
    config: ScenarioConfig,
    t_cut: float,
    event: Callable[[str, float | None], None],
    steady: dict[str, bool],
) -> dict[str, Any]:
    """Deprecation on hosts and DNS answers after the cut, when the parts that do them run."""
    out: dict[str, Any] = {}
    missing_hosts, missing_dns = _missing(parts)
    if missing_hosts:
        out["hosts_deprecated_s"] = {"status": "not measured", "absent": missing_hosts}
    elif not steady["hosts"]:
        out["hosts_deprecated_s"] = {"status": "invalid", "why": "deprecated before the cut"}
    else:
        addrs = _host_addresses(nodes, config)
        took = _timed(
            lambda: _hosts_deprecated(nodes, config, addrs) == len(addrs),
            config.expect.max_deprecation_s + 3,
            "every host's A-address deprecated",
            t_cut,
        )
        out["hosts_deprecated_s"] = took
        if took is not None:
            event("every host has its A-address deprecated", t_cut + took)
    if missing_dns:
        out["dns_stopped_s"] = {"status": "not measured", "absent": missing_dns}
    elif not steady["dns"]:
        out["dns_stopped_s"] = {"status": "invalid", "why": "no A-address in DNS before the cut"}
    else:
        took = _timed(
            lambda: _dns_a_answers(nodes, config) == 0,
            config.expect.max_dns_s + 3,
            "DNS without A-addresses",
            t_cut,
        )
        out["dns_stopped_s"] = took
        if took is not None:
            event("DNS no longer answers A-addresses", t_cut + took)
    return out


def _watch_recovery(
    nodes: dict[str, Node],
    parts: Parts,
    config: ScenarioConfig,
    t_restore: float,
    event: Callable[[str, float | None], None],
    steady: dict[str, bool],
) -> dict[str, Any]:
    """After the restore and SRMS's hold-down: A-addresses preferred and in DNS again
    (reported, no expectation: the hold-down is a configured delay)."""
    out: dict[str, Any] = {}
    missing_hosts, missing_dns = _missing(parts)
    if not missing_hosts and steady["hosts"]:
        addrs = _host_addresses(nodes, config)
        took = _timed(
            lambda: _hosts_deprecated(nodes, config, addrs) == 0,
            config.recovery_timeout_s,
            "A-addresses preferred again",
            t_restore,
        )
        out["hosts_preferred_again_s"] = took
        if took is not None:
            event("every host prefers its A-address again", t_restore + took)
    if not missing_dns and steady["dns"]:
        took = _timed(
            lambda: _dns_a_answers(nodes, config) == len(config.dns_names),
            config.recovery_timeout_s,
            "A-addresses back in DNS",
            t_restore,
        )
        out["dns_back_s"] = took
        if took is not None:
            event("DNS answers A-addresses again", t_restore + took)
    return out


def _judge(result: Result, config: ScenarioConfig) -> None:
    m, e = result.measurements, config.expect
    window = m["stream"]["loss_window_s"]
    result.checks.append(
        Check(
            "loss window",
            "pass" if m["stream"]["received"] > 0 and window <= e.max_loss_window_s else "fail",
            f"{window:.3f} s (≤ {e.max_loss_window_s} s), {m['stream']['lost']} of "
            f"{m['stream']['sent']} packets lost",
        )
    )
    tcp = m["tcp"]
    survived = bool(tcp["connected"]) and not tcp["error"] and tcp["sent"] == tcp["echoed"]
    result.checks.append(
        Check(
            "TCP survives",
            "pass" if survived and tcp["sent"] > 0 else "fail",
            f"{tcp['echoed']}/{tcp['sent']} echoed, longest stall {tcp['longest_stall_s']:.3f} s"
            + (f", error: {tcp['error']}" if tcp["error"] else ""),
        )
    )
    back = m["return_to_direct_s"]
    result.checks.append(
        Check(
            "return to direct path",
            "pass" if back is not None and back <= e.max_return_to_direct_s else "fail",
            "never" if back is None else f"{back:.3f} s after restore",
        )
    )
    for key, name, limit in (
        ("hosts_deprecated_s", "hosts deprecate A-address", e.max_deprecation_s),
        ("dns_stopped_s", "DNS stops answering A-address", e.max_dns_s),
    ):
        value = m.get(key)
        if isinstance(value, dict) and value["status"] == "invalid":
            result.checks.append(Check(name, "fail", "not measurable: " + value["why"]))
        elif isinstance(value, dict):
            result.checks.append(
                Check(name, "skipped", "not measured: " + ", ".join(value["absent"]) + " absent")
            )
        elif value is None:
            result.checks.append(Check(name, "fail", f"not within {limit + 3:.1f} s"))
        else:
            status = "pass" if value <= limit else "fail"
            result.checks.append(Check(name, status, f"{value:.3f} s (≤ {limit} s)"))

"""Starting ITMP daemons inside `mast_common.netns` labs (tests, benchmarks, `mast-lab`).

`start_router_agent(node, bird=...)` runs `itmp router-agent` in a namespace and waits until it
serves NETCONF; `agent.session()` gives a `RouterSession` to it from the calling process (the
TCP socket is created inside the node's namespace, so no route from the host is needed).
`build_mast_topology(lab)` builds the whole stub—A, stub—B, A—B lab with BIRD, router agents
and a TMS per provider.
"""

from __future__ import annotations

import socket
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from mast_common.daemons.bird import Bird, start_bird
from mast_common.netns import Lab, Node, Process
from mast_common.nsenter import inside
from mast_common.waiting import WaitAborted, wait_for

from itmp.channel import TlsFiles
from itmp.routerclient import RouterEndpoint, RouterSession


def socket_in_netns(node: Node, host: str, port: int, timeout: float = 10) -> socket.socket:
    """A TCP socket created inside `node`'s namespace and connected from there."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with inside(node):
        sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect((host, port))
    except OSError:
        sock.close()
        raise
    return sock


@dataclass
class RouterAgentProcess:
    node: Node
    process: Process
    config: Path
    state_dir: Path
    endpoint: RouterEndpoint

    def session(self) -> RouterSession:
        sock = socket_in_netns(self.node, self.endpoint.host, self.endpoint.port)
        return RouterSession(self.endpoint, sock=sock)

    def restart(self, timeout: float = 30) -> RouterAgentProcess:
        self.process.stop()
        proc = self.node.spawn(_agent_cmd(self.config), label="itmp-agent")
        again = RouterAgentProcess(self.node, proc, self.config, self.state_dir, self.endpoint)
        _wait_ready(again, timeout)
        return again


def _agent_cmd(config: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "itmp",
        "router-agent",
        "-c",
        str(config),
        "--log-format",
        "logfmt",
    ]


def _wait_ready(agent: RouterAgentProcess, timeout: float) -> None:
    def ready() -> bool:
        if not agent.process.alive():
            raise WaitAborted(f"router agent on {agent.node.name} exited:\n{agent.process.log()}")
        return "router_agent.ready" in agent.process.log()

    wait_for(ready, timeout=timeout, what=f"itmp router-agent on {agent.node.name}")


def start_router_agent(
    node: Node,
    *,
    bird: Bird | None = None,
    include_dir: Path | None = None,
    port: int = 830,
    listen: str = "::1",
    backend: str = "kernel",
    username: str = "itmp",
    password: str = "itmp-secret",
    extra: str = "",
    bfd_protocol: bool = True,
    timeout: float = 30,
) -> RouterAgentProcess:
    """Start `itmp router-agent` in `node`. With `bird`, BIRD's config must include `include_dir`."""
    workdir = node.lab.workdir
    state_dir = workdir / f"{node.name}.itmp-agent"
    config = workdir / f"{node.name}.itmp-agent.toml"
    bird_section = ""
    if bird is not None:
        if include_dir is None:
            raise ValueError("start_router_agent: include_dir is needed with bird")
        bird_section = f'[bird]\nsocket = "{bird.socket}"\ninclude_dir = "{include_dir}"\n'
        if not bfd_protocol:
            bird_section += "bfd_protocol = false\n"
    config.write_text(
        textwrap.dedent(
            f"""\
            state_dir = "{state_dir}"
            listen = "{listen}"
            port = {port}
            backend = "{backend}"
            prefix_status_interval = 1.0
            {extra}
            [[users]]
            name = "{username}"
            password = "{password}"
            """
        )
        + bird_section
    )
    proc = node.spawn(_agent_cmd(config), label="itmp-agent")
    host = listen if listen not in ("::", "0.0.0.0") else "::1"
    agent = RouterAgentProcess(
        node, proc, config, state_dir, RouterEndpoint(host, port, username, password)
    )
    _wait_ready(agent, timeout)
    return agent


def bird_include_body(include_dir: Path) -> str:
    """The line a BIRD config body needs so the agent's snippets are read."""
    include_dir.mkdir(parents=True, exist_ok=True)
    return f'include "{include_dir}/*.conf";\n'


# ---------------------------------------------------------------------------------------------
# The MAST topology: stub—A, stub—B, A—B, real BIRD everywhere, ITMP on top.

ASN = {"a": 65001, "b": 65002, "s": 64512}


@dataclass(frozen=True)
class ProviderPlan:
    key: str  # "a" or "b"
    name: str  # "A" or "B"
    aggregate: str  # provider's own space
    gateway: str  # tunnel endpoint + TMS address, on lo
    access_net: str  # stub access link, provider ::1, stub ::2
    stub_prefix: str  # delegated to the stub
    stub_endpoint: str  # the stub's address in stub_prefix (on its lo)
    tunnel_pool: str
    vni_base: int

    def access(self, host: int) -> str:
        return self.access_net.replace("::/64", f"::{host}")


PLANS = {
    "a": ProviderPlan("a", "A", "2001:db8:a::/48", "2001:db8:a::1", "2001:db8:a:f001::/64",
                      "2001:db8:a:1::/64", "2001:db8:a:1::1", "fd00:a::/48", 100000),
    "b": ProviderPlan("b", "B", "2001:db8:b::/48", "2001:db8:b::1", "2001:db8:b:f001::/64",
                      "2001:db8:b:1::/64", "2001:db8:b:1::1", "fd00:b::/48", 200000),
}  # fmt: skip
AB_NET = {"a": "2001:db8:ab::1", "b": "2001:db8:ab::2"}
TIMERS = "connect retry time 2; error wait time 1, 5; connect delay time 1;"
# One BFD protocol for the access links and the tunnels (the agents are told not to add theirs).
# 100 ms x 5: a CI machine shared with other jobs can stall BIRD for 300 ms; 0.5 s still fails
# over well inside a second.
LAB_BFD = 'protocol bfd lab_bfd { interface "*" { min rx interval 100 ms; min tx interval 100 ms; multiplier 5; }; }'


def provider_bird_body(p: ProviderPlan, other: ProviderPlan, include_dir: Path) -> str:
    asn, other_asn = ASN[p.key], ASN[other.key]
    return f"""
protocol kernel {{ ipv6 {{ export all; }}; }}
protocol static own {{ ipv6; route {p.aggregate} unreachable; }}
{LAB_BFD}
protocol bgp stub_direct {{
  local as {asn}; neighbor {p.access(2)} as {ASN["s"]}; direct; bfd on; {TIMERS}
  ipv6 {{ import filter {{ if net ~ [ {p.stub_prefix}+ ] then {{ bgp_local_pref = 200; accept; }} reject; }};
          export all; }};
}}
protocol bgp peer_{other.key} {{
  local as {asn}; neighbor {AB_NET[other.key]} as {other_asn}; direct; {TIMERS}
  ipv6 {{ import all; export filter {{ if net ~ [ {p.aggregate} ] then accept; reject; }}; }};
}}
{bird_include_body(include_dir)}"""


def stub_bird_body(include_dir: Path) -> str:
    parts = [
        "protocol kernel { ipv6 { export all; }; }",
        "protocol static own { ipv6; "
        + " ".join(f"route {p.stub_prefix} unreachable;" for p in PLANS.values())
        + " }",
        LAB_BFD,
    ]
    for p in PLANS.values():
        parts.append(
            f"protocol bgp to_{p.key} {{ local as {ASN['s']}; neighbor {p.access(1)} as {ASN[p.key]};\n"
            f"  direct; bfd on; {TIMERS}\n"
            f"  ipv6 {{ import all; export filter {{ if net ~ [ {p.stub_prefix} ] then accept; reject; }}; }}; }}"
        )
    parts.append(bird_include_body(include_dir))
    return "\n".join(parts)


@dataclass
class TmsProcess:
    node: Node
    process: Process
    config: Path
    state_dir: Path
    port: int

    def restart(self, timeout: float = 30) -> TmsProcess:
        self.process.stop()
        proc = self.node.spawn(_tms_cmd(self.config), label="itmp-tms")
        again = TmsProcess(self.node, proc, self.config, self.state_dir, self.port)
        again.wait_ready(timeout)
        return again

    def wait_ready(self, timeout: float = 30) -> None:
        def ready() -> bool:
            if not self.process.alive():
                raise WaitAborted(f"itmp tms on {self.node.name} exited:\n{self.process.log()}")
            return "tms.ready" in self.process.log()

        wait_for(ready, timeout=timeout, what=f"itmp tms on {self.node.name}")


def _tms_cmd(config: Path) -> list[str]:
    return [sys.executable, "-m", "itmp", "tms", "-c", str(config), "--log-format", "logfmt"]


def start_tms(
    node: Node,
    plan: ProviderPlan,
    other: ProviderPlan,
    agent: RouterAgentProcess,
    tls: TlsFiles,
    *,
    customer: str = "stub1",
    port: int = 4700,
    offer_timeout: float = 30,
) -> TmsProcess:
    workdir = node.lab.workdir
    state_dir = workdir / f"{node.name}.itmp-tms"
    config = workdir / f"{node.name}.itmp-tms.toml"
    e = agent.endpoint
    config.write_text(
        textwrap.dedent(
            f"""\
            name = "{plan.name}"
            asn = {ASN[plan.key]}
            state_dir = "{state_dir}"
            listen = "::"
            port = {port}
            endpoint = "{plan.gateway}"
            tunnel_pool = "{plan.tunnel_pool}"
            vni_base = {plan.vni_base}
            own_prefixes = ["{plan.aggregate}"]
            local_pref = 50
            hold_time = 9
            offer_timeout = {offer_timeout}
            [tls]
            cert = "{tls.cert}"
            key = "{tls.key}"
            ca = "{tls.ca}"
            [router]
            host = "{e.host}"
            port = {e.port}
            username = "{e.username}"
            password = "{e.password}"
            [[customers]]
            name = "{customer}"
            asn = {ASN["s"]}
            prefixes = ["{plan.stub_prefix}"]
            other_prefixes = ["{other.stub_prefix}"]
            """
        )
    )
    proc = node.spawn(_tms_cmd(config), label="itmp-tms")
    tms = TmsProcess(node, proc, config, state_dir, port)
    tms.wait_ready()
    return tms


@dataclass
class MastTopology:
    nodes: dict[str, Node]
    birds: dict[str, Bird]
    agents: dict[str, RouterAgentProcess]
    tms: dict[str, TmsProcess]
    pki_dir: Path
    stub_config: Path

    def run_stub_once(self, timeout: float = 120) -> str:
        node = self.nodes["s"]
        out = node.exec(
            [
                sys.executable,
                "-m",
                "itmp",
                "stub",
                "-c",
                str(self.stub_config),
                "--once",
                "--log-format",
                "logfmt",
            ],
            timeout=timeout,
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(
                f"itmp stub --once exited {out.returncode}:\n{out.stdout}\n{out.stderr}"
            )
        return out.stdout + out.stderr


def build_mast_topology(lab: Lab) -> MastTopology:
    """Stub s and providers a, b (BIRD + router agent each, a TMS per provider), joined
    stub—A (through an Ethernet switch `swa`, so a cut there leaves A's port up and only BFD
    notices), stub—B and A—B."""
    from itmp.pki import LabCa

    s, a, b = lab.node("s"), lab.node("a"), lab.node("b")
    swa = lab.node("swa")
    lab.link("s", "s-a", "swa", "swa-s")
    lab.link("swa", "swa-a", "a", "a-s")
    swa.ip("link", "add", "br0", "type", "bridge", "stp_state", "0", "mcast_snooping", "0")
    for port in ("swa-s", "swa-a"):
        swa.ip("link", "set", port, "master", "br0")
    swa.set_link("br0", True)
    lab.link("s", "s-b", "b", "b-s")
    lab.link("a", "a-b", "b", "b-a")
    for n in (s, a, b):
        n.exec(["sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"])
        # A cut access link must come back with its addresses (Linux flushes them on link down).
        n.exec(["sysctl", "-qw", "net.ipv6.conf.all.keep_addr_on_down=1"])
        n.exec(["sysctl", "-qw", "net.ipv6.conf.default.keep_addr_on_down=1"])
    for key, node in (("a", a), ("b", b)):
        p = PLANS[key]
        node.ip("-6", "addr", "add", f"{p.gateway}/128", "dev", "lo")
        node.add_address(f"{key}-s", f"{p.access(1)}/64")
        node.add_address(f"{key}-{'b' if key == 'a' else 'a'}", f"{AB_NET[key]}/64")
        s.add_address(f"s-{key}", f"{p.access(2)}/64")
        s.ip("-6", "addr", "add", f"{p.stub_endpoint}/128", "dev", "lo")
    birds: dict[str, Bird] = {}
    agents: dict[str, RouterAgentProcess] = {}
    for key, node, rid in (("a", a, "10.0.0.1"), ("b", b, "10.0.0.2"), ("s", s, "10.0.0.9")):
        inc = lab.workdir / f"{key}.itmp.d"
        other = PLANS["b" if key == "a" else "a"]
        body = stub_bird_body(inc) if key == "s" else provider_bird_body(PLANS[key], other, inc)
        birds[key] = start_bird(node, router_id=rid, body=body)
        agents[key] = start_router_agent(node, bird=birds[key], include_dir=inc, bfd_protocol=False)
    pki_dir = lab.workdir / "pki"
    ca = LabCa.create(pki_dir)
    tms: dict[str, TmsProcess] = {}
    for key, node in (("a", a), ("b", b)):
        p = PLANS[key]
        files = ca.issue(f"tms.{key}.example", server_names=[f"tms.{key}.example", p.gateway])
        tms[key] = start_tms(node, p, PLANS["b" if key == "a" else "a"], agents[key], files)
    stub_tls = ca.issue("stub1")
    e = agents["s"].endpoint
    providers = "".join(
        textwrap.dedent(
            f"""\
            [[providers]]
            name = "{p.name}"
            tms_host = "{p.gateway}"
            server_name = "tms.{p.key}.example"
            prefix = "{p.stub_prefix}"
            endpoint = "{p.stub_endpoint}"
            underlay_next_hop = "{p.access(1)}"
            """
        )
        for p in PLANS.values()
    )
    stub_config = lab.workdir / "s.itmp-stub.toml"
    stub_config.write_text(
        textwrap.dedent(
            f"""\
            name = "stub1"
            asn = {ASN["s"]}
            state_dir = "{lab.workdir / "s.itmp-stub"}"
            [tls]
            cert = "{stub_tls.cert}"
            key = "{stub_tls.key}"
            ca = "{stub_tls.ca}"
            [router]
            host = "{e.host}"
            port = {e.port}
            username = "{e.username}"
            password = "{e.password}"
            """
        )
        + providers
    )
    return MastTopology(
        {"s": s, "a": a, "b": b, "swa": swa}, birds, agents, tms, pki_dir, stub_config
    )

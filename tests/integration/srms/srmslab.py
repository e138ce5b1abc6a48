"""A stub lab for SRMS integration tests: border router r1 (snmpd, access links to providers A
and B), a management link to node `ops` where SRMS (a real `srms run` process) and the peers run.

    pa --- (acca) r1 (accb) --- pb
                  | mgmt fd00:ff::1/64
                  | mgmt fd00:ff::2/64
                 ops: srms, kea-dhcp6, knotd, (router agent runs in r1)
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mast_common.daemons import start_snmpd
from mast_common.daemons.snmpd import Snmpd
from mast_common.netns import Lab, Node, Process
from mast_common.waiting import WaitAborted, wait_for

from srms.control import ControlError, request
from srms.snmpd_conf import V3Sink, snippet

REPO = Path(__file__).resolve().parents[3]
BUILD = REPO / "build"
SRMS = str(Path(sys.executable).parent / "srms")
R1_MGMT = "fd00:ff::1"
OPS_MGMT = "fd00:ff::2"
PREFIX_A = "2001:db8:a::/64"
PREFIX_B = "2001:db8:b::/64"
PREFIX_C = "2001:db8:c::/64"  # renumbering target
TRAP_PORT = 1162
V3_USER = V3Sink("srms", "srms-auth-key-1", "srms-priv-key-1", engine_id="8000000001020304")
ROUTER_ENGINE = "80001f8880aabbccdd"


def hook_library() -> Path | None:
    lib = BUILD / "dhcp-hooks" / "libdhcp_mast.so"
    return lib if lib.exists() else None


def knot_module() -> Path | None:
    mod = BUILD / "dns-plugins" / "mod_mast.so"
    return mod if mod.exists() else None


def mast_dns_available() -> bool:
    try:
        import mast_dns.update  # noqa: F401
    except ImportError:
        return False
    return True


def router_agent_available() -> bool:
    try:
        out = subprocess.run(
            [sys.executable, "-m", "itmp", "router-agent", "--help"],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


def require(what: str, ok: bool) -> None:
    if not ok:
        pytest.skip(f"waiting for {what}")


@dataclass
class SrmsProcess:
    node: Node
    process: Process
    config: Path
    socket: Path
    log_lines_seen: int = 0

    def control(self, command: dict[str, Any], timeout: float = 10) -> dict[str, Any]:
        return request(self.socket, command, timeout=timeout)

    def status(self) -> dict[str, Any]:
        return self.control({"command": "status"})

    def prefix_status(self, prefix: str) -> str:
        for p in self.status()["prefixes"]:
            if p["prefix"] == prefix:
                return str(p["status"])
        raise KeyError(prefix)

    def metrics(self) -> dict[str, float]:
        """The daemon's Prometheus samples, scraped from inside its namespace."""
        [started] = self.events("srms.started")
        fetch = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())"
        text = self.node.exec([sys.executable, "-c", fetch, started["metrics"]]).stdout
        out: dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def records(self) -> list[dict[str, Any]]:
        out = []
        for line in self.process.log().splitlines():
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    continue
        return out

    def events(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("event") == name]


@dataclass
class StubLab:
    lab: Lab
    r1: Node
    ops: Node
    snmpd: Snmpd | None = None
    srms: SrmsProcess | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def workdir(self) -> Path:
        return self.lab.workdir

    def if_index(self, ifname: str) -> int:
        info = json.loads(self.r1.exec(["ip", "-j", "link", "show", ifname]).stdout)
        return int(info[0]["ifindex"])

    def start_snmpd(
        self,
        *,
        community: str | None = "public",
        v3: V3Sink | None = None,
        extra: str = "",
        with_ifname: bool = True,
    ) -> Snmpd:
        sink = f"udp6:[{OPS_MGMT}]:{TRAP_PORT}"
        lines = snippet(sink, community=community, v3=v3, with_ifname=with_ifname)
        extra = "rocommunity6 public default\n" + lines + extra
        self.snmpd = start_snmpd(self.r1, agent=f"udp6:[{R1_MGMT}]:161", extra_config=extra)
        return self.snmpd

    def srms_config(self, body: str, *, hold_down: float = 2.0, **daemon: Any) -> Path:
        d = {
            "state_db": str(self.workdir / "srms" / "state.db"),
            "control_socket": str(self.workdir / "srms" / "control.sock"),
            "metrics_port": 0,
            "metrics_addr": "127.0.0.1",
            **daemon,
        }
        daemon_toml = "\n".join(f"{k} = {json.dumps(v)}" for k, v in d.items())
        text = (
            f"[daemon]\n{daemon_toml}\n\n[timers]\nhold_down = {hold_down}\n"
            "retry_initial = 0.2\nretry_max = 1.0\naction_timeout = 3.0\n\n" + textwrap.dedent(body)
        )
        path = self.workdir / "srms.toml"
        path.write_text(text)
        return path

    def start_srms(self, config: Path, timeout: float = 20) -> SrmsProcess:
        sock = self.workdir / "srms" / "control.sock"
        proc = self.ops.spawn(
            [SRMS, "--log-format", "json", "--log-level", "debug", "-c", str(config), "run"],
            label="srms",
        )

        def up() -> bool:
            if not proc.alive():
                raise WaitAborted(f"srms exited with {proc.popen.returncode}:\n{proc.log()}")
            try:
                return bool(request(sock, {"command": "status"}, timeout=2).get("ok"))
            except ControlError:
                return False

        wait_for(up, timeout=timeout, what="srms control socket", interval=0.1)
        self.srms = SrmsProcess(self.ops, proc, config, sock)
        return self.srms


def build_stub_lab(lab: Lab) -> StubLab:
    r1 = lab.node("r1")
    ops = lab.node("ops")
    lab.node("pa")
    lab.node("pb")
    lab.link("r1", "acca", "pa", "eth0")
    lab.link("r1", "accb", "pb", "eth0")
    lab.link("r1", "mgmt", "ops", "mgmt")
    r1.add_address("mgmt", f"{R1_MGMT}/64")
    ops.add_address("mgmt", f"{OPS_MGMT}/64")
    return StubLab(lab, r1, ops)


def snmp_block(
    *, community: str | None = "public", v3: V3Sink | None = None, engine: str = ROUTER_ENGINE
) -> str:
    lines = ["[snmp]", f'listen = ["[{OPS_MGMT}]:{TRAP_PORT}"]']
    lines.append(f"communities = {json.dumps([community] if community else [])}")
    if v3 is not None:
        lines += [
            "[[snmp.users]]",
            f'user = "{v3.user}"',
            f'auth_key = "{v3.auth_key}"',
            f'priv_key = "{v3.priv_key}"',
            f'engine_id = "{engine}"',
        ]
    return "\n".join(lines) + "\n"


def providers_block(a_access: str, b_access: str) -> str:
    return (
        f'[[providers]]\nname = "A"\nprefixes = ["{PREFIX_A}"]\naccess = {{ {a_access} }}\n\n'
        f'[[providers]]\nname = "B"\nprefixes = ["{PREFIX_B}"]\naccess = {{ {b_access} }}\n\n'
    )


def wait_status(s: SrmsProcess, prefix: str, status: str, timeout: float = 15) -> float:
    wait_for(
        lambda: s.prefix_status(prefix) == status,
        timeout=timeout,
        what=f"{prefix} {status}",
        interval=0.05,
    )
    return time.time()


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def print_timeline(title: str, marks: list[tuple[str, float]]) -> None:
    marks = sorted(marks, key=lambda m: m[1])
    t0 = marks[0][1]
    print(f"\n--- timeline: {title}")
    for what, at in marks:
        print(f"  +{(at - t0) * 1000:8.1f} ms  {what}")


def env_path() -> dict[str, str]:
    return {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}


Probe = Callable[[], bool]


# ---- the three peers -------------------------------------------------------------------------

KEY_NAME = "srms-key."
KEY_SECRET = "c3Jtcy10ZXN0LWtleS0wMDAwMDAwMDAwMDAwMDAwMDA="
ZONE = "lab.mast."
AGENT_USER, AGENT_PASSWORD = "srms", "srms-secret"
HOST_IFID = 0x10


def start_kea(stub: StubLab, subnets: tuple[str, ...] = (PREFIX_A, PREFIX_B, PREFIX_C)) -> Any:
    """kea-dhcp6 on r1 serving lan0, one subnet6 per provider prefix, the MAST hook loaded."""
    from mast_common.daemons import start_kea_dhcp6

    lib = hook_library()
    assert lib is not None
    nets = [{"id": i + 1, "subnet": p} for i, p in enumerate(subnets)]
    nets[0]["pools"] = [{"pool": f"{subnets[0].split('/')[0]}100-{subnets[0].split('/')[0]}1ff"}]
    hook = {
        "library": str(lib),
        "parameters": {
            "push-key": "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
            "state-file": str(stub.workdir / "mast-prefix-state.json"),
        },
    }
    extra = {"shared-networks": [{"name": "lan", "interface": "lan0", "subnet6": nets}]}
    return start_kea_dhcp6(stub.r1, interfaces=["lan0"], hooks=[hook], extra=extra)


def kea_statuses(kea: Any) -> dict[str, str]:
    answer = kea.command("mast-prefix-list")
    assert answer.get("result") == 0, answer
    return {p["prefix"]: p["status"] for p in answer["arguments"]["prefixes"]}


def start_knot(stub: StubLab, ttl: int = 2) -> Any:
    """knotd on ops (mgmt address) with mod-mast and a zone listing prefixes A and B."""
    from mast_common.daemons import start_knot as start
    from mast_common.prefix import PrefixStatus
    from mast_dns import knotconf
    from mast_dns.update import TsigKey

    key = TsigKey(KEY_NAME, KEY_SECRET)
    mod = knot_module()
    assert mod is not None
    zone = knotconf.zone_text(
        ZONE,
        hosts={"h1": HOST_IFID},
        prefixes=[(PREFIX_A, PrefixStatus.PREFERRED), (PREFIX_B, PrefixStatus.PREFERRED)],
        ttl=ttl,
    )
    knot = start(
        stub.ops,
        listen=[f"{OPS_MGMT}@53"],
        zones={ZONE: zone},
        extra_config=knotconf.key_and_acl(key) + knotconf.module_sections(mod, ttl=ttl),
        zone_options=knotconf.zone_options() + "    zonefile-sync: -1\n",
    )
    knotconf.wait_loaded(knot, ZONE)
    return knot


def dns_block(max_ttl: float = 2.0) -> str:
    return (
        f'[[dns]]\nzone = "{ZONE}"\nserver = "{OPS_MGMT}"\nkey_name = "{KEY_NAME}"\n'
        f'key_secret = "{KEY_SECRET}"\nmax_ttl = {max_ttl}\ntimeout = 1.0\n'
    )


def aaaa(stub: StubLab, name: str = "h1") -> list[str]:
    out = stub.ops.exec(["kdig", f"@{OPS_MGMT}", f"{name}.{ZONE}", "AAAA", "+short", "+time=2"])
    return sorted(line for line in out.stdout.split() if ":" in line)


def host_address(prefix: str) -> str:
    import ipaddress

    return str(ipaddress.IPv6Network(prefix).network_address + HOST_IFID)


@dataclass
class Agent:
    process: Process
    config: Path


def start_router_agent(stub: StubLab, timeout: float = 30) -> Agent:
    """`itmp router-agent` (a separate process: SRMS knows it only as a NETCONF server) on r1."""
    config = stub.workdir / "r1.agent.toml"
    config.write_text(
        textwrap.dedent(
            f"""\
            state_dir = "{stub.workdir / "r1.agent"}"
            listen = "{R1_MGMT}"
            port = 830
            backend = "kernel"
            prefix_status_interval = 1.0
            [[users]]
            name = "{AGENT_USER}"
            password = "{AGENT_PASSWORD}"
            """
        )
    )
    proc = stub.r1.spawn(
        [sys.executable, "-m", "itmp", "router-agent", "-c", str(config), "--log-format", "json"],
        label="itmp-agent",
    )

    def ready() -> bool:
        if not proc.alive():
            raise WaitAborted(f"router agent exited:\n{proc.log()}")
        return "router_agent.ready" in proc.log()

    wait_for(ready, timeout=timeout, what="itmp router-agent on r1")
    return Agent(proc, config)


def routers_block() -> str:
    return (
        f'[[routers]]\nname = "r1"\nhost = "{R1_MGMT}"\nport = 830\n'
        f'username = "{AGENT_USER}"\npassword = "{AGENT_PASSWORD}"\ntimeout = 3.0\n'
    )


def router_address_flags(stub: StubLab, address: str) -> str | None:
    """The `ip -6 addr` line of `address` on r1's lan0 (None when absent)."""
    for line in stub.r1.ip("-6", "addr", "show", "dev", "lan0").splitlines():
        if f" {address}/" in line:
            return line.strip()
    return None


def add_lan(stub: StubLab, prefixes: tuple[str, ...] = (PREFIX_A, PREFIX_B)) -> None:
    stub.lab.node("h1")
    stub.lab.link("r1", "lan0", "h1", "eth0")
    for p in prefixes:
        stub.r1.add_address("lan0", f"{p.split('/')[0]}1/64")

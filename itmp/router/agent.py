"""`itmp router-agent`: configuration schema and the daemon's main loop."""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Literal

from mast_common.log import get_logger
from mast_common.metrics import MetricsEndpoint
from prometheus_client import Gauge

from itmp.router.backends import DryRunBackend, KernelBackend
from itmp.router.bird import BirdControl
from itmp.router.datastore import AgentMetrics, Backend, Datastores, StateStore
from itmp.router.model import Encapsulation
from itmp.router.server import (
    RouterMethods,
    RouterNetconfServer,
    ensure_host_key,
    quiet_library_logs,
)

log = get_logger(__name__)

IFF_UP = 0x1
IFF_RUNNING = 0x40  # administratively up and carrier: the kernel's "operationally up"
# After a link comes up its connected route may lag a moment behind the event: retry this often,
# for this long, before falling back to the periodic pass.
LINK_UP_RETRY = 0.2
LINK_UP_RETRY_WINDOW = 5.0


class LinkWatch:
    """Wakes the agent when an interface comes (back) up, so the underlay pins the kernel flushed
    when it went down are re-installed at once instead of at the next periodic pass."""

    def __init__(self, wake: threading.Event) -> None:
        self.wake = wake
        self.up: dict[int, bool] = {}

    def seen(self, msg: Any) -> None:
        index = int(msg.get("index") or 0)
        up = msg.get("event") != "RTM_DELLINK" and (int(msg.get("flags") or 0) & IFF_UP) != 0
        up = up and (int(msg.get("flags") or 0) & IFF_RUNNING) != 0
        was = self.up.get(index)
        self.up[index] = up
        if up and was is False:
            log.info("link.up", interface=msg.get("ifname"), index=index)
            self.wake.set()

    def start(self) -> None:
        # A daemon thread: pyroute2's blocking read has no timeout, and the agent exits anyway.
        threading.Thread(target=self._run, name="itmp-link-watch", daemon=True).start()

    def _run(self) -> None:
        try:
            from pyroute2 import IPRoute
            from pyroute2.netlink.rtnl import RTMGRP_LINK

            with IPRoute() as events:
                events.bind(groups=RTMGRP_LINK)
                for msg in events.get_links():
                    self.seen(msg)
                log.info("link_watch.started", links=len(self.up))
                while True:
                    for msg in events.get():
                        if msg.get("event") in ("RTM_NEWLINK", "RTM_DELLINK"):
                            self.seen(msg)
        except Exception as exc:  # the periodic pass still restores, only later
            log.warning("link_watch.failed", error=repr(exc))


@dataclass(frozen=True)
class User:
    name: str
    password: str


@dataclass(frozen=True)
class BirdSettings:
    socket: Path
    include_dir: Path
    # Write a `protocol bfd` into the include directory when a neighbour wants BFD; turn off when
    # the operator's bird.conf has its own.
    bfd_protocol: bool = True


@dataclass(frozen=True)
class AgentConfig:
    users: list[User]
    state_dir: Path
    listen: str = "::"
    port: int = 830
    host_key: Path | None = None
    backend: Literal["kernel", "dry-run"] = "kernel"
    bird: BirdSettings | None = None
    # What the dry-run backend claims to support (it has no kernel to probe).
    dry_run_encapsulations: list[Encapsulation] = field(
        default_factory=lambda: [Encapsulation.GRE, Encapsulation.VXLAN]
    )
    # How often statuses are re-applied to addresses that appeared meanwhile (DHCP, SLAAC).
    prefix_status_interval: float = 5.0
    metrics_listen: str = "127.0.0.1"
    metrics_port: int | None = None

    def __post_init__(self) -> None:
        if not self.users:
            raise ValueError("users: at least one NETCONF user is needed")
        if not 0 <= self.port < 65536:
            raise ValueError(f"port {self.port} out of range")
        if self.prefix_status_interval <= 0:
            raise ValueError("prefix_status_interval must be positive")


def build_backend(cfg: AgentConfig) -> Backend:
    if cfg.backend == "dry-run":
        return DryRunBackend(list(cfg.dry_run_encapsulations))
    bird = BirdControl(cfg.bird.socket, cfg.bird.include_dir) if cfg.bird else None
    return KernelBackend(bird, bfd_protocol=cfg.bird.bfd_protocol if cfg.bird else False)


class RouterAgent:
    """The running agent: datastores + NETCONF server + prefix-status refresher."""

    def __init__(self, cfg: AgentConfig) -> None:
        self.cfg = cfg
        self.backend = build_backend(cfg)
        self.metrics = AgentMetrics()
        self.stores = Datastores(
            self.backend, StateStore(cfg.state_dir / "running.sqlite"), self.metrics
        )
        self.stop_event = threading.Event()
        # Set by a link coming up (and by stop): run the refresh pass now.
        self.wake = threading.Event()
        self.server: RouterNetconfServer | None = None

    def stop(self) -> None:
        self.stop_event.set()
        self.wake.set()

    def start(self) -> None:
        encaps, reasons = self.backend.encapsulations()
        log.info(
            "router_agent.encapsulations",
            backend=self.backend.name,
            supported=",".join(e.value for e in encaps) or "none",
            why="; ".join(f"{k}: {v}" for k, v in reasons.items()),
        )
        self.stores.start()
        if isinstance(self.backend, KernelBackend):
            LinkWatch(self.wake).start()
        host_key = ensure_host_key(self.cfg.host_key or self.cfg.state_dir / "ssh_host_rsa_key")
        users = {u.name: u.password for u in self.cfg.users}
        self.server = RouterNetconfServer(
            RouterMethods(self.stores), users, host_key, self.cfg.listen, self.cfg.port
        )
        log.info(
            "router_agent.ready",
            listen=self.cfg.listen,
            port=self.server.port,
            backend=self.backend.name,
        )

    def run(self) -> None:
        registry = self.metrics.registry
        tunnels = Gauge("itmp_router_tunnels", "tunnel interfaces in running", registry=registry)
        neighbors = Gauge(
            "itmp_router_bgp_neighbors", "BGP neighbours in running", registry=registry
        )
        metrics = (
            MetricsEndpoint(registry, self.cfg.metrics_listen, self.cfg.metrics_port)
            if self.cfg.metrics_port is not None
            else None
        )
        if metrics:
            metrics.start()
        retry_until = 0.0
        try:
            while not self.stop_event.is_set():
                soon = time.monotonic() < retry_until
                if self.wake.wait(LINK_UP_RETRY if soon else self.cfg.prefix_status_interval):
                    self.wake.clear()
                    retry_until = time.monotonic() + LINK_UP_RETRY_WINDOW
                if self.stop_event.is_set():
                    break
                try:
                    if not self.stores.refresh():
                        retry_until = 0.0
                except Exception as exc:  # a vanished interface must not end the daemon
                    log.warning("router.refresh_failed", error=str(exc))
                tunnels.set(len(self.stores.running.tunnels))
                neighbors.set(len(self.stores.running.neighbors))
        finally:
            if metrics:
                metrics.close()
            if self.server is not None:
                self.server.close()
            self.stores.store.close()


def run_agent(cfg: AgentConfig, debug: bool = False) -> int:
    quiet_library_logs(debug)
    agent = RouterAgent(cfg)

    def stop(signum: int, frame: FrameType | None) -> None:
        log.info("router_agent.stopping", signal=signum)
        agent.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    agent.start()
    agent.run()
    return 0

"""srms.toml: the stub's providers, their access links, and the peers SRMS keeps informed."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mast_common.config import load_config
from mast_common.prefix import IPv6Network

AuthProtocol = Literal["MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512"]
PrivProtocol = Literal["DES", "3DES", "AES", "AES192", "AES256"]


@dataclass(frozen=True)
class AccessLink:
    """How SRMS recognises the provider's access link in each event source."""

    # SNMP: the agent address the border router's traps come from, and the interface there.
    router: str = ""
    if_index: int | None = None
    if_name: str | None = None
    # netlink: the interface name when SRMS runs on the border router itself.
    netlink_ifname: str | None = None
    # BIRD: the protocol (BGP session) over the access link.
    bird_protocol: str | None = None

    def __post_init__(self) -> None:
        if self.router:
            try:
                ipaddress.ip_address(self.router)
            except ValueError:
                raise ValueError(f"router: not an IP address: {self.router!r}") from None
            if self.if_index is None and self.if_name is None:
                raise ValueError("router is set: name the interface with if_index or if_name")
        if not (self.router or self.netlink_ifname or self.bird_protocol):
            raise ValueError("access link needs router (SNMP), netlink_ifname or bird_protocol")


@dataclass(frozen=True)
class Provider:
    name: str
    prefixes: list[IPv6Network]
    access: AccessLink


@dataclass(frozen=True)
class SnmpUser:
    """An SNMPv3 (USM) user whose authPriv traps/informs SRMS accepts."""

    user: str
    auth_key: str
    priv_key: str
    auth_protocol: AuthProtocol = "SHA"
    priv_protocol: PrivProtocol = "AES"
    # Traps are sent with the router's engine ID, so the receiver must know it (hex, no 0x);
    # informs use SRMS's own engine ID and need none.
    engine_id: str | None = None


@dataclass(frozen=True)
class Snmp:
    listen: list[str] = field(default_factory=lambda: ["0.0.0.0:162"])
    communities: list[str] = field(default_factory=list)
    users: list[SnmpUser] = field(default_factory=list)
    # SRMS's own engine ID (hex); routers sending informs learn it by discovery.
    engine_id: str | None = None
    # For access links named by if_name when the notification carries no ifName (stock
    # `linkUpDownNotifications`): SRMS asks the router for ifName.<ifIndex> with this
    # SNMPv2c community (read-only) on get_port, and caches the answer.
    get_community: str | None = None
    get_port: int = 161
    get_timeout: float = 1.0


@dataclass(frozen=True)
class Netlink:
    enabled: bool = True


@dataclass(frozen=True)
class Bird:
    socket: Path = Path("/run/bird/bird.ctl")
    poll_interval: float = 1.0


@dataclass(frozen=True)
class Kea:
    sockets: list[Path]
    timeout: float = 2.0


@dataclass(frozen=True)
class DnsZone:
    zone: str
    server: str
    key_name: str
    key_secret: str
    key_algorithm: str = "hmac-sha256"
    port: int = 53
    timeout: float = 2.0
    # The longest TTL of the zone's address records: renumbering waits this long before it
    # withdraws the old prefix, so no resolver still caches an address from it.
    max_ttl: float = 3600.0


@dataclass(frozen=True)
class Router:
    """A stub router told over NETCONF to deprecate addresses of a discouraged prefix."""

    name: str
    host: str
    username: str
    password: str
    port: int = 830
    timeout: float = 5.0


@dataclass(frozen=True)
class Timers:
    # A link must stay up this long before its prefixes are preferred again (flap damping).
    hold_down: float = 30.0
    retry_initial: float = 0.5
    retry_max: float = 30.0
    action_timeout: float = 5.0


@dataclass(frozen=True)
class Daemon:
    state_db: Path = Path("/var/lib/srms/state.db")
    control_socket: Path = Path("/run/srms/control.sock")
    metrics_addr: str = "127.0.0.1"
    metrics_port: int = 9468  # 0 = pick a free port, -1 = no metrics endpoint
    # After a restart, push every prefix's current status again (actions are idempotent), in
    # case a peer lost what it was told while SRMS was away.
    resync_on_start: bool = True


@dataclass(frozen=True)
class SrmsConfig:
    providers: list[Provider]
    daemon: Daemon = field(default_factory=Daemon)
    timers: Timers = field(default_factory=Timers)
    snmp: Snmp | None = None
    netlink: Netlink | None = None
    bird: Bird | None = None
    kea: Kea | None = None
    dns: list[DnsZone] = field(default_factory=list)
    routers: list[Router] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.providers:
            raise ValueError("providers: at least one provider is needed")
        names = [p.name for p in self.providers]
        if len(set(names)) != len(names):
            raise ValueError(f"providers: duplicate provider name in {names}")
        seen: list[tuple[IPv6Network, str]] = []
        for p in self.providers:
            for net in p.prefixes:
                for other, owner in seen:
                    if net.overlaps(other):
                        raise ValueError(
                            f"providers: prefix {net} of {p.name} overlaps {other} of {owner}"
                        )
                seen.append((net, p.name))
        if self.timers.hold_down < 0 or self.timers.retry_initial <= 0:
            raise ValueError("timers: hold_down must be >= 0 and retry_initial > 0")

    def provider(self, name: str) -> Provider:
        for p in self.providers:
            if p.name == name:
                return p
        raise KeyError(name)


def load(path: str | Path) -> SrmsConfig:
    return load_config(path, SrmsConfig)

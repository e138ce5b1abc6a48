"""`itmp stub`: request a backup tunnel from each provider through each other provider.

For provider P and every other provider Q, the stub asks P's TMS for a tunnel that carries P's
prefix and ends at the stub's address from Q (so it runs through Q's network), configures its own
border router to match the offer (pinning the underlay through Q's access link), confirms, and
keeps the ITMP session alive. Tunnels survive a lost ITMP session — the session to P's TMS may
well run over the very link that failed; they go only on TEARDOWN (config change).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import re
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mast_common.log import get_logger

from itmp.channel import Channel, PeerError, TlsFiles, check_hello, client_context, hello_body
from itmp.protocol import ErrorCode, Message, MessageType, ProtocolError
from itmp.router.model import Encapsulation, Neighbor, Tunnel
from itmp.routerclient import RouterEndpoint, RouterError, RouterSession
from itmp.tms import RouterSettings

log = get_logger(__name__)

STUB_TUNNEL_PREFIX = "itmp"
STUB_NEIGHBOR_PREFIX = "itmp_"


@dataclass(frozen=True)
class ProviderLink:
    name: str
    tms_host: str
    prefix: ipaddress.IPv6Network  # delegated by this provider
    endpoint: (
        ipaddress.IPv6Address
    )  # the stub's address in `prefix`: tunnels via this provider end here
    underlay_next_hop: ipaddress.IPv6Address  # this provider's router on the access link
    tms_port: int = 4700
    server_name: str = ""  # name in the TMS certificate (default: tms_host)


@dataclass(frozen=True)
class StubConfig:
    name: str
    asn: int
    state_dir: Path
    tls: TlsFiles
    router: RouterSettings
    providers: list[ProviderLink]
    bfd: bool = True
    keepalive: int = 10
    reconnect: float = 2.0

    def __post_init__(self) -> None:
        if len(self.providers) < 2:
            raise ValueError("providers: a multihomed stub needs at least two")
        names = [p.name for p in self.providers]
        if len(set(names)) != len(names):
            raise ValueError("providers: names must be distinct")
        for p in self.providers:
            if p.endpoint not in p.prefix:
                raise ValueError(
                    f"providers[{p.name}]: endpoint {p.endpoint} is not inside {p.prefix}"
                )


@dataclass(frozen=True)
class BackupPath:
    """A tunnel that carries `provider`'s prefix through `via`'s network."""

    provider: ProviderLink
    via: ProviderLink
    index: int

    @property
    def key(self) -> str:
        return f"{self.provider.name}/{self.via.name}"

    @property
    def ifname(self) -> str:
        return f"{STUB_TUNNEL_PREFIX}{self.index}"

    @property
    def neighbor_name(self) -> str:
        raw = f"{STUB_NEIGHBOR_PREFIX}{self.provider.name}_via_{self.via.name}"
        return re.sub(r"[^A-Za-z0-9_]", "_", raw)[:63]


def backup_paths(cfg: StubConfig) -> list[BackupPath]:
    ordered = sorted(cfg.providers, key=lambda p: p.name)
    pairs = [(p, q) for p in ordered for q in ordered if p.name != q.name]
    return [BackupPath(p, q, i) for i, (p, q) in enumerate(pairs)]


def stub_side(cfg: StubConfig, path: BackupPath, offer: dict[str, Any]) -> tuple[Tunnel, Neighbor]:
    t = Tunnel(
        name=path.ifname,
        encapsulation=Encapsulation(offer["encapsulation"]),
        local=path.via.endpoint,
        remote=ipaddress.IPv6Address(offer["provider_endpoint"]),
        vni=offer.get("vni"),
        mtu=offer["mtu"],
        addresses=(ipaddress.IPv6Interface(offer["stub_address"]),),
        underlay_next_hop=path.via.underlay_next_hop,
    )
    n = Neighbor(
        name=path.neighbor_name,
        address=ipaddress.IPv6Interface(offer["provider_address"]).ip,
        remote_as=offer["provider_as"],
        local_as=cfg.asn,
        bfd=bool(offer["bfd"]),
        tunnel=t.name,
        export_prefixes=(path.provider.prefix,),
        hold_time=offer["hold_time"],
    )
    return t, n


class StateFile:
    """Tunnels the stub holds, so a restart with a changed config knows what to tear down."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, data: dict[str, dict[str, Any]]) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
        tmp.replace(self.path)


class Stub:
    def __init__(self, cfg: StubConfig) -> None:
        self.cfg = cfg
        self.paths = backup_paths(cfg)
        self.state = StateFile(cfg.state_dir / "tunnels.json")
        self.held = self.state.load()
        self.router = RouterEndpoint(
            cfg.router.host,
            cfg.router.port,
            cfg.router.username,
            cfg.router.password,
            cfg.router.timeout,
        )
        self.encapsulations: list[Encapsulation] = []
        self.up: dict[str, dict[str, Any]] = {}
        self.errors: dict[str, str] = {}

    async def _router(self, fn: Any) -> Any:
        def call() -> Any:
            with RouterSession(self.router) as s:
                return fn(s)

        return await asyncio.to_thread(call)

    async def prepare(self) -> None:
        """Learn the border router's encapsulations; drop router tunnels no longer configured."""
        self.encapsulations = await self._router(lambda s: s.encapsulations())
        log.info(
            "stub.router", encapsulations=",".join(e.value for e in self.encapsulations) or "none"
        )
        wanted_if = {p.ifname for p in self.paths}
        wanted_n = {p.neighbor_name for p in self.paths}
        running = await self._router(lambda s: s.running())
        del_t = [
            n for n in running.tunnels if n.startswith(STUB_TUNNEL_PREFIX) and n not in wanted_if
        ]
        del_n = [
            n for n in running.neighbors if n.startswith(STUB_NEIGHBOR_PREFIX) and n not in wanted_n
        ]
        if del_t or del_n:
            await self._router(lambda s: s.change(delete_tunnels=del_t, delete_neighbors=del_n))
            log.info("stub.reconciled", removed=",".join(del_t + del_n))
        by_key = {p.key: p for p in self.paths}
        # A path whose prefix or endpoint changed is a different tunnel: tear the old one down.
        stale = [
            k
            for k, info in self.held.items()
            if k not in by_key
            or info.get("prefix") != str(by_key[k].provider.prefix)
            or info.get("endpoint") != str(by_key[k].via.endpoint)
        ]
        for key in stale:
            await self.teardown_stale(key, self.held[key])

    async def teardown_stale(self, key: str, info: dict[str, Any]) -> None:
        provider = next((p for p in self.cfg.providers if p.name == info.get("provider")), None)
        if provider is not None:
            try:
                ch = await self.connect(provider)
                await ch.send(
                    MessageType.TEARDOWN,
                    {"tunnel_id": info["tunnel_id"], "reason": "stub configuration changed"},
                )
                await ch.expect(10, MessageType.TEARDOWN)
                await ch.close()
            except (OSError, ProtocolError, PeerError, TimeoutError) as exc:
                log.warning("stub.teardown_failed", path=key, error=str(exc))
        self.held.pop(key, None)
        self.state.save(self.held)
        log.info("tunnel.torn_down", path=key)

    async def connect(self, provider: ProviderLink) -> Channel:
        ctx = client_context(self.cfg.tls)
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(
                provider.tms_host,
                provider.tms_port,
                ssl=ctx,
                server_hostname=provider.server_name or provider.tms_host,
            ),
            15,
        )
        ch = Channel(reader, writer)
        await ch.send(
            MessageType.HELLO,
            hello_body(
                "stub", self.cfg.name, [e.value for e in self.encapsulations], self.cfg.keepalive
            ),
        )
        hello = await ch.expect(15, MessageType.HELLO)
        check_hello(hello, "tms")
        return ch

    async def request(self, ch: Channel, path: BackupPath, request_id: int) -> dict[str, Any]:
        await ch.send(
            MessageType.TUNNEL_REQUEST,
            {
                "request_id": request_id,
                "prefix": str(path.provider.prefix),
                "stub_endpoint": str(path.via.endpoint),
                "stub_as": self.cfg.asn,
                "encapsulations": [e.value for e in self.encapsulations],
                "bfd": self.cfg.bfd,
            },
        )
        offer = await ch.expect(60, MessageType.TUNNEL_OFFER)
        try:
            t, n = stub_side(self.cfg, path, offer.body)
        except (ValueError, TypeError, KeyError) as exc:
            # Framing checked the types; the values must also make a tunnel this side can build.
            await ch.send_error(
                ErrorCode.MALFORMED, f"unusable TUNNEL-OFFER: {exc}", request_id=request_id
            )
            raise ProtocolError(ErrorCode.MALFORMED, f"unusable TUNNEL-OFFER: {exc}") from None
        try:
            await self._router(lambda s: s.change(put_tunnels=[t], put_neighbors=[n]))
        except RouterError as exc:
            await ch.send(
                MessageType.TEARDOWN,
                {
                    "tunnel_id": offer.body["tunnel_id"],
                    "reason": f"stub router refused: {exc}"[:1000],
                },
            )
            raise
        await ch.send(MessageType.TUNNEL_CONFIRM, {"tunnel_id": offer.body["tunnel_id"]})
        await ch.expect(30, MessageType.TUNNEL_CONFIRM)
        info = {
            "provider": path.provider.name,
            "via": path.via.name,
            "tunnel_id": offer.body["tunnel_id"],
            "interface": t.name,
            "encapsulation": offer.body["encapsulation"],
            "why": offer.body["encapsulation_reason"],
            "prefix": str(path.provider.prefix),
            "endpoint": str(path.via.endpoint),
        }
        self.held[path.key] = info
        self.up[path.key] = info
        self.state.save(self.held)
        log.info(
            "tunnel.up",
            provider=path.provider.name,
            via=path.via.name,
            tunnel=info["tunnel_id"],
            interface=t.name,
            encapsulation=info["encapsulation"],
            why=info["why"],
        )
        return info

    async def serve_provider(self, provider: ProviderLink, once: bool) -> None:
        paths = [p for p in self.paths if p.provider.name == provider.name]
        request_id = 0
        while True:
            try:
                ch = await self.connect(provider)
                try:
                    for path in paths:
                        request_id += 1
                        try:
                            await self.request(ch, path, request_id)
                            self.errors.pop(path.key, None)
                        except PeerError as exc:
                            self.errors[path.key] = str(exc)
                            log.error(
                                "tunnel.refused",
                                provider=provider.name,
                                via=path.via.name,
                                error=str(exc),
                            )
                    if once:
                        return
                    await self.keepalive(ch)
                finally:
                    await ch.close()
            except (OSError, ProtocolError, PeerError, TimeoutError, RouterError) as exc:
                for path in paths:
                    self.errors.setdefault(path.key, str(exc))
                log.warning("session.lost", provider=provider.name, error=str(exc))
                if once:
                    return
            await asyncio.sleep(self.cfg.reconnect)

    async def keepalive(self, ch: Channel) -> None:
        while True:
            await ch.send(MessageType.KEEPALIVE)
            deadline = asyncio.get_running_loop().time() + self.cfg.keepalive
            while True:
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    break
                try:
                    msg: Message = await ch.recv(min(left, 3 * self.cfg.keepalive))
                except TimeoutError:
                    break
                if msg.type is MessageType.ERROR:
                    raise PeerError(msg)
                if msg.type is MessageType.TEARDOWN:
                    log.warning("tunnel.torn_down_by_provider", tunnel=msg.body["tunnel_id"])


def run_stub(cfg: StubConfig, once: bool = False) -> int:
    async def main() -> int:
        stub = Stub(cfg)
        await stub.prepare()
        tasks = [asyncio.create_task(stub.serve_provider(p, once)) for p in cfg.providers]
        if once:
            await asyncio.gather(*tasks)
            for key, info in sorted(stub.up.items()):
                line = f"{key}: up tunnel={info['tunnel_id']} interface={info['interface']}"
                print(f"{line} encapsulation={info['encapsulation']} ({info['why']})")
            for key, err in sorted(stub.errors.items()):
                print(f"{key}: FAILED {err}", file=sys.stderr)
            return 0 if not stub.errors else 1
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        for t in tasks:
            t.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*tasks, return_exceptions=True)
        return 0

    return asyncio.run(main())

"""`itmp tms`: the provider's Tunnel Management System.

events (ITMP messages from authenticated stubs) → state (SQLite tunnel table) → actions
(NETCONF changes to the provider's gateway router, batched through one session).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import signal
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mast_common.log import get_logger
from mast_common.metrics import MetricsEndpoint
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from itmp.authorization import Customer, authorize
from itmp.channel import (
    Channel,
    PeerClosed,
    PeerError,
    TlsFiles,
    check_hello,
    hello_body,
    server_context,
)
from itmp.negotiation import negotiate, parse_encapsulations
from itmp.protocol import ErrorCode, Message, MessageType, ProtocolError
from itmp.router.model import Encapsulation, Neighbor, RouterConfig, Tunnel, default_mtu
from itmp.routerclient import RouterEndpoint, RouterError, RouterSession

log = get_logger(__name__)

TUNNEL_IF_PREFIX = "itmp"
NEIGHBOR_PREFIX = "itmp_"


@dataclass(frozen=True)
class RouterSettings:
    host: str
    port: int
    username: str
    password: str
    timeout: float = 60


@dataclass(frozen=True)
class TmsConfig:
    name: str  # provider name, also the TLS server name's first label in examples
    asn: int
    state_dir: Path
    tls: TlsFiles
    router: RouterSettings
    endpoint: ipaddress.IPv6Address  # the gateway router's tunnel endpoint
    tunnel_pool: ipaddress.IPv6Network  # one /64 per tunnel: provider ::1, stub ::2
    customers: list[Customer]
    listen: str = "::"
    port: int = 4700
    own_prefixes: list[ipaddress.IPv6Network] = field(default_factory=list)
    vni_base: int = 100000
    local_pref: int = 50
    med: int | None = None
    hold_time: int = 9
    bfd: bool = True
    keepalive: int = 10
    offer_timeout: float = 30
    batch: int = 64
    metrics_listen: str = "127.0.0.1"
    metrics_port: int | None = None

    def __post_init__(self) -> None:
        if self.tunnel_pool.prefixlen > 63:
            raise ValueError(f"tunnel_pool {self.tunnel_pool}: needs room for /64s (at most /63)")
        if not 1 <= self.batch <= 1024:
            raise ValueError("batch must be 1..1024")
        if self.keepalive < 1:
            raise ValueError("keepalive must be at least 1 s")

    @property
    def max_tunnels(self) -> int:
        return min(1 << (64 - self.tunnel_pool.prefixlen), (1 << 24) - self.vni_base, 99999)


@dataclass
class TunnelRow:
    tunnel_id: str
    idx: int
    customer: str
    prefix: ipaddress.IPv6Network
    stub_endpoint: ipaddress.IPv6Address
    stub_as: int
    encapsulation: Encapsulation
    state: str  # provisioning → offered → active


class TunnelStore:
    """The TMS's intended state; a row is written *before* the router is touched."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        # WAL + NORMAL survives a killed TMS (kill -9) intact; only an OS crash can lose the
        # last transactions, and reconcile repairs that against the router.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS tunnel (id TEXT PRIMARY KEY, idx INTEGER UNIQUE, customer TEXT,"
            " prefix TEXT, stub_endpoint TEXT, stub_as INTEGER, encapsulation TEXT, state TEXT, updated REAL)"
        )
        self.db.execute(
            "CREATE INDEX IF NOT EXISTS tunnel_path ON tunnel (customer, prefix, stub_endpoint)"
        )
        # Allocation looks at every index in use; keep them in memory instead of scanning a table.
        self.used = {idx for (idx,) in self.db.execute("SELECT idx FROM tunnel")}

    def _row(self, r: tuple[Any, ...]) -> TunnelRow:
        return TunnelRow(
            r[0],
            r[1],
            r[2],
            ipaddress.IPv6Network(r[3]),
            ipaddress.IPv6Address(r[4]),
            r[5],
            Encapsulation(r[6]),
            r[7],
        )

    _COLS = "id, idx, customer, prefix, stub_endpoint, stub_as, encapsulation, state"

    def all(self) -> list[TunnelRow]:
        return [
            self._row(r) for r in self.db.execute(f"SELECT {self._COLS} FROM tunnel ORDER BY idx")
        ]

    def get(self, tunnel_id: str) -> TunnelRow | None:
        r = self.db.execute(f"SELECT {self._COLS} FROM tunnel WHERE id=?", (tunnel_id,)).fetchone()
        return self._row(r) if r else None

    def find(
        self, customer: str, prefix: ipaddress.IPv6Network, endpoint: ipaddress.IPv6Address
    ) -> TunnelRow | None:
        r = self.db.execute(
            f"SELECT {self._COLS} FROM tunnel WHERE customer=? AND prefix=? AND stub_endpoint=?",
            (customer, str(prefix), str(endpoint)),
        ).fetchone()
        return self._row(r) if r else None

    def free_index(self, limit: int) -> int | None:
        return next((i for i in range(limit) if i not in self.used), None)

    def count(self) -> int:
        return len(self.used)

    def insert(self, row: TunnelRow) -> None:
        self.db.execute(
            "INSERT INTO tunnel VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.tunnel_id, row.idx, row.customer, str(row.prefix), str(row.stub_endpoint), row.stub_as,
             row.encapsulation.value, row.state, time.time()),
        )  # fmt: skip
        self.used.add(row.idx)

    def set_state(
        self, tunnel_id: str, state: str, encapsulation: Encapsulation | None = None
    ) -> None:
        if encapsulation is None:
            self.db.execute(
                "UPDATE tunnel SET state=?, updated=? WHERE id=?", (state, time.time(), tunnel_id)
            )
        else:
            self.db.execute(
                "UPDATE tunnel SET state=?, encapsulation=?, updated=? WHERE id=?",
                (state, encapsulation.value, time.time(), tunnel_id),
            )

    def delete(self, tunnel_id: str) -> None:
        for (idx,) in self.db.execute("SELECT idx FROM tunnel WHERE id=?", (tunnel_id,)).fetchall():
            self.used.discard(idx)
        self.db.execute("DELETE FROM tunnel WHERE id=?", (tunnel_id,))


def tunnel_objects(
    cfg: TmsConfig, row: TunnelRow, customer: Customer | None
) -> tuple[Tunnel, Neighbor]:
    subnet_base = int(cfg.tunnel_pool.network_address) + (row.idx << 64)
    provider_addr = ipaddress.IPv6Interface((subnet_base + 1, 64))
    stub_addr = ipaddress.IPv6Address(subnet_base + 2)
    t = Tunnel(
        name=f"{TUNNEL_IF_PREFIX}{row.idx}",
        encapsulation=row.encapsulation,
        local=cfg.endpoint,
        remote=row.stub_endpoint,
        vni=cfg.vni_base + row.idx if row.encapsulation is Encapsulation.VXLAN else None,
        addresses=(provider_addr,),
    )
    lp = customer.local_pref if customer and customer.local_pref is not None else cfg.local_pref
    med = customer.med if customer and customer.med is not None else cfg.med
    n = Neighbor(
        name=f"{NEIGHBOR_PREFIX}{row.idx}",
        address=stub_addr,
        remote_as=row.stub_as,
        local_as=cfg.asn,
        local_pref=lp,
        med=med,
        bfd=cfg.bfd,
        tunnel=t.name,
        import_prefixes=(row.prefix,),
        hold_time=cfg.hold_time,
    )
    return t, n


@dataclass
class Job:
    put_tunnels: list[Tunnel]
    put_neighbors: list[Neighbor]
    delete_tunnels: list[str]
    delete_neighbors: list[str]
    done: asyncio.Future[None]


class Provisioner:
    """One NETCONF session to the gateway router; queued changes are committed in batches."""

    def __init__(self, cfg: TmsConfig, metrics: TmsMetrics) -> None:
        self.cfg = cfg
        self.endpoint = RouterEndpoint(
            cfg.router.host,
            cfg.router.port,
            cfg.router.username,
            cfg.router.password,
            cfg.router.timeout,
        )
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="netconf")
        self.session: RouterSession | None = None
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self.metrics = metrics
        self.encapsulations: list[Encapsulation] = []
        self.backend = "unknown"

    def _session(self) -> RouterSession:
        if self.session is None:
            self.session = RouterSession(self.endpoint)
        return self.session

    def _call(self, fn: Any) -> Any:
        """Run fn(session) with one reconnect: a router agent restart must not need a TMS restart."""
        try:
            return fn(self._session())
        except RouterError:
            if self.session is not None:
                self.session.close()
                self.session = None
            raise

    async def run_in_router(self, fn: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.executor, self._call, fn)

    async def connect(self) -> None:
        def probe(s: RouterSession) -> tuple[list[Encapsulation], str]:
            return s.encapsulations(), s.backend()

        self.encapsulations, self.backend = await self.run_in_router(probe)
        log.info(
            "tms.router_connected",
            router=f"[{self.endpoint.host}]:{self.endpoint.port}",
            encapsulations=",".join(e.value for e in self.encapsulations) or "none",
            backend=self.backend,
        )

    async def submit(self, job_kwargs: dict[str, Any]) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        await self.queue.put(Job(done=fut, **job_kwargs))
        await fut

    async def worker(self) -> None:
        while True:
            jobs = [await self.queue.get()]
            while len(jobs) < self.cfg.batch and not self.queue.empty():
                jobs.append(self.queue.get_nowait())
            try:
                await self._commit(jobs)
                for j in jobs:
                    if not j.done.done():
                        j.done.set_result(None)
            except RouterError as exc:
                if len(jobs) == 1:
                    if not jobs[0].done.done():
                        jobs[0].done.set_exception(exc)
                    continue
                # One bad change must not fail its batch-mates: retry each on its own.
                for j in jobs:
                    try:
                        await self._commit([j])
                        if not j.done.done():
                            j.done.set_result(None)
                    except RouterError as one:
                        if not j.done.done():
                            j.done.set_exception(one)

    async def _commit(self, jobs: list[Job]) -> None:
        kwargs: dict[str, list[Any]] = {
            "put_tunnels": [],
            "put_neighbors": [],
            "delete_tunnels": [],
            "delete_neighbors": [],
        }
        for j in jobs:
            kwargs["put_tunnels"] += j.put_tunnels
            kwargs["put_neighbors"] += j.put_neighbors
            kwargs["delete_tunnels"] += j.delete_tunnels
            kwargs["delete_neighbors"] += j.delete_neighbors
        started = time.monotonic()
        try:
            await self.run_in_router(lambda s: s.change(**kwargs))
        except RouterError:
            self.metrics.commits.labels(result="failed").inc()
            raise
        self.metrics.commits.labels(result="ok").inc()
        self.metrics.commit_seconds.observe(time.monotonic() - started)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self.executor.shutdown(wait=False, cancel_futures=True)


class TmsMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "itmp_tms_requests_total",
            "TUNNEL-REQUESTs by result",
            ["result"],
            registry=self.registry,
        )
        self.commits = Counter(
            "itmp_tms_router_commits_total",
            "NETCONF commits by result",
            ["result"],
            registry=self.registry,
        )
        self.commit_seconds = Histogram(
            "itmp_tms_router_commit_seconds", "NETCONF change latency", registry=self.registry
        )
        self.tunnels = Gauge(
            "itmp_tms_tunnels", "tunnels in the state table", registry=self.registry
        )
        self.sessions = Gauge("itmp_tms_sessions", "connected stubs", registry=self.registry)


class Tms:
    def __init__(self, cfg: TmsConfig) -> None:
        self.cfg = cfg
        self.customers = {c.name: c for c in cfg.customers}
        self.store = TunnelStore(cfg.state_dir / "tms.sqlite")
        self.metrics = TmsMetrics()
        self.provisioner = Provisioner(cfg, self.metrics)
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    # -- reconcile ------------------------------------------------------------------------
    async def reconcile(self) -> dict[str, int]:
        """Make the router match the table: drop half-provisioned rows and orphans, restore the rest."""
        for row in self.store.all():
            if row.state == "provisioning":
                # The stub never got an offer for it (TMS died mid-provisioning).
                self.store.delete(row.tunnel_id)
                log.info("reconcile.dropped_unfinished", tunnel=row.tunnel_id)
                continue
            try:
                # The configuration may have changed since: a tunnel must still be authorized.
                authorize(
                    self.customers,
                    row.customer,
                    row.prefix,
                    row.stub_endpoint,
                    row.stub_as,
                    self.cfg.own_prefixes,
                )
            except ProtocolError as exc:
                self.store.delete(row.tunnel_id)
                log.warning(
                    "reconcile.revoked", tunnel=row.tunnel_id, code=exc.code.name, reason=exc.reason
                )
        wanted_t: dict[str, Tunnel] = {}
        wanted_n: dict[str, Neighbor] = {}
        for row in self.store.all():
            t, n = tunnel_objects(self.cfg, row, self.customers.get(row.customer))
            wanted_t[t.name], wanted_n[n.name] = t, n
        running: RouterConfig = await self.provisioner.run_in_router(lambda s: s.running())
        put_t = [t for name, t in wanted_t.items() if running.tunnels.get(name) != t]
        put_n = [n for name, n in wanted_n.items() if running.neighbors.get(name) != n]
        del_t = [
            name
            for name in running.tunnels
            if name.startswith(TUNNEL_IF_PREFIX) and name not in wanted_t
        ]
        del_n = [
            name
            for name in running.neighbors
            if name.startswith(NEIGHBOR_PREFIX) and name not in wanted_n
        ]
        counts = {
            "restored": len(put_t) + len(put_n),
            "removed": len(del_t) + len(del_n),
            "kept": len(wanted_t),
        }
        if put_t or put_n or del_t or del_n:
            await self.provisioner.submit(
                {
                    "put_tunnels": put_t,
                    "put_neighbors": put_n,
                    "delete_tunnels": del_t,
                    "delete_neighbors": del_n,
                }
            )
        log.info(
            "tms.reconciled",
            restored=counts["restored"],
            removed=counts["removed"],
            kept=counts["kept"],
        )
        return counts

    # -- protocol -------------------------------------------------------------------------
    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        ch = Channel(reader, writer)
        peer = ch.peer
        addr = writer.get_extra_info("peername")
        slog = log.bind(peer=peer, addr=str(addr[0]) if addr else "?")
        self.metrics.sessions.inc()
        try:
            await ch.send(
                MessageType.HELLO,
                hello_body(
                    "tms",
                    self.cfg.name,
                    [e.value for e in self.provisioner.encapsulations],
                    self.cfg.keepalive,
                ),
            )
            hello = await ch.expect(10, MessageType.HELLO)
            check_hello(hello, "stub")
            hold = 3 * max(int(hello.body["keepalive"]), 1)
            slog.info("session.up", stub_id=hello.body["id"])
            while True:
                try:
                    msg = await ch.recv(hold)
                except TimeoutError:
                    await ch.send_error(
                        ErrorCode.HOLD_TIMER_EXPIRED, f"nothing heard for {hold} s", fatal=True
                    )
                    slog.warning("session.hold_expired")
                    return
                except ProtocolError as exc:
                    await ch.send_error(exc.code, exc.reason, fatal=True)
                    slog.warning("session.protocol_error", code=exc.code.name, reason=exc.reason)
                    return
                await self.dispatch(ch, peer, msg, slog)
        except PeerClosed:
            slog.info("session.closed")
        except (PeerError, ProtocolError) as exc:
            slog.warning("session.error", error=str(exc))
            if isinstance(exc, ProtocolError):
                await ch.send_error(exc.code, exc.reason, fatal=True)
        except (ConnectionError, OSError, TimeoutError) as exc:
            slog.info("session.lost", error=str(exc))
        except Exception as exc:  # one stub must never take the TMS down
            slog.error("session.crashed", error=str(exc), exc_info=True)
            await ch.send_error(ErrorCode.INTERNAL, "internal error", fatal=True)
        finally:
            self.metrics.sessions.dec()
            await ch.close()

    async def dispatch(self, ch: Channel, peer: str, msg: Message, slog: Any) -> None:
        if msg.type is MessageType.KEEPALIVE:
            await ch.send(MessageType.KEEPALIVE)
        elif msg.type is MessageType.TUNNEL_REQUEST:
            await self.on_request(ch, peer, msg, slog)
        elif msg.type is MessageType.TUNNEL_CONFIRM:
            row = await self._peers_tunnel(ch, peer, msg)
            if row is None:
                return
            self.store.set_state(row.tunnel_id, "active")
            await ch.send(MessageType.TUNNEL_CONFIRM, {"tunnel_id": row.tunnel_id})
            slog.info("tunnel.active", tunnel=row.tunnel_id, encapsulation=row.encapsulation.value)
        elif msg.type is MessageType.TEARDOWN:
            row = await self._peers_tunnel(ch, peer, msg)
            if row is None:
                return
            await self.remove(row)
            await ch.send(
                MessageType.TEARDOWN,
                {"tunnel_id": row.tunnel_id, "reason": "torn down at stub's request"},
            )
            slog.info("tunnel.torn_down", tunnel=row.tunnel_id, reason=msg.body.get("reason", ""))
        elif msg.type is MessageType.ERROR:
            slog.warning("peer.error", code=msg.body["code"], reason=msg.body["reason"])
        else:
            await ch.send_error(ErrorCode.UNEXPECTED_MESSAGE, f"{msg.type.name} is not for a TMS")

    async def _peers_tunnel(self, ch: Channel, peer: str, msg: Message) -> TunnelRow | None:
        """The tunnel `msg` names if it belongs to `peer`; otherwise None, and the peer gets ERROR.

        Another customer's tunnel is answered exactly like an absent one: tunnel ids leak nothing.
        """
        row = self.store.get(msg.body["tunnel_id"])
        if row is None or row.customer != peer:
            await ch.send_error(
                ErrorCode.UNKNOWN_TUNNEL,
                f"no tunnel {msg.body['tunnel_id']} for {peer}",
                tunnel_id=msg.body["tunnel_id"],
            )
            return None
        return row

    async def remove(self, row: TunnelRow) -> None:
        t, n = tunnel_objects(self.cfg, row, None)
        await self.provisioner.submit(
            {
                "put_tunnels": [],
                "put_neighbors": [],
                "delete_tunnels": [t.name],
                "delete_neighbors": [n.name],
            }
        )
        self.store.delete(row.tunnel_id)
        self.metrics.tunnels.set(self.store.count())

    async def on_request(self, ch: Channel, peer: str, msg: Message, slog: Any) -> None:
        b = msg.body
        request_id = b["request_id"]
        prefix = ipaddress.IPv6Network(b["prefix"])
        endpoint = ipaddress.IPv6Address(b["stub_endpoint"])
        try:
            customer = authorize(
                self.customers, peer, prefix, endpoint, b["stub_as"], self.cfg.own_prefixes
            )
            encap, why = negotiate(
                parse_encapsulations(b["encapsulations"]), self.provisioner.encapsulations
            )
        except ProtocolError as exc:
            self.metrics.requests.labels(result=exc.code.name.lower()).inc()
            slog.warning(
                "request.refused",
                code=exc.code.name,
                reason=exc.reason,
                prefix=str(prefix),
                endpoint=str(endpoint),
            )
            await ch.send_error(exc.code, exc.reason, request_id=request_id)
            return
        row = self.store.find(peer, prefix, endpoint)
        new = row is None
        if row is None:
            idx = self.store.free_index(self.cfg.max_tunnels)
            if idx is None:
                await ch.send_error(
                    ErrorCode.RESOURCES_EXHAUSTED, "tunnel pool exhausted", request_id=request_id
                )
                return
            row = TunnelRow(
                f"{self.cfg.name}-{idx}",
                idx,
                peer,
                prefix,
                endpoint,
                b["stub_as"],
                encap,
                "provisioning",
            )
            self.store.insert(row)
        elif row.encapsulation is not encap:
            row.encapsulation = encap
            self.store.set_state(row.tunnel_id, row.state, encap)
        t, n = tunnel_objects(self.cfg, row, customer)
        try:
            await self.provisioner.submit(
                {
                    "put_tunnels": [t],
                    "put_neighbors": [n],
                    "delete_tunnels": [],
                    "delete_neighbors": [],
                }
            )
        except RouterError as exc:
            if new:
                self.store.delete(row.tunnel_id)
            self.metrics.requests.labels(result="provisioning_failed").inc()
            slog.warning("request.provisioning_failed", error=str(exc))
            await ch.send_error(
                ErrorCode.PROVISIONING_FAILED,
                f"provider router refused: {exc}",
                request_id=request_id,
            )
            return
        if row.state == "provisioning":
            self.store.set_state(row.tunnel_id, "offered")
        self.metrics.requests.labels(result="offered").inc()
        slog.info(
            "tunnel.offered",
            tunnel=row.tunnel_id,
            prefix=str(prefix),
            endpoint=str(endpoint),
            encapsulation=encap.value,
            why=why,
        )
        await ch.send(
            MessageType.TUNNEL_OFFER,
            {
                "request_id": request_id,
                "tunnel_id": row.tunnel_id,
                "encapsulation": encap.value,
                "encapsulation_reason": why,
                "provider_endpoint": str(self.cfg.endpoint),
                **({"vni": t.vni} if t.vni is not None else {}),
                "provider_address": t.addresses[0].with_prefixlen,
                "stub_address": f"{n.address}/64",
                "provider_as": self.cfg.asn,
                "mtu": default_mtu(encap),
                "bfd": self.cfg.bfd,
                "hold_time": self.cfg.hold_time,
                "local_pref": n.local_pref or 0,
            },
        )
        if new:
            self._spawn(self.expire_offer(row.tunnel_id))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def expire_offer(self, tunnel_id: str) -> None:
        await asyncio.sleep(self.cfg.offer_timeout)
        row = self.store.get(tunnel_id)
        if row is not None and row.state == "offered":
            log.warning("tunnel.offer_expired", tunnel=tunnel_id)
            with contextlib.suppress(RouterError):
                await self.remove(row)

    async def start(self) -> None:
        await self.provisioner.connect()
        self.tasks.add(asyncio.create_task(self.provisioner.worker()))
        await self.reconcile()
        # Offers made before a restart still need their CONFIRM (the stub re-requests if alive).
        for row in self.store.all():
            if row.state == "offered":
                self._spawn(self.expire_offer(row.tunnel_id))
        self.metrics.tunnels.set(self.store.count())
        self.server = await asyncio.start_server(
            self.handle,
            self.cfg.listen,
            self.cfg.port,
            ssl=server_context(self.cfg.tls),
            backlog=1024,
        )
        port = self.server.sockets[0].getsockname()[1]
        log.info(
            "tms.ready",
            listen=self.cfg.listen,
            port=port,
            provider=self.cfg.name,
            router_backend=self.provisioner.backend,
        )

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        for t in list(self.tasks):
            t.cancel()
        self.provisioner.close()


def run_tms(cfg: TmsConfig) -> int:
    async def main() -> None:
        tms = Tms(cfg)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        metrics = (
            MetricsEndpoint(tms.metrics.registry, cfg.metrics_listen, cfg.metrics_port)
            if cfg.metrics_port is not None
            else None
        )
        if metrics:
            metrics.start()
        try:
            await tms.start()
            await stop.wait()
        finally:
            await tms.stop()
            if metrics:
                metrics.close()

    asyncio.run(main())
    return 0

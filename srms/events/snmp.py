"""SNMP notifications: IF-MIB linkDown/linkUp as SNMPv2c traps and SNMPv3 traps/informs.

pysnmp's asyncio engine does the security checks: a notification with an unknown community,
user, wrong key or garbage bytes never reaches `_on_notification`; the engine counts it in its
SNMPv2-MIB / USM statistics, which `SnmpDropCollector` exports as srms_snmp_dropped_total.
A notification is mapped to an access link by the sending agent's address plus its ifIndex
(from the varbind instance) or its ifName (a varbind the snmpd snippet in README.md adds).
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from mast_common.log import get_logger
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from srms.config import Provider, Snmp, SnmpUser
from srms.events import Emit
from srms.metrics import SrmsMetrics
from srms.statemachine import LinkEvent

log = get_logger(__name__)

SNMP_TRAP_OID = (1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0)
LINK_DOWN = (1, 3, 6, 1, 6, 3, 1, 1, 5, 3)
LINK_UP = (1, 3, 6, 1, 6, 3, 1, 1, 5, 4)
IF_INDEX = (1, 3, 6, 1, 2, 1, 2, 2, 1, 1)
IF_DESCR = (1, 3, 6, 1, 2, 1, 2, 2, 1, 2)
IF_OPER_STATUS = (1, 3, 6, 1, 2, 1, 2, 2, 1, 8)
IF_NAME = (1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1)


@dataclass(frozen=True)
class LinkNotification:
    up: bool
    if_index: int | None
    if_name: str | None


def parse_notification(varbinds: Sequence[tuple[Sequence[int], Any]]) -> LinkNotification | None:
    """linkUp/linkDown from a notification's varbinds; None for any other notification.

    Values may be pysnmp objects or plain Python values; anything malformed yields None or
    missing fields, never an exception the caller has to expect.
    """
    trap: tuple[int, ...] | None = None
    if_index: int | None = None
    if_name: str | None = None
    if_descr: str | None = None
    for oid_raw, value in varbinds:
        try:
            oid = tuple(int(x) for x in oid_raw)
        except (TypeError, ValueError):
            continue
        if oid == SNMP_TRAP_OID:
            try:
                trap = tuple(int(x) for x in value)
            except (TypeError, ValueError):
                return None
            continue
        column, instance = oid[:-1], oid[-1:]
        if column in (IF_INDEX, IF_OPER_STATUS) and instance and if_index is None:
            if_index = _as_int(value) or instance[0] if column == IF_INDEX else instance[0]
        elif column == IF_NAME:
            if_name = _as_text(value)
        elif column == IF_DESCR:
            if_descr = _as_text(value)
    if trap not in (LINK_DOWN, LINK_UP):
        return None
    if if_index is not None and not 0 < if_index < 2**31:
        if_index = None
    return LinkNotification(trap == LINK_UP, if_index, if_name or if_descr)


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _as_text(value: Any) -> str | None:
    try:
        raw = value.asOctets() if hasattr(value, "asOctets") else value
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes | bytearray) else str(raw)
    except Exception:
        return None
    return text[:64] or None


def match_provider(
    providers: Iterable[Provider], agent: str, note: LinkNotification
) -> Provider | None:
    """The provider whose access link is this agent's interface (by ifIndex, else ifName)."""
    try:
        agent_ip = ipaddress.ip_address(agent.split("%")[0])
    except ValueError:
        return None
    for p in providers:
        a = p.access
        if not a.router or ipaddress.ip_address(a.router) != agent_ip:
            continue
        if a.if_index is not None and note.if_index is not None:
            if a.if_index == note.if_index:
                return p
            continue
        if a.if_name is not None and note.if_name is not None and a.if_name == note.if_name:
            return p
    return None


def _same_ip(a: str, b: str) -> bool:
    try:
        return ipaddress.ip_address(a.split("%")[0]) == ipaddress.ip_address(b.split("%")[0])
    except ValueError:
        return False


def _host_port(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    host = host.strip("[]")
    if not host:
        raise ValueError(f"snmp.listen: expected host:port, got {listen!r}")
    return host, int(port)


AUTH = {
    "MD5": "USM_AUTH_HMAC96_MD5",
    "SHA": "USM_AUTH_HMAC96_SHA",
    "SHA224": "USM_AUTH_HMAC128_SHA224",
    "SHA256": "USM_AUTH_HMAC192_SHA256",
    "SHA384": "USM_AUTH_HMAC256_SHA384",
    "SHA512": "USM_AUTH_HMAC384_SHA512",
}
PRIV = {
    "DES": "USM_PRIV_CBC56_DES",
    "3DES": "USM_PRIV_CBC168_3DES",
    "AES": "USM_PRIV_CFB128_AES",
    "AES192": "USM_PRIV_CFB192_AES",
    "AES256": "USM_PRIV_CFB256_AES",
}

UNDECODABLE_LOG_INTERVAL = 60.0  # s: one line per minute however much junk arrives

DROP_COUNTERS = [
    ("__SNMPv2-MIB", "snmpInASNParseErrs", "malformed"),
    ("__SNMPv2-MIB", "snmpInBadCommunityNames", "bad-community"),
    ("__SNMP-USER-BASED-SM-MIB", "usmStatsUnknownUserNames", "unknown-user"),
    ("__SNMP-USER-BASED-SM-MIB", "usmStatsWrongDigests", "wrong-digest"),
    ("__SNMP-USER-BASED-SM-MIB", "usmStatsDecryptionErrors", "decryption-error"),
    ("__SNMP-USER-BASED-SM-MIB", "usmStatsUnknownEngineIDs", "unknown-engine-id"),
    ("__SNMP-USER-BASED-SM-MIB", "usmStatsNotInTimeWindows", "not-in-time-window"),
    ("__SNMP-USER-BASED-SM-MIB", "usmStatsUnsupportedSecLevels", "unsupported-sec-level"),
]


class SnmpSource:
    name = "snmp"

    def __init__(self, cfg: Snmp, providers: list[Provider], metrics: SrmsMetrics) -> None:
        self.cfg = cfg
        self.providers = providers
        self.metrics = metrics
        self.engine: Any = None
        self.received = 0
        self.ready = asyncio.Event()
        self._sink: Emit | None = None
        self._queue: asyncio.Queue[tuple[str, LinkNotification, float]] = asyncio.Queue()
        self._if_names: dict[tuple[str, int], str] = {}
        self._get_engine: Any = None
        self._undecodable = 0
        self._undecodable_logged = -UNDECODABLE_LOG_INTERVAL
        metrics.registry.register(SnmpDropCollector(self))

    def drop_counts(self) -> dict[str, int]:
        if self.engine is None:
            return {}
        builder = self.engine.get_mib_builder()
        out: dict[str, int] = {}
        for module, symbol, reason in DROP_COUNTERS:
            try:
                (obj,) = builder.import_symbols(module, symbol)
                out[reason] = int(obj.syntax)
            except Exception:  # counter absent in this pysnmp build
                continue
        out["malformed"] = out.get("malformed", 0) + self._undecodable
        return out

    def _guard_decoder(self, eng: Any) -> None:
        """Count, rather than raise into the event loop, what pysnmp's own decoder chokes on.

        Some mutated BER (a constructed tag where a primitive one belongs) makes pyasn1 raise
        TypeError past pysnmp's error handling; asyncio would log a traceback per datagram, so a
        sender of junk could flood the log. The engine calls receive_message through the
        instance attribute, which is what makes wrapping it here enough.
        """
        dispatcher = eng.message_dispatcher
        receive = dispatcher.receive_message

        def guarded(*args: Any) -> Any:
            try:
                return receive(*args)
            except Exception as exc:
                self._undecodable += 1
                now = time.monotonic()
                if now - self._undecodable_logged >= UNDECODABLE_LOG_INTERVAL:
                    self._undecodable_logged = now
                    log.warning("snmp.undecodable", error=repr(exc), total=self._undecodable)
                return b""

        dispatcher.receive_message = guarded

    def _build_engine(self) -> Any:
        from pysnmp.carrier.asyncio.dgram import udp, udp6
        from pysnmp.entity import config, engine
        from pysnmp.entity.rfc3413 import ntfrcv
        from pysnmp.proto.api import v2c

        eng = (
            engine.SnmpEngine(v2c.OctetString(hexValue=self.cfg.engine_id))
            if self.cfg.engine_id
            else engine.SnmpEngine()
        )
        for i, listen in enumerate(self.cfg.listen):
            host, port = _host_port(listen)
            if ipaddress.ip_address(host).version == 6:
                transport = udp6.Udp6AsyncioTransport().open_server_mode((host, port))
                config.add_transport(eng, (*udp6.DOMAIN_NAME, i + 1), transport)
            else:
                transport = udp.UdpAsyncioTransport().open_server_mode((host, port))
                config.add_transport(eng, (*udp.DOMAIN_NAME, i + 1), transport)
        for i, community in enumerate(self.cfg.communities):
            config.add_v1_system(eng, f"srms-area-{i}", community)
        for user in self.cfg.users:
            self._add_user(eng, config, v2c, user)
        ntfrcv.NotificationReceiver(eng, self._on_notification)
        self._guard_decoder(eng)
        return eng

    @staticmethod
    def _add_user(eng: Any, config: Any, v2c: Any, user: SnmpUser) -> None:
        # Informs are authenticated with SRMS's own engine ID (the router discovers it); traps
        # with the router's, which only the configuration can tell: register the user for both.
        engines: list[Any] = [None]
        if user.engine_id:
            engines.append(v2c.OctetString(hexValue=user.engine_id))
        for engine_id in engines:
            kwargs: dict[str, Any] = {}
            if engine_id is not None:
                kwargs["securityEngineId"] = engine_id
            config.add_v3_user(
                eng,
                user.user,
                getattr(config, AUTH[user.auth_protocol]),
                user.auth_key,
                getattr(config, PRIV[user.priv_protocol]),
                user.priv_key,
                **kwargs,
            )

    def _on_notification(
        self, eng: Any, state_ref: Any, ctx_engine: Any, ctx_name: Any, varbinds: Any, cb_ctx: Any
    ) -> None:
        received = time.time()
        try:
            _, address = eng.message_dispatcher.get_transport_info(state_ref)
            agent = str(address[0])
            note = parse_notification(list(varbinds))
        except Exception as exc:  # whatever pysnmp let through, the receiver keeps running
            log.warning("snmp.unreadable", error=repr(exc))
            return
        self.received += 1
        if note is None:
            return
        if self._queue.empty() and not self._needs_name(agent, note):
            self._deliver(agent, note, received)  # the fast path: no task switch
        else:
            # Behind a notification waiting for an ifName GET: keep the order of events.
            self._queue.put_nowait((agent, note, received))

    def _needs_name(self, agent: str, note: LinkNotification) -> bool:
        if note.if_name is not None or note.if_index is None or not self.cfg.get_community:
            return False
        if match_provider(self.providers, agent, note) is not None:
            return False
        return (agent, note.if_index) not in self._if_names and any(
            p.access.router and p.access.if_name and p.access.if_index is None
            for p in self.providers
            if _same_ip(p.access.router, agent)
        )

    async def _resolve_queued(self) -> None:
        while True:
            agent, note, received = await self._queue.get()
            try:
                if self._needs_name(agent, note) and note.if_index is not None:
                    name = await self._get_if_name(agent, note.if_index)
                    if name is not None:
                        self._if_names[(agent, note.if_index)] = name
                key = (agent, note.if_index or 0)
                if note.if_name is None and key in self._if_names:
                    note = LinkNotification(note.up, note.if_index, self._if_names[key])
                self._deliver(agent, note, received)
            except Exception as exc:  # one bad answer must not stop the ordered delivery
                log.warning("snmp.deliver_failed", agent=agent, error=repr(exc))

    async def _get_if_name(self, agent: str, if_index: int) -> str | None:
        from pysnmp.hlapi.v3arch.asyncio import (
            CommunityData,
            ContextData,
            ObjectIdentity,
            ObjectType,
            SnmpEngine,
            Udp6TransportTarget,
            UdpTransportTarget,
            get_cmd,
        )

        if self._get_engine is None:
            self._get_engine = SnmpEngine()
        host = agent.split("%")[0]
        target_cls = Udp6TransportTarget if ":" in host else UdpTransportTarget
        target = await target_cls.create(
            (host, self.cfg.get_port), timeout=self.cfg.get_timeout, retries=1
        )
        oid = ".".join(str(x) for x in (*IF_NAME, if_index))
        err, status, _, varbinds = await get_cmd(
            self._get_engine,
            CommunityData(self.cfg.get_community or "", mpModel=1),
            target,
            ContextData(),
            ObjectType(ObjectIdentity(oid)),
        )
        if err or status or not varbinds:
            log.warning(
                "snmp.ifname_get_failed", agent=agent, if_index=if_index, error=str(err or status)
            )
            return None
        name = _as_text(varbinds[0][1])
        log.info("snmp.ifname_resolved", agent=agent, if_index=if_index, if_name=name)
        return name

    def _deliver(self, agent: str, note: LinkNotification, received: float) -> None:
        if note.if_name is None and note.if_index is not None:
            cached = self._if_names.get((agent, note.if_index))
            if cached is not None:
                note = LinkNotification(note.up, note.if_index, cached)
        provider = match_provider(self.providers, agent, note)
        if provider is None:
            self.metrics.unmatched.labels(source="snmp").inc()
            log.info(
                "snmp.unmatched",
                agent=agent,
                if_index=note.if_index,
                if_name=note.if_name,
                up=note.up,
            )
            return
        detail = f"{agent} ifIndex={note.if_index} ifName={note.if_name}"
        if self._sink is not None:
            self._sink(LinkEvent(provider.name, note.up, "snmp", detail, received))

    async def run(self, emit: Emit) -> None:
        self._sink = emit
        self.engine = self._build_engine()
        self.engine.open_dispatcher()
        resolver = asyncio.create_task(self._resolve_queued(), name="snmp-ifname")
        self.ready.set()
        log.info("snmp.listening", listen=self.cfg.listen)
        try:
            await asyncio.Event().wait()
        finally:
            resolver.cancel()
            self.engine.close_dispatcher()


class SnmpDropCollector(Collector):
    def __init__(self, source: SnmpSource) -> None:
        self.source = source

    def collect(self) -> Iterator[CounterMetricFamily]:
        family = CounterMetricFamily(
            "srms_snmp_dropped",
            "SNMP messages the receiver dropped (bad community, unknown user, wrong key, malformed)",
            labels=["reason"],
        )
        for reason, value in sorted(self.source.drop_counts().items()):
            family.add_metric([reason], value)
        yield family

"""RFC 2136 dynamic updates, TSIG-signed, to the stub's authoritative DNS.

Module path: `set_prefix_status` rewrites the zone's one prefix-status record (APL at the apex),
so a single update flips a prefix for every host that mod-mast answers for. Plain path (zones
without the module): `add_host_address` / `remove_host_address`, one AAAA at a time.

Status changes are read-modify-write guarded by an RFC 2136 prerequisite on the record read, so
two writers never lose each other's change: a failed prerequisite re-reads and tries again.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass

import dns.exception
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import dns.tsig
import dns.tsigkeyring
import dns.update
from mast_common.log import get_logger
from mast_common.prefix import IPv6Address, IPv6Network, PrefixStatus

from .zonedata import (
    StatusEntry,
    ZoneDataError,
    decode_host,
    decode_status,
    encode_status,
    host_record_text,
    prefix_from_text,
    relative_name,
)

log = get_logger(__name__)

_ALGORITHMS = {
    "hmac-md5": dns.tsig.HMAC_MD5,
    "hmac-sha1": dns.tsig.HMAC_SHA1,
    "hmac-sha224": dns.tsig.HMAC_SHA224,
    "hmac-sha256": dns.tsig.HMAC_SHA256,
    "hmac-sha384": dns.tsig.HMAC_SHA384,
    "hmac-sha512": dns.tsig.HMAC_SHA512,
}
# Worth another try: the server or the path may recover.
_TRANSIENT_RCODES = {dns.rcode.SERVFAIL}
# A prerequisite failed because someone else changed the record between our read and write.
_RACE_RCODES = {dns.rcode.NXRRSET, dns.rcode.YXRRSET}
_BACKOFF_FIRST = 0.1


@dataclass(frozen=True)
class TsigKey:
    """A TSIG key as Knot's `key:` section has it: name, base64 secret, algorithm."""

    name: str
    secret: str  # base64
    algorithm: str = "hmac-sha256"

    def __post_init__(self) -> None:
        if self.algorithm.lower() not in _ALGORITHMS:
            raise ValueError(f"TSIG key {self.name}: unknown algorithm {self.algorithm!r}")
        try:
            base64.b64decode(self.secret, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"TSIG key {self.name}: secret is not base64") from None

    def dns_key(self) -> dns.tsig.Key:
        return dns.tsig.Key(self.name, self.secret, _ALGORITHMS[self.algorithm.lower()])


class DnsUpdateError(Exception):
    """The server refused or failed an update or query; `.rcode` is the dns.rcode name."""

    def __init__(self, rcode: str, message: str) -> None:
        super().__init__(f"{rcode}: {message}")
        self.rcode = rcode
        self.message = message


class _UnreadableStatus(Exception):
    """The status RRset's rdata is so broken that the reply does not parse."""


class ZoneUpdater:
    """Updates one zone on one server; every call is bounded by timeout x (retries + 1)."""

    def __init__(
        self,
        server: str,
        zone: str,
        key: TsigKey | None,
        *,
        port: int = 53,
        timeout: float = 2.0,
        retries: int = 3,
    ) -> None:
        if retries < 0 or timeout <= 0:
            raise ValueError("timeout must be > 0 and retries >= 0")
        try:
            ipaddress.ip_address(server)
        except ValueError:
            raise ValueError(f"DNS server {server!r} must be an IP address") from None
        self.server = server
        self.zone = dns.name.from_text(zone)
        self.key = key
        self.port = port
        self.timeout = timeout
        self.retries = retries
        self._dns_key = key.dns_key() if key is not None else None

    # -- module path: the prefix-status RRset ------------------------------------------------

    def prefix_statuses(self) -> list[tuple[IPv6Network, PrefixStatus]]:
        """The current status RRset, in preference order (withdrawn prefixes are absent).

        Raises ZoneDataError if the RRset is malformed (the module then ignores it; the next
        status change rewrites it without the bad items)."""
        try:
            records = self._read_status()[1]
        except _UnreadableStatus as exc:
            raise ZoneDataError(f"status RRset of {self.zone} is malformed: {exc}") from None
        return [(e.prefix, e.status) for e in decode_status(records)]

    def set_prefix_status(self, prefix: str | IPv6Network, status: PrefixStatus) -> None:
        """Set one prefix's status; WITHDRAWN removes it. A prefix not yet in the RRset is added
        last (least preferred). Setting the status it already has sends nothing."""
        net = prefix_from_text(prefix)
        status = PrefixStatus(status)

        def change(entries: list[StatusEntry]) -> list[StatusEntry]:
            if status is PrefixStatus.WITHDRAWN:
                return [e for e in entries if e.prefix != net]
            if any(e.prefix == net for e in entries):
                return [StatusEntry(net, status) if e.prefix == net else e for e in entries]
            return [*entries, StatusEntry(net, status)]

        self._change_status(change, what=f"{net} -> {status}")

    def add_prefix(
        self,
        prefix: str | IPv6Network,
        *,
        status: PrefixStatus = PrefixStatus.PREFERRED,
        position: int | None = None,
    ) -> None:
        """Add a prefix at `position` in preference order (None: last); if present, set its
        status and, when `position` is given, move it there."""
        net = prefix_from_text(prefix)
        status = PrefixStatus(status)
        if status is PrefixStatus.WITHDRAWN:
            raise ValueError("add_prefix with status withdrawn: use remove_prefix")

        def change(entries: list[StatusEntry]) -> list[StatusEntry]:
            present = [i for i, e in enumerate(entries) if e.prefix == net]
            if present and position is None:
                return [StatusEntry(net, status) if e.prefix == net else e for e in entries]
            rest = [e for e in entries if e.prefix != net]
            at = len(rest) if position is None else max(0, min(position, len(rest)))
            return [*rest[:at], StatusEntry(net, status), *rest[at:]]

        self._change_status(change, what=f"add {net} ({status})")

    def remove_prefix(self, prefix: str | IPv6Network) -> None:
        self.set_prefix_status(prefix, PrefixStatus.WITHDRAWN)

    # -- module path: the host IFID map ------------------------------------------------------

    def hosts(self) -> dict[str, int]:
        """The host IFID map: name relative to the zone (or '@') -> IFID."""
        answer = self._query(self.zone, dns.rdatatype.TXT)
        out: dict[str, int] = {}
        for rrset in answer.answer:
            if rrset.rdtype != dns.rdatatype.TXT:
                continue
            for record in rrset:
                host = decode_host(record)
                if host is not None:
                    out.setdefault(host[0].lower(), host[1])
        return out

    def add_host(self, name: str, ifid: int, ttl: int = 60) -> None:
        """Map a host to its interface ID (replacing an earlier IFID of the same host)."""
        self.set_hosts({name: ifid}, ttl=ttl)

    def set_hosts(self, hosts: dict[str, int], ttl: int = 60) -> None:
        """Map many hosts in one update (replacing earlier IFIDs of the same hosts)."""
        current = self._host_records()
        update = self._update()
        for name, ifid in hosts.items():
            rel = relative_name(name, self.zone)
            for record in current.get(rel.lower(), []):
                update.delete(self.zone, record)
            update.add(self.zone, ttl, dns.rdatatype.TXT, host_record_text(rel, ifid))
        self._send_update(update, what=f"map {len(hosts)} hosts")

    def remove_host(self, name: str) -> None:
        rel = relative_name(name, self.zone)
        records = self._host_records().get(rel.lower(), [])
        if not records:
            return
        update = self._update()
        for record in records:
            update.delete(self.zone, record)
        self._send_update(update, what=f"unmap {rel}")

    # -- plain path: per-host AAAA records ---------------------------------------------------

    def add_host_address(self, name: str, address: str | IPv6Address, ttl: int = 60) -> None:
        owner = self._owner(name)
        update = self._update()
        update.add(owner, ttl, dns.rdatatype.AAAA, str(IPv6Address(address)))
        self._send_update(update, what=f"add {owner} AAAA {address}")

    def remove_host_address(self, name: str, address: str | IPv6Address) -> None:
        owner = self._owner(name)
        update = self._update()
        update.delete(owner, dns.rdatatype.AAAA, str(IPv6Address(address)))
        self._send_update(update, what=f"remove {owner} AAAA {address}")

    # -- wire --------------------------------------------------------------------------------

    def _owner(self, name: str) -> dns.name.Name:
        owner = dns.name.from_text(name, origin=self.zone)
        if not owner.is_subdomain(self.zone):
            raise ZoneDataError(f"{name} is not inside zone {self.zone}")
        return owner

    def _update(self) -> dns.update.UpdateMessage:
        return dns.update.UpdateMessage(self.zone, keyring=self._dns_key)

    def _read_status(self) -> tuple[dns.rrset.RRset | None, list[dns.rdata.Rdata]]:
        """The apex APL RRset; raises _UnreadableStatus if its rdata does not even parse."""
        try:
            answer = self._query(self.zone, dns.rdatatype.APL)
        except DnsUpdateError as exc:
            if exc.rcode == "FORMERR":
                raise _UnreadableStatus(exc.message) from None
            raise
        for rrset in answer.answer:
            if rrset.rdtype == dns.rdatatype.APL and rrset.name == self.zone:
                return rrset, list(rrset)
        return None, []

    def _host_records(self) -> dict[str, list[dns.rdata.Rdata]]:
        answer = self._query(self.zone, dns.rdatatype.TXT)
        out: dict[str, list[dns.rdata.Rdata]] = {}
        for rrset in answer.answer:
            if rrset.rdtype != dns.rdatatype.TXT:
                continue
            for record in rrset:
                try:
                    host = decode_host(record)
                except ZoneDataError:
                    continue
                if host is not None:
                    out.setdefault(host[0].lower(), []).append(record)
        return out

    def _change_status(
        self, change: Callable[[list[StatusEntry]], list[StatusEntry]], *, what: str
    ) -> None:
        for _ in range(self.retries + 1):
            unreadable = False
            try:
                rrset, records = self._read_status()
            except _UnreadableStatus as exc:
                # Nothing to preserve: replace the record outright (no prerequisite possible).
                log.warning("dns.status.repair", zone=str(self.zone), dropped=str(exc))
                rrset, records, unreadable = None, [], True
            dropped: list[str] = []
            entries = decode_status(records, dropped=dropped)
            for problem in dropped:
                log.warning("dns.status.repair", zone=str(self.zone), dropped=problem)
            new = change(entries)
            if new == entries and len(records) <= 1 and not dropped and not unreadable:
                log.debug("dns.status.unchanged", zone=str(self.zone), change=what)
                return
            update = self._update()
            if unreadable:
                pass
            elif rrset is None:
                update.absent(self.zone, dns.rdatatype.APL)
            else:
                # Value-dependent prerequisite: the RRset must still be exactly what we read.
                update.present(self.zone, *records)
            update.delete(self.zone, dns.rdatatype.APL)
            if new:
                update.add(self.zone, rrset.ttl if rrset is not None else 60, encode_status(new))
            try:
                self._send_update(update, what=what)
                return
            except DnsUpdateError as exc:
                if dns.rcode.from_text(exc.rcode) not in _RACE_RCODES:
                    raise
                log.info("dns.status.raced", zone=str(self.zone), change=what)
        raise DnsUpdateError("YXRRSET", f"{what}: the status RRset kept changing under us")

    def _query(self, name: dns.name.Name, rdtype: dns.rdatatype.RdataType) -> dns.message.Message:
        query = dns.message.make_query(name, rdtype)
        if self._dns_key is not None:
            query.use_tsig(self._dns_key)
        response = self._exchange(query, what=f"query {name} {rdtype.name}")
        return response

    def _send_update(self, update: dns.update.UpdateMessage, *, what: str) -> None:
        started = time.monotonic()
        self._exchange(update, what=what)
        log.info(
            "dns.update.done",
            zone=str(self.zone),
            change=what,
            ms=round((time.monotonic() - started) * 1000, 1),
        )

    def _exchange(self, message: dns.message.Message, *, what: str) -> dns.message.Message:
        delay = _BACKOFF_FIRST
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(delay)
                delay *= 2
            try:
                response, _tcp = dns.query.udp_with_fallback(
                    message, self.server, timeout=self.timeout, port=self.port
                )
            except dns.tsig.PeerError as exc:
                # The server could not verify our TSIG (unknown key, bad signature, bad time).
                raise DnsUpdateError(
                    "NOTAUTH", f"{what}: {self.server} rejected the TSIG key: {exc}"
                ) from None
            except (dns.tsig.BadSignature, dns.tsig.BadTime) as exc:
                raise DnsUpdateError("NOTAUTH", f"{what}: reply failed TSIG check: {exc}") from None
            except (dns.exception.Timeout, OSError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                log.warning("dns.exchange.retry", server=self.server, change=what, error=last)
                continue
            except dns.exception.DNSException as exc:
                raise DnsUpdateError(
                    "FORMERR", f"{what}: bad reply from {self.server}: {exc}"
                ) from None
            rcode = response.rcode()
            if rcode == dns.rcode.NOERROR:
                return response
            words = f"{what}: {self.server}:{self.port} answered {dns.rcode.to_text(rcode)}"
            if rcode in _TRANSIENT_RCODES:
                last = words
                log.warning("dns.exchange.retry", server=self.server, change=what, error=words)
                continue
            raise DnsUpdateError(dns.rcode.to_text(rcode), words)
        raise DnsUpdateError(
            "SERVFAIL" if "answered" in last else "TIMEOUT",
            f"{what}: no answer after {self.retries + 1} attempts ({last})",
        )

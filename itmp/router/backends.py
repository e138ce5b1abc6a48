"""Backends of the router agent: `kernel` (Linux + BIRD, the real thing) and `dry-run`.

dry-run applies nothing and exists only so the provisioning benchmark can measure the TMS and
NETCONF path for thousands of tunnels without thousands of kernel links; it says so in its log
and in every <router-state> it returns.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from lxml import etree
from mast_common.log import get_logger
from mast_common.prefix import PrefixStatus

from itmp.router import kernel
from itmp.router.bird import BirdControl, BirdError, wanted_files
from itmp.router.model import NS, Encapsulation, RouterConfig, Tunnel

log = get_logger(__name__)
_Q = "{" + NS + "}"


def _state_root(backend: str, encaps: list[Encapsulation], reasons: dict[str, str]) -> Any:
    root = etree.Element(_Q + "router-state", nsmap={None: NS})
    etree.SubElement(root, _Q + "backend").text = backend
    for e in encaps:
        etree.SubElement(root, _Q + "supported-encapsulation").text = e.value
    for name, why in sorted(reasons.items()):
        probe = etree.SubElement(root, _Q + "encapsulation-probe")
        etree.SubElement(probe, _Q + "encapsulation").text = name
        etree.SubElement(probe, _Q + "result").text = why
    return root


def _changed(a: object, b: object) -> bool:
    return a is not b and a != b


def _tunnel_changes(old: RouterConfig, new: RouterConfig) -> tuple[list[Tunnel], list[Tunnel]]:
    removed = [t for n, t in old.tunnels.items() if _changed(new.tunnels.get(n), t)]
    added = [t for n, t in new.tunnels.items() if _changed(old.tunnels.get(n), t)]
    return removed, added


def _status_pass(old: RouterConfig, new: RouterConfig) -> dict[ipaddress.IPv6Network, PrefixStatus]:
    """Statuses to enforce when moving old → new: a prefix no longer managed goes back to preferred."""
    out = {p: PrefixStatus.PREFERRED for p in old.prefix_status if p not in new.prefix_status}
    out.update(new.prefix_status)
    return out


class KernelBackend:
    name = "kernel"

    def __init__(self, bird: BirdControl | None, *, bfd_protocol: bool = True) -> None:
        self.bird = bird
        self.bfd_protocol = bfd_protocol
        self._encaps: tuple[list[Encapsulation], dict[str, str]] | None = None
        self._bird_pending = False
        self._pins_missing: set[str] = set()

    def encapsulations(self) -> tuple[list[Encapsulation], dict[str, str]]:
        if self._encaps is None:
            self._encaps = kernel.probe_encapsulations()
            log.info(
                "encapsulation.probed",
                supported=",".join(e.value for e in self._encaps[0]) or "none",
                probes="; ".join(f"{k}: {v}" for k, v in self._encaps[1].items()),
            )
        return self._encaps

    def _check_supported(self, new: RouterConfig, old: RouterConfig) -> None:
        supported = self.encapsulations()[0]
        for t in new.tunnels.values():
            if _changed(old.tunnels.get(t.name), t) and t.encapsulation not in supported:
                raise kernel.KernelError(
                    f"tunnel {t.name}: this kernel cannot do {t.encapsulation.value} "
                    f"(supported: {', '.join(e.value for e in supported) or 'none'})"
                )

    def _kernel_move(self, old: RouterConfig, new: RouterConfig) -> None:
        removed, added = _tunnel_changes(old, new)
        for t in removed:
            kernel.remove_tunnel(t)
        done: list[Tunnel] = []
        try:
            for t in added:
                kernel.add_tunnel(t)
                done.append(t)
        except Exception:
            for t in done:
                kernel.remove_tunnel(t)
            for t in removed:
                try:
                    kernel.add_tunnel(t)
                except kernel.KernelError as exc:
                    log.error("rollback.tunnel_failed", tunnel=t.name, error=str(exc))
            raise

    def apply(self, old: RouterConfig, new: RouterConfig, confirm_timeout: int | None) -> None:
        self._check_supported(new, old)
        self._kernel_move(old, new)
        if self.bird is not None:
            before = self.bird.current_files()
            wanted = wanted_files(new.neighbors, self.bfd_protocol)
            try:
                if wanted != before:
                    self.bird.write_files(wanted, before)
                    self.bird.configure(confirm_timeout)
                    self._bird_pending = confirm_timeout is not None
            except Exception:
                self.bird.write_files(before, wanted)
                self._kernel_move(new, old)
                raise
        kernel.apply_prefix_statuses(_status_pass(old, new))

    def confirm(self) -> None:
        if self.bird is not None and self._bird_pending:
            self._bird_pending = False
            self.bird.confirm()

    def revert(self, current: RouterConfig, previous: RouterConfig) -> None:
        self._kernel_move(current, previous)
        if self.bird is not None:
            before = self.bird.current_files()
            wanted = wanted_files(previous.neighbors, self.bfd_protocol)
            if wanted != before or self._bird_pending:
                self.bird.write_files(wanted, before)
                # A plain configure reads the restored files and ends any pending timed one.
                self.bird.configure()
            self._bird_pending = False
        kernel.apply_prefix_statuses(_status_pass(current, previous))

    def refresh(self, cfg: RouterConfig) -> bool:
        kernel.apply_prefix_statuses(cfg.prefix_status)
        _, missing = kernel.restore_underlay_routes(cfg.tunnels.values())
        # Said once per outage, not on every pass while the pinning link stays down.
        for line in sorted(set(missing) - self._pins_missing):
            log.warning("underlay.route_missing", route=line)
        self._pins_missing = set(missing)
        return bool(missing)

    def state(self, cfg: RouterConfig) -> Any:
        encaps, reasons = self.encapsulations()
        root = _state_root(self.name, encaps, reasons)
        links = kernel.link_states()
        for t in sorted(cfg.tunnels.values(), key=lambda t: t.name):
            e = etree.SubElement(root, _Q + "tunnel")
            etree.SubElement(e, _Q + "name").text = t.name
            link = links.get(t.name)
            etree.SubElement(e, _Q + "present").text = "true" if link else "false"
            if link:
                etree.SubElement(e, _Q + "kind").text = link.kind
                etree.SubElement(e, _Q + "oper-status").text = link.oper_state.lower()
                etree.SubElement(e, _Q + "mtu").text = str(link.mtu)
                for a in link.addresses:
                    etree.SubElement(e, _Q + "address").text = a
        if self.bird is not None and cfg.neighbors:
            try:
                states = self.bird.protocol_states()
            except BirdError as exc:
                states = {}
                etree.SubElement(root, _Q + "bird-error").text = str(exc)
            for n in sorted(cfg.neighbors.values(), key=lambda n: n.name):
                e = etree.SubElement(root, _Q + "bgp-neighbor")
                etree.SubElement(e, _Q + "name").text = n.name
                etree.SubElement(e, _Q + "state").text = states.get(n.name, "absent")
        if cfg.prefix_status:
            ordered = sorted(
                cfg.prefix_status.items(), key=lambda kv: kv[0].prefixlen, reverse=True
            )
            for addr in kernel.global_addresses():
                if not any(addr.address.ip in p for p, _ in ordered):
                    continue
                e = etree.SubElement(root, _Q + "address")
                etree.SubElement(e, _Q + "interface").text = addr.interface
                etree.SubElement(e, _Q + "address").text = addr.address.with_prefixlen
                etree.SubElement(e, _Q + "status").text = kernel.address_status(addr).value
                etree.SubElement(e, _Q + "preferred-lifetime").text = kernel._lifetime(
                    addr.preferred
                )
                etree.SubElement(e, _Q + "valid-lifetime").text = kernel._lifetime(addr.valid)
        return root


class DryRunBackend:
    """Applies nothing: for the provisioning benchmark only."""

    name = "dry-run"

    def __init__(self, encapsulations: list[Encapsulation]) -> None:
        self._encaps = encapsulations
        log.warning(
            "backend.dry_run",
            note="dry-run backend: nothing is applied to kernel or BIRD (benchmark only)",
        )

    def encapsulations(self) -> tuple[list[Encapsulation], dict[str, str]]:
        return self._encaps, {
            e.value: "dry-run: declared in the agent configuration" for e in self._encaps
        }

    def apply(self, old: RouterConfig, new: RouterConfig, confirm_timeout: int | None) -> None:
        for t in new.tunnels.values():
            if _changed(old.tunnels.get(t.name), t) and t.encapsulation not in self._encaps:
                raise RuntimeError(f"tunnel {t.name}: {t.encapsulation.value} not supported")

    def confirm(self) -> None:
        return None

    def revert(self, current: RouterConfig, previous: RouterConfig) -> None:
        return None

    def refresh(self, cfg: RouterConfig) -> bool:
        return False

    def state(self, cfg: RouterConfig) -> Any:
        encaps, reasons = self.encapsulations()
        root = _state_root(self.name, encaps, reasons)
        etree.SubElement(
            root, _Q + "note"
        ).text = "dry-run backend: nothing applied to kernel or BIRD"
        return root

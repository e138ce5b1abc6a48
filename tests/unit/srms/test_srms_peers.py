"""The pure parts of the actions: Kea answers, the NETCONF edit, error wording."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from mast_common.prefix import IPv6Network, PrefixStatus

from srms.actions import PeerError
from srms.actions.kea import KeaPeer, check_answer
from srms.actions.netconf import NAMESPACE, prefix_status_config

ARGS = {"prefix": "2001:db8:a::/64", "status": "discouraged"}


def test_kea_result_0_is_success() -> None:
    check_answer({"result": 0, "text": "prefix 2001:db8:a::/64 is discouraged"}, ARGS)


def test_kea_refusal_is_not_retried_soon() -> None:
    with pytest.raises(PeerError, match="result 1: prefix not served") as exc:
        check_answer({"result": 1, "text": "prefix not served by any subnet6"}, ARGS)
    assert exc.value.retry is False


def test_kea_without_hook_is_retried() -> None:
    with pytest.raises(PeerError, match="result 2") as exc:
        check_answer({"result": 2, "text": "'mast-prefix-status' command not supported."}, ARGS)
    assert exc.value.retry is True


def test_kea_socket_missing_names_it(tmp_path: Path) -> None:
    peer = KeaPeer(tmp_path / "kea.sock", timeout=0.5)
    with pytest.raises(PeerError, match=r"kea\.sock"):
        asyncio.run(
            peer.apply(IPv6Network("2001:db8:a::/64"), PrefixStatus.DISCOURAGED, is_new=False)
        )


def test_netconf_edit_is_the_router_model() -> None:
    xml = prefix_status_config(IPv6Network("2001:db8:a::/64"), PrefixStatus.DISCOURAGED)
    root = ET.fromstring(xml)
    entry = root.find(f"{{{NAMESPACE}}}router/{{{NAMESPACE}}}prefix-status")
    assert entry is not None
    assert entry.findtext(f"{{{NAMESPACE}}}prefix") == "2001:db8:a::/64"
    assert entry.findtext(f"{{{NAMESPACE}}}status") == "discouraged"

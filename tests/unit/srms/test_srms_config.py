from __future__ import annotations

from pathlib import Path

import pytest
from mast_common.config import ConfigError

from srms import config

REPO = Path(__file__).resolve().parents[3]

MINIMAL = """
[[providers]]
name = "A"
prefixes = ["2001:db8:a::/48"]
access = { router = "192.0.2.1", if_index = 3 }
"""


def test_example_config_loads() -> None:
    cfg = config.load(REPO / "srms" / "srms.example.toml")
    assert [p.name for p in cfg.providers] == ["provider-a", "provider-b"]
    assert cfg.snmp is not None and cfg.snmp.users[0].auth_protocol == "SHA"
    assert cfg.kea is not None and cfg.dns and cfg.routers


def test_minimal_config_defaults(tmp_path: Path) -> None:
    path = tmp_path / "srms.toml"
    path.write_text(MINIMAL)
    cfg = config.load(path)
    assert cfg.timers.hold_down == 30
    assert cfg.provider("A").access.if_index == 3


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL.replace("2001:db8:a::/48", "2001:db8:a::1/48"), "providers[0].prefixes[0]"),
        (MINIMAL.replace('router = "192.0.2.1", ', 'router = "r1", '), "not an IP address"),
        (MINIMAL.replace(", if_index = 3", ""), "if_index or if_name"),
        (MINIMAL + MINIMAL.replace("db8:a::/48", "db8:a:1::/64"), "duplicate provider"),
        (
            MINIMAL + MINIMAL.replace('"A"', '"B"').replace("db8:a::/48", "db8:a:1::/64"),
            "overlaps",
        ),
        (MINIMAL + "[timers]\nhold_down = 'x'\n", "timers.hold_down"),
        (
            MINIMAL
            + "[snmp]\nusers = [{user='u', auth_key='k', priv_key='p', priv_protocol='XX'}]\n",
            "snmp.users[0].priv_protocol: expected one of",
        ),
    ],
)
def test_bad_config_names_the_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "srms.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        config.load(path)

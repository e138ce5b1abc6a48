from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from mast_common.config import ConfigError, load_config, parse_config
from mast_common.prefix import PrefixStatus


@dataclass(frozen=True)
class Link:
    router: str
    ifindex: int


@dataclass(frozen=True)
class Provider:
    name: str
    prefixes: list[ipaddress.IPv6Network]
    link: Link
    status: PrefixStatus = PrefixStatus.PREFERRED


@dataclass(frozen=True)
class Schema:
    providers: list[Provider]
    hold_down: float = 30.0
    mode: Literal["mast", "lima"] = "mast"
    state_dir: Path = Path("/var/lib/srms")
    labels: dict[str, str] = field(default_factory=dict)
    debug: bool | None = None


GOOD = """
hold_down = 5
mode = "lima"
[[providers]]
name = "A"
prefixes = ["2001:db8:a::/48"]
link = { router = "br1", ifindex = 3 }
[[providers]]
name = "B"
prefixes = ["2001:db8:b::/48", "2001:db8:c::/48"]
link = { router = "br2", ifindex = 4 }
status = "discouraged"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "srms.toml"
    path.write_text(text)
    return path


def test_loads_typed_values(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, GOOD), Schema)
    assert cfg.hold_down == 5.0 and isinstance(cfg.hold_down, float)
    assert cfg.mode == "lima"
    assert cfg.providers[1].prefixes[1] == ipaddress.IPv6Network("2001:db8:c::/48")
    assert cfg.providers[1].status is PrefixStatus.DISCOURAGED
    assert cfg.providers[0].link == Link("br1", 3)
    assert cfg.state_dir == Path("/var/lib/srms")
    assert cfg.debug is None


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        (
            GOOD.replace('"2001:db8:c::/48"', '"2001:db8:c::1/48"'),
            "providers[1].prefixes[1]",
            "expected an IPv6 prefix",
        ),
        (
            GOOD.replace("ifindex = 3", 'ifindex = "3"'),
            "providers[0].link.ifindex",
            "expected an integer, got '3'",
        ),
        (GOOD.replace('mode = "lima"', 'mode = "pi"'), "mode", "expected one of ['mast', 'lima']"),
        (
            GOOD.replace('status = "discouraged"', 'status = "down"'),
            "providers[1].status",
            "expected one of ['preferred', 'discouraged', 'withdrawn']",
        ),
        (GOOD.replace('name = "A"\n', ""), "providers[0].name", "missing required key (a string)"),
        (GOOD + "colour = 1\n", "providers[1].colour", "unknown key"),
        ("hold_down = true\nproviders = []", "hold_down", "expected a number, got True"),
    ],
)
def test_errors_name_file_key_and_type(tmp_path: Path, text: str, key: str, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_config(path, Schema)
    assert err.value.key == key
    assert words in err.value.message
    assert str(err.value).startswith(f"{path}: {key}: ")


def test_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "absent.toml", Schema)
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_config(write(tmp_path, "providers = [\n"), Schema)


def test_post_init_validation_is_reported_with_source() -> None:
    @dataclass(frozen=True)
    class Ranged:
        low: int
        high: int

        def __post_init__(self) -> None:
            if self.low > self.high:
                raise ValueError("low must not exceed high")

    with pytest.raises(ConfigError, match="<mem>: <top>: low must not exceed high"):
        parse_config({"low": 2, "high": 1}, Ranged, "<mem>")


@dataclass(frozen=True)
class Snmp:
    port: int


@dataclass(frozen=True)
class WithOptional:
    snmp: Snmp | None = None


def test_optional_table_keeps_inner_key_path() -> None:
    assert parse_config({}, WithOptional).snmp is None
    with pytest.raises(ConfigError) as err:
        parse_config({"snmp": {"port": "x"}}, WithOptional, "<mem>")
    assert err.value.key == "snmp.port"
    assert "expected an integer" in err.value.message

"""The example TOML files load, and bad ones are refused naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from mast_common.cli import EXIT_CONFIG, EXIT_USAGE
from mast_common.config import ConfigError, load_config

from itmp.cli import main
from itmp.router.agent import AgentConfig
from itmp.stub import StubConfig, backup_paths
from itmp.tms import TmsConfig

EXAMPLES = Path(__file__).resolve().parents[3] / "itmp" / "examples"


def test_examples_load() -> None:
    agent = load_config(EXAMPLES / "agent.toml", AgentConfig)
    assert agent.backend == "kernel" and agent.bird is not None
    tms = load_config(EXAMPLES / "tms.toml", TmsConfig)
    assert tms.customers[0].name == "stub1" and tms.max_tunnels > 2589
    stub = load_config(EXAMPLES / "stub.toml", StubConfig)
    assert [p.key for p in backup_paths(stub)] == ["A/B", "B/A"]
    assert [p.ifname for p in backup_paths(stub)] == ["itmp0", "itmp1"]


def test_bad_config_names_key(tmp_path: Path) -> None:
    bad = tmp_path / "agent.toml"
    bad.write_text('state_dir = "/x"\nbackend = "magic"\n[[users]]\nname = "a"\npassword = "b"\n')
    with pytest.raises(ConfigError, match="backend"):
        load_config(bad, AgentConfig)
    assert main(["router-agent", "-c", str(bad)]) == EXIT_CONFIG


def test_stub_endpoint_must_be_in_prefix(tmp_path: Path) -> None:
    text = (
        (EXAMPLES / "stub.toml")
        .read_text()
        .replace('endpoint = "2001:db8:b:1::1"', 'endpoint = "2001:db8:c::1"')
    )
    f = tmp_path / "stub.toml"
    f.write_text(text)
    with pytest.raises(ConfigError, match="not inside"):
        load_config(f, StubConfig)


def test_no_command_is_usage_error() -> None:
    assert main([]) == EXIT_USAGE

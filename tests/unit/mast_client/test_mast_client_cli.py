from __future__ import annotations

import ipaddress
import json

import pytest
from mast_client import cli, wire
from mast_common.prefix import PrefixStatus


def test_decode(capsys: pytest.CaptureFixture[str]) -> None:
    entry = wire.PrefixEntry(
        ipaddress.IPv6Network("2001:db8:a::/64"), PrefixStatus.WITHDRAWN, 0, 0
    )
    data = wire.encode_push([entry], key=b"k" * 32, counter=9)
    assert cli.main(["decode", data.hex()]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["counter"] == 9
    assert out["entries"][0] == {
        "prefix": "2001:db8:a::/64",
        "status": "withdrawn",
        "preferred_lifetime": 0,
        "valid_lifetime": 0,
    }
    assert cli.main(["decode", data[:-5].hex()]) == 65
    assert cli.main(["decode", "zz"]) == 65


def test_usage() -> None:
    assert cli.main([]) == 64
    with pytest.raises(SystemExit) as exc:
        cli.main(["run"])
    assert exc.value.code == 64
    assert cli.main(["run", "-i", "no-such-if0"]) == 69

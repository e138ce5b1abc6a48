from __future__ import annotations

import io
import json
import logging
import urllib.request

from mast_common.log import get_logger, setup_logging
from mast_common.metrics import MetricsEndpoint
from prometheus_client import CollectorRegistry, Counter


def test_json_records_carry_event_and_fields() -> None:
    stream = io.StringIO()
    setup_logging("debug", "json", stream)
    try:
        log = get_logger("srms.test", daemon="srms").bind(provider="A")
        log.info("prefix.discouraged", prefix="2001:db8:a::/48", latency_ms=12.5)
        record = json.loads(stream.getvalue().splitlines()[-1])
    finally:
        logging.getLogger().handlers.clear()
    assert record["event"] == "prefix.discouraged"
    assert record["level"] == "info"
    assert record["daemon"] == "srms" and record["provider"] == "A"
    assert record["prefix"] == "2001:db8:a::/48" and record["latency_ms"] == 12.5


def test_logfmt_quotes_values_with_spaces() -> None:
    stream = io.StringIO()
    setup_logging("info", "logfmt", stream)
    try:
        get_logger("x").warning("peer.down", reason="connection refused", attempt=3)
    finally:
        logging.getLogger().handlers.clear()
    line = stream.getvalue().strip()
    assert 'reason="connection refused"' in line and "attempt=3" in line and "peer.down" in line


def test_metrics_endpoint_serves_registry() -> None:
    registry = CollectorRegistry()
    transitions = Counter("mast_test_transitions", "transitions", ["to"], registry=registry)
    transitions.labels(to="discouraged").inc(2)
    with MetricsEndpoint(registry) as endpoint:
        body = urllib.request.urlopen(endpoint.url, timeout=5).read().decode()
    assert 'mast_test_transitions_total{to="discouraged"} 2.0' in body

"""SRMS's Prometheus metrics, in a registry of their own (tests run several daemons)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)


class SrmsMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.transitions = Counter(
            "srms_transitions", "Prefix status transitions", ["to", "reason"], registry=r
        )
        self.events = Counter(
            "srms_link_events", "Link events received", ["source", "state"], registry=r
        )
        self.unmatched = Counter(
            "srms_unmatched_notifications",
            "Notifications that named no configured access link",
            ["source"],
            registry=r,
        )
        self.action_seconds = Histogram(
            "srms_action_seconds",
            "Time one action took at its peer",
            ["peer"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.chain_seconds = Histogram(
            "srms_event_to_action_seconds",
            "From receiving the event to the action completing at the peer",
            ["peer"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.action_failures = Counter(
            "srms_action_failures", "Failed action attempts (retried)", ["peer"], registry=r
        )
        self.pending = Gauge("srms_pending_actions", "Actions not yet completed", registry=r)
        self.prefix_status = Gauge(
            "srms_prefix_status",
            "1 for the current status of each prefix",
            ["prefix", "status"],
            registry=r,
        )

"""Prometheus metrics endpoint shared by the daemons.

Each daemon keeps its metrics in its own `CollectorRegistry` (so tests can run several daemons
in one process) and serves it with `MetricsEndpoint`.
"""

from __future__ import annotations

import threading
from types import TracebackType
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, start_http_server


class MetricsEndpoint:
    """Serve `registry` at http://addr:port/metrics until `close()`; port 0 picks a free one."""

    def __init__(self, registry: CollectorRegistry, addr: str = "127.0.0.1", port: int = 0):
        self.registry = registry
        self.addr = addr
        self._requested_port = port
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> MetricsEndpoint:
        server, thread = start_http_server(self._requested_port, self.addr, self.registry)
        self._server, self._thread = server, thread
        return self

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("metrics endpoint not started")
        return int(self._server.server_port)

    @property
    def url(self) -> str:
        host = f"[{self.addr}]" if ":" in self.addr else self.addr
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> MetricsEndpoint:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

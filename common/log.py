"""Structured logging: one JSON object per line on stderr (or logfmt for humans).

Use `get_logger(__name__).info("prefix.discouraged", prefix=str(p), provider="A")`: the first
argument is a stable event name that operators can grep and alert on; keyword arguments become
fields of the record.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping, MutableMapping
from typing import Any, Literal

_FIELDS = "mast_fields"


class StructuredLogger(logging.LoggerAdapter[logging.Logger]):
    """A logger whose keyword arguments become structured fields."""

    def process(
        self, msg: Any, kwargs: MutableMapping[str, Any]
    ) -> tuple[Any, MutableMapping[str, Any]]:
        std = {k: kwargs.pop(k) for k in ("exc_info", "stack_info", "stacklevel") if k in kwargs}
        fields = dict(self.extra or {})
        fields.update(kwargs.pop("extra", {}) or {})
        fields.update(kwargs)
        return msg, {**std, "extra": {_FIELDS: fields}}

    def bind(self, **fields: Any) -> StructuredLogger:
        """A child logger that adds `fields` to every record."""
        return StructuredLogger(self.logger, {**(self.extra or {}), **fields})


def get_logger(name: str, **fields: Any) -> StructuredLogger:
    return StructuredLogger(logging.getLogger(name), fields)


def _fields(record: logging.LogRecord) -> Mapping[str, Any]:
    return getattr(record, _FIELDS, {})


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        for k, v in _fields(record).items():
            out[k] = (
                v if isinstance(v, str | int | float | bool | type(None) | list | dict) else str(v)
            )
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, separators=(",", ":"))


class LogfmtFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        ms = int(record.msecs)
        parts = [f"{stamp}.{ms:03d}", record.levelname.lower(), record.name, record.getMessage()]
        for k, v in _fields(record).items():
            text = str(v)
            parts.append(f"{k}={json.dumps(text) if (' ' in text or not text) else text}")
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class _CurrentStderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to sys.stderr as it is at each record, not as it was at set-up.

    A handler bound to the set-up time stream keeps writing to it after it is replaced and closed
    (pytest's capture, a daemon that re-opens its stderr); records from threads then fail.
    """

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def setup_logging(
    level: str = "info", fmt: Literal["json", "logfmt"] = "json", stream: Any = None
) -> None:
    """Configure the root logger once per process (daemons call this first)."""
    handler = logging.StreamHandler(stream) if stream is not None else _CurrentStderrHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else LogfmtFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())

"""TOML configuration loaded into typed dataclasses.

One loader for every daemon: a config file is described by a (frozen) dataclass tree, and
`load_config` checks every key against the field's type, so an operator gets
`srms.toml: providers[1].prefixes[0]: expected an IPv6 prefix, got 'x'` instead of a traceback.
"""

from __future__ import annotations

import dataclasses
import enum
import ipaddress
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

T = TypeVar("T")


class ConfigError(Exception):
    """A configuration file is unreadable or does not match its schema."""

    def __init__(self, source: str, key: str, message: str) -> None:
        self.source = source
        self.key = key
        self.message = message
        where = f"{source}: {key}: " if key else f"{source}: "
        super().__init__(where + message)


def load_config(path: str | Path, schema: type[T]) -> T:
    """Read a TOML file and convert it into `schema` (a dataclass)."""
    source = str(path)
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(source, "", "file not found") from None
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, "", f"invalid TOML: {exc}") from None
    return parse_config(raw, schema, source)


def parse_config(raw: dict[str, Any], schema: type[T], source: str = "<config>") -> T:
    """Convert an already-parsed mapping into `schema`; errors name `source` and the key path."""
    return typing.cast(T, _convert(raw, schema, source, ""))


def _describe(tp: Any) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        ipaddress.IPv6Network: "an IPv6 prefix",
        ipaddress.IPv6Address: "an IPv6 address",
        Path: "a path",
    }
    if tp in names:
        return names[tp]
    if dataclasses.is_dataclass(tp):
        return "a table"
    origin = get_origin(tp)
    if origin is list:
        return "an array"
    if origin is dict:
        return "a table"
    return getattr(tp, "__name__", str(tp))


def _join(key: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{key}[{part}]"
    return f"{key}.{part}" if key else part


def _convert(value: Any, tp: Any, source: str, key: str) -> Any:
    origin = get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if value is None:
            return None
        if len(args) == 1:
            # `X | None`: the inner error, with its own key path, is the useful one.
            return _convert(value, args[0], source, key)
        errors = []
        for arg in args:
            try:
                return _convert(value, arg, source, key)
            except ConfigError as exc:
                errors.append(exc.message)
        raise ConfigError(source, key, " or ".join(errors))
    if origin is typing.Literal:
        allowed = get_args(tp)
        if value not in allowed:
            raise ConfigError(source, key, f"expected one of {list(allowed)}, got {value!r}")
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _convert_dataclass(value, tp, source, key)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(source, key, f"expected an array, got {_typename(value)}")
        (item_tp,) = get_args(tp)
        return [_convert(v, item_tp, source, _join(key, i)) for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(source, key, f"expected a table, got {_typename(value)}")
        _, val_tp = get_args(tp)
        return {k: _convert(v, val_tp, source, _join(key, k)) for k, v in value.items()}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(value)
        except ValueError:
            members = [m.value for m in tp.__members__.values()]
            raise ConfigError(source, key, f"expected one of {members}, got {value!r}") from None
    return _convert_scalar(value, tp, source, key)


def _typename(value: Any) -> str:
    return {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "a boolean",
        list: "an array",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _convert_scalar(value: Any, tp: Any, source: str, key: str) -> Any:
    def wrong() -> ConfigError:
        return ConfigError(source, key, f"expected {_describe(tp)}, got {value!r}")

    if tp is bool:
        if not isinstance(value, bool):
            raise wrong()
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong()
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise wrong()
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise wrong()
        return value
    if tp is Path:
        if not isinstance(value, str):
            raise wrong()
        return Path(value)
    if tp in (ipaddress.IPv6Network, ipaddress.IPv6Address):
        if not isinstance(value, str):
            raise wrong()
        try:
            return tp(value)
        except ValueError as exc:
            raise ConfigError(
                source, key, f"expected {_describe(tp)}, got {value!r} ({exc})"
            ) from None
    if tp is Any:
        return value
    raise ConfigError(source, key, f"unsupported schema type {tp!r}")


def _convert_dataclass(value: Any, tp: type, source: str, key: str) -> Any:
    if not isinstance(value, dict):
        raise ConfigError(source, key, f"expected a table, got {_typename(value)}")
    hints = get_type_hints(tp)
    fields = {f.name: f for f in dataclasses.fields(tp)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise ConfigError(
            source, _join(key, unknown[0]), f"unknown key (known: {', '.join(sorted(fields))})"
        )
    kwargs: dict[str, Any] = {}
    for name, field in fields.items():
        if name in value:
            kwargs[name] = _convert(value[name], hints[name], source, _join(key, name))
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise ConfigError(
                source, _join(key, name), f"missing required key ({_describe(hints[name])})"
            )
    try:
        return tp(**kwargs)
    except (ValueError, TypeError) as exc:
        # __post_init__ validation: cross-field rules of the schema itself.
        raise ConfigError(source, key or "<top>", str(exc)) from None

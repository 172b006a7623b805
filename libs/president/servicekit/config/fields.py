"""How a setting is declared and read: a dataclass field naming its variable, its default and
its meaning, and one loader that reads every declared field from the environment.

A settings class is a frozen dataclass whose fields are made by :func:`setting`
(read from one variable) or hold another settings class (a group, read the same
way). :meth:`FromEnv.from_env` is the only place the environment is read; a
process reads it once, at start, and hands the object to what needs it. The
reference page (``docs/settings.md``) is made from the same declarations
(:mod:`president.servicekit.config.reference`).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import typing
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Self, TypeVar

T = TypeVar("T")

#: Reads a variable's text (its name for the error) into a value; SystemExit with a sentence
#: for text it cannot read.
Parser = Callable[[str, str], Any]


def text(_name: str, raw: str) -> str:
    return raw


def whole(name: str, raw: str) -> int:
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, not {raw!r}") from None


def seconds(name: str, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number of seconds, not {raw!r}") from None


def number(name: str, raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number, not {raw!r}") from None


def positive(name: str, raw: str) -> float:
    """A number above 0 (and finite)."""
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or math.isinf(value):
        raise SystemExit(f"{name} must be a positive number, not {raw!r}")
    return value


def milliseconds(name: str, raw: str) -> float:
    """Milliseconds in the variable, seconds in the setting."""
    try:
        return float(raw) / 1000
    except ValueError:
        raise SystemExit(f"{name} must be a number of milliseconds, not {raw!r}") from None


def kibibytes(name: str, raw: str) -> int:
    """KiB in the variable, bytes in the setting."""
    return whole(name, raw) * 1024


def path(_name: str, raw: str) -> Path:
    return Path(raw)


def address(_name: str, raw: str) -> str:
    """A URL without its trailing slash."""
    return raw.rstrip("/")


def origins(name: str, raw: str) -> tuple[str, ...]:
    """Web origins (``https://club.example``) separated by commas, never ``*``."""
    found = tuple(part.strip().rstrip("/") for part in raw.split(",") if part.strip())
    for origin in found:
        if origin == "*" or "://" not in origin:
            raise SystemExit(
                f"{name} lists {origin!r}: name each origin in full (https://club.example), "
                "never '*'"
            )
    return found


def networks(name: str, raw: str) -> tuple[str, ...]:
    """IP addresses or networks (``10.0.0.5``, ``10.0.0.0/8``, ``fd00::/8``) separated by
    commas, each written out in its standard form."""
    found = []
    for part in (piece.strip() for piece in raw.split(",")):
        if not part:
            continue
        try:
            found.append(str(ipaddress.ip_network(part, strict=False)))
        except ValueError:
            raise SystemExit(
                f"{name} lists {part!r}: name each proxy by its address or network "
                "(10.0.0.5, 10.0.0.0/8)"
            ) from None
    return tuple(found)


def public_keys(name: str, raw: str) -> tuple[str, ...]:
    """Ed25519 public keys, each its 32 raw bytes in 64 hex digits, separated by commas."""
    found = tuple(part.strip().lower() for part in raw.split(",") if part.strip())
    for key in found:
        if len(key) != 64 or any(digit not in "0123456789abcdef" for digit in key):
            raise SystemExit(
                f"{name} lists {key!r}: name each public key by its 64 hex digits "
                "(president operator-key prints them; docs/auditing.md)"
            )
    return found


def choice(*allowed: str) -> Parser:
    """One of ``allowed`` (case and spaces ignored); the first when empty."""

    def parse(name: str, raw: str) -> str:
        value = raw.strip().lower() or allowed[0]
        if value not in allowed:
            raise SystemExit(f"{name}={value!r}: it is {' or '.join(allowed)}")
        return value

    return parse


def setting(
    variable: str,
    default: T,
    meaning: str,
    parse: Parser = text,
    shown: str | None = None,
) -> T:
    """A field read from ``variable`` (``default`` when it is unset, or empty for anything
    but text), with a one-line ``meaning`` for the reference page and how it reads there
    (``shown``, else the default itself)."""
    metadata = {
        "variable": variable,
        "meaning": meaning,
        "parse": parse,
        "shown": shown if shown is not None else _shown(default),
    }
    field: T = dataclasses.field(default=default, metadata=metadata)
    return field


def group(kind: Callable[[], T]) -> T:
    """A field holding a group of settings (read with the class that holds it)."""
    field: T = dataclasses.field(default_factory=kind)
    return field


def _shown(default: object) -> str:
    if default == "" or default == ():
        return "not set"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)


def _read(kind: type[T], environ: Mapping[str, str]) -> T:
    values: dict[str, Any] = {}
    hints = typing.get_type_hints(kind)
    for item in dataclasses.fields(kind):  # type: ignore[arg-type]
        variable = item.metadata.get("variable")
        if variable is None:
            nested = hints[item.name]
            if dataclasses.is_dataclass(nested):
                values[item.name] = _read(nested, environ)  # type: ignore[arg-type]
            continue
        raw = environ.get(variable)
        parse: Parser = item.metadata["parse"]
        if raw is None or (raw == "" and parse is not text):
            continue
        values[item.name] = parse(variable, raw)
    return kind(**values)


class FromEnv:
    """A settings class: :meth:`from_env` reads its fields (and its groups')."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The settings from ``environ`` (the process's environment by default)."""
        return _read(cls, os.environ if environ is None else environ)


@dataclasses.dataclass(frozen=True)
class Variable:
    """One variable as the reference page lists it."""

    name: str
    shown: str
    meaning: str


def variables(kind: type[Any]) -> Iterator[Variable]:
    """Every variable ``kind`` reads, its groups' included, in declaration order."""
    hints = typing.get_type_hints(kind)
    for item in dataclasses.fields(kind):
        variable = item.metadata.get("variable")
        if variable is not None:
            yield Variable(variable, item.metadata["shown"], item.metadata["meaning"])
        elif dataclasses.is_dataclass(hints[item.name]):
            yield from variables(hints[item.name])

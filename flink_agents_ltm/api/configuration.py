"""Typed configuration options, in the style of Flink's ``ConfigOption``.

An option is a value object (key, type, default, description). A
:class:`Configuration` only accepts options it knows and values of their
type, so a typo in a key or a wrong type fails when it is set, not deep
inside a running job.

Values written as text (Flink's ``config.yaml``, ``-D`` on ``flink run``, a
YAML file) are parsed by the option's type with :meth:`ConfigOption.parse`:
``"32"`` is 32, ``"true"`` is ``True``, a duration option (milliseconds) also
takes ``"500 ms"``, ``"30 s"`` or ``"1 min"``, and an option that takes a dict
takes a JSON object.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["ConfigOption", "Configuration", "UnknownConfigKeyError", "did_you_mean",
           "unknown_key_message"]

T = TypeVar("T")

_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$")
_MILLIS_PER_UNIT = {
    **dict.fromkeys(("", "ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1_000),
    **dict.fromkeys(("min", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
}


class UnknownConfigKeyError(KeyError):
    """A key no option of the configuration has; the message suggests the closest one."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    key: str
    type: type | tuple[type, ...]
    default: T | None
    description: str
    # An int of milliseconds that text may also give with a unit, as Flink's durations.
    duration: bool = False

    def validate(self, value: Any) -> T | None:
        """Return ``value`` if it fits this option, else raise ``TypeError`` naming it."""
        if value is None:
            return None
        types = self._types()
        if float in types and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if bool not in types and isinstance(value, bool):
            raise TypeError(f"option '{self.key}' expects {self._type_names()}, got bool")
        if not isinstance(value, types):
            # Only numbers are echoed: a text or a container may hold a password.
            shown = f": {value!r}" if isinstance(value, int | float) else ""
            raise TypeError(
                f"option '{self.key}' expects {self._type_names()}, "
                f"got {type(value).__name__}{shown}"
            )
        return value

    def parse(self, text: str) -> T | None:
        """The value ``text`` stands for, as written in Flink's configuration or on
        ``-D``; ``ValueError`` naming the option and the expected form otherwise."""
        if not isinstance(text, str):
            raise TypeError(f"option '{self.key}': parse() takes text, got "
                            f"{type(text).__name__}")
        types = self._types()
        stripped = text.strip()
        if bool in types:
            if stripped.lower() in ("true", "false"):
                return self.validate(stripped.lower() == "true")
            raise ValueError(f"option '{self.key}' expects true or false, got {text!r}")
        if int in types:
            return self.validate(self._parse_int(stripped, text))
        if float in types:
            try:
                return self.validate(float(stripped))
            except ValueError:
                raise ValueError(f"option '{self.key}' expects a number, got {text!r}") from None
        if dict in types and stripped.startswith("{"):
            try:
                value = json.loads(stripped)
            except ValueError as error:
                raise ValueError(f"option '{self.key}' expects a JSON object, got {text!r} "
                                 f"({error})") from None
            return self.validate(value)
        if str in types:
            return self.validate(text)
        raise ValueError(f"option '{self.key}' expects a JSON object, got {text!r}")

    def _parse_int(self, stripped: str, text: str) -> int:
        if not self.duration:
            try:
                return int(stripped)
            except ValueError:
                raise ValueError(f"option '{self.key}' expects an integer, got {text!r}") from None
        match = _DURATION.match(stripped.lower())
        if match is None or match.group(2) not in _MILLIS_PER_UNIT:
            raise ValueError(f"option '{self.key}' expects milliseconds or a duration such as "
                             f"'500 ms', '30 s', '1 min', '1 h', got {text!r}")
        return int(match.group(1)) * _MILLIS_PER_UNIT[match.group(2)]

    def _types(self) -> tuple[type, ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    def _type_names(self) -> str:
        return " or ".join(t.__name__ for t in self._types())


class Configuration:
    """Values for a known set of options; unknown keys are refused."""

    def __init__(self, options: Iterable[ConfigOption], values: Mapping[str, Any] | None = None):
        self._options = {option.key: option for option in options}
        self._values: dict[str, Any] = {}
        for key, value in (values or {}).items():
            self.set(key, value)

    def set(self, option: ConfigOption | str, value: Any) -> Configuration:
        known = self._option(option)
        self._values[known.key] = known.validate(value)
        return self

    def set_string(self, option: ConfigOption | str, text: str) -> Configuration:
        """Set an option from text, parsed by its type (``"32"``, ``"true"``, ``"1 min"``)."""
        known = self._option(option)
        return self.set(known, known.parse(text))

    def get(self, option: ConfigOption[T] | str) -> T | None:
        known = self._option(option)
        return self._values.get(known.key, known.default)

    def contains(self, option: ConfigOption | str) -> bool:
        return self._option(option).key in self._values

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def options(self) -> tuple[ConfigOption, ...]:
        return tuple(self._options.values())

    def _option(self, option: ConfigOption | str) -> ConfigOption:
        key = option.key if isinstance(option, ConfigOption) else option
        try:
            return self._options[key]
        except KeyError:
            raise UnknownConfigKeyError(unknown_key_message(key, self._options)) from None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'closest'?"``, or ``"."`` when nothing is close. Keys are
    compared whole and by their last dotted part (``agents.capacity`` finds
    ``agents.durable-async.capacity``)."""

    def likeness(candidate: str) -> float:
        whole = difflib.SequenceMatcher(None, word, candidate).ratio()
        last = difflib.SequenceMatcher(None, word.rsplit(".", 1)[-1],
                                       candidate.rsplit(".", 1)[-1]).ratio()
        return max(whole, last)

    scored = [(likeness(c), c) for c in candidates if c != word]
    best = max(scored, default=(0.0, ""))
    return f"; did you mean '{best[1]}'?" if best[0] >= 0.75 else "."


def unknown_key_message(key: str, known: Iterable[str]) -> str:
    """``unknown configuration key 'x'; did you mean 'y'?`` plus the known keys."""
    known = sorted(known)
    return f"unknown configuration key '{key}'{did_you_mean(key, known)} Known keys: " \
           f"{', '.join(known)}"

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

An option that takes a dict or a name (a vector store: inline, or the name of a
declared one) takes JSON text too, set or parsed: text that starts with ``{`` is
the dict it spells, since Flink's ``-D`` and ``config.yaml`` carry only text.
Such text may hold a password, so no error ever shows it: a malformed object is
refused by where it breaks (line and column), and a "name" that holds a credential
(a connection URL, ``password=...``) is refused outright.
"""

from __future__ import annotations

import builtins
import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar, cast, overload

from flink_agents_ltm.api.redaction import MaskedError, redact_text

__all__ = ["ConfigOption", "Configuration", "ConfigurationError", "ConfigurationTypeError",
           "UnknownConfigKeyError", "did_you_mean", "unknown_key_message"]

T = TypeVar("T")

_DURATION = re.compile(r"^\s*(\d+)\s*([a-z]*)\s*$")
_MILLIS_PER_UNIT = {
    **dict.fromkeys(("", "ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1_000),
    **dict.fromkeys(("min", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
}


class ConfigurationError(MaskedError, ValueError):
    """A configuration value is refused; its message names the option and what to give,
    with any credential it quotes masked (:class:`MaskedError`)."""


class ConfigurationTypeError(MaskedError, TypeError):
    """A configuration value is of the wrong type; masked like :class:`ConfigurationError`."""


class UnknownConfigKeyError(MaskedError, KeyError):
    """A key no option of the configuration has; the message suggests the closest one."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    """An option whose values are of type ``T``: ``ConfigOption[int]`` for an option
    with a default, ``ConfigOption[int | None]`` for one that may stay unset, so
    :meth:`Configuration.get` returns what the option holds."""

    key: str
    # ``type`` is also this field's name: inside the class body the builtin is
    # ``builtins.type``.
    type: builtins.type[T] | tuple[builtins.type[Any], ...]
    default: T
    description: str
    # An int of milliseconds that text may also give with a unit, as Flink's durations.
    duration: bool = False

    def validate(self, value: object) -> T | None:
        """Return ``value`` if it fits this option, else raise ``TypeError`` naming it;
        ``None`` (unset) fits every option."""
        if value is None:
            return None
        types = self._types()
        if dict in types and isinstance(value, str):
            value = self._spec_or_name(value)
        if float in types and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if bool not in types and isinstance(value, bool):
            raise ConfigurationTypeError(
                f"option '{self.key}' expects {self._type_names()}, got bool")
        if not isinstance(value, types):
            # Only numbers are echoed: a text or a container may hold a password.
            shown = f": {value!r}" if isinstance(value, int | float) else ""
            raise ConfigurationTypeError(
                f"option '{self.key}' expects {self._type_names()}, "
                f"got {builtins.type(value).__name__}{shown}"
            )
        # The isinstance check above is what makes value a T (T is one of self._types()).
        return cast(T, value)

    def parse(self, text: str) -> T | None:
        """The value ``text`` stands for, as written in Flink's configuration or on
        ``-D``; ``ValueError`` naming the option and the expected form otherwise."""
        if not isinstance(text, str):
            raise ConfigurationTypeError(f"option '{self.key}': parse() takes text, got "
                                         f"{builtins.type(text).__name__}")
        types = self._types()
        stripped = text.strip()
        if bool in types:
            if stripped.lower() in ("true", "false"):
                return self.validate(stripped.lower() == "true")
            raise ConfigurationError(
                f"option '{self.key}' expects true or false, got {_shown(text)}")
        if int in types:
            return self.validate(self._parse_int(stripped, text))
        if float in types:
            try:
                return self.validate(float(stripped))
            except ValueError:
                raise ConfigurationError(
                    f"option '{self.key}' expects a number, got {_shown(text)}") from None
        if dict in types and stripped.startswith("{"):
            return self.validate(stripped)
        if str in types:
            return self.validate(text)
        raise ConfigurationError(f"option '{self.key}' expects a JSON object (text starting "
                                 "with '{'); its text is not shown, it may hold a password")

    def _spec_or_name(self, text: str) -> Any:
        """For an option that takes a dict: the dict that JSON ``text`` spells, or ``text``
        as a name. Never shows ``text`` (a store's JSON holds its password)."""
        if text.lstrip().startswith("{"):
            try:
                return json.loads(text)
            except ValueError as error:
                where = (f"{error.msg} at line {error.lineno} column {error.colno}"
                         if isinstance(error, json.JSONDecodeError) else type(error).__name__)
                raise ConfigurationError(
                    f"option '{self.key}' is text starting with '{{' but not a valid JSON "
                    f"object ({where}); its text is not shown, it may hold a password"
                ) from None
        if redact_text(text) != text:
            raise ConfigurationError(
                f"option '{self.key}' is text that holds a credential (a connection URL or "
                "password=...), not a name: give the spec as a dict or a JSON object; its "
                "text is not shown")
        return text

    def _parse_int(self, stripped: str, text: str) -> int:
        if not self.duration:
            try:
                return int(stripped)
            except ValueError:
                raise ConfigurationError(
                    f"option '{self.key}' expects an integer, got {_shown(text)}") from None
        match = _DURATION.match(stripped.lower())
        if match is None or match.group(2) not in _MILLIS_PER_UNIT:
            raise ConfigurationError(
                f"option '{self.key}' expects milliseconds or a duration such as "
                f"'500 ms', '30 s', '1 min', '1 h', got {_shown(text)}")
        return int(match.group(1)) * _MILLIS_PER_UNIT[match.group(2)]

    def _types(self) -> tuple[builtins.type[Any], ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    def _type_names(self) -> str:
        return " or ".join(t.__name__ for t in self._types())


class Configuration:
    """Values for a known set of options; unknown keys are refused."""

    def __init__(self, options: Iterable[ConfigOption[Any]],
                 values: Mapping[str, Any] | None = None):
        self._options = {option.key: option for option in options}
        self._values: dict[str, Any] = {}
        for key, value in (values or {}).items():
            self.set(key, value)

    @overload
    def set(self, option: ConfigOption[T], value: T) -> Self: ...

    @overload
    def set(self, option: str, value: Any) -> Self: ...

    def set(self, option: ConfigOption[Any] | str, value: Any) -> Self:
        known = self._option(option)
        valid = known.validate(value)
        self._check(known, valid)
        self._values[known.key] = valid
        return self

    def set_string(self, option: ConfigOption[Any] | str, text: str) -> Self:
        """Set an option from text, parsed by its type (``"32"``, ``"true"``, ``"1 min"``)."""
        known = self._option(option)
        return self.set(known, known.parse(text))

    @overload
    def get(self, option: ConfigOption[T]) -> T: ...

    @overload
    def get(self, option: str) -> Any: ...

    def get(self, option: ConfigOption[Any] | str) -> Any:
        known = self._option(option)
        return self._values.get(known.key, known.default)

    def contains(self, option: ConfigOption[Any] | str) -> bool:
        return self._option(option).key in self._values

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def options(self) -> tuple[ConfigOption[Any], ...]:
        return tuple(self._options.values())

    def _check(self, option: ConfigOption[Any], value: Any) -> None:
        """Rules beyond the option's type, for a subclass to add (``value`` is valid
        for ``option``'s type); raise ``ValueError`` naming the option to refuse it."""

    def _option(self, option: ConfigOption[Any] | str) -> ConfigOption[Any]:
        key = option.key if isinstance(option, ConfigOption) else option
        try:
            return self._options[key]
        except KeyError:
            raise UnknownConfigKeyError(unknown_key_message(key, self._options)) from None


def _shown(text: str) -> str:
    """``text`` quoted for an error message: credentials masked, at most 40 characters."""
    masked = redact_text(text)
    return repr(masked if len(masked) <= 40 else masked[:37] + "...")


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

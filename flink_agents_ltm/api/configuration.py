"""Typed configuration options, in the style of Flink's ``ConfigOption``.

An option is a value object (key, type, default, description). A
:class:`Configuration` only accepts options it knows and values of their
type, so a typo in a key or a wrong type fails when it is set, not deep
inside a running job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ConfigOption(Generic[T]):
    key: str
    type: type | tuple[type, ...]
    default: T | None
    description: str

    def validate(self, value: Any) -> T | None:
        """Return ``value`` if it fits this option, else raise ``TypeError`` naming it."""
        if value is None:
            return None
        types = self.type if isinstance(self.type, tuple) else (self.type,)
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

    def _type_names(self) -> str:
        types = self.type if isinstance(self.type, tuple) else (self.type,)
        return " or ".join(t.__name__ for t in types)


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

    def get(self, option: ConfigOption[T] | str) -> T | None:
        known = self._option(option)
        return self._values.get(known.key, known.default)

    def contains(self, option: ConfigOption | str) -> bool:
        return self._option(option).key in self._values

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def _option(self, option: ConfigOption | str) -> ConfigOption:
        key = option.key if isinstance(option, ConfigOption) else option
        try:
            return self._options[key]
        except KeyError:
            known = ", ".join(sorted(self._options))
            raise KeyError(f"unknown configuration key '{key}'; known keys: {known}") from None

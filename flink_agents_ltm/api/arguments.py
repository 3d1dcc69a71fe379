"""The checks of arguments that long-term memory and vector stores both take: a
``limit``, ``ids``, and metadata as JSON values. One check per concept, so both
refuse the same input the same way; each caller's message names its own thing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flink_agents_ltm.api.text import check_text

__all__ = ["check_ids", "check_json", "check_limit"]


def check_limit(limit: Any) -> int:
    """A positive ``int`` (not a ``bool``)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ValueError(f"limit must be a positive int, got {limit!r}")
    return limit


def check_ids(ids: Any) -> list[str]:
    """One id (a ``str``) or a sequence of ``str``, as a list."""
    id_list = [ids] if isinstance(ids, str) else ids
    if (not isinstance(id_list, Sequence) or isinstance(id_list, (bytes, bytearray))
            or not all(isinstance(i, str) for i in id_list)):
        raise TypeError(f"ids must be a str or a list of str, got {type(ids).__name__}")
    return list(id_list)


def _same(value: Any) -> Any:
    return value


def check_json(value: Any, what: str, *, storable_text: bool = True, empty_keys: bool = True,
               mapping: Callable[[dict[str, Any]], Any] = _same,
               sequence: Callable[[list[Any]], Any] = _same) -> tuple[Any, int]:
    """``value`` checked to be JSON (str, int, finite float, bool, None, and lists, tuples
    and str-keyed mappings of those) and copied, each mapping made a dict passed to
    ``mapping`` and each list or tuple a list passed to ``sequence``; with the approximate
    length of its JSON text. Raises naming ``what`` and the path of the first value that
    is not JSON: ``ValueError`` for NaN or infinity, ``TypeError`` for anything else.
    ``storable_text``: strings and keys must also pass :func:`check_text`;
    ``empty_keys=False`` refuses the key ``""``."""
    return _json(value, what, "", storable_text, empty_keys, mapping, sequence)


def _json(value: Any, what: str, path: str, storable_text: bool, empty_keys: bool,
          mapping: Callable[[dict[str, Any]], Any], sequence: Callable[[list[Any]], Any]
          ) -> tuple[Any, int]:
    where = f" at '{path}'" if path else ""
    if value is None or isinstance(value, bool):
        return value, 5
    if isinstance(value, str):
        if storable_text:
            check_text(value, f"{what}{where}")
        return value, len(value) + 2
    if isinstance(value, int):
        return value, len(str(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{what}{where} is {value!r}; JSON has no NaN or infinity")
        return value, len(repr(value))
    if isinstance(value, Mapping):
        size = 2
        items = {}
        for key, inner in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{what}{where} has a key of type {type(key).__name__}; "
                                "metadata keys are str")
            if not key and not empty_keys:
                raise TypeError(f"{what}{where} has the key ''; metadata keys are non-empty "
                                "str")
            if storable_text:
                check_text(key, f"{what} key {key!r}")
            items[key], inner_size = _json(inner, what, f"{path}.{key}" if path else key,
                                           storable_text, empty_keys, mapping, sequence)
            size += len(key) + 4 + inner_size
        return mapping(items), size
    if isinstance(value, (list, tuple)):
        size = 2
        elements = []
        for index, inner in enumerate(value):
            element, inner_size = _json(inner, what, f"{path}[{index}]", storable_text,
                                        empty_keys, mapping, sequence)
            elements.append(element)
            size += inner_size + 1
        return sequence(elements), size
    raise TypeError(f"{what}{where} is a {type(value).__name__}; metadata values must be JSON "
                    "(str, int, float, bool, None, lists and dicts of those): convert it, "
                    "e.g. a datetime with .isoformat()")

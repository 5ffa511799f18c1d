"""JSON that stays readable and small: objects indented, lists of numbers or text on one line.

``json.dumps(indent=2)`` puts every element of a list on its own line: a 70,000-value domain's values,
retentions and pairs became hundreds of thousands of lines and most of a 390 MB ``release.json``. Here an
object is indented as usual, a list of scalars is written on one line, and a list of small flat objects (the
per-value pairs, the sub-tables) one object per line, or all on one line when there are thousands — a person
can still read the file, and it is as small as compact JSON give or take the line breaks. ``json.loads`` reads it like any JSON.
"""
from __future__ import annotations

import json
from typing import Any

_SCALARS = (str, int, float, bool, type(None))
#: a list of more flat objects than this is written on one line (a line each would cost a second per 100,000)
LONG = 1000


def _flat(value: Any) -> bool:
    """A scalar, or an object or list holding only scalars."""
    if isinstance(value, _SCALARS):
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    return items is not None and all(isinstance(v, _SCALARS) for v in items)


_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(", ", ": "))  # one, reused: fast


def _compact(value: Any) -> str:
    return _ENCODER.encode(value)


def dumps_readable(value: Any, indent: int = 2) -> str:
    """``value`` as JSON text (no NaN or infinity: they are not JSON), see the module docstring."""
    return _write(value, indent, 0) + "\n"


def _write(value: Any, indent: int, level: int) -> str:
    pad, inner = " " * (indent * level), " " * (indent * (level + 1))
    if isinstance(value, dict):
        if not value:
            return "{}"
        parts = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_write(v, indent, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(parts) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        value = list(value)
        if not value or all(isinstance(v, _SCALARS) for v in value):
            return _compact(value)
        if len(value) > LONG and all(_flat(v) for v in value):  # thousands of pairs: one line, one encoder call
            return _compact(value)
        parts = [inner + (_compact(v) if _flat(v) else _write(v, indent, level + 1)) for v in value]
        return "[\n" + ",\n".join(parts) + "\n" + pad + "]"
    return _compact(value)

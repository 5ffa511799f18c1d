"""The text a user types for a value: light enough for the window's first page (no numpy, no pandas)."""
from __future__ import annotations


def label_text(value: object) -> str:
    """The text a user types for a domain value ("" for missing)."""
    if value is None or (isinstance(value, float) and value != value):  # NaN, numpy's float64 among the floats
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

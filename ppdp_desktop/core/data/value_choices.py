"""The file of per-value default choices (``--value-choices FILE``, step 3's table): a CSV ``value,choice``.

A record's privacy choice is ``1`` (publish the actual value), ``2`` (a generalized value) or ``3`` (an opaque
code); the methods that read choices (:class:`~ppdp_desktop.core.settings.ChoiceSettings`) take a per-value
default from this file.
"""
from __future__ import annotations

import pandas as pd

from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.errors import InputError


def read_value_choices(path: str) -> dict[str, int]:
    """A CSV ``value,choice`` (header optional) of per-value default choices."""
    check_regular(path, "value-choices file (CSV value,choice)")
    try:  # from an open handle: pandas would fetch a path such as "http://..." or "file:..." as a URL
        with open(path, "rb") as handle:
            table = pd.read_csv(handle, header=None, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"Cannot read the value-choices file {path}: {exc}.") from exc
    if table.shape[1] != 2:
        raise InputError(f"{path} must have two columns value,choice; it has {table.shape[1]}.")
    out: dict[str, int] = {}
    for line, (value, choice) in enumerate(table.itertuples(index=False), start=1):
        if line == 1 and choice.strip().lower() == "choice":
            continue
        if choice.strip() not in {"1", "2", "3"}:
            raise InputError(f"{path}, line {line}: the choice for {value!r} must be 1, 2 or 3; got {choice!r}.")
        out[value] = int(choice)
    return out

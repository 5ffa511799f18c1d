"""Label rows of a date hierarchy: a date, its month, its year, its decade (``"*"`` is added on top).

The values are the exact text read (``2024-03-17``, ``17.03.2024``, ``03/17/2024``); each is parsed
with the one format that reads the whole column (:func:`~ppdp_desktop.core.data.kinds.date_format`).
When a day/month order cannot be told (every ``a/b/yyyy`` fits both), the month level is left out
rather than guessed, so a generalized value is never wrong.
"""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.kinds import date_format
from ppdp_desktop.core.errors import TaxonomyError


def date_rows(attribute: str, values: Iterable[object]) -> list[list[str]]:
    """Rows ``[value, month, year, decade]`` of the distinct dates (month omitted when ambiguous).

    Raises
    ------
    TaxonomyError
        If the values are not all dates of one format.
    """
    texts = pd.Series(sorted({label_text(v) for v in values if label_text(v)}), dtype=object)
    if texts.empty:
        raise TaxonomyError(f"Column {attribute!r} has no dates to build a hierarchy from.")
    fmt = date_format(texts)
    if fmt is None:
        raise TaxonomyError(f"Column {attribute!r} is not a column of dates of one format (2024-03-01, 01.03.2024 "
                            "or 01/03/2024); set its kind to categorical or give it a hierarchy.")
    dates = pd.to_datetime(texts, format=fmt)
    ambiguous = fmt == "%d/%m/%Y" and pd.to_datetime(texts, format="%m/%d/%Y", errors="coerce").notna().all()
    years = dates.dt.year
    columns = [texts]
    if not ambiguous:
        columns.append(dates.dt.strftime("%Y-%m"))
    columns.append(years.astype(str))
    decade = (years // 10) * 10
    columns.append(decade.astype(str) + "-" + (decade + 9).astype(str))
    return [list(row) for row in zip(*(c.tolist() for c in columns))]

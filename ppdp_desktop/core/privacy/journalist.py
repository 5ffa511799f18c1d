"""Journalist risk: the risk of re-identification against a population table the custodian supplies.

The prosecutor (:mod:`.risk`) knows the person is in the data; the journalist does not, and links to the
whole population (a census, a register). A record whose quasi-identifiers ``F`` people share in the population
is re-identified with probability ``1 / F``, which is at most the prosecutor's ``1 / f`` (``F >= f``).

The population table is a CSV file (``,`` or ``;``, UTF-8): a header naming each quasi-identifier exactly as
the data does plus a column ``count``, and one row per combination giving how many people in the population
have it, e.g. ``age;sex;postcode;count`` then ``34;f;01067;12``. Values are compared as text, as the data file
shows them; an empty cell matches a missing value. Every combination in the data must have a row, and no
count may be smaller than the data's own number of such records.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.data.sniffing import decode_unset, sniff_delimiter
from ppdp_desktop.core.errors import InputError
from ppdp_desktop.core.privacy.verdict import _pct, _records

COUNT = "count"
MAX_BYTES = 512 * 1024 * 1024  # a census table of some million rows; larger is refused before reading


def _text(value: object) -> str:
    """The text a data file shows for a cell: a date without a time of day as ``2024-03-01``."""
    if isinstance(value, pd.Timestamp) and value == value.normalize():
        return value.strftime("%Y-%m-%d")
    return label_text(value)


def _texts(column: pd.Series) -> np.ndarray:
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    labels = np.array([_text(u) for u in uniques] + [""], dtype=object)
    return labels[codes]


@dataclass(frozen=True)
class PopulationTable:
    """A population table: ``counts`` maps a combination of quasi-identifier texts to its count; ``lines`` to the
    file line it came from (for messages); ``total`` is the population it counts."""

    name: str
    quasi: tuple[str, ...]
    counts: dict[tuple[str, ...], int]
    lines: dict[tuple[str, ...], int]
    total: int


def read_population(path: str | Path, quasi: Sequence[str]) -> PopulationTable:
    """Read and check the population table at ``path`` for the quasi-identifiers ``quasi``.

    Raises
    ------
    InputError
        Naming the file and line: a missing column, a count that is not a whole number of at least 1, or a
        combination given twice.
    """
    path = check_regular(path, "population table (CSV)")
    try:
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"{path.name}: the population table is larger than {MAX_BYTES >> 20} MiB; "
                             "count fewer combinations (the quasi-identifiers only).", file=str(path))
        text = decode_unset(path.read_bytes(), path.name, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the population table ({exc.strerror or exc}); check the path.",
                         file=str(path)) from None
    sep = sniff_delimiter(text[:65536]) or ","
    rows = csv.reader(io.StringIO(text), delimiter=sep)
    header = next(rows, None)
    if not header:
        raise InputError(f"{path.name}: the population table is empty; its first line names the quasi-identifiers "
                         f"and '{COUNT}'.", file=str(path))
    header = [h.strip() for h in header]
    missing = [q for q in quasi if q not in header] + ([COUNT] if COUNT not in header else [])
    if missing:
        raise InputError(f"{path.name}: the population table has no column {', '.join(repr(m) for m in missing)} "
                         f"(its columns: {', '.join(header)}); its header names each quasi-identifier and '{COUNT}'.",
                         file=str(path), row=1)
    where = [header.index(q) for q in quasi]
    at = header.index(COUNT)
    counts: dict[tuple[str, ...], int] = {}
    lines: dict[tuple[str, ...], int] = {}
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(f"{path.name}, line {number}: {len(row)} fields where the header has {len(header)}.",
                             file=str(path), row=number)
        key = tuple(row[i] for i in where)
        raw = row[at].strip()
        if not raw.isdigit() or int(raw) < 1:
            raise InputError(f"{path.name}, line {number}: the count {raw!r} is not a whole number of at least 1.",
                             file=str(path), row=number, column=COUNT)
        if key in counts:
            raise InputError(f"{path.name}, line {number}: {_combination(quasi, key)} is counted again (first on line "
                             f"{lines[key]}); give each combination one row.", file=str(path), row=number)
        counts[key], lines[key] = int(raw), number
    return PopulationTable(path.name, tuple(quasi), counts, lines, sum(counts.values()))


def _combination(quasi: Sequence[str], key: Sequence[str]) -> str:
    return ", ".join(f"{q}={v!r}" for q, v in zip(quasi, key))


@dataclass(frozen=True)
class JournalistRisk:
    """The journalist risk of a table against a population table: a record's risk is ``1 / F``, ``F`` the
    number of people in the population with its quasi-identifiers."""

    quasi: tuple[str, ...]
    population_file: str
    population_size: int
    n_records: int
    threshold: float
    highest_risk: float
    average_risk: float
    records_above_threshold: int
    population_uniques: int

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values."""
        return {"model": "journalist", "population_file": self.population_file,
                "population_size": self.population_size, "n_records": self.n_records, "threshold": self.threshold,
                "highest_risk": self.highest_risk, "average_risk": self.average_risk,
                "records_above_threshold": self.records_above_threshold,
                "population_uniques": self.population_uniques}

    def lines(self) -> list[str]:
        """The figures as sentences for a clinician."""
        if not self.n_records:
            return ["Against the population: the table has no records, so nobody can be re-identified from it."]
        smallest = round(1.0 / self.highest_risk)
        verb = "is" if self.population_uniques == 1 else "are"
        above = "is" if self.records_above_threshold == 1 else "are"
        return [
            f"Against the population table {self.population_file} ({self.population_size:,} people): the highest risk "
            f"is {_pct(self.highest_risk)} (the fewest people sharing a record's quasi-identifiers: {smallest:,}); "
            f"on average {_pct(self.average_risk)}.",
            f"{_records(self.population_uniques)} {verb} the only person in the population with their quasi-identifiers; "
            f"{_records(self.records_above_threshold)} {above} above the threshold of {_pct(self.threshold)}.",
        ]


def journalist_risk(frame: pd.DataFrame, quasi: Sequence[str], population: PopulationTable,
                    threshold: float = 0.2) -> JournalistRisk:
    """The journalist risk of ``frame`` over ``quasi`` against ``population``.

    Raises
    ------
    InputError
        When a combination of the data has no row in the population table, or a smaller count than the data's
        own number of records with it (the population holds the sample).
    """
    quasi = list(quasi)
    n = len(frame)
    if n == 0:
        return JournalistRisk(tuple(quasi), population.name, population.total, 0, threshold, 0.0, 0.0, 0, 0)
    texts = pd.DataFrame({str(i): _texts(frame[q]) for i, q in enumerate(quasi)})
    groups = texts.groupby(list(texts.columns), sort=False, dropna=False).size()
    keys = [k if isinstance(k, tuple) else (k,) for k in groups.index]
    sizes = groups.to_numpy()
    big = np.empty(len(keys), dtype=np.int64)
    for i, (key, size) in enumerate(zip(keys, sizes)):
        count = population.counts.get(tuple(key))
        if count is None:
            raise InputError(f"{population.name}: no row for {_combination(quasi, key)}, which {_records(int(size))} "
                             f"of the data {'has' if size == 1 else 'have'}; the table must count every combination "
                             "of the data (at the same level of generalization).", file=population.name)
        if count < size:
            raise InputError(f"{population.name}, line {population.lines[tuple(key)]}: {count:,} people have "
                             f"{_combination(quasi, key)}, but the data alone holds {size:,} such records; the "
                             "population includes the data, so its count cannot be smaller.",
                             file=population.name, row=population.lines[tuple(key)])
        big[i] = count
    risk = 1.0 / big
    return JournalistRisk(
        quasi=tuple(quasi), population_file=population.name, population_size=population.total, n_records=n,
        threshold=threshold, highest_risk=float(risk.max()), average_risk=float((sizes * risk).sum() / n),
        records_above_threshold=int(sizes[risk > threshold].sum()), population_uniques=int(sizes[big == 1].sum()),
    )

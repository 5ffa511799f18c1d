"""Risk in the population, for a release: population uniqueness and journalist risk on the released quasi-identifiers.

When the custodian states the sampling fraction (the share of the population the file holds) or supplies a
population table (:mod:`.journalist`), release.json and the report carry a "Risk in the population" section. Its
attacker knows a person's quasi-identifiers and that the person belongs to the population the data was drawn
from, but not whether the person is in the file. Both figures are measured on the quasi-identifiers as released,
with the suppressed records (every quasi-identifier ``*``) left out, as the release's own risk is:

* the population uniques are estimated (:mod:`.uniqueness`) from the released class sizes; the released records
  are a sample of ``F * kept / n`` of the population of ``n / F`` people the stated fraction ``F`` implies;
* a population table counted at the original level is first generalized to the release's levels (counts of
  combinations that become one are added); a value the hierarchies do not know cannot be placed, so its rows are
  left out, which can only make the counts smaller and the stated risk higher.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from ppdp_desktop.core.privacy.journalist import JournalistRisk, PopulationTable, journalist_risk, read_population
from ppdp_desktop.core.privacy.uniqueness import DANKAR_CUT, PITMAN, SNB, ZAYATZ, Uniqueness, estimate_uniqueness
from ppdp_desktop.core.privacy.verdict import _pct, _records

if TYPE_CHECKING:
    from ppdp_desktop.core.generalization import Generalization

TITLE = "Risk in the population"
MEANING = ("An attacker who knows a person's quasi-identifiers and that the person belongs to the population the data "
           "was drawn from (a region's patients, a census), but not whether the person is in the file: how many "
           "people are alone with their released quasi-identifiers in that population, and how likely a released "
           "record is to be theirs.")


@dataclass(frozen=True)
class PopulationRisk:
    """The release's risk in the population: ``uniqueness`` (with a stated sampling fraction) and ``journalist``
    (with a population table), each None when not asked; both on the released records of ``quasi``."""

    quasi: tuple[str, ...]
    n_records: int  # the records of the release
    n_released: int  # those whose quasi-identifiers are released (the suppressed ones left out)
    stated_fraction: float | None
    uniqueness: Uniqueness | None
    journalist: JournalistRisk | None
    generalized_table: bool = False  # the population table was counted at the original level and generalized
    rows_left_out: int = 0  # population-table rows with a value the release's hierarchies do not know

    @property
    def suppressed(self) -> int:
        return self.n_records - self.n_released

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values (release.json's ``population`` entry)."""
        return {
            "attacker": "journalist: knows a person's quasi-identifiers and that the person is in the population, "
                        "not whether the person is in the file",
            "quasi_identifiers": list(self.quasi), "n_records": self.n_records, "n_released": self.n_released,
            "suppressed_left_out": self.suppressed, "stated_sampling_fraction": self.stated_fraction,
            "population_uniqueness": None if self.uniqueness is None else self.uniqueness.to_json(),
            "journalist": None if self.journalist is None else {
                **self.journalist.to_json(), "generalized_to_release": self.generalized_table,
                "rows_left_out": self.rows_left_out},
            "statement": self.lines(),  # README.txt prints these
        }

    def lines(self) -> list[str]:
        """The figures in plain words: who the attacker is, each model's estimate and the rule's choice, and the
        journalist risk (highest, average, records at risk)."""
        left = f", the {self.suppressed:,} suppressed left out" if self.suppressed else ""
        out = [f"Attacker: someone who knows a person's {', '.join(self.quasi)} and that the person belongs to the "
               "population the data was drawn from, but not whether the person is in this file. Measured on the "
               f"{_records(self.n_released)} whose quasi-identifiers are released{left}."]
        if self.uniqueness is not None:
            out += uniqueness_lines(self.uniqueness, self.stated_fraction or self.uniqueness.sampling_fraction)
        if self.journalist is not None:
            out += self.journalist.lines()
            if self.generalized_table:
                out.append("The population table was counted at the original level; its counts were added up to "
                           "the released levels of the quasi-identifiers before comparing.")
            if self.rows_left_out:
                out.append(f"{self.rows_left_out:,} rows of the population table hold a value the release's "
                           "hierarchies do not know and were left out: that can only make the stated risk higher "
                           "than it is.")
        return out


def uniqueness_lines(u: Uniqueness, stated: float) -> list[str]:
    """The population uniqueness in plain words: the estimate chosen, each model's, and why the rule chose it."""
    people = f"in a population of about {round(u.population):,} people, of which the file is {_pct(stated)}"
    if u.model == "none":
        return [f"Population uniqueness {people}: no released record is alone with its quasi-identifiers, so "
                "nobody in the population is the only one with a released combination either."]
    each = "; ".join(f"{m} {'no estimate' if u.estimates.get(m) is None else f'{round(u.estimates[m] or 0):,}'}"
                     for m in (PITMAN, ZAYATZ, SNB))
    if u.model == PITMAN:
        why = f"Pitman's, as the released records are at most {_pct(DANKAR_CUT)} of the population"
    elif u.sampling_fraction <= DANKAR_CUT:
        why = "Zayatz's, as Pitman's model cannot be fitted to these class sizes"
    else:
        why = (f"the smaller of Zayatz's and SNB's, as the released records are more than {_pct(DANKAR_CUT)} of the "
               "population" if u.estimates.get(SNB) is not None else
               f"Zayatz's, as the released records are more than {_pct(DANKAR_CUT)} of the population and the SNB "
               "model cannot be fitted")
    return [
        f"Population uniqueness {people}: about {round(u.uniques):,} people ({_pct(u.share)}) are estimated to be "
        f"the only one in the population with their released quasi-identifiers, about {round(u.in_data):,} of them "
        "in the release: whoever knows such a person's quasi-identifiers and finds a matching record knows it is "
        "theirs.",
        f"Estimates by model: {each}. Dankar et al.'s rule, as ARX applies it, takes {why}.",
    ]


def generalize_population(table: PopulationTable, generalization: Generalization) -> tuple[PopulationTable, bool, int]:
    """``table`` at the release's levels: each value is mapped through its hierarchy to its label at the chosen
    level (a value that already is a label of that level stays), and the counts of combinations that become one are
    added. Returns the table, whether any value was generalized, and how many rows held a value the hierarchies do
    not know (left out)."""
    maps: list[dict[str, str]] = []
    for name in table.quasi:
        hierarchy, level = generalization.hierarchies[name], generalization.levels[name]
        labels = hierarchy.labels(level)
        mapping = {label: label for label in labels}
        codes = hierarchy.level_codes[level]
        mapping.update({value: labels[codes[i]] for i, value in enumerate(hierarchy.values)})
        maps.append(mapping)
    counts: dict[tuple[str, ...], int] = {}
    lines: dict[tuple[str, ...], int] = {}
    changed, left_out = False, 0
    for key, count in table.counts.items():
        mapped = tuple(m.get(v) for m, v in zip(maps, key))
        if any(v is None for v in mapped):
            left_out += 1
            continue
        new = tuple(str(v) for v in mapped)
        changed = changed or new != key
        counts[new] = counts.get(new, 0) + count
        lines.setdefault(new, table.lines[key])
    return PopulationTable(table.name, table.quasi, counts, lines, table.total), changed, left_out


def population_risk(released: pd.DataFrame, quasi: Sequence[str], n_records: int, threshold: float,
                    sampling_fraction: float | None = None, population: str | PopulationTable | None = None,
                    generalization: Generalization | None = None) -> PopulationRisk:
    """The release's risk in the population (see the module docstring).

    ``released``: the quasi-identifiers as released, suppressed records already left out; ``n_records``: the
    release's records including them; ``population``: a population table (a path or one read); ``generalization``:
    the release's, to bring a table counted at the original level to the released levels.

    Raises
    ------
    InputError
        A population table that cannot be read or does not fit the released data (naming the file and line).
    """
    quasi = list(quasi)
    uniqueness = None
    kept = len(released)
    if sampling_fraction is not None and kept:
        sizes = released.groupby(quasi, sort=False, dropna=False, observed=True).size().value_counts().to_dict()
        uniqueness = estimate_uniqueness({int(s): int(c) for s, c in sizes.items()},
                                         min(1.0, float(sampling_fraction) * kept / n_records))
    journalist, generalized, left_out = None, False, 0
    if population is not None:
        table = population if isinstance(population, PopulationTable) else read_population(population, quasi)
        if generalization is not None:
            table, generalized, left_out = generalize_population(table, generalization)
        journalist = journalist_risk(released, quasi, table, threshold)
    return PopulationRisk(tuple(quasi), n_records, kept, sampling_fraction, uniqueness, journalist, generalized,
                          left_out)

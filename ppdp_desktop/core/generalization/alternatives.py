"""The few best nodes of one search, and each level of a hierarchy in words (issue 33: ARX's solution view, readable).

The exhaustive walk (:class:`~.search.LatticeWalk`) keeps the :data:`ALTERNATIVES` best feasible nodes of the same
search that chooses the generalization, best first, so the custodian sees what the runners-up keep and suppress
without a second search. :func:`level_words` says what a level looks like on the column's own values ("10-year
bands (30-39, 40-49, …)"): what the window shows in the table of alternatives and in the "keep at least as" choice.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ppdp_desktop.core.generalization.hierarchy import MISSING, ROOT, Hierarchy
from ppdp_desktop.core.generalization.metrics import Score, Scorer

#: how many of the best nodes a search keeps by default (the chosen one and four runners-up)
ALTERNATIVES = 5
_WHOLE_BAND = re.compile(r"^(-?\d+)-(-?\d+)$")  # "30-39": both ends included (intervals.py)
_HALF_OPEN = re.compile(r"^\[(-?[\d.]+), (-?[\d.]+)\)$")  # "[30.5, 40)"
_YEAR_WORDS = {"age", "alter", "years", "jahre", "lebensalter"}


@dataclass(frozen=True)
class Alternative:
    """One of the best nodes of a search.

    Attributes
    ----------
    levels : dict of str to int
        The level of each quasi-identifier.
    suppressed : int
        The records the node suppresses.
    metric_value : float
        Its value of the search's metric, as :attr:`~.result.Generalization.metric_value` gives it (a loss: lower is
        better; per cell for precision, loss and entropy).
    """

    levels: dict[str, int]
    suppressed: int
    metric_value: float

    def to_json(self, metric: str) -> dict[str, object]:
        """Plain JSON for release.json's generalization entry: levels, suppressed records, the metric and its value."""
        return {"levels": dict(self.levels), "suppressed": self.suppressed, "metric": metric,
                "metric_value": round(self.metric_value, 6)}

    def words(self, hierarchies: Mapping[str, Hierarchy]) -> dict[str, str]:
        """What the node keeps of each quasi-identifier, in words (:func:`level_words`)."""
        return {name: level_words(hierarchies[name], level) for name, level in self.levels.items()}


def ranked_alternatives(ranked: Sequence[Score], hierarchies: Sequence[Hierarchy], scorer: Scorer) -> tuple[Alternative, ...]:
    """The :class:`Alternative` of each of a walk's best scores (best first)."""
    return tuple(Alternative({h.attribute: int(lv) for h, lv in zip(hierarchies, score.levels)}, int(score.suppressed),
                             scorer.per_cell(score.value)) for score in ranked)


def level_words(hierarchy: Hierarchy, level: int, examples: int = 2) -> str:
    """What ``level`` of ``hierarchy`` looks like, with a few of its labels: "exact values (39, 40, …)", "10-year bands
    (30-39, 40-49, …)" (bands of one width), "9 groups (Married, Never-married, …)", "not released (*)"."""
    top = hierarchy.labels(hierarchy.height)[0]  # "*", or the one band every value falls in
    if level == hierarchy.height:
        return f"not released ({top})"
    labels = [label for label in hierarchy.labels(level) if label not in (ROOT, MISSING, top)]  # a missing value: top
    if not labels:
        return f"not released ({top})"
    shown = ", ".join(_examples(hierarchy, level, labels, examples)) + (", …" if len(labels) > examples else "")
    if level == 0:
        return f"exact values ({shown})"
    width = _band_width(labels)
    if width is not None:
        unit = "-year bands" if _YEAR_WORDS & set(re.split(r"[^a-z]+", hierarchy.attribute.lower())) else "-wide bands"
        return f"{width:g}{unit} ({shown})"
    return f"{len(labels):,} group{'s' * (len(labels) != 1)} ({shown})"


def _examples(hierarchy: Hierarchy, level: int, labels: list[str], count: int) -> list[str]:
    """``count`` neighbouring labels of ``level`` from the one the hierarchy's example value has."""
    example = hierarchy.chain(hierarchy.example)[level] if hierarchy.example != MISSING else labels[0]
    start = labels.index(example) if example in labels else 0
    start = max(0, min(start, len(labels) - count))
    return labels[start:start + count]


def _band_width(labels: list[str]) -> float | None:
    """The one width of interval labels ("30-39" is 10 wide, "[30, 40)" too), or None if they are not all bands of it."""
    widths = set()
    for label in labels:
        whole, half = _WHOLE_BAND.match(label), _HALF_OPEN.match(label)
        if whole and int(whole[2]) >= int(whole[1]):
            widths.add(float(int(whole[2]) - int(whole[1]) + 1))
        elif half and float(half[2]) > float(half[1]):
            widths.add(round(float(half[2]) - float(half[1]), 9))
        else:
            return None
    return widths.pop() if len(widths) == 1 else None


#: the metric's column heading in the table of alternatives (every one a loss: lower is better)
METRIC_HEADINGS = {"precision": "Precision loss", "loss": "Loss (ARX)", "entropy": "Entropy (bits per cell)",
                   "discernibility": "Discernibility", "aecs": "Average class size"}


def alternatives_table(alternatives: Sequence[Alternative], hierarchies: Mapping[str, Hierarchy],
                       metric: str) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """The headings, rows and cell tips of the table of alternatives: the rank ("chosen" first), the suppressed records,
    the metric (lower is better), then each quasi-identifier's level in short words ("10-year bands"; the tip gives
    its example labels too)."""
    names = list(hierarchies)
    headings = ["", "Suppressed records", METRIC_HEADINGS.get(metric, metric), *names]
    rows, tips = [], []
    for rank, alternative in enumerate(alternatives):
        words = alternative.words(hierarchies)
        figures = ["chosen" if rank == 0 else f"{rank + 1}.", f"{alternative.suppressed:,}", f"{alternative.metric_value:.4g}"]
        rows.append([*figures, *(level_kind(words[name]) for name in names)])
        tips.append(["", "", "", *(f"{name}: {words[name]}" for name in names)])
    return headings, rows, tips


def level_kind(words: str) -> str:
    """What a level is, without its example labels (:func:`level_words`): "10-year bands", "exact values", "9 groups"."""
    return words.split(" (")[0]


def considered_lines(entry: Mapping[str, object]) -> list[str]:
    """The report's "Other generalizations considered": one line per runner-up of release.json's generalization
    ``entry`` (its ``alternatives``, best first, the chosen node first), saying the levels where it differs from the
    chosen node, the records it suppresses and its metric value; empty when the search kept no runner-up."""
    from ppdp_desktop.core.generalization.metrics import METRIC_WORDS

    found = entry.get("alternatives")
    if not isinstance(found, list) or len(found) < 2:
        return []
    chosen, heights = found[0]["levels"], entry.get("heights") or {}
    assert isinstance(heights, dict)
    out = []
    for rank, other in enumerate(found[1:], start=2):
        levels = other["levels"]
        differs = ", ".join(f"{a} level {lv} of {heights.get(a, '?')} (chosen: {chosen[a]})"
                            for a, lv in levels.items() if lv != chosen.get(a))
        words = METRIC_WORDS.get(str(other["metric"]), str(other["metric"]))
        out.append(f"{rank}. {differs or 'the same levels'}: {int(other['suppressed']):,} records suppressed "
                   f"(the chosen node: {int(found[0]['suppressed']):,}); {words} {float(other['metric_value']):.4g} "
                   f"(chosen: {float(found[0]['metric_value']):.4g}).")
    return out

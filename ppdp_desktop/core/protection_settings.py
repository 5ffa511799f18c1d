"""Re-identification's settings: the risk threshold and the generalization of the quasi-identifiers (k, privacy
criteria, utility metric, level bounds, local recoding, risk in the population), declared once for the CLI, the
project file and the window; :mod:`ppdp_desktop.core.settings` re-exports them."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ppdp_desktop.core.declarations import Interval, OneOf, setting
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.method_settings import MAX_K, MethodSettings

MAX_LEVELS = 20  # generalization levels of one column (interval widths, cut-point levels)
MAX_CUTS = 10_000  # cut points of one level


@dataclass
class ProtectionSettings(MethodSettings):
    """Re-identification: the risk threshold for the report and, optionally, k-anonymity of the
    quasi-identifiers by generalization with their hierarchies and a record-suppression limit.

    ``hierarchies`` maps a quasi-identifier to a Taxonomy or a hierarchy file (ARX CSV or our JSON);
    ``intervals`` maps a numeric quasi-identifier to interval widths (e.g. ``[5, 10, 20]``) and ``cuts``
    to cut points per level, finest first (e.g. ``[[18, 40, 65], [40]]``). A quasi-identifier with none
    of them uses the tree edited in step 2.
    """

    k: int | None = setting(
        None, Interval(low=1, high=MAX_K, whole=True, optional=True), flag="--k-anonymity", metavar="K",
        label="k (smallest group)",
        help="generalize the quasi-identifiers until every record shares them with at least K-1 others (the optimal "
             f"full-domain generalization; see {setting_ref('hierarchy')} / {setting_ref('intervals')})")
    suppression: float = setting(
        0.05, Interval(low=0.0, high=0.99), flag="--suppression", label="Suppress at most",
        help="largest share of records whose quasi-identifiers may be suppressed to '*'")
    threshold: float = setting(
        0.2, Interval(low=0.0, high=1.0, open_low=True), flag="--threshold", label="Risk threshold",
        help="re-identification risk above which a record counts as at risk")
    # the COL=... options are read by the command line (cli/commands.py), which parses their values
    hierarchies: dict[str, Any] = setting(
        default_factory=dict, flag="--hierarchy", metavar="COL=FILE", repeat=True, json=False,
        label="Hierarchy of each quasi-identifier",
        help="generalization hierarchy of a quasi-identifier: an ARX hierarchy .csv or our .json (repeat)")
    intervals: dict[str, list[float]] = setting(
        default_factory=dict, flag="--intervals", metavar="COL=W1,W2,...", repeat=True, label="Interval widths",
        help="interval widths of a numeric quasi-identifier, finest first, e.g. age=5,10,20 (repeat)")
    cuts: dict[str, list[list[float]]] = setting(
        default_factory=dict, flag="--cuts", metavar="COL=C1,C2,.../C1,...", repeat=True, label="Cut points",
        help="cut points of a numeric quasi-identifier per level, finest first, levels separated by '/', "
             "e.g. age=18,40,65/40 (repeat)")
    #: refuse a release in which a released group's most frequent sensitive value has a share above the group
    #: bound (checked exactly on the original data before anything is written); set by ``--group-bound``
    require_group_bound: bool = setting(False, label="Limit what a group reveals")
    #: that bound (None: 1/l for a method with l, else ``threshold``); also what the report compares groups with
    group_bound: float | None = setting(
        None, Interval(low=0.0, high=1.0, open_low=True, optional=True), flag="--group-bound", metavar="SHARE",
        nargs="?", const=True, label="Group bound",
        help="refuse the release unless, in every group of records sharing their quasi-identifiers, no sensitive "
             "value holds more than SHARE of the group (checked exactly on the original data before anything is "
             f"written); without SHARE: 1/l for rr, else {setting_ref('threshold')}")

    # what "best" means among the k-anonymous generalizations (core/generalization/metrics.py, issue 33)
    metric: str = setting(
        "precision", OneOf(("precision", "loss", "entropy", "discernibility", "aecs")), flag="--metric",
        label="Utility metric",
        help="what the generalization keeps best: precision (fewest generalization steps), loss (ARX's loss), entropy "
             "(non-uniform entropy), discernibility or aecs (average class size)")
    weights: dict[str, float] = setting(
        default_factory=dict, flag="--weight", metavar="COL=W", repeat=True, label="Weights",
        help="weight of a quasi-identifier in precision, loss and entropy (default 1; higher keeps it finer), "
             "e.g. age=5 (repeat)")
    min_levels: dict[str, int] = setting(
        default_factory=dict, flag="--min-level", metavar="COL=LEVEL", repeat=True, label="Lowest levels",
        help="lowest generalization level of a quasi-identifier, e.g. age=1: age is always at least in its level-1 "
             "bands (repeat)")
    max_levels: dict[str, int] = setting(
        default_factory=dict, flag="--max-level", metavar="COL=LEVEL", repeat=True, label="Highest levels",
        help="highest generalization level of a quasi-identifier, e.g. age=2: age is never coarser than its level-2 "
             "bands, so it is kept (repeat)")
    search: str = setting(
        "auto", OneOf(("auto", "exhaustive", "heuristic")), flag="--search", label="Search",
        help="auto: every node of lattices up to 2,000,000 nodes (proven optimal), a greedy search beyond; "
             "heuristic: the greedy search always (not proven optimal)")
    # local recoding instead of whole-record suppression (core/generalization/local_recoding.py, issue 33)
    local_recoding: bool = setting(
        False, flag="--local-recoding", label="Local recoding",
        help="release the records the generalization would suppress whole at coarser levels, or with one "
             "quasi-identifier cell suppressed, where their group then meets k and the criteria (greedy; never "
             "suppresses more records than without it)")

    # the population the data was drawn from (issue 33): release.json and the report state the risk in it
    sampling_fraction: float | None = setting(
        None, Interval(low=0.0, high=1.0, open_low=True, optional=True), flag="--sampling-fraction", metavar="F",
        label="Share of the population in this file",
        help="the share of the population the data holds, in (0, 1] (e.g. 0.01 when it holds one person in a "
             "hundred): estimates how many people in the population are unique on the quasi-identifiers (Pitman, "
             "Zayatz and SNB models, chosen by Dankar et al.'s rule as in ARX)")
    population: str | None = setting(
        None, flag="--population", metavar="FILE", label="Population table",
        help="a population table (CSV: each quasi-identifier and 'count', one row per combination, e.g. from a "
             "census): the journalist risk, 1 / the number of people sharing a record's quasi-identifiers")

    # the privacy criteria beyond k (core/generalization/criteria.py, issue 33): each one alone implies k-anonymous
    # generalization (k = 1 when no k is given); l-diversity and t-closeness read the sensitive column
    l_diversity: int | None = setting(
        None, Interval(low=1, high=MAX_K, whole=True, optional=True), flag="--l-diversity", metavar="L",
        label="Distinct l-diversity",
        help="every released group has at least L different values of the sensitive column")
    entropy_l: float | None = setting(
        None, Interval(low=1.0, high=float(MAX_K), optional=True), flag="--entropy-l", metavar="L",
        label="Entropy l-diversity",
        help="the entropy of the sensitive values in every released group is at least log(L)")
    recursive: list[float] | None = setting(
        None, flag="--recursive", metavar="C,L", label="Recursive (c,l)-diversity",
        help="recursive (c,l)-diversity of the sensitive column: in every released group the most frequent value is "
             "rarer than C times the values from the L-th most frequent on, e.g. 3,2")
    t_closeness: float | None = setting(
        None, Interval(low=0.0, high=1.0, optional=True), flag="--t-closeness", metavar="T", label="t-closeness",
        help="the sensitive values of every released group are within T of the whole table's (earth mover's distance)")
    t_distance: str = setting(
        "equal", OneOf(("equal", "hierarchical")), flag="--t-distance", label="t-closeness distance",
        help="ground distance of t-closeness: equal (every two values 1 apart) or hierarchical (over the sensitive "
             "column's taxonomy, which must have more than one level)")
    average_risk: float | None = setting(
        None, Interval(low=0.0, high=1.0, open_low=True, optional=True), flag="--average-risk", metavar="R",
        label="Average risk at most",
        help="the average prosecutor risk of the release (released groups / released records) is at most R")
    highest_risk: float | None = setting(
        None, Interval(low=0.0, high=1.0, open_low=True, optional=True), flag="--highest-risk", metavar="R",
        label="Highest risk at most",
        help="every record's prosecutor risk (1 / its group's size) is at most R")

    @property
    def criteria_given(self) -> bool:
        """Whether a criterion beyond k is asked (l-diversity, t-closeness, a risk threshold)."""
        return any(v is not None for v in (self.l_diversity, self.entropy_l, self.recursive, self.t_closeness,
                                           self.average_risk, self.highest_risk))

    @property
    def generalizes(self) -> bool:
        """Whether the job generalizes the quasi-identifiers: k or another criterion is asked."""
        return self.k is not None or self.criteria_given

    @property
    def reads_sensitive(self) -> bool:
        """Whether a criterion asked reads the sensitive column (l-diversity or t-closeness)."""
        return any(v is not None for v in (self.l_diversity, self.entropy_l, self.recursive, self.t_closeness))

    def check(self) -> None:
        """The declared limits, and at most :data:`MAX_LEVELS` levels of at most :data:`MAX_CUTS` finite
        numbers per column (checked before any hierarchy is built)."""
        super().check()
        if not isinstance(self.local_recoding, bool):
            raise ParameterError(f"{setting_ref('local-recoding')} must be true or false; got {self.local_recoding!r}.",
                                 setting="local-recoding")
        if not isinstance(self.require_group_bound, bool):
            raise ParameterError(f"require_group_bound must be true or false; got {self.require_group_bound!r}.")
        for option, given in (("weight", self.weights), ("min-level", self.min_levels), ("max-level", self.max_levels)):
            if not isinstance(given, dict):
                raise ParameterError(f"{setting_ref(option)} must map columns to numbers; got {given!r}.", setting=option)
        if self.recursive is not None:
            recursive_pair(self.recursive)
        widths = {column: [[w] for w in ws] for column, ws in self.intervals.items()}  # one level per width
        for key, table in (("intervals", widths), ("cuts", self.cuts)):
            for column, levels in table.items():
                flat = [x for level in levels for x in level]
                if len(levels) > MAX_LEVELS or any(len(level) > MAX_CUTS for level in levels):
                    raise ParameterError(f"{setting_ref(key)} of {column!r}: at most {MAX_LEVELS} levels of at most "
                                         f"{MAX_CUTS:,} numbers; got {len(flat):,} numbers in {len(levels)} level(s).",
                                         setting=key, column=column)
                if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in flat):
                    raise ParameterError(f"{setting_ref(key)} of {column!r}: every width or cut point must be a finite "
                                         "number.", setting=key, column=column)


def recursive_pair(given: Any) -> list[float]:
    """``--recursive C,L`` (text, or ``[c, l]`` from a project file) as ``[c, l]``: ``c > 0``, ``l`` a whole number
    >= 2; anything else is a :class:`ParameterError` naming the option and an example."""
    parts = given.split(",") if isinstance(given, str) else given
    try:
        if not isinstance(parts, (list, tuple)) or len(parts) != 2 or any(isinstance(p, bool) for p in parts):
            raise ValueError
        c, l = float(parts[0]), float(parts[1])
        if not (math.isfinite(c) and c > 0 and l == int(l) and 2 <= l <= MAX_K):
            raise ValueError
    except (TypeError, ValueError):
        raise ParameterError(f"{setting_ref('recursive')} must be C,L with C a number above 0 and L a whole number "
                             f"from 2 to {MAX_K:,}, e.g. 3,2; got {given!r}.", setting="recursive", value=given) from None
    return [c, int(l)]

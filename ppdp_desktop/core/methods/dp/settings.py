"""Differential privacy's own settings: the columns to protect, epsilon, k, declared domains and
taxonomies, where categorical centroids are drawn from, and the release's layout (rows kept, or every column
protected and unlinked), each declared once (its limits, option, label and help:
:func:`~ppdp_desktop.core.declarations.setting`).

Hand-written, as they cannot be derived from one field's declaration: the values of the repeated ``COL=...``
options (:func:`parse_domains`, :func:`parse_grids`: each declaration names its parser), the taxonomies, read from
the command line's own ``--taxonomy`` shared with other methods (:func:`taxonomies_from_args`), and ``ppdp compare
--epsilon``'s list of cluster sizes (:func:`add_compare_arguments`).
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, ClassVar

from ppdp_desktop.core.data.blanks import CHOICES as BLANK_CHOICES
from ppdp_desktop.core.data.schema import parse_column_list
from ppdp_desktop.core.declarations import add_arguments as add_declared_arguments
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.settings import MAX_K, Interval, MethodSettings, OneOf, setting

CANDIDATES = ("covering", "taxonomy")
#: ``linked``: each row keeps its record's other columns (the guarantee covers each protected column's values as
#: a multiset); ``unlinked``: only protected columns, each shuffled on its own (the guarantee covers the rows)
LAYOUTS = ("linked", "unlinked")
#: what an unlinked release does with a column it does not protect: refuse the job, or leave the column out
UNPROTECTED = ("refuse", "drop")


def _domains(value: Any) -> dict[str, tuple[float, float]]:
    return {str(c): (float(v[0]), float(v[1])) for c, v in dict(value or {}).items()}


def _grids(value: Any) -> dict[str, float]:
    return {str(c): float(v) for c, v in dict(value or {}).items()}


def parse_domains(items: list[str]) -> dict[str, tuple[float, float]]:
    """``--domain COL=LO:HI`` (repeated) as ``{COL: (LO, HI)}``."""
    domains = {}
    for item in items:
        column, eq, bounds = item.rpartition("=")
        lo, colon, hi = bounds.partition(":")
        try:
            if not (eq and column and colon):
                raise ValueError
            domains[column] = (float(lo), float(hi))
        except ValueError:
            raise ParameterError(f"{setting_ref('domain')} {item!r} must look like COL=LO:HI, e.g. age=0:120.",
                                 setting="domain", value=item, allowed="COL=LO:HI") from None
    return domains


def parse_grids(items: list[str] | None) -> dict[str, float]:
    """``--grid COL=STEP`` (repeated) as ``{COL: STEP}``."""
    grids = {}
    for item in items or []:
        column, eq, step = item.rpartition("=")
        try:
            if not (eq and column):
                raise ValueError
            grids[column] = float(step)
        except ValueError:
            raise ParameterError(f"{setting_ref('grid')} {item!r} must look like COL=STEP, e.g. weight=0.1.",
                                 setting="grid", value=item, allowed="COL=STEP") from None
        if not grids[column] > 0:
            raise ParameterError(f"{setting_ref('grid')} {item!r}: the step must be a positive number.",
                                 setting="grid", value=item, allowed="a positive number")
    return grids


def _blanks(value: Any) -> dict[str, str]:
    return {str(c): str(v) for c, v in dict(value or {}).items()}


def parse_blanks(items: list[str] | None) -> dict[str, str]:
    """``--blanks COL=CHOICE`` (repeated) as ``{COL: CHOICE}``, CHOICE one of value, drop, impute."""
    blanks = {}
    for item in items or []:
        column, eq, choice = item.rpartition("=")
        if not (eq and column) or choice not in BLANK_CHOICES:
            raise ParameterError(f"{setting_ref('blanks')} {item!r} must look like COL=CHOICE with CHOICE one of "
                                 f"{', '.join(BLANK_CHOICES)}, e.g. Station=value.", setting="blanks", value=item,
                                 allowed="COL=" + "|".join(BLANK_CHOICES))
        blanks[column] = choice
    return blanks


def parse_taxonomies(items: list[str] | None) -> dict[str, str]:
    """``--taxonomy COL=FILE`` (repeated) as ``{COL: FILE}``."""
    taxonomies = {}
    for item in items or []:
        column, eq, path = item.partition("=")
        if not (eq and column and path):
            raise ParameterError(f"{setting_ref('taxonomy')} {item!r} must look like COL=FILE for dp-microagg.",
                                 setting="taxonomy", value=item, allowed="COL=FILE")
        taxonomies[column] = path
    return taxonomies


@dataclass
class DPSettings(MethodSettings):
    """Differential privacy by individual-ranking microaggregation (SPEC 5).

    ``domains`` maps numeric columns to declared ``(lo, hi)`` (absent: taken from the data, which
    discloses min and max); ``taxonomies`` maps categorical columns to a declared Taxonomy or file
    (step 2's edited trees are used too, when they group values); ``candidates`` is where a
    categorical cluster's centroid is drawn from ("covering": the smallest sub-taxonomy covering the
    cluster, as in the paper; "taxonomy": every label); ``grids`` maps numeric columns to the step of the
    grid their values are released on (absent: the largest power of ten at most the noise scale / 100, see
    :mod:`~ppdp_desktop.core.methods.dp.grid`). ``layout`` is how the columns sit in the rows: "linked" (each row
    keeps its record's other columns beside its clusters' values) or "unlinked" (every released column protected,
    each shuffled on its own, no pseudonyms: rows are not records); ``unprotected`` says what an unlinked release
    does with a column that is not protected (not an identifier): "refuse" the job naming it, or "drop" it.
    ``blanks`` maps a protected column with blank cells to what is done with them ("value", "drop", "impute":
    :mod:`~ppdp_desktop.core.methods.dp.blanks`).
    """

    attributes: list[str] = setting(
        default_factory=list, flag="--attributes", metavar="COLS", convert=parse_column_list,
        label="Protect these columns",
        help=f"comma-separated columns to protect (numeric, or categorical with {setting_ref('taxonomy', 'COL=FILE')})")
    epsilon: float | None = setting(
        None, Interval(low=0.0, open_low=True, optional=True), flag="--epsilon", label="epsilon (privacy budget, > 0)",
        help="the privacy budget epsilon (> 0), split evenly over the attributes")
    k: int | None = setting(
        None, Interval(low=1, high=MAX_K, whole=True, optional=True), flag="--k", label="k (records per cluster)",
        help="cluster size k (the last cluster holds k..2k-1 records)")
    domains: dict[str, tuple[float, float]] = setting(
        default_factory=dict, flag="--domain", metavar="COL=LO:HI", repeat=True, convert=parse_domains,
        from_json=_domains, label="Domain (lo, hi)",
        help="declared domain of a numeric column (repeat per column); without it the data's min and max are used "
             "and disclosed")
    #: set from the command line's shared ``--taxonomy COL=FILE`` (:func:`taxonomies_from_args`)
    taxonomies: dict[str, Any] = setting(default_factory=dict, json=False, label="Taxonomies")
    candidates: str = setting(
        "covering", OneOf(CANDIDATES), flag="--candidates", label="Centroid candidates",
        help="categorical centroids drawn from the cluster's covering sub-taxonomy (the paper's rule, default) or "
             "from every taxonomy label (no data-dependent candidate set)")
    grids: dict[str, float] = setting(
        default_factory=dict, flag="--grid", metavar="COL=STEP", repeat=True, convert=parse_grids,
        from_json=_grids, label="Grid step h",
        help="step of the grid a numeric column is released on (repeat per column; default: the largest power of ten "
             "at most the noise scale / 100, 1 at least for whole numbers)")
    layout: str = setting(
        "linked", OneOf(LAYOUTS), flag="--layout", label="Unlink the columns",
        help="linked (default): each row keeps its record's other columns, and epsilon-DP covers each protected "
             "column's values as a multiset, not the rows; unlinked: every released column is protected and shuffled "
             "on its own, no pseudonyms, and the whole release is epsilon-DP (rows are then not records)")
    unprotected: str = setting(
        "refuse", OneOf(UNPROTECTED), flag="--unprotected", label="Leave out the columns not protected",
        help=f"with {setting_ref('layout', 'unlinked')}, a column that is neither protected nor an identifier: refuse "
             "the job naming it (default) or drop it from the release")
    blanks: dict[str, str] = setting(
        default_factory=dict, flag="--blanks", metavar="COL=CHOICE", repeat=True, convert=parse_blanks,
        from_json=_blanks, label="Blank cells",
        help="what to do with a protected column's blank cells (repeat per column): value (a value of their own, "
             "categorical columns), drop (leave their records out of the release) or impute (the middle of a numeric "
             "column's range; the most general label of a categorical column's taxonomy, '*' for a flat one); a column "
             "with blanks needs one")

    #: project files before version 3 kept these as flat fields
    legacy: ClassVar = {"dp_attributes": "attributes", "dp_epsilon": "epsilon", "dp_k": "k", "dp_domains": "domains"}
    suggested: ClassVar = {"epsilon": 1.0, "k": 10}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, where: str = "the project file") -> DPSettings:
        """As stored by the window, which keeps the range of a column while it is not ticked: only the
        ranges of the protected columns are declared."""
        settings = super().from_json(data, where)
        settings.domains = {c: v for c, v in settings.domains.items() if c in settings.attributes}
        settings.grids = {c: v for c, v in settings.grids.items() if c in settings.attributes}
        settings.blanks = {c: v for c, v in settings.blanks.items() if c in settings.attributes}
        return settings


def taxonomies_from_args(args: argparse.Namespace) -> dict[str, str]:
    """The protected columns' taxonomies from ``--taxonomy COL=FILE``: hand-written, as that option is the command
    line's own, shared by the methods that read taxonomies (personalized reads one FILE from it)."""
    return parse_taxonomies(getattr(args, "taxonomy", None))


def add_compare_arguments(group: argparse._ArgumentGroup) -> None:
    """``ppdp compare --epsilon``'s options: the declared ones it shares with ``ppdp anonymize`` and, hand-written,
    a comma-separated list of cluster sizes in place of one ``--k`` (compare sweeps k; it keeps the default grids,
    and the layout does not change the utility it measures)."""
    add_declared_arguments(group, DPSettings, only=("attributes", "epsilon"))
    group.add_argument("--k", default="10,25,50,100", help="cluster sizes to compare, comma-separated "
                       "(default 10,25,50,100)")
    add_declared_arguments(group, DPSettings, only=("domains", "candidates", "blanks"))


def add_arguments(group: argparse._ArgumentGroup, *, k_list: bool = False) -> None:
    """The options of ``ppdp compare --epsilon`` (``k_list``; :func:`add_compare_arguments`) or of ``ppdp
    anonymize`` (the declarations: ``DPMicroaggregation.add_arguments``); kept for ``ppdp compare``'s caller."""
    if k_list:
        add_compare_arguments(group)
    else:
        add_declared_arguments(group, DPSettings)

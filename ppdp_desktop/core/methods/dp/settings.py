"""Differential privacy's own settings: the columns to protect, epsilon, k, declared domains and
taxonomies, where categorical centroids are drawn from, and the release's layout (rows kept, or every column
protected and unlinked)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.settings import MAX_K, Interval, MethodSettings, OneOf, finite_float

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
    """

    attributes: list[str] = field(default_factory=list)
    epsilon: float | None = None
    k: int | None = None
    domains: dict[str, tuple[float, float]] = field(default_factory=dict, metadata={"from_json": _domains})
    taxonomies: dict[str, Any] = field(default_factory=dict, metadata={"json": False})
    candidates: str = "covering"
    grids: dict[str, float] = field(default_factory=dict, metadata={"from_json": _grids})
    layout: str = "linked"
    unprotected: str = "refuse"

    constraints: ClassVar = {
        "epsilon": Interval(low=0.0, open_low=True, optional=True),
        "k": Interval(low=1, high=MAX_K, whole=True, optional=True),
        "candidates": OneOf(CANDIDATES),
        "layout": OneOf(LAYOUTS),
        "unprotected": OneOf(UNPROTECTED),
    }
    #: project files before version 3 kept these as flat fields
    legacy: ClassVar = {"dp_attributes": "attributes", "dp_epsilon": "epsilon", "dp_k": "k", "dp_domains": "domains"}
    flags: ClassVar = {"epsilon": "--epsilon", "k": "--k", "candidates": "--candidates", "layout": "--layout",
                       "unprotected": "--unprotected"}
    suggested: ClassVar = {"epsilon": 1.0, "k": 10}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, where: str = "the project file") -> "DPSettings":
        """As stored by the window, which keeps the range of a column while it is not ticked: only the
        ranges of the protected columns are declared."""
        settings = super().from_json(data, where)
        settings.domains = {c: v for c, v in settings.domains.items() if c in settings.attributes}
        settings.grids = {c: v for c, v in settings.grids.items() if c in settings.attributes}
        return settings


def add_arguments(group: argparse._ArgumentGroup, *, k_list: bool = False) -> None:
    group.add_argument("--attributes", metavar="COLS", help="comma-separated columns to protect (numeric, or "
                       "categorical with --taxonomy COL=FILE)")
    group.add_argument("--epsilon", type=finite_float, help="the privacy budget epsilon (> 0), split evenly over the attributes")
    if k_list:
        group.add_argument("--k", default="10,25,50,100", help="cluster sizes to compare, comma-separated "
                           "(default 10,25,50,100)")
    else:
        group.add_argument("--k", type=int, help="cluster size k (the last cluster holds k..2k-1 records)")
    group.add_argument("--domain", metavar="COL=LO:HI", action="append", default=[],
                       help="declared domain of a numeric column (repeat per column); without it the data's min and "
                            "max are used and disclosed")
    if not k_list:  # compare --epsilon keeps the default grids
        group.add_argument("--grid", metavar="COL=STEP", action="append", default=[],
                           help="step of the grid a numeric column is released on (repeat per column; default: the "
                                "largest power of ten at most the noise scale / 100, 1 at least for whole numbers)")
    group.add_argument("--candidates", choices=CANDIDATES, default="covering",
                       help="categorical centroids drawn from the cluster's covering sub-taxonomy (the paper's rule, "
                            "default) or from every taxonomy label (no data-dependent candidate set)")
    if not k_list:  # compare --epsilon measures utility; the layout does not change it
        group.add_argument("--layout", choices=LAYOUTS, default="linked",
                           help="linked (default): each row keeps its record's other columns, and epsilon-DP covers "
                                "each protected column's values as a multiset, not the rows; unlinked: every released "
                                "column is protected and shuffled on its own, no pseudonyms, and the whole release is "
                                "epsilon-DP (rows are then not records)")
        group.add_argument("--unprotected", choices=UNPROTECTED, default="refuse",
                           help="with --layout unlinked, a column that is neither protected nor an identifier: refuse "
                                "the job naming it (default) or drop it from the release")


def from_args(args: argparse.Namespace) -> DPSettings:
    from ppdp_desktop.core.data.schema import parse_column_list

    return DPSettings(parse_column_list(args.attributes), args.epsilon, args.k, parse_domains(args.domain),
                      parse_taxonomies(args.taxonomy), args.candidates, parse_grids(getattr(args, "grid", None)),
                      getattr(args, "layout", "linked"), getattr(args, "unprotected", "refuse"))


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
            raise ParameterError(f"--domain {item!r} must look like COL=LO:HI, e.g. age=0:120.") from None
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
            raise ParameterError(f"--grid {item!r} must look like COL=STEP, e.g. weight=0.1.") from None
        if not grids[column] > 0:
            raise ParameterError(f"--grid {item!r}: the step must be a positive number.")
    return grids


def parse_taxonomies(items: list[str] | None) -> dict[str, str]:
    """``--taxonomy COL=FILE`` (repeated) as ``{COL: FILE}``."""
    taxonomies = {}
    for item in items or []:
        column, eq, path = item.partition("=")
        if not (eq and column and path):
            raise ParameterError(f"--taxonomy {item!r} must look like COL=FILE for dp-microagg.")
        taxonomies[column] = path
    return taxonomies

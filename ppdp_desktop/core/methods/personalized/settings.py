"""Personalized recoding's own settings: the sensitive column's taxonomy file and the graded columns.

Per-record choices are step 3's (:class:`~ppdp_desktop.core.settings.ChoiceSettings`) and an edited
taxonomy is step 2's (``AnonymizationSettings.taxonomies``); a ``--taxonomy FILE`` given here wins.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import ClassVar

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.settings import Interval, MethodSettings, OneOf

GRADINGS = ("equal-width", "quantile")


MAX_CATEGORIES = 1_000  # graded categories of one column (each is a label in the release and the key)

@dataclass
class RecodingSettings(MethodSettings):
    """Personalized recoding (SPEC 4): the taxonomy file, graded columns and how they are cut."""

    taxonomy_path: str | None = field(default=None, metadata={"json": False})
    graded: list[str] = field(default_factory=list)
    categories: int = 3
    grading: str = "equal-width"
    bounds: list[tuple[float, float]] | None = field(default=None, metadata={"json": False})

    constraints: ClassVar = {"categories": Interval(low=1, high=MAX_CATEGORIES, whole=True), "grading": OneOf(GRADINGS)}
    #: project files before version 3 kept these as flat fields
    legacy: ClassVar = {"graded": "graded", "categories": "categories", "grading": "grading"}
    flags: ClassVar = {"categories": "--categories", "grading": "--grading"}


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--graded", metavar="COLS", help="comma-separated numeric columns to grade")
    group.add_argument("--categories", type=int, default=3, help="number of graded categories (default 3)")
    group.add_argument("--grading", choices=GRADINGS, default="equal-width", help="how to cut categories")
    group.add_argument("--bounds", help='explicit categories "lo-hi,lo-hi,..." (closed intervals), e.g. "10-40,41-70"')


def from_args(args: argparse.Namespace) -> RecodingSettings:
    from ppdp_desktop.core.data.schema import parse_column_list

    taxonomies = args.taxonomy or []
    if len(taxonomies) > 1:
        raise ParameterError("Give one --taxonomy FILE (the sensitive column's).")
    return RecodingSettings(
        taxonomy_path=taxonomies[0] if taxonomies else None,
        graded=parse_column_list(args.graded),
        categories=args.categories,
        grading=args.grading,
        bounds=parse_bounds(args.bounds),
    )


def parse_bounds(text: str | None) -> list[tuple[float, float]] | None:
    """``--bounds "lo-hi,lo-hi"`` as a list of closed intervals."""
    if not text:
        return None
    bounds = []
    for part in text.split(","):
        lo, sep, hi = part.strip().rpartition("-")
        try:
            if not sep or not lo:
                raise ValueError
            bounds.append((float(lo), float(hi)))
        except ValueError:
            raise ParameterError(f"Category {part.strip()!r} of --bounds must look like lo-hi, e.g. 10-40.") from None
    return bounds

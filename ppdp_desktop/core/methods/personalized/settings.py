"""Personalized recoding's own settings: the sensitive column's taxonomy file and the graded columns, each
declared once (its limits, option, label and help: :func:`~ppdp_desktop.core.declarations.setting`).

Per-record choices are step 3's (:class:`~ppdp_desktop.core.settings.ChoiceSettings`) and an edited
taxonomy is step 2's (``AnonymizationSettings.taxonomies``); a ``--taxonomy FILE`` given here wins.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import ClassVar

from ppdp_desktop.core.data.schema import parse_column_list
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.settings import Interval, MethodSettings, OneOf, setting

GRADINGS = ("equal-width", "quantile")


MAX_CATEGORIES = 1_000  # graded categories of one column (each is a label in the release and the key)


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
            raise ParameterError(f"Category {part.strip()!r} of {setting_ref('bounds')} must look like lo-hi, e.g. "
                                 "10-40.", setting="bounds", value=part.strip(), allowed="lo-hi") from None
    return bounds


@dataclass
class RecodingSettings(MethodSettings):
    """Personalized recoding (SPEC 4): the taxonomy file, graded columns and how they are cut."""

    #: set from the command line's shared ``--taxonomy`` (:func:`taxonomy_from_args`)
    taxonomy_path: str | None = setting(None, label="Taxonomy of the sensitive column", json=False)
    graded: list[str] = setting(
        default_factory=list, flag="--graded", metavar="COLS", convert=parse_column_list,
        label="Grade these numeric columns (secret categories)", help="comma-separated numeric columns to grade")
    categories: int = setting(3, Interval(low=1, high=MAX_CATEGORIES, whole=True), flag="--categories",
                              label="Number of categories", help="number of graded categories")
    grading: str = setting("equal-width", OneOf(GRADINGS), flag="--grading", label="Cut points",
                           help="how to cut categories")
    bounds: list[tuple[float, float]] | None = setting(
        None, flag="--bounds", convert=parse_bounds, json=False, label="Explicit categories",
        help='explicit categories "lo-hi,lo-hi,..." (closed intervals), e.g. "10-40,41-70"')

    #: project files before version 3 kept these as flat fields
    legacy: ClassVar = {"graded": "graded", "categories": "categories", "grading": "grading"}


def taxonomy_from_args(args: argparse.Namespace) -> str | None:
    """The sensitive column's taxonomy file from ``--taxonomy``: hand-written, as that option is the command
    line's own, shared by the methods that read taxonomies (dp-microagg reads it as COL=FILE)."""
    taxonomies = getattr(args, "taxonomy", None) or []
    if len(taxonomies) > 1:
        raise ParameterError(f"Give one {setting_ref('taxonomy', 'FILE')} (the sensitive column's).",
                             setting="taxonomy")
    return taxonomies[0] if taxonomies else None

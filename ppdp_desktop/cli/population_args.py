"""The population-risk options, declared once: ``--sampling-fraction`` and ``--population``.

``ppdp risk`` takes them; any other command that measures re-identification risk adds them with
:func:`add_population_arguments` and turns them into figures with :func:`population_figures`.
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.declarations import add_arguments as add_declared_arguments
from ppdp_desktop.core.settings import ProtectionSettings

POPULATION_SETTINGS = ("sampling_fraction", "population")

if TYPE_CHECKING:
    import pandas as pd


def add_population_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the population options to ``parser`` (in a group of their own), as :class:`ProtectionSettings` declares
    them (``ppdp anonymize`` takes them with the other re-identification options)."""
    group = parser.add_argument_group("risk in the population the data was drawn from")
    add_declared_arguments(group, ProtectionSettings, only=POPULATION_SETTINGS)


def check_population_arguments(args: argparse.Namespace) -> None:
    """Refuse a bad sampling fraction or a population table that is not there before the data is read."""
    from pathlib import Path

    from ppdp_desktop.core.data.input_files import check_regular
    from ppdp_desktop.core.errors import InputError
    from ppdp_desktop.core.privacy.uniqueness import check_sampling_fraction

    if getattr(args, "sampling_fraction", None) is not None:
        check_sampling_fraction(args.sampling_fraction)
    given = getattr(args, "population", None)
    if given:
        check_regular(given, "population table (CSV)")
        if not Path(given).is_file():
            raise InputError(f"{given}: cannot read the population table (no such file); check the path.", file=given)


def population_figures(args: argparse.Namespace, frame: pd.DataFrame, quasi: Sequence[str], sizes: dict[int, int],
                       threshold: float) -> tuple[dict[str, Any], list[str]]:
    """The JSON entries and sentences of the population options given in ``args`` (none: empty); ``frame`` holds
    the records measured (suppressed ones left out) and ``sizes`` maps a class size to its number of classes."""
    entries: dict[str, Any] = {}
    lines: list[str] = []
    if getattr(args, "sampling_fraction", None) is not None:
        from ppdp_desktop.core.privacy.uniqueness import estimate_uniqueness

        uniqueness = estimate_uniqueness(sizes, args.sampling_fraction)
        entries["population_uniqueness"] = uniqueness.to_json()
        lines += uniqueness.lines()
    if getattr(args, "population", None):
        from ppdp_desktop.core.privacy.journalist import journalist_risk, read_population

        journalist = journalist_risk(frame, quasi, read_population(args.population, quasi), threshold)
        entries["journalist"] = journalist.to_json()
        lines += journalist.lines()
    return entries, lines

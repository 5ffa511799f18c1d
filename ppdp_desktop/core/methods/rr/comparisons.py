"""Randomized response's way of ``ppdp compare`` (``RandomizedResponse.comparisons``): ``--l`` with ``--quasi``
reconstructs the QI x S table from rr's release and from Anatomy's and an l-diverse Mondrian's at the same ``l``
(:func:`~ppdp_desktop.core.methods.rr.evaluation.compare_linking`)."""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ppdp_desktop.core.data.schema import parse_column_list
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.hooks import Compared, Comparison, add_once
from ppdp_desktop.core.methods.rr.evaluation import DEFAULT_METHODS, compare_linking, format_linking
from ppdp_desktop.core.settings import finite_float

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.base import Runner


class LinkingComparison(Comparison):
    """``compare --sensitive S --quasi QI --l L``: how well each method's release gives back the QI x S table."""

    name = "linking"
    order = 30
    default_methods = DEFAULT_METHODS
    when = "with --l and --quasi"
    usage = "--sensitive COL with --l and --quasi COLS"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_once(parser, "--l", type=finite_float,
                 help=f"linking-attack bound 1/l: compares {', '.join(DEFAULT_METHODS)} on the QI x S table")
        add_once(parser, "--quasi", metavar="COLS", help="quasi-identifier columns (with --l)")

    def requested(self, args: argparse.Namespace) -> bool:
        return args.l is not None and bool(args.sensitive)

    def run(self, dataset: Dataset, args: argparse.Namespace, run: Runner) -> Compared:
        if not args.quasi:
            raise ParameterError(f"{setting_ref('l')} needs {setting_ref('quasi', 'COLS')} (the quasi-identifiers of the "
                                 "linking attack).", setting="quasi")
        methods = parse_column_list(args.methods) or list(DEFAULT_METHODS)
        quasi = parse_column_list(args.quasi)
        rows = compare_linking(dataset, args.sensitive, quasi, args.l, methods, seed=args.seed, run=run)
        text = (f"Reconstruction of the QI x {args.sensitive} table on {dataset.label} at l = {args.l:g} (estimated "
                f"from each method's release):\n{format_linking(rows)}")
        return Compared(self.name, text, {"sensitive": args.sensitive, "quasi_identifiers": quasi, "l": args.l,
                                          "methods": methods, "seed": args.seed}, list(rows))

"""Differential privacy's way of ``ppdp compare`` (``DPMicroaggregation.comparisons``): ``--epsilon`` with
``--attributes`` runs dp-microagg for each ``--k`` against plain Laplace and plain ranking (seed 003,
:func:`~ppdp_desktop.core.methods.dp.evaluation.compare_dp`)."""
from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING

from ppdp_desktop.core.data.schema import parse_column_list
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.dp.evaluation import compare_dp, format_dp_table
from ppdp_desktop.core.methods.dp.settings import add_arguments, parse_blanks, parse_domains, parse_taxonomies
from ppdp_desktop.core.methods.hooks import Compared, Comparison, add_once
from ppdp_desktop.core.settings import MAX_K

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.base import Runner


class DPComparison(Comparison):
    """``compare --attributes COLS --epsilon E [--k 10,25,...]``: utility of dp-microagg per k and of its baselines."""

    name = "dp"
    order = 20
    usage = "--epsilon with --attributes"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_arguments(parser.add_argument_group("differential privacy by individual-ranking microaggregation "
                                                "(--epsilon)"), k_list=True)
        add_once(parser, "--taxonomy", metavar="COL=FILE", action="append",
                 help="with --epsilon: taxonomy of a categorical column of --attributes (repeat per column)")

    def requested(self, args: argparse.Namespace) -> bool:
        return args.epsilon is not None

    def run(self, dataset: Dataset, args: argparse.Namespace, run: Runner) -> Compared:
        attributes = parse_column_list(args.attributes)
        if not attributes:
            raise ParameterError(f"{setting_ref('epsilon')} needs {setting_ref('attributes', 'COLS')} (the columns to "
                                 "protect).", setting="attributes")
        try:
            ks = [int(k) for k in parse_column_list(args.k)]
        except ValueError:
            raise ParameterError(f"{setting_ref('k')} {args.k!r} must be whole numbers separated by commas, e.g. "
                                 "10,25,50,100.", setting="k", value=args.k) from None
        if not ks:
            raise ParameterError(f"{setting_ref('k')} needs at least one cluster size.", setting="k", value=args.k)
        if len(ks) > 20 or not all(1 <= k <= MAX_K for k in ks):
            raise ParameterError(f"{setting_ref('k')} takes at most 20 cluster sizes, each from 1 to {MAX_K:,}; got "
                                 f"{args.k!r}.", setting="k", value=args.k)
        rows = compare_dp(dataset, attributes, args.epsilon, ks, parse_domains(args.domain),
                          parse_taxonomies(args.taxonomy), seed=args.seed, candidates=args.candidates, run=run,
                          blanks=parse_blanks(getattr(args, "blanks", None)))
        text = (f"dp-microagg on {dataset.label} at epsilon = {args.epsilon:g} against its baselines ("
                "plain Laplace per value at M*Delta/epsilon, individual ranking without noise):\n" + format_dp_table(rows))
        return Compared(self.name, text, {"attributes": attributes, "epsilon": args.epsilon, "k": ks,
                                          "candidates": args.candidates, "seed": args.seed},
                        [dataclasses.asdict(r) if dataclasses.is_dataclass(r) else r for r in rows])

"""The perturbation methods' ways of ``ppdp compare`` (registered by perturbation partitioning,
``PerturbationPartitioning.comparisons``).

* ``--rho1/--rho2`` (:class:`WorkloadComparison`): each method's mean relative error of count queries at matched
  privacy (:func:`~ppdp_desktop.core.methods.partition.compare.compare_methods`);
* ``--target COL`` (:class:`ModelsComparison`): does an analysis survive each method? Models trained on the
  original and on each release, tested on held-out original records
  (:func:`~ppdp_desktop.core.evaluation.model_utility.compare_models`).
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.data.schema import parse_column_list
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.hooks import Compared, Comparison, add_once
from ppdp_desktop.core.methods.partition.compare import DEFAULT_METHODS, MODEL_METHODS, compare_methods, format_table
from ppdp_desktop.core.methods.partition.compare import Comparison as WorkloadRow
from ppdp_desktop.core.settings import finite_float

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.evaluation.model_utility import ModelComparison
    from ppdp_desktop.core.methods.base import Runner


def _add_pair(parser: argparse.ArgumentParser) -> None:
    """``--rho1`` and ``--rho2``, shared by both comparisons."""
    add_once(parser, "--rho1", type=finite_float)
    add_once(parser, "--rho2", type=finite_float, help="Anatomy gets l = round(1/rho2)")


def workload_row(row: WorkloadRow) -> dict[str, Any]:
    """``compare --rho1/--rho2``: one method's mean relative error per selectivity."""
    return {"method": row.method, "privacy": row.privacy, "workload": row.workload.to_json()}


def model_row(method: str, comparison: ModelComparison) -> dict[str, Any]:
    """``compare --target``: one method's model comparison (accuracies and odds ratios)."""
    return {
        "method": method,
        "target": comparison.target,
        "positive": comparison.positive,
        "n_train": comparison.n_train,
        "n_test": comparison.n_test,
        "sampled": comparison.sampled,
        "baseline_accuracy": comparison.baseline,
        "tree_accuracy": {"original": comparison.tree[0], "release": comparison.tree[1]},
        "logistic_accuracy": {"original": comparison.logistic[0], "release": comparison.logistic[1]},
        "odds_ratios": [{"term": o.term, "original": o.original, "original_interval": o.original_interval,
                         "release": o.release, "release_interval": o.release_interval, "unstable": o.unstable}
                        for o in comparison.odds],
        "notes": list(comparison.notes),
    }


class WorkloadComparison(Comparison):
    """``compare --sensitive COL --rho1 X --rho2 Y``: count-query error at the same (rho1, rho2); Anatomy at
    ``l = round(1/rho2)``."""

    name = "workload"
    order = 40
    default_methods = DEFAULT_METHODS
    when = "with --rho1/--rho2"
    usage = "--sensitive COL with --rho1 and --rho2"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        _add_pair(parser)

    def requested(self, args: argparse.Namespace) -> bool:
        return bool(args.sensitive)

    def run(self, dataset: Dataset, args: argparse.Namespace, run: Runner) -> Compared:
        if args.rho1 is None or args.rho2 is None:
            raise ParameterError(f"Give {setting_ref('rho1')} and {setting_ref('rho2')} (randomization methods), or "
                                 f"{setting_ref('l')} with {setting_ref('quasi')} (linking attacks).", setting="rho1")
        methods = parse_column_list(args.methods) or list(DEFAULT_METHODS)
        rows = compare_methods(dataset, args.sensitive, methods, args.rho1, args.rho2,
                               parse_column_list(args.identifier), seed=args.seed, run=run)
        text = (f"Mean relative error of count queries on {dataset.label} (same seeded queries for every method):\n"
                + format_table(rows))
        return Compared(self.name, text, {"sensitive": args.sensitive, "rho1": args.rho1, "rho2": args.rho2,
                                          "methods": methods, "seed": args.seed}, [workload_row(r) for r in rows])


class ModelsComparison(Comparison):
    """``compare --target COL``: a decision tree and a logistic regression predicting COL, trained on the original and
    on each method's release of the job (``--sensitive`` with ``--rho1``/``--rho2``), tested on held-out original
    records."""

    name = "models"
    order = 10
    default_methods = MODEL_METHODS
    when = "with --target"
    usage = "--target COL with --sensitive COL, --rho1 and --rho2"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        _add_pair(parser)
        add_once(parser, "--target", metavar="COL", help="does my analysis survive? for each method (--methods, default "
                 f"{','.join(MODEL_METHODS)} with --rho1/--rho2), a decision tree and a logistic regression predicting "
                 "COL, trained on the original and on the release, tested on held-out original records")

    def requested(self, args: argparse.Namespace) -> bool:
        return bool(args.target)

    def run(self, dataset: Dataset, args: argparse.Namespace, run: Runner) -> Compared:
        from ppdp_desktop.core.evaluation.model_utility import compare_models
        from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

        if not args.sensitive or args.rho1 is None or args.rho2 is None:
            raise ParameterError(f"{setting_ref('target')} needs the job to compare: {setting_ref('sensitive', 'COL')} "
                                 f"with {setting_ref('rho1')} and {setting_ref('rho2')}.", setting="target")
        if args.target not in dataset.frame.columns:
            raise ParameterError(f"{setting_ref('target')} {args.target!r} is not a column of {dataset.label}; choose one of: "
                                 f"{', '.join(map(str, dataset.frame.columns))}.")
        methods = parse_column_list(args.methods) or list(MODEL_METHODS)
        unknown = [m for m in methods if m not in MODEL_METHODS]
        if unknown:
            raise ParameterError(f"{setting_ref('target')} compares the methods {', '.join(MODEL_METHODS)}; not "
                                 f"{unknown[0]!r}.", setting="target", value=unknown[0])
        identifiers = parse_column_list(args.identifier)
        found, lines = [], []
        for name in methods:
            settings = AnonymizationSettings(args.sensitive, name, identifiers, [],
                                             SensitivitySettings(rho1=args.rho1, rho2=args.rho2), seed=args.seed)
            comparison = compare_models(run(dataset, settings), args.target, seed=args.seed or 0)
            found.append(model_row(name, comparison))
            lines.append(f"{name}: does an analysis of {args.target} survive the release of {dataset.label}?")
            lines += [f"  {line}" for line in comparison.lines()]
            rows = comparison.coefficient_rows()
            if rows:
                table = [comparison.COEFFICIENT_HEADER, *rows]
                widths = [max(len(str(r[i])) for r in table) for i in range(len(rows[0]))]
                lines += ["  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
        return Compared(self.name, "\n".join(lines), {"sensitive": args.sensitive, "rho1": args.rho1, "rho2": args.rho2,
                                                      "target": args.target, "methods": methods, "seed": args.seed}, found)

"""``ppdp compare``: methods side by side at matched privacy (count queries, linking attacks, differential
privacy, or "does my analysis survive?"), as a table or, with ``--json``, one document."""
from __future__ import annotations

import argparse
import dataclasses

from ppdp_desktop.cli.commands import _stdin_data, load_options
from ppdp_desktop.cli.output import emit_json, wants_json
from ppdp_desktop.core.errors import ParameterError


def run_compare(args: argparse.Namespace) -> int:
    """``ppdp compare DATA``: DATA may be ``-`` (stdin)."""
    return _stdin_data(args, _compare)


def _emit(args: argparse.Namespace, dataset, mode: str, parameters: dict, rows: list) -> None:
    """The ``--json`` document: ``{data, mode, parameters, rows}`` (one row object per method)."""
    if wants_json(args):
        emit_json(args, {"data": dataset.label, "mode": mode, "parameters": parameters, "rows": rows})


def _compare(args: argparse.Namespace) -> int:
    from ppdp_desktop.cli.documents import workload_row
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.methods.partition.compare import DEFAULT_METHODS, compare_methods, format_table

    dataset = load_table(args.data, **load_options(args))
    if args.target:
        return _compare_models(dataset, args)
    if args.epsilon is not None:
        return _compare_dp(dataset, args)
    if not args.sensitive:
        raise ParameterError("compare needs --sensitive COL (with --rho1/--rho2 or --l), or --epsilon with --attributes.")
    if args.l is not None:
        from ppdp_desktop.core.methods.rr.evaluation import DEFAULT_METHODS as LINKING, compare_linking, format_linking

        if not args.quasi:
            raise ParameterError("--l needs --quasi COLS (the quasi-identifiers of the linking attack).")
        methods = parse_column_list(args.methods) or list(LINKING)
        quasi = parse_column_list(args.quasi)
        rows = compare_linking(dataset, args.sensitive, quasi, args.l, methods, seed=args.seed, run=anonymize)
        print(f"Reconstruction of the QI x {args.sensitive} table on {dataset.label} at l = {args.l:g} (estimated from each method's release):")
        print(format_linking(rows))
        _emit(args, dataset, "linking", {"sensitive": args.sensitive, "quasi_identifiers": quasi, "l": args.l,
                                         "methods": methods, "seed": args.seed}, rows)
        return 0
    if args.rho1 is None or args.rho2 is None:
        raise ParameterError("Give --rho1 and --rho2 (randomization methods), or --l with --quasi (linking attacks).")
    methods = parse_column_list(args.methods) or list(DEFAULT_METHODS)
    rows = compare_methods(dataset, args.sensitive, methods, args.rho1, args.rho2,
                           parse_column_list(args.identifier), seed=args.seed, run=anonymize)
    print(f"Mean relative error of count queries on {dataset.label} (same seeded queries for every method):")
    print(format_table(rows))
    _emit(args, dataset, "workload", {"sensitive": args.sensitive, "rho1": args.rho1, "rho2": args.rho2,
                                      "methods": methods, "seed": args.seed}, [workload_row(r) for r in rows])
    return 0


def _compare_models(dataset, args: argparse.Namespace) -> int:
    """``compare --target COL``: does an analysis survive each method? Models trained on the original and on
    each release, tested on held-out original records."""
    from ppdp_desktop.cli.documents import model_row
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.evaluation.model_utility import compare_models
    from ppdp_desktop.core.methods.partition.compare import MODEL_METHODS
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

    if not args.sensitive or args.rho1 is None or args.rho2 is None:
        raise ParameterError("--target needs the job to compare: --sensitive COL with --rho1 and --rho2.")
    if args.target not in dataset.frame.columns:
        raise ParameterError(f"--target {args.target!r} is not a column of {dataset.label}; choose one of: "
                             f"{', '.join(map(str, dataset.frame.columns))}.")
    methods = parse_column_list(args.methods) or list(MODEL_METHODS)
    unknown = [m for m in methods if m not in MODEL_METHODS]
    if unknown:
        raise ParameterError(f"--target compares the methods {', '.join(MODEL_METHODS)}; not {unknown[0]!r}.")
    identifiers = parse_column_list(args.identifier)
    found = []
    for name in methods:
        settings = AnonymizationSettings(args.sensitive, name, identifiers, [],
                                         SensitivitySettings(rho1=args.rho1, rho2=args.rho2), seed=args.seed)
        comparison = compare_models(anonymize(dataset, settings), args.target, seed=args.seed or 0)
        found.append(model_row(name, comparison))
        print(f"{name}: does an analysis of {args.target} survive the release of {dataset.label}?")
        for line in comparison.lines():
            print(f"  {line}")
        rows = comparison.coefficient_rows()
        if rows:
            widths = [max(len(str(r[i])) for r in [comparison.COEFFICIENT_HEADER, *rows]) for i in range(len(rows[0]))]
            for row in [comparison.COEFFICIENT_HEADER, *rows]:
                print("  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())
    _emit(args, dataset, "models", {"sensitive": args.sensitive, "rho1": args.rho1, "rho2": args.rho2,
                                    "target": args.target, "methods": methods, "seed": args.seed}, found)
    return 0


def _compare_dp(dataset, args: argparse.Namespace) -> int:
    """``compare --epsilon``: dp-microagg for each --k against plain Laplace and plain ranking (seed 003)."""
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.schema import parse_column_list
    from ppdp_desktop.core.methods.dp.evaluation import compare_dp, format_dp_table
    from ppdp_desktop.core.methods.dp.settings import parse_domains, parse_taxonomies
    from ppdp_desktop.core.settings import MAX_K

    attributes = parse_column_list(args.attributes)
    if not attributes:
        raise ParameterError("--epsilon needs --attributes COLS (the columns to protect).")
    try:
        ks = [int(k) for k in parse_column_list(args.k)]
    except ValueError:
        raise ParameterError(f"--k {args.k!r} must be whole numbers separated by commas, e.g. 10,25,50,100.") from None
    if not ks:
        raise ParameterError("--k needs at least one cluster size.")
    if len(ks) > 20 or not all(1 <= k <= MAX_K for k in ks):
        raise ParameterError(f"--k takes at most 20 cluster sizes, each from 1 to {MAX_K:,}; got {args.k!r}.")
    rows = compare_dp(dataset, attributes, args.epsilon, ks, parse_domains(args.domain), parse_taxonomies(args.taxonomy),
                      seed=args.seed, candidates=args.candidates, run=anonymize)
    print(f"dp-microagg on {dataset.label} at epsilon = {args.epsilon:g} against its baselines ("
          "plain Laplace per value at M*Delta/epsilon, individual ranking without noise):")
    print(format_dp_table(rows))
    _emit(args, dataset, "dp", {"attributes": attributes, "epsilon": args.epsilon, "k": ks,
                                "candidates": args.candidates, "seed": args.seed},
          [dataclasses.asdict(r) if dataclasses.is_dataclass(r) else r for r in rows])
    return 0

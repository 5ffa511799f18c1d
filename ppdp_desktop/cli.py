"""``ppdp``: every job of the wizard from a terminal, for scripts and headless tests.

Errors a user can cause print one line on stderr and exit with status 2; nothing is written.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Sequence

from ppdp_desktop import __version__
from ppdp_desktop.core.errors import PPDPError

EXIT_USER_ERROR = 2
EXIT_INTERNAL = 70


class _Parser(argparse.ArgumentParser):
    """argparse that reports errors as one line (and the same exit status as other user errors)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _sensitivity_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("sensitivity (one of --rho1/--rho2 or --theta, plus optional --pairs)")
    g.add_argument("--rho1", type=float, help="prior bound rho1 for every value")
    g.add_argument("--rho2", type=float, help="posterior bound rho2 for every value")
    g.add_argument("--theta", type=float, help="less frequent is more sensitive: rho1_i = f_i/n, rho2_i = theta*rho1_i (theta > 1)")
    g.add_argument("--pairs", metavar="FILE", help="CSV value,rho1,rho2 overriding chosen values")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ppdp", description="PPDP Desktop: privacy-preserving publishing of patient tables.")
    parser.add_argument("--version", action="version", version=f"ppdp {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback on unexpected errors")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    an = sub.add_parser("anonymize", help="perturb the sensitive column of a data file and write a release folder")
    an.add_argument("data", help="CSV/TSV/TXT, .xlsx, .sav, .dta or .parquet file")
    an.add_argument("--out", required=True, help="release folder to create")
    an.add_argument("--sensitive", required=True, metavar="COL", help="the sensitive column")
    an.add_argument("--identifier", metavar="COLS", help="comma-separated identifier columns (removed)")
    an.add_argument("--quasi", metavar="COLS", help="comma-separated quasi-identifier columns")
    an.add_argument("--method", default="finegrain", help="uniform or finegrain (default: finegrain)")
    _sensitivity_args(an)
    an.add_argument("--seed", type=int, help="fix the random seed (default: from the OS's secure source)")
    an.add_argument("--sep", help="input delimiter (default: sniffed among , ; TAB |)")
    an.add_argument("--encoding", help="input encoding (default: sniffed: UTF-8, UTF-8 with BOM, Windows-1252)")
    an.add_argument("--overwrite", action="store_true", help="replace an existing release folder")
    an.add_argument("--utility", action="store_true", help="also print utility figures (count-query workload, distances)")

    demo = sub.add_parser("demo", help="run the main job on the embedded demo data")
    demo.add_argument("--out", required=True, help="release folder to create")
    demo.add_argument("--method", default="finegrain", help="uniform or finegrain (default: finegrain)")
    demo.add_argument("--theta", type=float, default=3.0, help="tolerance theta (default: 3)")
    demo.add_argument("--seed", type=int, help="fix the random seed")
    demo.add_argument("--overwrite", action="store_true", help="replace an existing release folder")

    ver = sub.add_parser("verify", help="re-check a release's guarantee; exit 0 only if it holds")
    ver.add_argument("release", help="release folder")

    est = sub.add_parser("estimate", help="estimate original counts of a perturbed column")
    est.add_argument("release", help="release folder")
    est.add_argument("--sensitive", required=True, metavar="COL")
    est.add_argument("--where", help='condition on released columns: "col=value,col=value"')
    est.add_argument("--mle", action="store_true", help="iterative Bayesian estimate instead of the unbiased inverse")
    est.add_argument("--json", action="store_true", help="print JSON instead of a table")
    return parser


def _run_anonymize(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.anonymize import AnonymizationSettings, SensitivitySettings, anonymize, load_overrides
    from ppdp_desktop.core.loading import load_table
    from ppdp_desktop.core.schema import parse_column_list

    settings = AnonymizationSettings(
        sensitive=args.sensitive,
        method=args.method,
        identifiers=parse_column_list(args.identifier),
        quasi=parse_column_list(args.quasi),
        sensitivity=SensitivitySettings(
            args.rho1, args.rho2, args.theta, load_overrides(args.pairs), Path(args.pairs).name if args.pairs else ""
        ),
        seed=args.seed,
    )
    _check_out(args.out, args.overwrite)
    dataset = load_table(args.data, sep=args.sep, encoding=args.encoding)
    return _finish(dataset, settings, args.out, args.overwrite, args.utility)


def _check_out(out: str, overwrite: bool) -> None:
    """Refuse an existing --out before any work is done."""
    from ppdp_desktop.core.errors import ReleaseError

    if Path(out).exists() and not overwrite:
        raise ReleaseError(f"{out} already exists; choose another --out folder (or pass --overwrite).")


def _finish(dataset, settings, out: str, overwrite: bool, utility: bool) -> int:
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.release import write_release

    start = time.perf_counter()
    result = anonymize(dataset, settings)
    folder = write_release(result, out, overwrite=overwrite)
    plan = result.plan
    print(
        f"Released {len(result.table):,} records of {dataset.label} to {folder} "
        f"({time.perf_counter() - start:.2f} s).\n"
        f"  method: {plan.method}; sensitive: {plan.attribute} ({plan.domain.m} values, "
        f"{int(plan.requirement.concern.sum())} protected; {plan.requirement.rule})\n"
        f"  guarantee verified: upward (rho1, rho2)-privacy; epsilon-LDP equivalent {result.guarantee.epsilon_ldp:.3f}\n"
        f"  record utility: {plan.record_utility:.4f}"
        + (f"\n  downward breaches reported for: {', '.join(b['value'] for b in result.guarantee.downward_breaches)}"
           if result.guarantee.downward_breaches else "")
    )
    if utility:
        from ppdp_desktop.core.utility import summarize

        for line in summarize(result).lines():
            print(f"  {line}")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.anonymize import AnonymizationSettings, SensitivitySettings
    from ppdp_desktop.core.loading import load_table
    from ppdp_desktop.core.resources import DEMO_DATA, resource_path

    _check_out(args.out, args.overwrite)
    dataset = load_table(resource_path(DEMO_DATA))
    settings = AnonymizationSettings(
        sensitive="diagnosis",
        method=args.method,
        identifiers=["patient_id", "name"],
        quasi=["age", "sex", "postcode"],
        sensitivity=SensitivitySettings(theta=args.theta),
        seed=args.seed,
    )
    return _finish(dataset, settings, args.out, args.overwrite, utility=True)


def _run_verify(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.analysis import verify_release
    from ppdp_desktop.core.release import read_release

    for summary in verify_release(read_release(args.release)):
        print(
            f"OK {summary.attribute}: {summary.n_records:,} records, {summary.protected_values} protected values, "
            f"upward (rho1, rho2)-privacy holds (epsilon-LDP equivalent {summary.epsilon_ldp:.3f})"
        )
    return 0


def _run_estimate(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.analysis import estimate_counts, parse_where
    from ppdp_desktop.core.release import read_release

    release = read_release(args.release)
    where = parse_where(args.where, list(release.table.columns))
    table = estimate_counts(release, args.sensitive, where, mle=args.mle)
    if args.json:
        print(json.dumps(table.to_dict(orient="records"), indent=2))
    else:
        print(table.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    return 0


COMMANDS = {"anonymize": _run_anonymize, "demo": _run_demo, "verify": _run_verify, "estimate": _run_estimate}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except PPDPError as exc:
        print(f"ppdp: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("ppdp: interrupted; nothing was written.", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: never a traceback
        if args.debug:
            raise
        print(f"ppdp: internal error: {type(exc).__name__}: {exc} (run with --debug and report it)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())

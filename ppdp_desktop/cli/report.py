"""``ppdp report DATA RELEASE --out report.html``: the utility and privacy report of a release against its
original data. DATA may be ``-`` (stdin); ``--out -`` or ``--pdf -`` sends that file to stdout."""
from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path

from ppdp_desktop.cli.commands import _stdin_data
from ppdp_desktop.cli.exit_codes import checking
from ppdp_desktop.cli.output import binary_stdout_of, emit_json, wants_json
from ppdp_desktop.cli.reading import load_data
from ppdp_desktop.cli.streams import is_stdio, output_path, refuse_stdio
from ppdp_desktop.core.errors import InputError, ParameterError


def run_report(args: argparse.Namespace) -> int:
    """``ppdp report``: refuse a clash of outputs before reading anything, then run on the (spooled) data."""
    refuse_stdio(args.release, "RELEASE", "a release is a folder or a .zip file (the data may come from stdin)")
    if is_stdio(args.out) and is_stdio(args.pdf):
        raise ParameterError("--out and --pdf cannot both be '-': stdout carries one file; give one of them a path.")
    if wants_json(args) and (is_stdio(args.out) or is_stdio(args.pdf)):
        raise ParameterError("--json prints its document on stdout, so it cannot go with --out - or --pdf -.")
    return _stdin_data(args, _report)


def _check_targets(args: argparse.Namespace, appendix: Path | None) -> None:
    """Refuse files that exist, folders that do not, and the same file twice (before any work)."""
    if args.pdf and not is_stdio(args.out) and Path(args.out).resolve() == Path(args.pdf).resolve():
        raise ParameterError(f"--out and --pdf are the same file ({args.out}); give the PDF its own name.")
    for target in [Path(t) for t in (args.out, args.pdf, appendix) if t and not is_stdio(t)]:
        if target.exists():
            raise InputError(f"{target} already exists; choose another file name.")
        if not target.resolve().parent.is_dir():
            raise InputError(f"The folder {target.resolve().parent} for {target.name} does not exist; create it "
                                 "first or choose another path.")


def _report(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.release.analysis import read_verified
    from ppdp_desktop.core.report.document import ReportContext
    from ppdp_desktop.core.report.files import write_html, write_pdf, write_values_csv
    from ppdp_desktop.core.report.from_release import reports_from_release

    out = Path(args.out)
    appendix = None if is_stdio(args.out) else out.with_name(
        (out.name[: -len(out.suffix)] if out.suffix else out.name) + "-values.csv")
    _check_targets(args, appendix)
    if not Path(args.release).exists():
        raise InputError(f"{args.release} is not a release: no such folder or .zip file; check the path.")
    with checking():  # a report states a release's figures: never those of one that verify refuses (exit 1)
        release = read_verified(args.release)
    dataset = load_data(args)
    reports = reports_from_release(dataset.frame, release)
    meta = release.metadata
    sensitive = ", ".join(e["attribute"] for e in meta.get("sensitive", []) + meta.get("recoded", []))
    context = ReportContext.from_release(release, data_label=dataset.label)
    context.sensitive = sensitive
    context.values_file = appendix.name if appendix else ""  # the full per-value table, beside a report file
    written: list[Path] = []
    try:
        with ExitStack() as stack:  # a '-' output goes to stdout only once every file is complete
            if appendix is not None and write_values_csv(reports, appendix):
                written.append(appendix)
            html = stack.enter_context(output_path(args.out, ".html", binary_stdout_of(args)))
            write_html(reports, context, html)
            if not is_stdio(args.out):
                written.append(out)
            if args.pdf:
                pdf = stack.enter_context(output_path(args.pdf, ".pdf", binary_stdout_of(args)))
                write_pdf(reports, context, pdf)
                if not is_stdio(args.pdf):
                    written.append(Path(args.pdf))
    except BaseException:
        for path in written:  # all or nothing
            path.unlink(missing_ok=True)
        raise
    shown = [str(p) for p in written if p != appendix] + ([str(appendix)] if appendix in written else [])
    piped = is_stdio(args.out) or is_stdio(args.pdf)
    print("Report written to " + ", ".join(shown + (["stdout"] if piped else [])) + ".",
          file=sys.stderr if piped else sys.stdout)
    if wants_json(args):
        from ppdp_desktop.cli.documents import report_document

        files = {"html": None if is_stdio(args.out) else str(out), "pdf": args.pdf or None,
                 "values": str(appendix) if appendix in written else None}
        emit_json(args, report_document(dataset.label, str(args.release), files, reports))
    return 0

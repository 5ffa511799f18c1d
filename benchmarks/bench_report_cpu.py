"""Benchmark (not a test): the report's own CPU seconds in a ``ppdp anonymize`` job, piece by piece.

    python benchmarks/bench_report_cpu.py                  # 1,000,000 rows
    python benchmarks/bench_report_cpu.py --rows 100000

The job of ``bench_report_overhead.py`` (uniform perturbation of ``diag``, ``id`` an identifier) is run without its
report, then the report's steps in the pipeline's order on one thread, each timed in thread CPU seconds: importing
its libraries (Pillow, the PDF writer) and loading the font, ``build_report``, drawing the custodian's figures, the
package's report (estimates from the release, its figure, values CSV and HTML; then its PDF) and the custodian's
HTML and CSV. Prints one JSON object. Whole processes with and without the report (what issue 34's 1.3x is about)
are ``bench_report_overhead.py``'s; this script says where the difference goes, with far less noise on a loaded
machine, so two trees can be compared piece by piece (``PYTHONPATH=tree``, A B A B).
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import make_csv  # noqa: E402 - the benchmark file, generated once and cached


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    data = make_csv(args.rows)
    os.environ.setdefault("PPDP_DATA_DIR", tempfile.mkdtemp(prefix="ppdp-bench-ledger-"))  # not the real ledger

    from ppdp_desktop.cli.commands import _settings
    from ppdp_desktop.cli.parser import build_parser
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.released import read_release
    from ppdp_desktop.core.release.pipeline import TableSource, publish_release

    job = build_parser().parse_args(["anonymize", str(data), "--out", "unused", "--sensitive", "diag", "--identifier",
                                     "id", "--method", "uniform", "--rho1", "0.1", "--rho2", "0.5"])
    result = anonymize(load_table(data), _settings(job))
    parts: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        publish_release(TableSource(result), folder / "release", include_report=False)
        release = read_release(folder / "release")
        clock = time.thread_time()

        def lap(name: str) -> None:
            nonlocal clock
            parts[name] = round(time.thread_time() - clock, 3)
            clock = time.thread_time()

        from ppdp_desktop.core.report.preload import import_report_libraries

        import_report_libraries()  # what the job runs on a thread while it loads the data
        lap("imports and font")
        from ppdp_desktop.core.release.package_report import context_of, release_estimates
        from ppdp_desktop.core.report.build import build_report, release_only
        from ppdp_desktop.core.report.files import write_html, write_pdf, write_values_csv

        report = build_report(result)
        lap("build_report")
        report.render_images()
        lap("custodian figures drawn")
        public = copy.copy(report)
        release_only(public, release_estimates(release, result.settings.sensitive), result.plan.describe())
        context = context_of(result, "fingerprint")
        write_values_csv([public], folder / "report-values.csv")
        write_html([public], context, folder / "report.html")
        lap("package report: estimates, figure, CSV, HTML")
        write_pdf([public], context, folder / "report.pdf")
        lap("package report: PDF")
        write_values_csv([report], folder / "custodian-values.csv")
        write_html([report], context, folder / "custodian.html")
        lap("custodian report: CSV, HTML")
        shutil.rmtree(folder / "release", ignore_errors=True)
    out = {"rows": args.rows, "thread_cpu_s": parts, "total_s": round(sum(parts.values()), 3),
           "load_average_1min": round(os.getloadavg()[0], 2)}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The long jobs the wizard runs in its worker, as plain functions of ``(…, progress, cancel)``.

The GUI starts them through one worker (``gui/worker.py``) and receives the result on its own
thread; ``ppdp run`` calls the same functions (:func:`run_project`), so a saved project gives the
same release headless as in the window.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.loading import LoadOptions, load_table
from ppdp_desktop.core.errors import InputError, PPDPError
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress, subrange
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.settings import AnonymizationSettings, RepeatSettings


@dataclass
class RunOutcome:
    """The chosen method's result first, then those of the methods it is compared with."""

    results: list[Anonymization]
    reports: list  # list[core.report.MethodReport], same order
    skipped: list[tuple[str, str]] = field(default_factory=list)  # compared methods that could not run: (name, why)
    pages: list = field(default_factory=list)  # each report's plain first page (core.report.summary.FirstPage)

    @property
    def main(self) -> Anonymization:
        return self.results[0]


def load_job(path: str | Path, options: LoadOptions, progress: Progress, cancel: CancelToken) -> Dataset:
    """Read a data file (the loader is one call; progress marks its start and end)."""
    progress(0.0, f"Reading {Path(path).name}")
    from ppdp_desktop.core.streaming.window import load_preview_if_large

    dataset = load_preview_if_large(path, options)  # a file too large to hold: its first records only
    if dataset is None:
        dataset = load_table(path, **options)
    cancel.check()
    progress(1.0, f"Read {dataset.n_records:,} records")
    return dataset


def run_job(
    dataset: Dataset, settings: list[AnonymizationSettings], progress: Progress, cancel: CancelToken
) -> RunOutcome:
    """Anonymize with each settings (the chosen method first) and build each one's report; a compared method
    that cannot run is skipped and said so (``RunOutcome.skipped``), the chosen one's error stops the run."""
    from ppdp_desktop.core.report.build import build_report
    from ppdp_desktop.core.streaming.window import is_streamed, run_streamed

    results, reports, skipped, pages = [], [], [], []
    streamed = is_streamed(dataset)
    if streamed:  # a file larger than memory: the chosen method only, streamed
        skipped = [(item.method, "not compared: the file is streamed, and each method would read it whole again")
                   for item in settings[1:]]
        settings = settings[:1]
    share = 1.0 / len(settings)
    for i, item in enumerate(settings):
        part = subrange(progress, i * share, (i + 0.7) * share)
        try:
            result = run_streamed(dataset, item, part, cancel) if streamed else anonymize(dataset, item, part, cancel)
        except PPDPError as exc:
            if i == 0:  # the chosen method: its error is the run's
                raise
            # a compared one: the chosen method still runs; its setting references kept: each face phrases them
            skipped.append((item.method, exc.message))
            continue
        cancel.check()
        progress((i + 0.7) * share, f"Report for {result.plan.method}")
        report = build_report(result, subrange(progress, (i + 0.7) * share, (i + 0.95) * share), cancel)
        progress((i + 0.95) * share, "Drawing the figures")
        report.render_images()  # here, in the worker: the window only shows the images
        reports.append(report)
        pages.append(plain_page(result, report))
        results.append(result)
    progress(1.0, "Done")
    return RunOutcome(results, reports, skipped, pages)


def plain_page(result: Anonymization, report):
    """The report's plain first page for the window (what was released, the verdicts, what it is good for)."""
    from ppdp_desktop.core.report.document import ReportContext
    from ppdp_desktop.core.report.summary import first_page

    context = ReportContext.from_anonymization(result)
    page = first_page([report], context.changes, context.n_records, context.sensitive)
    if context.sample:  # a streamed run: the report's figures come from a random sample
        page.released.append(context.sample_note())
    return page


def model_job(result: Anonymization, target: str, progress: Progress, cancel: CancelToken):
    """Does my analysis survive? (:func:`~ppdp_desktop.core.evaluation.model_utility.compare_models`) for the
    window's report page."""
    from ppdp_desktop.core.evaluation.model_utility import compare_models

    progress(0.1, f"Training models that predict {target}")
    comparison = compare_models(result, target)
    cancel.check()
    progress(1.0, "Models compared")
    return comparison


def export_job(
    result: Anonymization,
    folder: str | Path,
    key_path: str | Path | None,
    passphrase: str | None,
    overwrite: bool,
    progress: Progress,
    cancel: CancelToken,
    fmt: str = "csv",
    zip_file: bool = False,
    reports: list | None = None,
    bom: bool = True,
    inputs: tuple[str | Path, ...] = (),
    signer=None,
    project_file: str | Path | None = None,
) -> Path:
    """Write the release package (data, release.json, README, report, checksums) and its sealed key
    atomically, through the one publish pipeline (:func:`~ppdp_desktop.core.release.pipeline.publish_release`);
    a cancel leaves nothing behind. Neither may touch the data file or ``inputs``. The outcome of a streamed run
    holds a sample of the records: the whole file is streamed into the package again (its report drawn from the
    release's own sample, not from ``reports``).
    ``project_file``: the project run (its SHA-256 goes into the key's provenance, and into release.json only
    keyed with this computer's secret: :mod:`~ppdp_desktop.core.release.installation`)."""
    cancel.check()
    from ppdp_desktop.core.release.pipeline import RecordSource, TableSource, publish_release
    from ppdp_desktop.core.streaming.sample import SampledAnonymization

    source: RecordSource
    if isinstance(result, SampledAnonymization):
        from ppdp_desktop.core.streaming.window import streamed_source

        source, reports = streamed_source(result), None
    else:
        source = TableSource(result)
    return publish_release(
        source, folder, overwrite=overwrite, key_path=key_path, passphrase=passphrase, fmt=fmt, zip_file=zip_file,
        reports=reports, progress=progress, cancel=cancel, bom=bom, inputs=inputs, signer=signer,
        project_file=project_file,
    )


def run_project(
    project: Project,
    folder: str | Path,
    key_path: str | Path | None,
    passphrase: str | None,
    overwrite: bool,
    progress: Progress,
    cancel: CancelToken,
    seed: int | None = None,
    fmt: str = "csv",
    zip_file: bool = False,
    bom: bool = True,
    project_path: str | Path | None = None,
    signer=None,
    repeat: RepeatSettings | None = None,
) -> tuple[Anonymization, Path]:
    """A saved project headless, through the window's own steps: load its data, check that the data still
    matches it, run the chosen method with its report (:func:`run_job`), export (:func:`export_job`)."""
    project.check_signing(signer)  # the custodian's rule, before any work
    if not project.data_path:
        raise InputError("The project names no data file; open the data in the window and save the project again.")
    dataset = load_job(project.data_path, project.load_options.copy(), subrange(progress, 0.0, 0.2), cancel)
    project.check_data(dataset)
    settings = project.settings(seed=seed)
    if repeat is not None:  # the project's earlier releases: persistent draws, the ledger, the budget (issue 30)
        settings.repeat = repeat
    outcome = run_job(dataset, [settings], subrange(progress, 0.2, 0.7), cancel)
    folder = export_job(outcome.main, folder, key_path, passphrase, overwrite, subrange(progress, 0.7, 1.0), cancel,
                        fmt=fmt, zip_file=zip_file, reports=outcome.reports[:1], bom=bom,
                        inputs=(project_path,) if project_path else (), signer=signer, project_file=project_path)
    return outcome.main, folder

"""One publish pipeline for every release, in memory or streamed.

A release is written from a :class:`RecordSource`: the in-memory job's table, written as one batch
(:class:`TableSource`), or a file read and released in record batches
(:class:`~ppdp_desktop.core.streaming.release.StreamedSource`). Every other step is :func:`publish_release`'s,
the same for both:

1. before any work: the destinations (:func:`~.publish.check_destination`), the separator, the passphrase and
   the custodian's report are checked, and what a killed run left beside them is removed;
2. the source prepares (a streamed file: pass 1, the plan made and verified);
3. into a hidden temporary folder beside the target: the data (the source writes it), ``release.json`` and
   ``README.txt``;
4. the files are read back as a recipient reads them, and the package report is drawn;
5. ``SHA256SUMS`` and the signature are written, and the guarantee is re-checked on the files as written
   (fail closed: :func:`verify_written`);
6. the key is sealed; with ``zip_file`` the folder is zipped, each file streamed into the archive;
7. the custodian's report is written under hidden names beside its place (what can fail, a full disk, fails while
   nothing is published);
8. release and key are renamed into place as a pair (:mod:`.publish`); the custodian's report is renamed beside
   them (a failure there says that the release and its key are published and complete). With a ledger entry, the
   release's row of the release ledger (:mod:`ppdp_desktop.core.repeat.ledger`) is committed pending just before
   the rename and published just after.

A failure or a cancel at any step before 8 leaves nothing under the final names. While the job runs its destinations
are kept in the application-data folder, so that what a killed job leaves is removed at the next start of the app
(:mod:`.leftovers`).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import zipfile
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from ppdp_desktop.core.data.checksums import file_digests, fingerprint_of, write_checksums
from ppdp_desktop.core.data.digest import FileDigest
from ppdp_desktop.core.data.json_text import dumps_readable
from ppdp_desktop.core.data.released import META_FILE, README_FILE, LoadedRelease, read_release
from ppdp_desktop.core.errors import ParameterError, PPDPError, PrivacyError, ReleaseError, setting_ref
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress, subrange
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.leftovers import registered
from ppdp_desktop.core.release.metadata import data_file_name, release_metadata
from ppdp_desktop.core.release.package_report import (
    StagedCustodianReport,
    check_custodian_report,
    custodian_report_path,
    report_columns,
    start_report,
    write_package_report,
)
from ppdp_desktop.core.release.provenance import KEY as PROVENANCE
from ppdp_desktop.core.release.provenance import current_provenance, file_sha256
from ppdp_desktop.core.release.publish import Hook, check_destination, publish, release_target, temp_beside
from ppdp_desktop.core.release.readme import recipient_readme
from ppdp_desktop.core.release.signing import ALGORITHM, SigningKey, sign_folder
from ppdp_desktop.core.repeat.ledger import Ledger, LedgerEntry


@dataclass
class Written:
    """What a source wrote into the temporary folder.

    ``result``: the job's outcome (for ``release.json``, ``README.txt`` and the key); ``digests``: the SHA-256 of
    each file written; ``input_digest``: the input file's digest (sealed into the provenance); ``table``:
    ``(records, columns, columns with guarded formulas)`` of the table written (None: read them from
    ``result.table``; a table written in batches is not in ``result.table``).
    """

    result: Anonymization
    digests: dict[str, str]
    input_digest: FileDigest | None
    table: tuple[int, list[str], list[str]] | None = None


class RecordSource(ABC):
    """Where a release's records come from, and the few steps of :func:`publish_release` that depend on it."""

    #: the progress reached after preparing and after writing the data (the rest is the pipeline's)
    shares: tuple[float, float] = (0.0, 0.25)

    @abstractmethod
    def inputs(self) -> list[str | Path | None]:
        """The files the release and its key must not touch (the data's own file)."""

    def check(self, fmt: str) -> None:
        """Refuse, before any work, what this source cannot write (``fmt``: the data file's format)."""
        return None  # nothing, unless a source needs it

    def prepare(self, progress: Progress, cancel: CancelToken) -> None:
        """Work before the temporary folder exists (a streamed file: pass 1 and the verified plan)."""
        return None  # nothing, unless a source needs it

    def early_report(self, cancel: CancelToken, model_target: str | None) -> Future | None:
        """The custodian's report, started on a worker thread while the data is written (None: drawn later)."""
        return None

    @abstractmethod
    def write(self, folder: Path, name: str, *, fmt: str, sep: str, bom: bool, report: bool, final: Path,
              progress: Progress, cancel: CancelToken) -> Written:
        """Write the data file ``folder / name``; ``report``: keep what the report needs; ``final``: where the
        release goes (temporary files of the source's own go hidden beside it, where a later run cleans them)."""

    def metadata(self, metadata: dict[str, object]) -> None:
        """Add this source's own entries to ``release.json``'s content (in place)."""
        return None  # nothing, unless a source needs it

    @abstractmethod
    def read_back(self, folder: Path) -> LoadedRelease:
        """The release in ``folder`` as a recipient reads it (whole, or the checked columns of a large one)."""

    @abstractmethod
    def report_subject(self) -> Anonymization:
        """The outcome the reports are built from (a streamed job's: its random sample of the records)."""

    @abstractmethod
    def seal(self, passphrase: str, manifest: str, target: Path, provenance: dict) -> None:
        """Seal the key file ``target`` (``provenance``: with the plain digests)."""

    def close(self) -> None:
        """Release what the source holds (threads, spill files), also after a failure."""
        return None  # nothing, unless a source needs it


class TableSource(RecordSource):
    """An in-memory job's outcome: its table is the release's one batch."""

    def __init__(self, result: Anonymization) -> None:
        self.result = result
        self.fmt = "csv"
        self.extra: list[str] = []  # read back besides what verify checks: the column the package report estimates

    def inputs(self) -> list[str | Path | None]:
        return [self.result.dataset.source]

    def early_report(self, cancel: CancelToken, model_target: str | None) -> Future | None:
        return start_report(self.result, cancel, model_target)

    def write(self, folder: Path, name: str, *, fmt: str, sep: str, bom: bool, report: bool, final: Path,
              progress: Progress, cancel: CancelToken) -> Written:
        from ppdp_desktop.core.data import formats  # looked up at call time (tests replace the writer)

        progress(0.2, "Writing the data")
        result = self.result
        self.fmt = fmt
        self.extra = report_columns(result) if report else []
        if fmt != "csv":
            formats.write_table(result.table, folder / name, fmt, sep=sep, labels=result.dataset.labels, bom=bom)
            cancel.check()
            return Written(result, file_digests(folder, [name]), result.dataset.digest)
        digest, shape = formats.write_csv_release(result.table, folder / name, sep, bom=bom)  # hashed while written
        cancel.check()
        return Written(result, {name: digest}, result.dataset.digest, shape)

    def read_back(self, folder: Path) -> LoadedRelease:
        """The columns the checks read as text (and the package report's: :func:`report_columns`), as the streamed job
        does; a CSV by pyarrow's reader with the streamed job's pseudonym check (each id led back to its record under
        the job's key: :func:`~ppdp_desktop.core.streaming.readback.read_back`)."""
        if self.fmt != "csv":
            return read_release(folder)
        from ppdp_desktop.core.data.freed_memory import return_freed
        from ppdp_desktop.core.streaming.readback import read_back

        return_freed()  # the writer's temporaries, before the read-back's batches (issue 34's memory)
        release = read_back(folder, self.result.pseudonym_key, self.extra)
        return_freed()  # and the read-back's batches, before the final check's temporaries
        return release

    def report_subject(self) -> Anonymization:
        return self.result

    def seal(self, passphrase: str, manifest: str, target: Path, provenance: dict) -> None:
        payload = {**self.result.key_payload(), PROVENANCE: provenance}  # with the plain digests
        keyfile.seal(payload, passphrase, manifest, target, records=self.result.key_records())


def publish_release(
    source: RecordSource,
    out_dir: str | Path,
    *,
    overwrite: bool = False,
    sep: str = ",",
    fmt: str = "csv",
    bom: bool = True,
    zip_file: bool = False,
    key_path: str | Path | None = None,
    passphrase: str | None = None,
    reports: list | None = None,
    include_report: bool = True,
    progress: Progress = no_progress,
    cancel: CancelToken | None = None,
    inputs: Sequence[str | Path | None] = (),
    hook: Hook | None = None,
    signer: SigningKey | None = None,
    model_target: str | None = None,
    project_file: str | Path | None = None,
    ledger_entry: LedgerEntry | None = None,
) -> Path:
    """Write ``source``'s release package (and, if asked, its sealed key) atomically; return its path.

    The options are :func:`~ppdp_desktop.core.release.package.write_release`'s, for every source: ``reports``
    (the custodian's reports, drawn already), ``model_target`` (the custodian's report compares models
    predicting this column, trained on the original and on the release), ``zip_file`` (one ``.zip`` instead of
    a folder), ``inputs`` (more files the destinations must not touch), ``hook`` (sees each publication step).
    ``ledger_entry``: the release's row of the release ledger (:mod:`ppdp_desktop.core.repeat.ledger`), opened
    before any work and written around the rename: committed pending just before, published just after, so that
    the release and its row exist together or not at all.
    """
    cancel = cancel or CancelToken()
    out = release_target(out_dir, zip_file)
    key = Path(key_path) if key_path is not None else None
    check_destination(out, key, overwrite, [*source.inputs(), *inputs],
                      others={"sign": signer.path if signer is not None else None})  # settles a killed run's leftovers
    if len(sep) != 1 or sep in "\"\r\n":
        raise ReleaseError(f"The CSV separator must be one character other than a quote or newline; got {sep!r}.")
    if key is not None and not passphrase:
        raise ReleaseError("A passphrase is needed to seal the key file.")
    name = data_file_name(fmt)
    source.check(fmt)
    custodian = custodian_report_path(out, key)
    if include_report:
        check_custodian_report(custodian, overwrite)
    with registered(out, key, custodian if include_report else None):  # settled at the next start if killed
        _publish_release(source, out, key, passphrase, cancel, progress, name=name, sep=sep, fmt=fmt, bom=bom,
                         zip_file=zip_file, reports=reports, include_report=include_report, hook=hook, signer=signer,
                         model_target=model_target, project_file=project_file, ledger_entry=ledger_entry,
                         custodian=custodian)
    progress(1.0, "Exported")
    return out


def _publish_release(source: RecordSource, out: Path, key: Path | None, passphrase: str | None, cancel: CancelToken,
                     progress: Progress, *, name: str, sep: str, fmt: str, bom: bool, zip_file: bool,
                     reports: list | None, include_report: bool, hook: Hook | None, signer: SigningKey | None,
                     model_target: str | None, project_file: str | Path | None, ledger_entry: LedgerEntry | None,
                     custodian: Path) -> None:
    """Steps 2-8 of :func:`publish_release` (its checks done)."""
    project_sha256 = file_sha256(project_file) if project_file else None
    prepared, data_done = source.shares
    after = lambda x: data_done + (1.0 - data_done) * x  # noqa: E731 - the pipeline's share of the progress
    tmp = tmp_key = tmp_zip = None
    drawing = staged = None
    ledger = Ledger() if ledger_entry is not None else None  # a ledger that cannot be read is refused before any work
    try:
        source.prepare(subrange(progress, 0.0, prepared), cancel)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.{os.getpid()}.", suffix=".partial", dir=out.resolve().parent))
        tmp_key = temp_beside(key) if key is not None else None
        tmp_zip = temp_beside(out) if zip_file else None
        if include_report and reports is None:  # drawn while the data is written and read back, where it can be
            drawing = source.early_report(cancel, model_target)
        written = source.write(tmp, name, fmt=fmt, sep=sep, bom=bom, report=include_report, final=out,
                               progress=subrange(progress, prepared, data_done), cancel=cancel)
        result = written.result
        provenance = current_provenance(written.input_digest, project_sha256).sealed()
        metadata = release_metadata(result, sep, fmt, bom=bom, written=written.table, provenance=provenance)
        source.metadata(metadata)
        if ledger_entry is None and result.repeat is not None:  # a job with a project: its row of the ledger
            parameters = metadata.get("parameters")  # and what was spent: the verified guarantee (rr's risk, epsilons)
            kept = {**(parameters if isinstance(parameters, dict) else {}), "guarantee": result.guarantee}
            ledger_entry = result.repeat.ledger_entry(result.plan.method, kept)
            ledger = Ledger()
        if signer is not None:  # named inside, so README.txt and the report say who signed
            metadata["signer"] = {"algorithm": ALGORITHM, "fingerprint": signer.fingerprint}
        (tmp / META_FILE).write_text(dumps_readable(metadata), encoding="utf-8")
        (tmp / README_FILE).write_text(recipient_readme(metadata), encoding="utf-8")
        digests = {**written.digests, **file_digests(tmp, [META_FILE, README_FILE])}
        fingerprint = fingerprint_of(digests)
        progress(after(0.0), "Reading the release back")
        release = source.read_back(tmp)  # as a recipient reads it: the package report and the final check use it
        subject, full_reports = None, []
        if include_report:
            progress(after(0.05), "Drawing the report")
            subject = source.report_subject()
            drawn = reports if drawing is None else [drawing.result()]
            full_reports = write_package_report(subject, drawn, tmp, release, subrange(progress, after(0.05),
                                                after(0.7)), cancel, fingerprint, model_target)
        cancel.check()
        progress(after(0.7), "Checksums")
        manifest = write_checksums(tmp, known=digests)
        if signer is not None:
            sign_folder(tmp, signer)
        progress(after(0.75), "Verifying the files about to be published")
        verify_written(tmp, release, result.plan)
        cancel.check()
        if key is not None and tmp_key is not None and passphrase:
            progress(after(0.85), "Sealing the key")
            source.seal(passphrase, manifest, tmp_key, provenance.to_json())
        cancel.check()
        if tmp_zip is not None:
            progress(after(0.95), "Zipping the package")
            zip_folder(tmp, tmp_zip)
        if subject is not None:  # the custodian's report, with the original figures, stays outside the package
            progress(after(0.97), "Writing the custodian's report")
            staged = StagedCustodianReport(custodian)
            staged.write(subject, full_reports, fingerprint)
        cancel.check()
        _publish_recorded(tmp_zip or tmp, out, tmp_key, key, hook, ledger, ledger_entry, manifest, signer)
        if staged is not None:
            try:
                staged.commit()
            except OSError as exc:
                done = f"The release {out} and its key {key} are" if key is not None else f"The release {out} is"
                raise ReleaseError(f"{done} published and complete, but the custodian's report could not be put at "
                                   f"{custodian} ({exc.strerror or exc}).", file=str(custodian)) from None
    finally:
        if staged is not None:
            staged.discard()
        if drawing is not None:
            drawing.exception()  # wait for it (it stops at the user's cancel too), so nothing outlives the call
        source.close()
        if ledger is not None:
            ledger.close()
        for partial in (tmp, tmp_key, tmp_zip):
            if partial is not None and partial.exists():
                shutil.rmtree(partial, ignore_errors=True) if partial.is_dir() else partial.unlink(missing_ok=True)


def _publish_recorded(new_release: Path, out: Path, new_key: Path | None, key: Path | None, hook: Hook | None,
                      ledger: Ledger | None, entry: LedgerEntry | None, manifest: str, signer: SigningKey | None) -> None:
    """:func:`~.publish.publish`, with the release's ledger row committed pending just before and published just
    after (removed again if the publish fails: :meth:`Ledger.discard` keeps it if the release is in place)."""
    if ledger is None or entry is None:
        publish(new_release, out, new_key, key, hook)
        return
    if signer is not None:
        entry.signer = signer.fingerprint
    pending = ledger.begin(entry, out.resolve(), manifest)
    try:
        publish(new_release, out, new_key, key, hook)
    except BaseException:
        with contextlib.suppress(ReleaseError):  # the publish's own error is the one to tell; a row left pending
            ledger.discard(pending)               # without its release is removed at an opening once we are gone
        raise
    with contextlib.suppress(ReleaseError):  # the release is out: a row left pending is published at the next opening
        ledger.mark_published(pending)


def model_target_of(asked: str | None, sensitive: str, columns: Sequence[str], label: str,
                    report: bool = True) -> str | None:
    """The column the custodian's report trains its models to predict: ``asked`` ("": the job's ``sensitive``
    column; None: no models), refused before any work when it is not one of the data's ``columns`` (of the file
    ``label``) or when no report is written (``report`` false)."""
    if asked is None:
        return None
    target = asked or sensitive or None
    if target is None:
        raise ParameterError(f"{setting_ref('model-target')} needs a column here (this method has no sensitive "
                             "column).", setting="model-target")
    if target not in columns:
        raise ParameterError(f"{setting_ref('model-target')} {target!r} is not a column of {label}; choose one of: "
                             f"{', '.join(map(str, columns))}.", setting="model-target", value=target,
                             allowed=", ".join(map(str, columns)))
    if not report:
        raise ParameterError(f"{setting_ref('model-target')} adds a section to the report; it cannot go with "
                             f"{setting_ref('no-report')}.", setting="model-target", value=target)
    return target


def zip_folder(folder: Path, target: Path) -> None:
    """Zip the files of ``folder`` into ``target``, each streamed in blocks (a data file larger than memory
    included; ZIP64 where a file needs it)."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)


def verify_written(folder: Path, written: LoadedRelease | None = None, plan: object = None) -> None:
    """Verify the folder about to be published as a recipient would: the guarantee is checked on the bytes
    written, not only on the plan (fail closed). ``written``: the data as read back from ``folder`` after it
    was written (its checksums, checked here, show the files are still those bytes). ``plan``: the job's plan,
    against which a method can check the written release exactly (randomized response)."""
    from ppdp_desktop.core.release.analysis import verify_release

    try:
        verify_release(written if written is not None else read_release(folder), plan=plan)
    except PPDPError as exc:
        raise PrivacyError(f"The release as written does not pass its own check ({exc}); nothing was written.") from exc

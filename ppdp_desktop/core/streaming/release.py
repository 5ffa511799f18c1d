"""``ppdp anonymize --streaming``: a release package written from a file read in record batches.

The same package as :func:`~ppdp_desktop.core.release.package.write_release` (data file, ``release.json``,
``README.txt``, ``SHA256SUMS``, the sealed key beside it), written into a hidden temporary folder beside the
target, re-checked as written (:mod:`.readback`) and renamed into place with its key only when complete. For a
fixed seed the data file is byte for byte the one the in-memory job writes, whatever the chunk size.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ppdp_desktop.core.data.checksums import file_digests, fingerprint_of, write_checksums
from ppdp_desktop.core.data.digest import BackgroundDigest
from ppdp_desktop.core.data.json_text import dumps_readable
from ppdp_desktop.core.data.streamed import StreamedFile
from ppdp_desktop.core.errors import PPDPError, PrivacyError, ReleaseError
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.privacy.record_table import pseudonym_entry
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress, subrange
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.package import META_FILE, README_FILE, release_metadata
from ppdp_desktop.core.release.package_report import (
    check_custodian_report, custodian_report_path, write_custodian_report, write_package_report,
)
from ppdp_desktop.core.release.provenance import KEY as PROVENANCE, current_provenance, file_sha256
from ppdp_desktop.core.release.publish import Hook, check_destination, clean_stale, publish, temp_beside
from ppdp_desktop.core.release.readme import recipient_readme
from ppdp_desktop.core.release.signing import ALGORITHM, SigningKey, sign_folder
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.anonymize import measure_released
from ppdp_desktop.core.streaming.job import (
    CHUNK_SIZE, DataWriter, plan_from_file, remove_quietly, streamed_outcome, temp_folder_beside, write_streamed_data,
)
from ppdp_desktop.core.streaming.readback import _batches, read_back
from ppdp_desktop.core.streaming.sample import ReportSample


DATA_NAME = "release.csv"


@dataclass
class StreamedRelease:
    """A published streamed release: where it is and the job's outcome (without its records)."""

    folder: Path
    result: Anonymization
    n_records: int
    data_sha256: str


def write_streamed_release(
    source: StreamedFile,
    settings: AnonymizationSettings,
    out: str | Path,
    *,
    chunk_size: int = CHUNK_SIZE,
    overwrite: bool = False,
    sep: str = ",",
    bom: bool = True,
    key_path: str | Path | None = None,
    passphrase: str | None = None,
    progress: Progress = no_progress,
    cancel: CancelToken | None = None,
    hook: Hook | None = None,
    signer: SigningKey | None = None,
    writer: DataWriter | None = None,
    include_report: bool = True,
    project_file: str | Path | None = None,
) -> StreamedRelease:
    """Plan from pass 1, write the data in pass 2, finish, re-check and publish the package (and its key).

    ``writer`` writes the data file from the verified plan (default: :func:`write_streamed_data`, pass 2 in
    this process); the Dask engine gives its own, which runs pass 2 on the cluster's workers.

    The input file's SHA-256 and size (sealed into the key, with the versions: :mod:`.provenance`; ``release.json``
    gets them only keyed with this computer's secret) are computed from pass 1's bytes for a CSV file read here; a
    file read another way (Parquet, the Dask engine's partitions) is hashed in a thread while pass 1 runs.
    ``project_file``: the project run, whose SHA-256 is recorded the same way.
    """
    cancel = cancel or CancelToken()
    out = Path(out)
    key = Path(key_path) if key_path is not None else None
    check_destination(out, key, overwrite, [source.source])
    if len(sep) != 1 or sep in "\"\r\n":
        raise ReleaseError(f"The CSV separator must be one character other than a quote or newline; got {sep!r}.")
    if key is not None and not passphrase:
        raise ReleaseError("A passphrase is needed to seal the key file.")
    if chunk_size < 1:
        raise ReleaseError(f"The chunk size must be at least one record; got {chunk_size}.")
    custodian = custodian_report_path(out, key)
    if include_report:
        check_custodian_report(custodian, overwrite)
    clean_stale(out, key)  # what a killed run left behind
    project_sha256 = file_sha256(project_file) if project_file else None
    hashing = None if source.hashes_while_reading else BackgroundDigest(source.source)
    try:
        job, bound, frame, dataset = plan_from_file(source, settings, chunk_size, subrange(progress, 0.0, 0.3),
                                                    cancel)
    except BaseException:
        if hashing is not None:
            hashing.stop()
        raise
    tmp = temp_folder_beside(out)
    spill = temp_folder_beside(out)  # the shuffle's runs: hidden beside the output, cleaned like it
    tmp_key = temp_beside(key) if key is not None else None
    write = writer or write_streamed_data
    try:
        sample = ReportSample(len(frame)) if include_report else None
        data = write(source, job, bound, tmp / DATA_NAME, spill, sep=sep, bom=bom, chunk_size=chunk_size,
                     n_records=len(frame), progress=subrange(progress, 0.3, 0.8), cancel=cancel, sample=sample)
        measure_released(job, lambda cols: (b.to_pandas() for b in _batches(tmp / DATA_NAME, sep, data.columns, cols)),
                         data.columns)  # read back as written (dp-microagg: the records its other columns single out)
        result = streamed_outcome(job, dataset, frame, data)
        digest = source.digest if hashing is None else hashing.result()
        provenance = current_provenance(digest, project_sha256).sealed()
        metadata = release_metadata(result, sep, "csv", bom=bom, written=(data.n_records, data.columns, data.guarded),
                                    provenance=provenance)
        if job.needs_pseudonyms:
            metadata["pseudonym_column"] = job.pseudonym_column
        if signer is not None:  # named inside, so README.txt says who signed
            metadata["signer"] = {"algorithm": ALGORITHM, "fingerprint": signer.fingerprint}
        (tmp / META_FILE).write_text(dumps_readable(metadata), encoding="utf-8")
        (tmp / README_FILE).write_text(recipient_readme(metadata), encoding="utf-8")
        digests = {DATA_NAME: data.sha256, **file_digests(tmp, [META_FILE, README_FILE])}
        fingerprint = fingerprint_of(digests)
        progress(0.82, "Reading the release back")
        written = read_back(tmp, job.pseudonym_key if job.needs_pseudonyms else None)
        reports, sampled = [], None
        if include_report:
            progress(0.84, "The report")
            sampled = data.sample.outcome(job, dataset, result.reidentification)
            reports = write_package_report(sampled, None, tmp, written, subrange(progress, 0.84, 0.9), cancel,
                                           fingerprint)
        progress(0.9, "Checksums")
        manifest = write_checksums(tmp, known=digests)
        if signer is not None:
            sign_folder(tmp, signer)
        progress(0.92, "Verifying the files about to be published")
        _verify_written(written, result.plan)
        cancel.check()
        if key is not None:
            progress(0.95, "Sealing the key")
            _seal(result, job, data, passphrase, manifest, tmp_key, provenance.to_json())
        cancel.check()
        publish(tmp, out, tmp_key, key, hook)
        if include_report:  # the custodian's report, with the original figures, stays outside the package
            write_custodian_report(sampled, reports, custodian, fingerprint)
    finally:
        if hashing is not None:
            hashing.stop()  # at once if it is done; a failed or cancelled job does not wait for the whole file
        remove_quietly(tmp, tmp_key, spill)
    progress(1.0, "Exported")
    return StreamedRelease(out, result, data.n_records, data.sha256)


def _verify_written(written, plan: object = None) -> None:
    """The guarantee and structure re-checked on the files as written (fail closed), read back in part (the
    checksums, checked here, show the files are still those bytes); against the job's ``plan`` where the method
    checks a written release exactly (randomized response)."""
    from ppdp_desktop.core.release.analysis import verify_release

    try:
        verify_release(written, plan=plan)
    except PPDPError as exc:
        raise PrivacyError(f"The release as written does not pass its own check ({exc}); nothing was written.") from exc


def _seal(result: Anonymization, job, data, passphrase: str, manifest: str, target: Path,
          provenance: dict) -> None:
    """The sealed key: the payload (the pseudonym key, not the ids; the provenance with its plain digests) and the record
    table read back from pass 2's spill a batch at a time (identifiers and record secrets, record order)."""
    payload = {**result.key_payload(n_records=data.n_records), PROVENANCE: provenance}
    if result.pseudonym_key is not None:
        payload["pseudonyms"] = pseudonym_entry(job.pseudonym_column, job.pseudonym_key, data.n_records,
                                                job.schema.identifiers, data.secrets)
    records = None
    if data.identifiers is not None:
        reader = pa.ipc.open_stream(str(data.identifiers))
        records = (reader.schema, iter(reader))
    keyfile.seal(payload, passphrase, manifest, target, records=records)

"""``ppdp anonymize --streaming``: a release package written from a file read in record batches.

The package is :func:`~ppdp_desktop.core.release.pipeline.publish_release`'s, as for an in-memory job (data
file, ``release.json``, ``README.txt``, the reports, ``SHA256SUMS``, with ``zip_file`` one ``.zip``, the sealed
key beside it); this module is its :class:`StreamedSource`: pass 1 and the verified plan, pass 2 writing the
data file batch by batch, the release read back in part (:mod:`.readback`), the report built from a random
sample of the records (:mod:`.sample`) and the key's record table sealed from pass 2's spill. For a fixed seed
the data file is byte for byte the one the in-memory job writes, whatever the chunk size.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ppdp_desktop.core.anonymize import measure_released
from ppdp_desktop.core.data.digest import BackgroundDigest
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.data.streamed import StreamedFile
from ppdp_desktop.core.errors import ParameterError, ReleaseError
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.privacy.record_table import pseudonym_entry
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.release.pipeline import RecordSource, Written, publish_release
from ppdp_desktop.core.release.provenance import KEY as PROVENANCE
from ppdp_desktop.core.release.publish import Hook
from ppdp_desktop.core.release.signing import SigningKey
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.streaming.job import (
    CHUNK_SIZE,
    DataWriter,
    StreamedData,
    plan_from_file,
    remove_quietly,
    streamed_outcome,
    temp_folder_beside,
    write_streamed_data,
)
from ppdp_desktop.core.streaming.readback import _batches, read_back
from ppdp_desktop.core.streaming.sample import ReportSample, SampledAnonymization
from ppdp_desktop.core.streaming.sealed_spill import SpillKey, open_sealed

DATA_NAME = "release.csv"


@dataclass
class StreamedRelease:
    """A published streamed release: where it is and the job's outcome (without its records)."""

    folder: Path
    result: Anonymization
    n_records: int
    data_sha256: str


class StreamedSource(RecordSource):
    """A file released in record batches: pass 1 plans, pass 2 writes the data file in the release's order.

    ``writer`` writes the data file from the verified plan (default: :func:`write_streamed_data`, pass 2 in
    this process); the Dask engine gives its own, which runs pass 2 on the cluster's workers.

    The input file's SHA-256 and size (sealed into the key, with the versions: :mod:`.provenance`; ``release.json``
    gets them only keyed with this computer's secret) are computed from pass 1's bytes for a CSV file read here; a
    file read another way (Parquet, the Dask engine's partitions) is hashed in a thread while pass 1 runs.
    """

    shares = (0.3, 0.8)
    #: set by :meth:`write`: what pass 2 wrote, and the job's outcome without its records
    data: StreamedData
    result: Anonymization

    def __init__(self, source: StreamedFile, settings: AnonymizationSettings, chunk_size: int = CHUNK_SIZE,
                 writer: DataWriter | None = None) -> None:
        self.source, self.settings, self.chunk_size = source, settings, chunk_size
        self.writer = writer or write_streamed_data
        self.hashing: BackgroundDigest | None = None
        self.spill: Path | None = None

    def inputs(self) -> list[str | Path | None]:
        return [self.source.source]

    def check(self, fmt: str) -> None:
        if fmt != "csv":
            raise ParameterError(f"A streamed release is written as CSV, batch by batch; it cannot be {fmt!r}. Choose "
                                 "the CSV format, or release the file in memory.", setting="format", value=fmt,
                                 allowed="csv")
        if self.chunk_size < 1:
            raise ReleaseError(f"The chunk size must be at least one record; got {self.chunk_size}.")

    def prepare(self, progress: Progress, cancel: CancelToken) -> None:
        """Pass 1: the plan's columns of every record, the plan made, verified and bound."""
        self.hashing = None if self.source.hashes_while_reading else BackgroundDigest(self.source.source)
        self.job, self.bound, self.frame, self.dataset = plan_from_file(self.source, self.settings, self.chunk_size,
                                                                        progress, cancel)

    def write(self, folder: Path, name: str, *, fmt: str, sep: str, bom: bool, report: bool, final: Path,
              progress: Progress, cancel: CancelToken) -> Written:
        """Pass 2: the data file written in the release's order (the report's sample kept), read back as written
        for the risk measure (dp-microagg: the records its other columns single out)."""
        job, target = self.job, folder / name
        self.spill = temp_folder_beside(final)  # the shuffle's runs: hidden beside the output, cleaned like it,
        sample = ReportSample(len(self.frame)) if report else None  # and sealed under a key held in memory only
        data = self.writer(self.source, job, self.bound, target, self.spill, sep=sep, bom=bom,
                           chunk_size=self.chunk_size, n_records=len(self.frame), progress=progress, cancel=cancel,
                           sample=sample, spill_key=SpillKey())
        measure_released(job, lambda cols: (b.to_pandas() for b in _batches(target, sep, data.columns, cols)),
                         data.columns)
        self.data, self.result = data, streamed_outcome(job, self.dataset, self.frame, data)
        digest = self.source.digest if self.hashing is None else self.hashing.result()
        return Written(self.result, {name: data.sha256}, digest, (data.n_records, data.columns, data.guarded))

    def metadata(self, metadata: dict[str, object]) -> None:
        if self.job.needs_pseudonyms:
            metadata["pseudonym_column"] = self.job.pseudonym_column

    def read_back(self, folder: Path) -> LoadedRelease:
        return read_back(folder, self.job.pseudonym_key if self.job.needs_pseudonyms else None)

    def report_subject(self) -> SampledAnonymization:
        """The report's random sample of the records as a job outcome (its figures say they are a sample's)."""
        if self.data.sample is None:
            raise ReleaseError("The report's sample was not kept while the data was written.")
        subject = self.data.sample.outcome(self.job, self.dataset, self.result.reidentification)
        subject.repeat = self.result.repeat  # the whole release among its project's releases (not the sample's)
        return subject

    def seal(self, passphrase: str, manifest: str, target: Path, provenance: dict) -> None:
        """The payload (the pseudonym key, not the ids; the provenance with its plain digests) and the record table
        read back from pass 2's spill a batch at a time (identifiers and record secrets, record order)."""
        result, job, data = self.result, self.job, self.data
        payload = {**result.key_payload(n_records=data.n_records), PROVENANCE: provenance}
        if result.pseudonym_key is not None:
            payload["pseudonyms"] = pseudonym_entry(job.pseudonym_column, job.pseudonym_key, data.n_records,
                                                    job.schema.identifiers, data.secrets)
        records = None
        if data.identifiers is not None and data.spill_key is not None:
            spilled = open_sealed(data.identifiers, data.spill_key)
            records = (spilled.schema, spilled.batches)
        keyfile.seal(payload, passphrase, manifest, target, records=records)

    def close(self) -> None:
        if self.hashing is not None:
            self.hashing.stop()  # at once if it is done; a failed or cancelled job does not wait for the whole file
        remove_quietly(self.spill)


def write_streamed_release(
    source: StreamedFile,
    settings: AnonymizationSettings,
    out: str | Path,
    *,
    chunk_size: int = CHUNK_SIZE,
    overwrite: bool = False,
    sep: str = ",",
    bom: bool = True,
    zip_file: bool = False,
    key_path: str | Path | None = None,
    passphrase: str | None = None,
    progress: Progress = no_progress,
    cancel: CancelToken | None = None,
    hook: Hook | None = None,
    signer: SigningKey | None = None,
    writer: DataWriter | None = None,
    include_report: bool = True,
    model_target: str | None = None,
    inputs: tuple[str | Path | None, ...] = (),
    project_file: str | Path | None = None,
) -> StreamedRelease:
    """Plan from pass 1, write the data in pass 2, finish, re-check and publish the package (and its key):
    :func:`~ppdp_desktop.core.release.pipeline.publish_release` with a :class:`StreamedSource`.

    ``zip_file``: one ``.zip`` instead of a folder (the data file is written into the temporary folder batch by
    batch, then streamed into the archive). ``model_target``: the custodian's report compares models predicting
    this column, trained on the report's random sample of the records (and says so). ``project_file``: the
    project run, whose SHA-256 is recorded in the provenance.
    """
    streamed = StreamedSource(source, settings, chunk_size, writer)
    folder = publish_release(streamed, out, overwrite=overwrite, sep=sep, fmt="csv", bom=bom, zip_file=zip_file,
                             key_path=key_path, passphrase=passphrase, include_report=include_report,
                             progress=progress, cancel=cancel, inputs=inputs, hook=hook, signer=signer,
                             model_target=model_target, project_file=project_file)
    return StreamedRelease(folder, streamed.result, streamed.data.n_records, streamed.data.sha256)

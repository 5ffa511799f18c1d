"""Writing and reading a release folder: ``release.csv`` + ``release.json`` (docs/release-format.md).

Writes are atomic: everything goes into a hidden temporary folder beside the target, is verified as
written, and is renamed into place with its key only when complete (:mod:`.pipeline`, :mod:`.publish`). A
failure leaves nothing behind, and an existing release is never overwritten unless asked (and then only one of
ours).
"""
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from ppdp_desktop import __version__
from ppdp_desktop.core.data.checksums import (  # noqa: F401
    CHECKSUMS_FILE,
    check_checksums,
    file_digests,
    fingerprint_of,
    manifest_sha256,
    write_checksums,
)
from ppdp_desktop.core.data.formats import FORMULA_GUARD, csv_encoding, guard_formulas, write_csv, write_csv_atomic  # noqa: F401
from ppdp_desktop.core.data.released import DATA_FILE, FORMAT_VERSION, META_FILE, README_FILE, LoadedRelease, read_release  # noqa: F401 - part of this module's vocabulary
from ppdp_desktop.core.errors import PPDPError, PrivacyError, ReleaseError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.release.provenance import KEY as PROVENANCE
from ppdp_desktop.core.release.provenance import Provenance, current_provenance
from ppdp_desktop.core.release.publish import Hook, check_destination, clean_stale, publish, release_target, temp_beside  # noqa: F401
from ppdp_desktop.core.release.signing import SigningKey

RECONSTRUCTION = (
    "Released values were drawn with the published matrix P, given by its parameters (matrix_formula): "
    "P[j][i] = Pr[value i is released as value j]. Unbiased counts of the original values among any selection "
    "of records: solve P @ f = o, where o are the observed counts of each released value in the selection "
    "(ppdp estimate does this)."
)


def release_metadata(result: Anonymization, sep: str, fmt: str = "csv", *, bom: bool = True,
                     written: tuple[int, list[str], list[str]] | None = None,
                     provenance: Provenance | None = None) -> dict[str, object]:
    """The ``release.json`` content: everything an analyst needs, nothing secret (no seed, no counts).

    ``csv.encoding`` is ``utf-8-sig`` for a CSV written with the byte-order mark (``bom``), else ``utf-8``.
    ``written``: ``(records, columns, columns with guarded formulas)`` of a table written in chunks (a streamed
    job, whose ``result.table`` holds none of the records); by default they are read from ``result.table``.
    ``provenance``: what the release was made with (:mod:`.provenance`), its plain digests keyed already
    (:meth:`~.provenance.Provenance.sealed`); by default the running app's, with the input file's digest taken while
    the loader read it (``result.dataset.digest``), keyed here. Only its public form is written: the input's name
    and keyed digests, never its SHA-256 or size (they would let anyone test guesses of a cell).
    """
    schema = result.dataset.schema
    n_records, columns, guarded = written if written is not None else (
        len(result.table), list(result.table.columns), guard_formulas(result.table)[1] if fmt == "csv" else [])
    attributes = {
        name: {**attr.to_json(), "released": attr.role.value != "identifier" and name in columns}
        for name, attr in schema.attributes.items()
    }
    metadata: dict[str, object] = {
        "format_version": FORMAT_VERSION,
        "app": f"PPDP Desktop {__version__}",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        PROVENANCE: (provenance or current_provenance(result.dataset.digest).sealed()).public_json(),
        "method": result.plan.method,
        "n_records": int(n_records),
        "data_file": data_file_name(fmt),
        "format": fmt,
        "csv": {"delimiter": sep, "encoding": csv_encoding(bom and fmt == "csv"), "missing": "",
                "formula_guard": {"prefix": FORMULA_GUARD, "columns": list(guarded) if fmt == "csv" else []}},
        "attributes": attributes,
    }
    if result.has_pseudonyms:
        metadata["pseudonym_column"] = result.pseudonym_column
    metadata.update(result.plan.release_json())
    metadata.setdefault("reconstruction", RECONSTRUCTION)
    if result.reidentification is not None:  # public figures; none of the original's where the method forbids it
        reid = result.reidentification
        metadata["reidentification"] = (reid.public() if get_method(result.plan.method).public_report else reid).to_json()
    from ppdp_desktop.core.report.groups import for_anonymization  # what the release's statistics reveal about a group

    metadata["group_disclosure"] = for_anonymization(result, public=True).to_json()  # streamed: "not_measured"
    return metadata


#: What each secret part of the key file is for, in the words the export page shows. The other parts
#: (the method, its parameters, the column roles) repeat what release.json already says.
KEY_PARTS = {
    "seed": "the random seed (to reproduce and audit this release)",
    "pseudonyms": "the pseudonym map (to find a patient from a released record)",
    "aliases": "the meaning of every alias and code",
    "graded": "the value range behind every graded value",
}


def key_parts(result: Anonymization) -> list[str]:
    """The entries of ``result.key_payload()`` that hold something, without building the payload
    (its pseudonym map takes seconds for a million records; a test keeps the two in step)."""
    parts = ["method", "seed", "settings", *(name for name, value in result.plan.key_json().items() if value)]
    if result.has_pseudonyms:
        parts.append("pseudonyms")
    return parts


def key_description(parts: list[str]) -> str:
    """What a key with ``parts`` (see :func:`key_parts`) holds and why, as one sentence."""
    held = [text for name, text in KEY_PARTS.items() if name in parts]
    if not held:
        return "This key holds the method's parameters only."
    listed = held[0] if len(held) == 1 else ", ".join(held[:-1]) + " and " + held[-1]
    return f"This key holds {listed}."


def data_file_name(fmt: str) -> str:
    from ppdp_desktop.core.data.formats import FORMATS

    if fmt not in FORMATS:
        raise ReleaseError(f"Unknown release format {fmt!r}; choose one of: {', '.join(FORMATS)}.")
    return "release" + FORMATS[fmt]


def write_release(
    result: Anonymization,
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
) -> Path:
    """Write the release package of an in-memory job (and, if asked, its sealed key) atomically; return its path.

    The package: the data in ``fmt``, ``release.json``, ``README.txt`` for the recipient, the report
    (HTML and PDF) and ``SHA256SUMS``; with ``zip_file`` one ``.zip`` instead of a folder. The key
    goes beside the release, never inside it. A failure or a cancel leaves nothing behind. Every step is
    :func:`~ppdp_desktop.core.release.pipeline.publish_release`'s, the job's table its one batch of records.

    The files are verified as written (:func:`verify_written`) before they are published, and release and
    key are put in place as a pair (:mod:`ppdp_desktop.core.release.publish`). ``inputs`` (besides the
    data's own file) are files the destinations must not touch; ``hook`` sees each publication step.
    ``model_target``: the custodian's report also compares models predicting this column trained on the
    original and on the release (never the report inside the package: they are tested on original records).

    A CSV starts with the UTF-8 byte-order mark unless ``bom`` is false: Excel on Windows needs it to
    show accented text ("Besançon") and every reader here skips it (``csv.encoding`` in release.json).

    ``project_file``: the project the job was run from (``ppdp run``, the window with a project open). Its
    SHA-256 and the input file's are sealed into the key (``provenance``); ``release.json`` gets them only as
    digests keyed with this computer's secret (:mod:`.installation`).
    """
    from ppdp_desktop.core.release.pipeline import TableSource, publish_release

    return publish_release(TableSource(result), out_dir, overwrite=overwrite, sep=sep, fmt=fmt, bom=bom,
                           zip_file=zip_file, key_path=key_path, passphrase=passphrase, reports=reports,
                           include_report=include_report, progress=progress, cancel=cancel, inputs=inputs, hook=hook,
                           signer=signer, model_target=model_target, project_file=project_file)


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


"""Writing and reading a release folder: ``release.csv`` + ``release.json`` (docs/release-format.md).

Writes are atomic: everything goes into a hidden temporary folder beside the target, is verified as
written, and is renamed into place with its key only when complete (:mod:`.pipeline`, :mod:`.publish`). A
failure leaves nothing behind, and an existing release is never overwritten unless asked (and then only one of
ours).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

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
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.release.metadata import RECONSTRUCTION, data_file_name, release_metadata  # noqa: F401
from ppdp_desktop.core.release.pipeline import TableSource, publish_release, verify_written  # noqa: F401
from ppdp_desktop.core.release.publish import Hook, check_destination, clean_stale, publish, release_target, temp_beside  # noqa: F401
from ppdp_desktop.core.release.signing import SigningKey

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
    return publish_release(TableSource(result), out_dir, overwrite=overwrite, sep=sep, fmt=fmt, bom=bom,
                           zip_file=zip_file, key_path=key_path, passphrase=passphrase, reports=reports,
                           include_report=include_report, progress=progress, cancel=cancel, inputs=inputs, hook=hook,
                           signer=signer, model_target=model_target, project_file=project_file)

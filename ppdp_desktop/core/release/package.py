"""Writing and reading a release folder: ``release.csv`` + ``release.json`` (docs/release-format.md).

Writes are atomic: everything goes into a hidden temporary folder beside the target, which is
renamed into place only when complete. A failure leaves nothing behind, and an existing release
is never overwritten unless asked.
"""
from __future__ import annotations

import json
import os
import zipfile
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from ppdp_desktop import __version__
from ppdp_desktop.core.release import keyfile
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.data.checksums import CHECKSUMS_FILE, check_checksums, manifest_sha256, write_checksums  # noqa: F401
from ppdp_desktop.core.data.formats import csv_encoding, write_csv, write_csv_atomic  # noqa: F401
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress, subrange
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.release.readme import recipient_readme

from ppdp_desktop.core.data.released import (  # noqa: F401 - part of this module's vocabulary
    DATA_FILE, FORMAT_VERSION, META_FILE, README_FILE, LoadedRelease, read_release,
)

RECONSTRUCTION = (
    "Released values were drawn with the published matrix: matrix[j][i] = Pr[value i is released as value j]. "
    "Unbiased counts of the original values among any selection of records: solve matrix @ f = o, where o "
    "are the observed counts of each released value in the selection (ppdp estimate does this)."
)


def release_metadata(result: Anonymization, sep: str, fmt: str = "csv", *, bom: bool = True) -> dict[str, object]:
    """The ``release.json`` content: everything an analyst needs, nothing secret (no seed, no counts).

    ``csv.encoding`` is ``utf-8-sig`` for a CSV written with the byte-order mark (``bom``), else ``utf-8``.
    """
    schema = result.dataset.schema
    attributes = {
        name: {**attr.to_json(), "released": attr.role.value != "identifier" and name in result.table.columns}
        for name, attr in schema.attributes.items()
    }
    metadata: dict[str, object] = {
        "format_version": FORMAT_VERSION,
        "app": f"PPDP Desktop {__version__}",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "method": result.plan.method,
        "n_records": int(len(result.table)),
        "data_file": data_file_name(fmt),
        "format": fmt,
        "csv": {"delimiter": sep, "encoding": csv_encoding(bom and fmt == "csv"), "missing": ""},
        "attributes": attributes,
    }
    if result.pseudonym_map is not None:
        metadata["pseudonym_column"] = result.pseudonym_column
    metadata.update(result.plan.release_json())
    metadata.setdefault("reconstruction", RECONSTRUCTION)
    if result.reidentification is not None:  # public figures; none of the original's where the method forbids it
        reid = result.reidentification
        metadata["reidentification"] = (reid.public() if get_method(result.plan.method).public_report else reid).to_json()
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
    if result.pseudonym_map is not None:
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
) -> Path:
    """Write the release package (and, if asked, its sealed key file) atomically; return its path.

    The package: the data in ``fmt``, ``release.json``, ``README.txt`` for the recipient, the report
    (HTML and PDF) and ``SHA256SUMS``; with ``zip_file`` one ``.zip`` instead of a folder. The key
    goes beside the release, never inside it. A failure or a cancel leaves nothing behind.

    A CSV starts with the UTF-8 byte-order mark unless ``bom`` is false: Excel on Windows needs it to
    show accented text ("Besançon") and every reader here skips it (``csv.encoding`` in release.json).
    """
    cancel = cancel or CancelToken()
    out = Path(out_dir)
    if zip_file and out.suffix.lower() != ".zip":
        out = out.with_name(out.name + ".zip")
    check_destination(out, key_path, overwrite)
    if len(sep) != 1 or sep in "\"\r\n":
        raise ReleaseError(f"The CSV separator must be one character other than a quote or newline; got {sep!r}.")
    if key_path is not None and not passphrase:
        raise ReleaseError("A passphrase is needed to seal the key file.")
    parent = out.resolve().parent
    metadata = release_metadata(result, sep, fmt, bom=bom)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=parent))
    tmp_key = tmp_zip = None
    try:
        from ppdp_desktop.core.data.formats import write_table

        progress(0.05, "Writing the data")
        write_table(result.table, tmp / metadata["data_file"], fmt, sep=sep, labels=result.dataset.labels, bom=bom)
        cancel.check()
        (tmp / META_FILE).write_text(json.dumps(metadata, indent=2, allow_nan=False), encoding="utf-8")
        (tmp / README_FILE).write_text(recipient_readme(metadata), encoding="utf-8")
        if include_report:
            _write_report(result, reports, tmp, subrange(progress, 0.3, 0.85), cancel)
        cancel.check()
        progress(0.85, "Checksums")
        manifest = write_checksums(tmp)
        if key_path is not None:
            progress(0.9, "Sealing the key")
            key = Path(key_path)
            tmp_key = key.with_name(f".{key.name}.{os.getpid()}.partial")
            keyfile.seal(result.key_payload(), passphrase, manifest, tmp_key)
        cancel.check()
        if zip_file:
            tmp_zip = out.with_name(f".{out.name}.{os.getpid()}.partial")
            _zip_folder(tmp, tmp_zip)
            _replace_file(tmp_zip, out)
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            _replace_dir(tmp, out)
        if tmp_key is not None:
            try:
                os.replace(tmp_key, key_path)
            except BaseException:
                shutil.rmtree(out, ignore_errors=True) if out.is_dir() else out.unlink(missing_ok=True)
                raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for partial in (tmp_key, tmp_zip):
            if partial is not None:
                partial.unlink(missing_ok=True)
        raise
    progress(1.0, "Exported")
    return out


def _write_report(result: Anonymization, reports: list | None, folder: Path, progress: Progress, cancel: CancelToken) -> None:
    """``report.html`` and ``report.pdf`` from the job's reports (built here if not given)."""
    from ppdp_desktop.core.report.build import build_report
    from ppdp_desktop.core.report.document import ReportContext
    from ppdp_desktop.core.report.files import write_html, write_pdf

    if get_method(result.plan.method).public_report:  # e.g. inside an epsilon-DP release: nothing from the originals
        reports = [build_report(result, subrange(progress, 0.0, 0.5), cancel, public=True)]
    elif reports is None:
        reports = [build_report(result, subrange(progress, 0.0, 0.5), cancel)]
    schema = result.dataset.schema
    context = ReportContext(
        data_label=result.dataset.label,
        n_records=len(result.table),
        columns=[(a.name, a.role.value) for a in schema.attributes.values()],
        sensitive=result.settings.sensitive,
    )
    write_html(reports, context, folder / "report.html", subrange(progress, 0.5, 0.7))
    cancel.check()
    write_pdf(reports, context, folder / "report.pdf", subrange(progress, 0.7, 1.0))


def _zip_folder(folder: Path, target: Path) -> None:
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.iterdir()):
            archive.write(path, path.name)


def _replace_file(tmp: Path, out: Path) -> None:
    os.replace(tmp, out)


def check_destination(out: Path, key_path: str | Path | None, overwrite: bool) -> None:
    """Refuse, before any work, an existing release or key, or a key inside the release folder."""
    if out.exists() and not overwrite:
        raise ReleaseError(f"{out} already exists; choose another --out folder (or pass --overwrite).")
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} exists and is not a folder.")
    if not out.resolve().parent.is_dir():
        raise ReleaseError(f"The folder {out.resolve().parent} does not exist; create it first or choose another --out.")
    if key_path is None:
        return
    key = Path(key_path).resolve()
    if out.resolve() == key or out.resolve() in key.parents:
        raise ReleaseError(
            f"The key file {key_path} would be inside the release folder {out}; the key must be kept apart "
            "from the release: choose a --key path outside it."
        )
    if key.exists() and not overwrite:
        raise ReleaseError(f"The key file {key_path} already exists; choose another --key path (or pass --overwrite).")
    if not key.parent.is_dir():
        raise ReleaseError(f"The folder {key.parent} for the key file does not exist; create it first.")


def _replace_dir(tmp: Path, out: Path) -> None:
    if not out.exists():
        os.replace(tmp, out)
        return
    backup = out.with_name(f".{out.name}.old-{os.getpid()}")
    os.replace(out, backup)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(backup, out)
        raise
    shutil.rmtree(backup, ignore_errors=True)



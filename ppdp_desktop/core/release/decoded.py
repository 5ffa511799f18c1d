"""Writing decoded results (identities, original values) where they cannot do harm.

Each column's header of a decoded file says what its values are (``diagnosis [RANDOMIZED, not the patient's
value]``; :class:`~ppdp_desktop.core.release.lookup_marks.Decoded.headed`): :func:`column_name` gives back the
column's name.

A decoded table is the most sensitive file the app writes: it is created readable by its owner only
(0600), never inside a release folder (a release is meant to be handed on), and never over a sealed key,
the release, or the results file it was decoded from — ``overwrite`` replaces only an ordinary file.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ppdp_desktop.core.data.formats import write_csv
from ppdp_desktop.core.errors import ReleaseError, setting_ref
from ppdp_desktop.core.release.publish import is_our_key, is_our_release, temp_beside

PRIVATE = 0o600
#: what separates a column's name from its mark in a decoded file's header
MARK_SEPARATOR = " ["


def column_name(header: str) -> str:
    """The column's name in a decoded file's ``header`` (``"diagnosis [RANDOMIZED, ...]"`` -> ``"diagnosis"``)."""
    name, separator, mark = str(header).rpartition(MARK_SEPARATOR)
    return name if separator and mark.endswith("]") else str(header)


def check_decoded_destination(out: str | Path, *, overwrite: bool, sources: Iterable[str | Path | None] = ()) -> Path:
    """Refuse ``out`` (by name, saying what to do) if it is a source, a key, a release or inside one."""
    out = Path(out)
    resolved = out.resolve()
    if out.is_file() and is_our_key(out):
        raise ReleaseError(f"{out} is a sealed key file; it is never replaced by decoded data. Choose another "
                           f"{setting_ref('out')}.", setting="out", value=str(out))
    for folder in [resolved, *resolved.parents]:
        if folder.is_dir() and is_our_release(folder):
            raise ReleaseError(f"{out} would be inside the release folder {folder}; a release is handed on, so the "
                               "decoded table must be written outside it.")
    for source in (Path(s) for s in sources if s):
        if resolved == source.resolve():
            raise ReleaseError(f"{out} is the file {source.name} this lookup reads; write the decoded table to "
                               "another file.")
    if out.exists() or out.is_symlink():
        if out.is_symlink() or not out.is_file():
            raise ReleaseError(f"{out} exists and is not an ordinary file; choose another {setting_ref('out')}.",
                               setting="out", value=str(out))
        if not overwrite:
            raise ReleaseError(f"{out} already exists; choose another {setting_ref('out')} or allow replacing it "
                               f"({setting_ref('overwrite')}).", setting="out", value=str(out))
    if not resolved.parent.is_dir():
        raise ReleaseError(f"The folder {resolved.parent} does not exist; create it first.")
    return out


def write_decoded(table: pd.DataFrame, out: str | Path, *, overwrite: bool,
                  sources: Iterable[str | Path | None] = ()) -> None:
    """Write ``table`` as CSV to ``out`` atomically, readable by its owner only (0600)."""
    out = check_decoded_destination(out, overwrite=overwrite, sources=sources)
    tmp = temp_beside(out)
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE))
        write_csv(table, tmp, ",")  # formula-guarded there; the file keeps its 0600 mode when written over
        os.chmod(tmp, PRIVATE)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise

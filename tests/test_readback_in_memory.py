"""The in-memory job reads its release back as the streamed job does (issue 34): pyarrow's reader instead of every
cell as a Python string, and each written pseudonym led back to its record under the job's key instead of a hash
table of the ids. What it reads is what a recipient reads; the check is stricter, never looser."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings


def table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    """Records with what a CSV reader can get wrong: formulas, umlauts, empty cells, a quoted line break."""
    rng = np.random.default_rng(seed)
    note = rng.choice(["=SUM(A1)", "+49 30", "-", "Müller, Jörg", "", "'=kept", "zwei\nZeilen", "@home"], n)
    return pd.DataFrame({
        "patient": [f"P{i:04d}" for i in range(n)],
        "note": note,
        "age": rng.integers(20, 90, n),
        "station": rng.choice(["Süd", "", "Nord"], n),
        "diagnosis": rng.choice(["I10", "E11.9", "J45", "C50.9"], n, p=[0.4, 0.3, 0.2, 0.1]),
    })


def result(seed: int = 1):
    settings = AnonymizationSettings("diagnosis", "uniform", ["patient"], [], SensitivitySettings(theta=3.0),
                                     seed=seed)
    return anonymize(Dataset(table(seed=seed)), settings)


@pytest.mark.parametrize("report", [True, False])
def test_the_release_is_read_back_by_pyarrow_cell_for_cell_as_a_recipient_reads_it(tmp_path: Path, monkeypatch,
                                                                                     report: bool) -> None:
    """The read-back holds only the columns the checks read, with a report as without one (the package report reads
    only the estimated column; issue 34), each with the text a recipient's :func:`read_release` gives, and never
    reads the data file cell by cell into Python strings (``formats.read_table``: pandas' reader). Read with
    ``every`` column, the quoted and formula-guarded text comes back as the recipient reads it."""
    from ppdp_desktop.core.data import formats
    from ppdp_desktop.core.release import pipeline
    from ppdp_desktop.core.release.package import write_release
    from ppdp_desktop.core.streaming.readback import columns_checked, read_back

    seen = []
    real = pipeline.TableSource.read_back

    def kept(self, folder):
        release = real(self, folder)
        seen.append((release.table.copy(), release.column_names, release.n_rows, release.distinct_pseudonyms))
        return release

    def refused(*args, **kwargs):
        raise AssertionError("the in-memory read-back read every cell with pandas' reader")

    monkeypatch.setattr(pipeline.TableSource, "read_back", kept)
    monkeypatch.setattr(formats, "read_table", refused)
    out = write_release(result(), tmp_path / "rel", include_report=report)
    monkeypatch.undo()
    recipient = read_release(out)
    held, columns, n, distinct = seen[0]
    assert columns == list(recipient.table.columns)
    checked = columns_checked(recipient.metadata)
    assert list(held.columns) == [c for c in columns if c in checked]
    assert "diagnosis" in held.columns and "note" not in held.columns
    assert n == len(recipient.table) == 300 and distinct is True
    every = read_back(out, None, every=True).table
    assert list(every.columns) == columns
    for name in every.columns:
        assert every[name].astype(str).tolist() == recipient.table[name].tolist(), name
        if name in held.columns:
            assert held[name].astype(str).tolist() == recipient.table[name].tolist(), name
    assert "zwei\nZeilen" in set(every["note"]) and "=SUM(A1)" in set(every["note"])  # quoted, guard undone


@pytest.mark.parametrize("forged", ["foreign", "swapped"])
def test_ids_the_job_did_not_make_are_refused_before_publishing(tmp_path: Path, monkeypatch, forged: str) -> None:
    """A writer that puts distinct ids in the pseudonym column, but not the job's (another key's; or two records'
    ids exchanged for a third's): nothing is published. A hash table of the ids let distinct foreign ids pass."""
    from ppdp_desktop.core.data import formats
    from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey
    from ppdp_desktop.core.release.package import write_release

    job = result()
    column = job.pseudonym_column
    real = formats.write_csv_release

    def forging(frame, path, sep, **kwargs):
        frame = frame.copy()
        if forged == "foreign":  # ids of the right shape from a key that is not the job's
            ids = PseudonymKey.random().ids(0, len(frame)).to_pylist()
        else:  # the first record's id replaced by an id of this key past the release's records
            ids = frame[column].astype(str).tolist()
            ids[0] = job.pseudonym_key.ids(len(frame) + 5, len(frame) + 6).to_pylist()[0]
        assert len(set(ids)) == len(ids)  # still distinct: only the key can tell
        frame[column] = ids
        return real(frame, path, sep, **kwargs)

    monkeypatch.setattr(formats, "write_csv_release", forging)
    with pytest.raises(PrivacyError, match=r"does not pass its own check.*ids that are not this release's"):
        write_release(job, tmp_path / "rel", include_report=False)
    assert list(tmp_path.iterdir()) == []


def test_a_record_longer_than_the_first_block_is_read_back_with_larger_blocks(tmp_path: Path, monkeypatch) -> None:
    """The read-back reads 256 KiB blocks first (pyarrow reads up to 32 ahead: issue 34's memory); a record longer
    than a block ("straddling object") is read again with larger ones, to the same table as one large block gives."""
    from ppdp_desktop.core.release.package import write_release
    from ppdp_desktop.core.streaming import readback

    frame = table()
    frame.loc[7, "diagnosis"] = "x" * 300_000  # a record longer than the first block
    settings = AnonymizationSettings("diagnosis", "uniform", ["patient"], [], SensitivitySettings(theta=3.0), seed=1)
    out = write_release(anonymize(Dataset(frame), settings), tmp_path / "rel", include_report=False)
    tried = []
    real = readback._batches

    def batches(path, sep, names, read, block=readback.READ_BLOCKS[1]):
        tried.append(block)
        return real(path, sep, names, read, block)

    monkeypatch.setattr(readback, "_batches", batches)
    held = readback.read_back(out, None, every=True)
    assert tried[:2] == [1 << 18, 1 << 20]
    monkeypatch.setattr(readback, "READ_BLOCKS", (readback.MAX_ROW_BYTES,))
    whole = readback.read_back(out, None, every=True)
    assert held.n_rows == whole.n_rows == 300 and held.distinct_pseudonyms is True
    pd.testing.assert_frame_equal(held.table, whole.table)

"""A job whose release needs none of the input's records after it (no report, utility figures or key: the command
line's ``--no-report`` job) hands them over: they are let go of before the pseudonyms, the write and the read-back
are made (issue 34's memory), and the release is the same, byte for byte."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings


def records(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "patient": pd.array([f"P{i:05d}" for i in range(n)], dtype="string[pyarrow]"),
        "age": rng.integers(20, 90, n),
        "station": pd.Categorical(rng.choice(["Süd", "Nord", "=West"], n)),
        "diagnosis": rng.choice(["I10", "E11.9", "J45", "C50.9"], n, p=[0.4, 0.3, 0.2, 0.1]),
    })


@pytest.mark.parametrize("method", ["uniform", "finegrain"])
def test_the_input_is_let_go_of_and_the_release_is_the_same(tmp_path: Path, method: str) -> None:
    from ppdp_desktop.core.release.package import write_release

    settings = AnonymizationSettings("diagnosis", method, ["patient"], [], SensitivitySettings(theta=3.0), seed=5)
    kept = anonymize(Dataset(records()), settings)
    handed = Dataset(records())
    types = handed.frame.dtypes
    result = anonymize(handed, settings, keep_input=False)
    for frame in (handed.frame, result.dataset.frame):  # the caller's records too: emptied, columns and types kept
        assert len(frame) == 0 and list(frame.columns) == list(records().columns)
        pd.testing.assert_series_equal(frame.dtypes, types)
    assert result.identities is None and result.applied.codes == {} and kept.applied.codes
    assert kept.identities is not None and len(kept.dataset.frame) == 400
    pd.testing.assert_frame_equal(result.table, kept.table)
    assert result.pseudonym_column == kept.pseudonym_column == result.table.columns[0]
    one = write_release(kept, tmp_path / "kept", include_report=False)
    two = write_release(result, tmp_path / "handed", include_report=False)
    assert (one / "release.csv").read_bytes() == (two / "release.csv").read_bytes()

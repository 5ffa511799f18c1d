"""``ppdp estimate`` on a release with sub-tables: each sub-table estimated with its own matrix, then summed."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.methods.perturbation.plan import perturb_codes
from ppdp_desktop.core.release.analysis import estimate_counts
from ppdp_desktop.core.release.package import read_release


def _release(tmp_path, seed=0):
    rng = np.random.default_rng(seed)
    values = ["a", "b", "c", "d", "e"]
    parts = [(["a", "b", "c"], [4000, 2000, 1000], 0.5), (["d", "e"], [1500, 500], 0.4)]
    rows, subtables = [], []
    for sid, (sub_values, counts, p) in enumerate(parts):
        codes = np.repeat(np.arange(len(sub_values)), counts).astype(np.int32)
        retention = np.full(len(sub_values), p)
        released = perturb_codes(codes, retention, rng)
        sex = rng.choice(["F", "M"], len(codes))
        rows.append(pd.DataFrame({"sub": str(sid), "sex": sex, "dx": np.array(sub_values)[released]}))
        subtables.append({"id": sid, "values": sub_values, "retention": p, "n_records": int(sum(counts))})
    table = pd.concat(rows, ignore_index=True)
    folder = tmp_path / "r"
    folder.mkdir()
    table.to_csv(folder / "release.csv", index=False)
    meta = {"format_version": 2, "method": "partition", "n_records": len(table), "data_file": "release.csv",
            "format": "csv", "csv": {"delimiter": ","},
            "sensitive": [{"attribute": "dx", "values": values, "subtable_column": "sub", "subtables": subtables,
                           "matrix_form": "retention"}]}
    (folder / "release.json").write_text(json.dumps(meta))
    return read_release(folder)


def test_subtables_are_estimated_separately_and_summed(tmp_path):
    release = _release(tmp_path)
    table = estimate_counts(release, "dx", {})
    assert table["observed"].sum() == 9000
    truth = np.array([4000, 2000, 1000, 1500, 500])
    np.testing.assert_allclose(table["estimate"].sum(), 9000, rtol=1e-9)
    assert np.all(np.abs(table["estimate"] - truth) < 4 * (table["ci_high"] - table["estimate"]) / 1.96 + 1)
    # Each sub-table's total is preserved exactly (its matrix maps only within its own domain).
    assert table["estimate"][:3].sum() == pytest.approx(7000) and table["estimate"][3:].sum() == pytest.approx(2000)
    female = estimate_counts(release, "dx", {"sex": "F"})
    assert female["observed"].sum() == (release.table["sex"] == "F").sum()

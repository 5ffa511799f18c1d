"""Fail closed for real (issue 16): names the release adds never replace data, NaN never passes a check,
``--overwrite`` never destroys an input or a foreign file, release and key are published as a pair, the
package's report holds nothing the release does not support, and user errors are never "internal"."""
from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.data.schema import free_name
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

PASSPHRASE = "correct horse battery staple 16"


def table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "patient": [f"P{i:04d}" for i in range(n)],
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(20, 90, n),
        "diagnosis": rng.choice(["flu", "asthma", "gout", "cancer", "stroke", "angina"], n,
                                p=[0.4, 0.25, 0.15, 0.1, 0.06, 0.04]),
    })


# --- 1. names the release adds ---------------------------------------------------------------------


def test_free_name() -> None:
    assert free_name("pseudonym", ["a", "b"]) == "pseudonym"
    assert free_name("pseudonym", ["Pseudonym", "pseudonym_2"]) == "pseudonym_3"


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition", "personalized"])
def test_data_columns_named_like_added_columns_survive(tmp_path: Path, method: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    frame = table()
    frame["subtable"] = frame["diagnosis"]  # a data column with the name partition's ids prefer
    frame["pseudonym"] = "kept"  # and one with the pseudonym column's name
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out, key = tmp_path / "rel", tmp_path / "rel.key"
    extra = ["--rho1", "0.1", "--rho2", "0.5"] if method != "personalized" else ["--key", str(key)]
    code = main(["anonymize", str(data), "--out", str(out), "--method", method, "--sensitive", "subtable",
                 "--identifier", "patient", "--no-report", "--seed", "3", *extra])
    assert code == 0, capsys.readouterr().err
    released = pd.read_csv(out / "release.csv", dtype=str, encoding="utf-8-sig", keep_default_na=False)
    assert (released["pseudonym"] == "kept").all()  # the data column is untouched
    assert set(released["diagnosis"]) == set(frame["diagnosis"])  # not overwritten by sub-table ids
    assert main(["verify", str(out)]) == 0, capsys.readouterr().err


def test_a_method_column_that_would_replace_data_is_refused() -> None:
    from ppdp_desktop.core.methods.partition.method import PartitionPlan

    frame = table()
    dataset = Dataset(frame)
    settings = AnonymizationSettings("diagnosis", "partition", [], [], SensitivitySettings(rho1=0.1, rho2=0.5))
    original = PartitionPlan.apply

    def apply_into_sex(self, rows, rng):  # a faulty plug-in writing into a column it does not protect
        applied = original(self, rows, rng)
        applied.columns["sex"] = applied.columns.pop(self.subtable_column)
        return applied

    PartitionPlan.apply = apply_into_sex
    try:
        with pytest.raises(PrivacyError, match=r"would write over the data column 'sex'"):
            anonymize(dataset, settings)
    finally:
        PartitionPlan.apply = original


# --- 2. NaN never passes ------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--l", "--rho1", "--theta", "--threshold", "--suppression", "--epsilon"])
@pytest.mark.parametrize("word", ["nan", "inf", "-inf"])
def test_every_number_flag_refuses_nan_and_inf_by_name(tmp_path: Path, capsys, flag: str, word: str) -> None:
    data = tmp_path / "d.csv"
    table().to_csv(data, index=False)
    with pytest.raises(SystemExit) as exit_:
        main(["anonymize", str(data), "--out", str(tmp_path / "o"), "--sensitive", "diagnosis", f"{flag}={word}"])
    code, err = exit_.value.code, capsys.readouterr().err
    assert code == 2 and f"argument {flag}:" in err and "finite" in err
    assert not (tmp_path / "o").exists()


def test_the_rr_check_fails_on_nan() -> None:
    dataset = Dataset(table())
    settings = AnonymizationSettings("diagnosis", "rr", [], ["sex"], SensitivitySettings(),
                                     options=RRSettings(l=3.0))
    result = anonymize(dataset, settings)
    plan = result.plan
    plan.parameters = dataclasses.replace(plan.parameters, l=math.nan)
    with pytest.raises(PrivacyError):
        plan.verify()

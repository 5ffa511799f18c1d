"""Releases publish perturbation matrices by their parameters (format 2, issue 18): no m x m array in
release.json, format-1 releases (with their dense matrices) still read and verified, any tampering with the
parameters refused, and every figure read from the release equal to the one the job computed."""
from __future__ import annotations

import json

import numpy as np
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.checksums import CHECKSUMS_FILE, write_checksums
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.privacy.structured import RetentionMatrix
from ppdp_desktop.core.release.analysis import estimate_counts, verify_release
from ppdp_desktop.core.release.package import read_release

PAIR = ["--rho1", "0.05", "--rho2", "0.3"]


@pytest.fixture(scope="module")
def releases(tmp_path_factory):
    """One release per perturbation method of the demo data (no report: the files are what is tested)."""
    folder = tmp_path_factory.mktemp("structured")
    out = {}
    for method in ("uniform", "finegrain", "partition"):
        target = folder / method
        assert main(["anonymize", str(resource_path(DEMO_DATA)), "--out", str(target), "--method", method,
                     "--sensitive", "diagnosis", *PAIR, "--seed", "3", "--no-report", "--quiet"]) == 0
        out[method] = target
    return out


def _copy(source, target):
    import shutil

    shutil.copytree(source, target)
    return target


def _rewrite(folder, change) -> None:
    meta = json.loads((folder / "release.json").read_text())
    change(meta)
    (folder / "release.json").write_text(json.dumps(meta))
    (folder / CHECKSUMS_FILE).unlink()
    write_checksums(folder)


def _as_format_1(meta) -> None:
    """What the previous version wrote: format 1, each matrix as a dense array beside its retention."""
    meta["format_version"] = 1
    for entry in meta["sensitive"]:
        entry.pop("matrix_form"), entry.pop("matrix_formula")
        if entry.get("subtables"):
            for sub in entry["subtables"]:
                sub["matrix"] = RetentionMatrix(np.full(len(sub["values"]), sub["retention"])).to_dense().tolist()
        else:
            entry["matrix"] = RetentionMatrix(np.array(entry["retention"])).to_dense().tolist()


def _dense_arrays(value) -> list:
    """Every ``matrix`` key and every list of lists in a JSON value."""
    if isinstance(value, dict):
        return [k for k in value if k == "matrix"] + [x for v in value.values() for x in _dense_arrays(v)]
    if isinstance(value, list):
        return (["list of lists"] if any(isinstance(v, list) for v in value) else []) + \
            [x for v in value for x in _dense_arrays(v)]
    return []


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition"])
def test_format_2_publishes_parameters_only(releases, method):
    meta = json.loads((releases[method] / "release.json").read_text())
    entry = meta["sensitive"][0]
    assert meta["format_version"] == 2 and entry["matrix_form"] == "retention" and "P[y][x]" in entry["matrix_formula"]
    assert not _dense_arrays(meta)  # no matrix key, no list of lists anywhere
    if method == "partition":
        assert all(isinstance(sub["retention"], float) and "matrix" not in sub for sub in entry["subtables"])
    else:
        assert len(entry["retention"]) == len(entry["values"])
    readme = (releases[method] / "README.txt").read_text()
    formula = "P_s[j][i] = p_s [j = i] + (1 - p_s) / m_s" if method == "partition" else "P[j][i] = p_i [j = i] + (1 - p_i) / m"
    assert formula in readme


@pytest.mark.parametrize("method", ["uniform", "finegrain", "partition"])
def test_a_format_1_release_is_still_read_verified_and_estimated_alike(releases, method, tmp_path):
    old = _copy(releases[method], tmp_path / "old")
    _rewrite(old, _as_format_1)
    with read_release(releases[method]) as new_release, read_release(old) as old_release:
        verify_release(old_release)
        new = estimate_counts(new_release, "diagnosis", {})
        former = estimate_counts(old_release, "diagnosis", {})
    assert np.allclose(new["estimate"], former["estimate"]) and np.allclose(new["ci_high"], former["ci_high"])
    assert main(["verify", str(old)]) == 0


def test_a_format_1_matrix_that_is_not_its_retention_is_refused(releases, tmp_path, capsys):
    old = _copy(releases["uniform"], tmp_path / "old")

    def widen(meta):
        _as_format_1(meta)
        entry = meta["sensitive"][0]
        d = len(entry["values"])
        entry["matrix"] = (0.9 * np.eye(d) + 0.1 / d).tolist()  # keeps far more than its published retention

    _rewrite(old, widen)
    capsys.readouterr()
    assert main(["verify", str(old)]) == 1
    assert "not 'keep with the published retention" in capsys.readouterr().err


@pytest.mark.parametrize("method, change, message", [
    ("uniform", lambda e: e.update(retention=[min(1.0, p * 3) for p in e["retention"]]), "amplifies"),
    ("uniform", lambda e: e["retention"].__setitem__(0, e["retention"][0] * 0.5), "one retention"),
    ("finegrain", lambda e: e["retention"].__setitem__(0, 1.0), "amplifies"),
    ("finegrain", lambda e: e.update(retention=e["retention"][:-1]), "one probability per value"),
    ("finegrain", lambda e: e.update(matrix_form="dense"), "matrix form"),
    ("partition", lambda e: e["subtables"][0].update(retention=0.95), "amplifies"),
    ("partition", lambda e: e["subtables"][0].update(retention=1.5), "not a probability"),
    ("partition", lambda e: e.pop("matrix_form"), "matrix form"),
])
def test_tampered_parameters_are_refused(releases, tmp_path, capsys, method, change, message):
    forged = _copy(releases[method], tmp_path / "forged")
    _rewrite(forged, lambda meta: change(meta["sensitive"][0]))
    capsys.readouterr()
    assert main(["verify", str(forged)]) == 1
    assert message in capsys.readouterr().err


def test_release_json_of_a_large_domain_stays_small(tmp_path):
    """A 3,000-value column: release.json grows by tens of bytes a value, not by m^2 numbers."""
    import pandas as pd

    rng = np.random.default_rng(1)
    m, n = 3000, 30_000
    codes = np.concatenate([np.arange(m), rng.integers(0, m // 10, n - m)])
    data = tmp_path / "codes.csv"
    pd.DataFrame({"sex": rng.choice(["F", "M"], n), "code": [f"C{c:05d}" for c in codes]}).to_csv(data, index=False)
    for method in ("uniform", "partition"):
        out = tmp_path / method
        assert main(["anonymize", str(data), "--out", str(out), "--method", method, "--sensitive", "code",
                     "--rho1", "0.1", "--rho2", "0.5", "--no-report", "--quiet"]) == 0
        size = (out / "release.json").stat().st_size
        assert size < 120 * m, (method, size)  # a dense matrix alone would be ~9M numbers


def test_ppdp_report_rebuilds_a_partitioned_release_from_its_blocks(releases, tmp_path):
    """The report of a written partition release (it failed on the missing dense matrix before): estimates equal
    ppdp estimate's, a value held by more than rho1 of the records is not called protected."""
    import pandas as pd

    out = tmp_path / "r.html"
    assert main(["report", str(resource_path(DEMO_DATA)), str(releases["partition"]), "--out", str(out)]) == 0
    table = pd.read_csv(tmp_path / "r-values.csv", encoding="utf-8-sig", keep_default_na=False)
    with read_release(releases["partition"]) as release:
        estimates = estimate_counts(release, "diagnosis", {})
    assert list(table["Value"]) == [str(v) for v in estimates["value"]]
    np.testing.assert_allclose(table["Estimated"], estimates["estimate"])
    share = table["Records"] / table["Records"].sum()
    assert (table.loc[share > 0.05, "Status"] == "not covered by its bound: held by more than rho1 of the records").all()
    assert (table.loc[share <= 0.05, "Status"] == "protected (verified)").all()

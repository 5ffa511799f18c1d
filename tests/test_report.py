"""The method report (core, no Qt): per-value arrays, the Monte-Carlo band, figures, comparison rows."""
from __future__ import annotations

import numpy as np
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.errors import Cancelled
from ppdp_desktop.core.evaluation.chart import Bars, Chart
from ppdp_desktop.core.evaluation.figures import figure_png
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.core.report.build import COMPARISON_COLUMNS, MAX_BARS, MethodReport, build_report, comparison_rows
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

IDENTIFIERS = ["patient_id", "name"]


@pytest.fixture(scope="module")
def demo():
    return load_table(resource_path(DEMO_DATA))


@pytest.fixture(scope="module")
def finegrain(demo):
    settings = AnonymizationSettings(
        "diagnosis", method="finegrain", identifiers=IDENTIFIERS, sensitivity=SensitivitySettings(theta=3), seed=7
    )
    return anonymize(demo, settings)


@pytest.fixture(scope="module")
def finegrain_report(finegrain) -> MethodReport:
    return build_report(finegrain)


@pytest.fixture(scope="module")
def personalized_report(demo) -> MethodReport:
    recoding = RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)), graded=["income"])
    settings = AnonymizationSettings("diagnosis", method="personalized", identifiers=IDENTIFIERS, options=recoding, seed=7)
    return build_report(anonymize(demo, settings))


def _save_all(report: MethodReport, folder) -> None:
    for name, figure in report.figures.items():
        assert isinstance(figure, Chart)
        assert figure.marks or figure.message, name
        path = folder / f"{report.method}-{name.replace(':', '').replace(' ', '_')}.png"
        path.write_bytes(figure_png(figure, dpi=50))  # headless: Pillow, no Qt
        assert path.stat().st_size > 1000


def test_perturbation_report_arrays(finegrain, finegrain_report):
    r = finegrain_report
    m, n = finegrain.plan.domain.m, len(finegrain.dataset.frame)
    assert r.method == "finegrain" and r.title == "Fine-grain perturbation" and r.n_records == n
    for array in (r.original, r.reconstructed, r.band_low, r.band_high, r.retention, r.max_posterior, r.rho2):
        assert array is not None and array.shape == (m,)
    assert len(r.values) == m and "(missing)" not in r.values  # the demo diagnosis has no blanks
    assert r.original.sum() == n
    assert r.reconstructed.sum() == pytest.approx(n)  # the inverse estimate preserves the total
    assert np.all(r.band_low <= r.band_high)
    covered = (r.band_low <= r.original) & (r.original <= r.band_high)
    assert covered.mean() >= 0.8
    assert r.record_utility == pytest.approx(finegrain.plan.record_utility)
    assert r.utility is not None and r.utility.workload is not None
    assert r.lines == finegrain.plan.describe()


def test_perturbation_report_guarantee(finegrain_report):
    r = finegrain_report
    assert r.has_guarantee and r.guarantee["verified"] is True
    protected = ~np.isnan(r.rho2)
    assert protected.any()
    assert np.all(r.max_posterior[protected] <= r.rho2[protected] + 1e-9)
    assert r.epsilon_ldp is not None and r.epsilon_ldp > 0
    assert r.epsilon_ldp == pytest.approx(r.guarantee["epsilon_ldp"])
    assert r.downward_breaches == r.guarantee["downward_breaches"]
    lines = r.privacy_lines()
    assert lines[0].startswith("Guarantee verified")
    assert any("epsilon" in line for line in lines)


def test_perturbation_figures(finegrain_report, tmp_path):
    r = finegrain_report
    assert set(r.figures) == {"distribution", "retention", "posterior"}
    _save_all(r, tmp_path)
    bars = r.figures["retention"].series("retention p")
    assert isinstance(bars, Bars)
    assert len(bars.values) == min(len(r.values), MAX_BARS)  # 41 values: the 40 most frequent are shown


def test_band_is_seeded_and_repeatable(finegrain, finegrain_report):
    """The shown estimate is the non-negative MLE, inside its own seeded bootstrap interval."""
    from ppdp_desktop.core.privacy.reconstruction import bootstrap_replicates, estimate_with_interval

    _, released = finegrain.applied.codes["diagnosis"]
    observed = np.bincount(released, minlength=finegrain.plan.domain.m)
    estimate, low, high = estimate_with_interval(observed, finegrain.plan.matrix)
    assert np.array_equal(low, finegrain_report.band_low) and np.array_equal(high, finegrain_report.band_high)
    assert np.array_equal(estimate, finegrain_report.reconstructed) and (estimate >= 0).all()
    assert (low <= estimate).all() and (estimate <= high).all()
    other = bootstrap_replicates(observed, finegrain.plan.matrix, seed=1)
    assert not np.array_equal(other, bootstrap_replicates(observed, finegrain.plan.matrix))


def test_report_builds_and_is_cancellable(finegrain):
    build_report(finegrain)  # its time is benchmarks/bench_report.py's (never a bound in a test)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        build_report(finegrain, cancel=token)


def test_personalized_report(personalized_report, tmp_path):
    r = personalized_report
    assert r.method == "personalized" and r.kind == "none" and not r.has_guarantee
    assert "no formal privacy guarantee" in r.privacy_lines()[0]
    assert r.original is None and r.reconstructed is None and r.epsilon_ldp is None
    assert sum(r.choice_counts.values()) == r.n_records
    assert r.choice_counts["alias1"] == r.n_records  # default choice 2 for every record
    assert set(r.figures) == {"choices", "grades: income"}
    _save_all(r, tmp_path)


def test_comparison_rows(finegrain_report, personalized_report):
    rows = comparison_rows([finegrain_report, personalized_report])
    assert len(rows) == 2
    assert all(set(row) == {key for key, _ in COMPARISON_COLUMNS} for row in rows)
    first, second = rows
    assert first["method"] == "Fine-grain perturbation"
    assert first["record_utility"] == pytest.approx(finegrain_report.record_utility)
    assert first["query_error_1pct"] == pytest.approx(finegrain_report.utility.workload.mean_error[2])
    assert first["epsilon_ldp"] == pytest.approx(finegrain_report.epsilon_ldp)
    assert "rho1, rho2" in first["guarantee"]
    assert second["epsilon_ldp"] is None and second["record_utility"] is None
    assert second["guarantee"].startswith("none")

"""Issue 31, points 9 and 11, in the core: the plain sentence that opens the report's Privacy and Utility panes
(checked against figures computed here), one full stop after a column named "Patienten-Nr.", and a
re-identification chart with more y ticks than 0 and 1."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from clinical_data import clinical_frame

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.sentences import full_stop
from ppdp_desktop.core.demo import demo_settings
from ppdp_desktop.core.evaluation.figures import class_size_figure
from ppdp_desktop.core.evaluation.report_model import percent
from ppdp_desktop.core.evaluation.ticks import labelled_ticks
from ppdp_desktop.core.jobs import run_job
from ppdp_desktop.core.privacy.risk import analyse_risk
from ppdp_desktop.core.progress import CancelToken, no_progress
from ppdp_desktop.core.report.build import build_report
from ppdp_desktop.core.report.changes import UNCHANGED, ColumnChange
from ppdp_desktop.core.report.panes import PLAIN, privacy_plain, utility_plain
from ppdp_desktop.core.report.summary import good_for, released_sentences
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

SENSITIVE = "Hauptdiagnose (ICD-10)"


@pytest.fixture(scope="module")
def clinical():
    return Dataset(clinical_frame(2000))


@pytest.fixture(scope="module")
def finegrain(clinical):
    settings = AnonymizationSettings(SENSITIVE, method="finegrain", identifiers=["Patienten-Nr."],
                                     quasi=["Geschlecht", "PLZ"], sensitivity=SensitivitySettings(theta=3), seed=1)
    return run_job(clinical, [settings], no_progress, CancelToken())


@pytest.fixture(scope="module")
def demo_small(demo_data):
    return Dataset(demo_data.frame.iloc[:4000].reset_index(drop=True))


def _report(dataset, method):
    settings = demo_settings(dataset, method, seed=1)
    return build_report(anonymize(dataset, settings)), settings.sensitive


def test_privacy_pane_says_in_plain_words_how_sure_someone_can_become(finegrain, clinical):
    report = finegrain.reports[0]
    shares = clinical.frame[SENSITIVE].value_counts(normalize=True)  # the theta rule: rho1 = share, rho2 = 3 x share
    text = privacy_plain(report, SENSITIVE)
    assert text.startswith(PLAIN)
    assert (f"someone who was at most {percent(shares.min())} to {percent(shares.max())} (depending on the value) sure "
            f"that a given person has a protected {SENSITIVE} value cannot become more than {percent(3 * shares.min())} "
            f"to {percent(3 * shares.max())} (depending on the value) sure by reading the release") in text
    assert "rho1 and rho2 below" in text and "gamma and epsilon are other measures of the same protection" in text


def test_utility_pane_says_what_share_keeps_its_value_and_how_far_counts_are_off(finegrain):
    report = finegrain.reports[0]
    actual, estimate = report.original.astype(float), np.asarray(report.reconstructed, dtype=float)
    error = float(np.mean(np.abs(actual - estimate)[actual > 0] / actual[actual > 0]))
    text = utility_plain(report, SENSITIVE)
    assert text.startswith(f"{PLAIN}about {percent(report.record_utility)} of the records show their true {SENSITIVE} "
                           f"value, and a value's count estimated from the release is off by {percent(error)} on average")
    assert "aggregate utility (1 when every estimated count is exact" in text and "even below 0" in text


def test_plain_sentences_of_the_other_guarantees(demo_small):
    rr, sensitive = _report(demo_small, "rr")
    assert f"is at most 1/l = {percent(1 / float(rr.guarantee['l']))}" in privacy_plain(rr, sensitive)
    assert "most common value of a group of people is not limited" in privacy_plain(rr, sensitive)
    assert utility_plain(rr, sensitive) == PLAIN + good_for(rr, sensitive)[0]  # what the release is good for, first
    dp, sensitive = _report(demo_small, "dp-microagg")
    assert privacy_plain(dp, sensitive).startswith(f"{PLAIN}epsilon = {float(dp.guarantee['epsilon']):g} limits how much")
    personalized, sensitive = _report(demo_small, "personalized")
    assert privacy_plain(personalized, sensitive).startswith(f"{PLAIN}this method does not promise that a person's "
                                                             f"{sensitive} value stays secret")
    unverified = replace(rr, guarantee={**rr.guarantee, "verified": False})
    assert "do not publish it" in privacy_plain(unverified, sensitive)


def test_a_column_name_ending_in_a_full_stop_ends_its_sentence_once():
    assert full_stop("Identifiers removed: Patienten-Nr.") == "Identifiers removed: Patienten-Nr."
    assert full_stop("Released unchanged: PLZ") == "Released unchanged: PLZ."
    frame = pd.DataFrame({"Geschlecht": ["w", "m", "w", "m"], "Patienten-Nr.": ["P1", "P2", "P3", "P4"]})
    first = analyse_risk(frame, ["Geschlecht", "Patienten-Nr."]).lines()[0]
    assert first.endswith("with their Geschlecht and Patienten-Nr.") and ".." not in first
    released = released_sentences([ColumnChange("PLZ", "quasi-identifier", UNCHANGED),
                                   ColumnChange("Patienten-Nr.", "insensitive", UNCHANGED)], 4)
    assert released[-1] == "Released unchanged: PLZ, Patienten-Nr."


def test_the_reidentification_chart_labels_more_than_0_and_1_on_small_counts():
    figure = class_size_figure({1: 3, 2: 4}, {1: 1, 2: 4, 4: 12})
    assert figure.y.scale == "symlog"
    (low, high), ticks, texts = labelled_ticks(figure, figure.y)
    assert all(low <= t <= high for t in ticks)
    assert [float(t.replace(",", "")) for t in texts] == [0, 1, 2, 5, 10]
    big = class_size_figure(None, {1: 5, 50: 4995})
    assert labelled_ticks(big, big.y)[2] == ["0", "1", "10", "100", "1,000"]


def test_a_rare_value_reads_as_a_number_not_as_below_a_tenth_of_a_percent():
    rng = np.random.default_rng(3)
    values = np.array(["rare"] + list(rng.choice(["A", "B", "C", "D"], 2999)))
    dataset = Dataset(pd.DataFrame({"id": [f"P{i}" for i in range(3000)], "diag": values}))
    settings = AnonymizationSettings("diag", method="uniform", identifiers=["id"],
                                     sensitivity=SensitivitySettings(theta=3), seed=1)
    text = privacy_plain(run_job(dataset, [settings], no_progress, CancelToken()).reports[0], "diag")
    assert "someone who was at most 0.033 % to " in text and "< 0.1 %" not in text  # 1 of 3,000 records

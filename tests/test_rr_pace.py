"""rr's optimizer reports its progress and stops when cancelled (issue 31, point 7: on 5,000 clinical records the
window sat at "Planning — 4 %" and Cancel took over 5 minutes). Liveness only: how soon a cancel lands is measured
by ``benchmarks/bench_rr_cancel.py``."""
from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import Cancelled
from ppdp_desktop.core.methods.rr import pace
from ppdp_desktop.core.methods.rr.parameters import optimal_parameters
from ppdp_desktop.core.methods.rr.risk import contingency
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.core.settings import AnonymizationSettings


def clinical_like(n: int = 5_000, months: int = 150, seed: int = 3) -> pd.DataFrame:
    """Sex, birth month, postcode and an ICD-10 code, skewed as a ward's are: hundreds of evaluations at l = 3."""
    rng = np.random.default_rng(seed)
    icd = np.array(["I21.0", "I50.1", "E11.9", "J44.1", "C34.1", "K35.8", "S72.0", "F32.1", "N39.0", "I63.5"])
    weights = np.linspace(2.0, 0.5, len(icd))
    return pd.DataFrame({
        "sex": rng.choice(["w", "m", "d"], n, p=[0.51, 0.485, 0.005]),
        "birth_month": [f"M{m:04d}" for m in rng.integers(0, months, n)],
        "postcode": [f"{z:05d}" for z in rng.choice([1067, 4109, 8056, 10115, 20095, 80331], n)],
        "icd": rng.choice(icd, n, p=weights / weights.sum()),
    })


def counts_of(frame) -> np.ndarray:
    codes = [frame[c].astype("category").cat.codes.to_numpy() for c in frame.columns]
    return contingency(codes, [int(c.max()) + 1 for c in codes])


@pytest.fixture(scope="module")
def counts() -> np.ndarray:
    return counts_of(clinical_like())


def test_progress_reports_move_forward_through_every_phase_to_the_end(counts):
    reports: list[tuple[float, str]] = []
    parameters = optimal_parameters(counts, 3.0, "both", progress=lambda f, m="": reports.append((f, m)))
    assert parameters.verified_max_risk <= 1 / 3 + 1e-9
    fractions = [f for f, _ in reports]
    assert all(b >= a for a, b in zip(fractions, fractions[1:])), "the fraction went backwards"
    assert fractions[0] < 0.05 and fractions[-1] == 1.0
    assert len(set(fractions)) >= 50, "the fraction hardly moved"  # one report per evaluation of the risk
    words = [m.split(" (")[0] for _, m in reports]
    firsts = [words.index(w) for w in (pace.FIRST_WORDS, pace.SEARCH_WORDS, pace.LAST_WORDS)]
    assert firsts == sorted(firsts), "the phases were reported out of order"
    # where the number of evaluations is known (the bisections), the time left is said
    assert any(m.startswith(pace.FIRST_WORDS) and m.endswith(" left)") for _, m in reports)


def test_cancelling_from_the_progress_callback_stops_the_optimizer(counts):
    token, reports = CancelToken(), []

    def progress(fraction: float, message: str = "") -> None:
        reports.append(fraction)
        token.cancel()  # at the first report

    with pytest.raises(Cancelled):
        optimal_parameters(counts, 3.0, "both", progress=progress, cancel=token)
    assert len(reports) == 1, f"{len(reports)} reports after the cancel: the optimizer went on"


def test_cancelling_from_another_thread_stops_the_optimizer(counts):
    token, started, outcome = CancelToken(), threading.Event(), {}

    def search() -> None:
        try:
            outcome["result"] = optimal_parameters(counts, 3.0, "both", progress=lambda f, m="": started.set(),
                                                   cancel=token)
        except Cancelled as exc:
            outcome["cancelled"] = exc

    thread = threading.Thread(target=search, daemon=True)
    thread.start()
    assert started.wait(30), "the optimizer never reported"
    token.cancel()
    thread.join(10)  # liveness: it ends (bench_rr_cancel.py measures how soon)
    assert not thread.is_alive(), "the optimizer ignored the cancel"
    assert "cancelled" in outcome and "result" not in outcome


def test_the_job_shows_the_optimizer_within_its_planning_stage():
    dataset = Dataset(clinical_like(months=150))
    settings = AnonymizationSettings("icd", "rr", quasi=["sex", "birth_month", "postcode"], options=RRSettings(l=3.0),
                                     seed=1)
    reports: list[tuple[float, str]] = []
    anonymize(dataset, settings, lambda f, m="": reports.append((f, m)))
    fractions = [f for f, _ in reports]
    assert all(b >= a for a, b in zip(fractions, fractions[1:]))
    planning = [f for f, m in reports if m.startswith("Planning: ")]
    assert len(set(planning)) >= 20, "the planning stage did not move"
    # the job's planning part (plan_job's 0.2-0.7 of its first 0.3): the bar moves within it, never past it
    assert 0.06 - 1e-9 <= min(planning) and max(planning) <= 0.21 + 1e-9


def test_cancelling_during_the_reports_group_estimate_stops_it():
    """The report's group section estimates the release's table cell by cell (tens of seconds near rr's limits):
    a cancel there stops the report, never turning into a section that 'could not be estimated'."""
    from ppdp_desktop.core.report.build import build_report

    dataset = Dataset(clinical_like(months=150))
    settings = AnonymizationSettings("icd", "rr", quasi=["sex", "birth_month", "postcode"], options=RRSettings(l=3.0),
                                     seed=2)
    result = anonymize(dataset, settings)
    token, stages = CancelToken(), []

    def progress(fraction: float, message: str = "") -> None:
        stages.append(message)
        if message == "What the release reveals about a group":
            token.cancel()

    with pytest.raises(Cancelled):
        build_report(result, progress, token)
    assert stages[-1] == "What the release reveals about a group", stages[-3:]

"""rr in the window on realistic data (issue 31, point 7): the Run page shows the optimizer's progress and Cancel ends
the planning promptly; a table too large to plan is refused at once, in the window's words.

Waits are liveness checks with generous timeouts, never timings: how soon a cancel lands and how soon the refusal
comes are measured by ``benchmarks/bench_rr_cancel.py``."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("PySide6")

from clinical_data import write_clinical_xlsx  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.methods.rr import method as rr_method  # noqa: E402

ROLES_STEP, SENSITIVITY_STEP, METHOD_STEP, RUN_STEP = 1, 2, 3, 4
QUASI, SENSITIVE = ["Geschlecht", "Geburtsdatum", "PLZ"], "Hauptdiagnose (ICD-10)"
CANCELLED = "Cancelled; nothing was changed."


def slow_ward(path, n: int = 20_000, seed: int = 5):
    """Sex, birth month (900 values), postcode (30) and an ICD-10 code (12): just within rr's limits, a plan of
    minutes on a laptop (hundreds of evaluations of the risk, each a fifth of a second)."""
    rng = np.random.default_rng(seed)
    icd = [f"{c}{i:02d}.{j}" for c, i, j in zip("IEJCKSFNIAMR", range(10, 22), range(12))]
    frame = pd.DataFrame({
        "Patienten-Nr.": [f"P{100000 + i}" for i in range(n)],
        "Geschlecht": rng.choice(["weiblich", "männlich", "divers"], n, p=[0.51, 0.485, 0.005]),
        "Geburtsmonat": [f"{1930 + m // 12}-{m % 12 + 1:02d}" for m in rng.integers(0, 900, n)],
        "PLZ": [f"{z:05d}" for z in rng.integers(1000, 1030, n)],
        SENSITIVE: rng.choice(icd, n),
    })
    frame.to_csv(path, index=False, sep=";")
    return path


def run_rr(window, qtbot, path, quasi: list[str], options=None) -> None:
    """Open the file, tag the roles on step 2, pass step 3, choose rr with l = 3 on step 4 and go to Run (which starts
    it)."""
    window.load_data(path, options)
    qtbot.waitUntil(lambda: window.state.dataset is not None and SENSITIVE in window.state.dataset.frame.columns,
                    timeout=60_000)
    window.go_to(ROLES_STEP)
    roles = window.pages[ROLES_STEP]
    roles.set_role(SENSITIVE, Role.SENSITIVE)
    roles.set_role("Patienten-Nr.", Role.IDENTIFIER)
    for name in quasi:
        roles.set_role(name, Role.QUASI_IDENTIFIER)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    page.choose("rr")
    page.editors["rr"].l.setValue(3.0)
    window.go_to(RUN_STEP)
    assert window.stack.currentIndex() == RUN_STEP


def test_cancel_during_rr_planning_ends_the_run(window, qtbot, tmp_path):
    run_rr(window, qtbot, slow_ward(tmp_path / "station.csv"), ["Geschlecht", "Geburtsmonat", "PLZ"])
    page = window.pages[RUN_STEP]
    shown: list[int] = []
    window.state.worker.progress.connect(lambda fraction, stage, eta: shown.append(page.progress_bar.value()))
    # the optimizer's own stages, with the bar moving under them
    qtbot.waitUntil(lambda: page.stage_label.text().startswith("Planning: "), timeout=60_000)
    qtbot.waitUntil(lambda: len(set(shown)) >= 3, timeout=60_000)
    assert page.cancel_button.isEnabled()
    qtbot.mouseClick(page.cancel_button, Qt.MouseButton.LeftButton)
    assert page.stage_label.text() == "Cancelling…"
    qtbot.waitUntil(lambda: page.stage_label.text() == CANCELLED, timeout=10_000)  # liveness, not a timing
    assert not window.state.worker.is_running() and window.state.outcome is None
    assert page.run_button.isEnabled() and not page.cancel_button.isEnabled()
    assert shown == sorted(shown), "the bar went backwards while planning"


def test_a_table_too_large_for_rr_is_refused_at_once_in_the_windows_words(window, qtbot, tmp_path, monkeypatch):
    def reached(*_args, **_kwargs):
        raise AssertionError("the optimizer ran before the limit was checked")

    monkeypatch.setattr(rr_method, "optimal_parameters", reached)
    data = write_clinical_xlsx(tmp_path / "klinik.xlsx")
    run_rr(window, qtbot, data, QUASI, {"header_row": 2})
    page = window.pages[RUN_STEP]
    qtbot.waitUntil(lambda: page.error_box is not None and page.error_box.isVisible(), timeout=60_000)
    text = page.error_box.text()
    assert text.startswith("Randomized response cannot plan on these columns"), text
    for part in ("Geschlecht (3 values)", "Geburtsdatum (4,562 values)", "PLZ (10 values)",
                 "Hauptdiagnose (ICD-10) (12 values)", "coarsen it in the data file to at most about 1,700",
                 "remove it from the quasi-identifiers (the Quasi-identifier role on step 2; it is then released"):
        assert part in text, text
    assert "--" not in text  # the window names its own controls, never an option of the command line
    assert page.error_label.text() == text and window.state.outcome is None and page.run_button.isEnabled()

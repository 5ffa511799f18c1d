"""Step 3's per-value table says which values their (rho1, rho2) bound covers, by the reports' own rule.

Driven like a person on the demo data (20,000 patients, 41 diagnoses; Hypertension is 26.7 % of them): the
"same requirement for every value" rule with rho1 typed in, a single value's rho1 typed into its cell under the
theta rule, the method changed in step 4. The Status column must call a value "not covered by its bound: held by
more than rho1 of the records" exactly when more than its rho1 of the records hold it (counted here with pandas),
mark it amber with a tooltip that says why, and name it in the page's message; and for each of uniform,
fine-grain and partitioning it must agree, value for value, with the per-value table of the report the release
gets with the same settings (the reports' "protected (verified)" being the window's "covered by its bound").
"""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from ppdp_desktop.gui.sensitivity_model import RHO1, STATUS

NOT_COVERED = "not covered by its bound: held by more than rho1 of the records"
COVERED = "covered by its bound"
NO_CONCERN = "no privacy concern"
SENSITIVE = "diagnosis"


@pytest.fixture
def step3(window, qtbot):
    """The demo loaded and step 3 shown: ``(window, page)``."""
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert window.state.project.sensitive == SENSITIVE
    window.go_to(2)
    page = window.pages[2]
    qtbot.waitUntil(lambda: page.model.rowCount() > 0, timeout=10_000)
    return window, page


def _shares(window, labels: list[str]) -> np.ndarray:
    """Each value's share of the records, counted with pandas from the loaded table (the table's row order)."""
    column = window.state.dataset.frame[SENSITIVE].astype(str)
    return column.value_counts(normalize=True).reindex(labels).to_numpy(dtype=float)


def _column(page, role=Qt.ItemDataRole.DisplayRole) -> list:
    """What the view shows in the Status column, row by row (``role``: the text, tooltip or background)."""
    model = page.table.model()
    return [model.index(row, STATUS).data(role) for row in range(model.rowCount())]


def _type_into(qtbot, spin, text: str) -> None:
    """Click into a spin box, select what it holds and type ``text`` over it, then Enter, as the user would."""
    qtbot.mouseClick(spin, Qt.MouseButton.LeftButton)
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def _click(qtbot, button) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))


def _choose_method(window, qtbot, name: str) -> None:
    """Step 4: click the method's card, then come back to step 3 (which re-reads the project)."""
    window.go_to(3)
    _click(qtbot, window.pages[3].cards[name].choose)
    assert window.state.project.method == name
    window.go_to(2)


def _report_statuses(window, method: str) -> list[str]:
    """The Status column of the report a release with the window's settings gets (the custodian's per-value table,
    built by the app's report code from the release's verified guarantee), in the window's row order."""
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.report.build import build_report
    from ppdp_desktop.core.report.values import value_columns

    result = anonymize(window.state.dataset, window.state.project.settings(method))
    columns = value_columns(build_report(result))
    by_value = dict(zip(columns["Value"], columns["Status"]))
    return [by_value[label] for label in window.pages[2].model.labels]


def test_one_pair_for_every_value_marks_the_common_ones_not_covered(step3, qtbot):
    """"The same requirement for every value" with rho1 = 0.05 typed in: the four diagnoses held by more than 5 %
    of the patients are "not covered by its bound", amber, with a tooltip giving the value's share and its rho1;
    every other value is covered. The page's message names them. Uniform, fine-grain and partitioning (chosen in
    step 4) show the same statuses, and each agrees with its release's report."""
    window, page = step3
    _click(qtbot, page.rule_pair)
    assert page.rule_pair.isChecked()
    _type_into(qtbot, page.rho1, "0.05")
    assert window.state.project.rho1 == pytest.approx(0.05)
    labels = page.model.labels
    above = _shares(window, labels) > 0.05
    assert 1 <= above.sum() < len(labels)  # Hypertension, Type 2 diabetes, Osteoarthritis and Asthma
    for method in ("uniform", "finegrain", "partition"):
        _choose_method(window, qtbot, method)
        shown = _column(page)
        assert shown == [NOT_COVERED if a else COVERED for a in above], method
        backgrounds = _column(page, Qt.ItemDataRole.BackgroundRole)
        assert all((b is not None) == a for b, a in zip(backgrounds, above)), method
        tips = _column(page, Qt.ItemDataRole.ToolTipRole)
        for row in np.flatnonzero(above):
            share = f"{_shares(window, labels)[row]:.2%}"
            assert f"{labels[row]!r} is held by {share} of the records, more than its rho1 of 0.05" in tips[row]
            assert "says nothing about this value" in tips[row]
        message = page.message.text()
        named = [v for v, a in zip(labels, above) if a]
        assert all(repr(v) in message for v in named) and "held by more than their rho1 of the records" in message
        assert message.startswith(f"{len(labels) - len(named)} of {len(labels)} value(s) with a pair are covered")
        report = _report_statuses(window, method)
        assert [NOT_COVERED if s == NOT_COVERED else COVERED if s == "protected (verified)" else s
                for s in report] == shown, method


def test_theta_rule_covers_its_values_and_a_typed_rho1_below_the_share_is_not_covered(step3, qtbot):
    """Under the theta rule (theta = 5 typed in) each value seen in a fraction f < 1/5 of the records gets rho1 = f:
    all covered, Hypertension (26.7 %) has no pair ("no privacy concern"), nothing is marked. Then a person
    double-clicks Type 2 diabetes's rho1 cell and types 0.1, below its 12.9 %: that value alone becomes "not
    covered by its bound", as in the report of a fine-grain release with the same settings."""
    window, page = step3
    _choose_method(window, qtbot, "finegrain")
    _click(qtbot, page.rule_theta)
    _type_into(qtbot, page.theta, "5")
    assert window.state.project.theta == pytest.approx(5.0) and window.state.project.rho1 is None
    labels = page.model.labels
    shares = _shares(window, labels)
    assert _column(page) == [COVERED if f < 1 / 5 else NO_CONCERN for f in shares]
    assert NO_CONCERN in _column(page) and not any(_column(page, Qt.ItemDataRole.BackgroundRole))
    assert "not covered" not in page.message.text()
    # a person edits one value's rho1 in the table
    row = labels.index("Type 2 diabetes")
    view = page.table
    index = view.model().index(row, RHO1)
    view.scrollTo(index)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(index).center())
    editor = QApplication.focusWidget()
    assert editor is not None and editor is not view
    editor.selectAll()
    qtbot.keyClicks(editor, "0.1")
    qtbot.keyClick(editor, Qt.Key.Key_Return)  # the view commits the edit from the event loop
    qtbot.waitUntil(lambda: "Type 2 diabetes" in window.state.project.pairs, timeout=5_000)
    assert window.state.project.pairs["Type 2 diabetes"][0] == pytest.approx(0.1)
    assert shares[row] > 0.1
    expected = [NOT_COVERED if i == row else COVERED if f < 1 / 5 else NO_CONCERN for i, f in enumerate(shares)]
    assert _column(page) == expected
    assert _column(page, Qt.ItemDataRole.BackgroundRole)[row] is not None
    assert "'Type 2 diabetes' is held by more than its rho1 of the records" in page.message.text()
    report = _report_statuses(window, "finegrain")
    assert [NOT_COVERED if s == NOT_COVERED else COVERED if s == "protected (verified)" else s
            for s in report] == expected


def test_a_method_without_pairs_shows_no_status(step3, qtbot):
    """A method whose guarantee is not the (rho1, rho2) bound (randomized response, chosen in step 4) gets no
    status for any value: a dash, with a tooltip saying that the method does not use these pairs."""
    from ppdp_desktop.core.methods import REGISTRY
    from ppdp_desktop.core.methods.perturbation.family import PerturbationFamily

    window, page = step3
    _click(qtbot, page.rule_pair)
    _type_into(qtbot, page.rho1, "0.05")
    other = next(name for name in window.pages[3].cards if not isinstance(REGISTRY[name], PerturbationFamily))
    _choose_method(window, qtbot, other)
    assert set(_column(page)) == {"—"}
    tips = set(_column(page, Qt.ItemDataRole.ToolTipRole))
    assert tips == {f"{REGISTRY[other].title} (the method chosen in step 4) does not use these (rho1, rho2) pairs."}
    _choose_method(window, qtbot, "uniform")
    assert NOT_COVERED in _column(page)

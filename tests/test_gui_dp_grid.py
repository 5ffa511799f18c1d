"""The grid step h of differential privacy's numeric columns in the window, on the demo data: the automatic
step is shown, a typed step gives a release on that grid and goes into the project file (as ``--grid`` does),
bad steps block the step with a message, a mouse wheel changes nothing, and every field explains itself."""
from __future__ import annotations

import json

import numpy as np
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractButton, QAbstractItemView, QAbstractSpinBox, QApplication, QHeaderView, QLineEdit, QWidget

from ppdp_desktop.core.project import Project
from ppdp_desktop.gui.main_window import MainWindow

METHOD_STEP, RUN_STEP = 3, 4


def _dp_page(window, qtbot, columns=("age", "income")):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    page.choose("dp-microagg")
    dp = page.editors["dp-microagg"].parameters
    dp.check("diagnosis", False)
    for column in columns:
        dp.check(column)
    return page, dp


def _type(qtbot, field: QLineEdit, text: str) -> None:
    """Click into the field, select what it holds and type ``text`` over it, as the user would."""
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    field.selectAll()
    qtbot.keyClick(field, Qt.Key.Key_Delete)
    qtbot.keyClicks(field, text)


def test_the_automatic_step_is_shown_and_used(window, qtbot):
    page, dp = _dp_page(window, qtbot)
    # demo: age 0..99 (whole numbers), income 3,000..400,900; M = 2, k = 10, epsilon = 1 (the defaults)
    # b = 2 * 99 / 10 = 19.8 -> 0.1, but at least 1 for whole numbers; b = 2 * 397,900 / 10 = 79,580 -> 100
    assert dp.grid_field("age").text() == "" and dp.grid_field("age").placeholderText() == "1 (automatic)"
    assert dp.grid_field("income").placeholderText() == "100 (automatic)"
    assert "discrete Laplace on a grid of step h" in dp.plan.text()
    assert "age 1 (automatic), income 100 (automatic)" in dp.plan.text()
    assert window.state.project.options["dp-microagg"]["grids"] == {}
    dp.epsilon.setValue(0.1)  # ten times the noise: the automatic step follows
    assert dp.grid_field("income").placeholderText() == "1000 (automatic)"
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    result = window.state.outcome.main
    assert result.plan.release_json()["parameters"]["grids"] == {"age": 1, "income": 1000}
    assert np.all(result.table["income"].to_numpy() % 1000 == 0)


def test_a_typed_step_gives_a_release_on_that_grid_and_a_project_with_it(window, qtbot, tmp_path):
    page, dp = _dp_page(window, qtbot)
    dp.set_domain("age", 0, 120)
    dp.set_domain("income", 0, 500_000)
    _type(qtbot, dp.grid_field("age"), "5")
    _type(qtbot, dp.grid_field("income"), "250")
    options = window.state.project.options["dp-microagg"]
    assert options["grids"] == {"age": 5.0, "income": 250.0}
    assert "age 5 (yours), income 250 (yours)" in dp.plan.text()
    assert page.is_complete() and window.next.isEnabled()
    path = tmp_path / "grid.ppdp.json"
    assert window.save_project(path)
    assert json.loads(path.read_text(encoding="utf-8"))["options"]["dp-microagg"]["grids"] == {"age": 5.0, "income": 250.0}
    assert Project.load(path).settings().options.grids == {"age": 5.0, "income": 250.0}  # what --grid sets
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    result = window.state.outcome.main
    assert result.guarantee["verified"]
    assert result.plan.release_json()["parameters"]["grids"] == {"age": 5, "income": 250}
    age, income = result.table["age"].to_numpy(), result.table["income"].to_numpy()
    assert np.all(age % 5 == 0) and np.all(income % 250 == 0)
    assert len(np.unique(age)) > 3 and len(np.unique(income)) > 3  # on the grid, not collapsed to one value
    # emptied again: back to the automatic step, and out of the settings
    window.go_to(METHOD_STEP)
    _type(qtbot, dp.grid_field("income"), "")
    assert window.state.project.options["dp-microagg"]["grids"] == {"age": 5.0}
    assert dp.grid_field("income").placeholderText() == "1000 (automatic)"


def test_a_project_with_grid_steps_reopens_with_them(window, qtbot, tmp_path):
    path = tmp_path / "grid.ppdp.json"
    _page, dp = _dp_page(window, qtbot, columns=("income",))
    _type(qtbot, dp.grid_field("income"), "20")
    assert window.save_project(path)
    other = MainWindow(QSettings(str(tmp_path / "other.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(other)
    try:
        assert other.open_project(path)
        qtbot.waitUntil(lambda: other.state.dataset is not None, timeout=30_000)
        other.go_to(METHOD_STEP)
        dp = other.pages[METHOD_STEP].editors["dp-microagg"].parameters
        assert dp.grid_field("income").text() == "20" and "income 20 (yours)" in dp.plan.text()
        assert other.pages[METHOD_STEP].is_complete()
    finally:
        other.state.worker.shutdown()
        other.pages[1].risk.shutdown()


def test_bad_steps_block_the_step_with_a_message(window, qtbot):
    page, dp = _dp_page(window, qtbot)
    dp.set_domain("age", 0, 120)
    age = dp.grid_field("age")
    for text in ("0", "-5", "abc"):
        _type(qtbot, age, text)
        assert not page.is_complete() and not window.next.isEnabled()
        assert dp.message.isVisible()
        assert f"The grid step of age must be a number above 0 (e.g. 0.1 or 5), or empty for the automatic step; now '{text}'." \
            in dp.message.text()
        assert "age" not in window.state.project.options["dp-microagg"]["grids"]
    _type(qtbot, age, "0.5")  # age holds whole numbers: kept in the settings (as a bad domain is), but blocking
    assert not page.is_complete() and "'age' holds whole numbers: its grid step must be a whole number" in dp.message.text()
    assert window.state.project.options["dp-microagg"]["grids"] == {"age": 0.5}
    _type(qtbot, age, "200")  # one grid point (0) in 0..120
    assert not page.is_complete() and "fewer than two grid points" in dp.message.text()
    _type(qtbot, age, "10")
    assert page.is_complete() and window.next.isEnabled() and not dp.message.isVisible()
    assert window.state.project.options["dp-microagg"]["grids"] == {"age": 10.0}


def _wheel(widget, steps: int = -3) -> None:
    centre = QPointF(widget.width() / 2, widget.height() / 2)
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_a_wheel_over_the_unfocused_field_changes_nothing(window, qtbot):
    page, dp = _dp_page(window, qtbot)
    _type(qtbot, dp.grid_field("income"), "250")
    window.next.setFocus()
    field = dp.grid_field("age")
    page.scroll.ensureWidgetVisible(field)
    for f in (field, dp.grid_field("income")):
        for steps in (-3, 3):
            _wheel(f, steps)
    assert not field.hasFocus()
    assert (field.text(), dp.grid_field("income").text()) == ("", "250")
    assert window.state.project.options["dp-microagg"]["grids"] == {"income": 250.0}
    assert field.placeholderText() == "1 (automatic)"


def test_the_grid_fields_explain_themselves(window, qtbot):
    _page, dp = _dp_page(window, qtbot)
    for column in ("age", "income"):
        tip = dp.grid_field(column).toolTip()
        assert f"Grid step h of {column}" in tip and "multiples of h" in tip and "discrete Laplace" in tip
    assert "grid step h" in dp.domains.toolTip() and "Noise scale b" in dp.domains.toolTip()
    headers = [dp.domains.horizontalHeaderItem(c).text() for c in range(dp.domains.columnCount())]
    assert headers == ["Numeric column", "lo", "hi", "Noise scale b", "Grid step h"]
    _type(qtbot, dp.grid_field("age"), "5")  # the clear button shows, and says what it does
    untipped = [f"{type(w).__name__} {w.objectName()!r}" for w in dp.findChildren(QWidget)
                if isinstance(w, (QAbstractButton, QLineEdit, QAbstractSpinBox, QAbstractItemView))
                and not isinstance(w, QHeaderView) and w.objectName() != "qt_tableview_cornerbutton"
                and not isinstance(w.parentWidget(), QAbstractSpinBox)
                and w.isVisibleTo(window) and not w.toolTip().strip()]
    assert untipped == []  # test_gui_tooltips walks the default method; this is the dp card with grid steps
    buttons = [b for b in dp.grid_field("age").findChildren(QAbstractButton) if b.isVisibleTo(window)]
    assert buttons and all("automatic grid step" in b.toolTip() for b in buttons)
    qtbot.mouseClick(buttons[0], Qt.MouseButton.LeftButton)
    assert dp.grid_field("age").text() == "" and window.state.project.options["dp-microagg"]["grids"] == {}
    assert "Laplace scale" not in dp.plan.text() and "age 1 (automatic)" in dp.plan.text()

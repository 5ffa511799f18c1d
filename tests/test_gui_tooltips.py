"""Every control of the wizard says what it does: a real window walked through every step on the demo data
(every tab of the report opened, the k-anonymity section switched on), and every enabled, visible
interactive widget must carry a tooltip."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QSlider,
    QTabBar,
    QTabWidget,
    QTextEdit,
    QWidget,
)

from ppdp_desktop.gui.screenshots import drive_demo

INTERACTIVE = (QAbstractButton, QLineEdit, QComboBox, QAbstractSpinBox, QSlider, QAbstractItemView, QTextEdit,
               QPlainTextEdit, QTabBar)


def _excluded(widget: QWidget) -> bool:
    """The only widgets that need no tooltip of their own, and why."""
    parent = widget.parentWidget()
    return (
        isinstance(widget, QHeaderView)  # a table's column titles: the table's own tooltip covers them
        or widget.objectName() == "qt_tableview_cornerbutton"  # Qt's select-all corner of a table
        or (isinstance(widget, QLineEdit) and isinstance(parent, (QComboBox, QAbstractSpinBox)))  # part of them
    )


def _untipped(root: QWidget) -> list[str]:
    missing = []
    for widget in [root, *root.findChildren(QWidget)]:
        if not isinstance(widget, INTERACTIVE) or _excluded(widget):
            continue
        if not widget.isVisibleTo(root.window()) or not widget.isEnabled():
            continue
        if isinstance(widget, QTabBar):  # one tooltip per tab
            missing += [f"tab {widget.tabText(i)!r}" for i in range(widget.count()) if not widget.tabToolTip(i).strip()]
        elif not widget.toolTip().strip():
            text = widget.text() if isinstance(widget, (QAbstractButton, QLineEdit)) else ""
            missing.append(f"{type(widget).__name__} {widget.objectName()!r} {text[:40]!r} in "
                           f"{type(widget.parentWidget()).__name__}")
    return missing


def _every_tab(page: QWidget):
    """Show each tab of each tab widget of ``page`` in turn (widgets on hidden tabs are not visible)."""
    yield
    for tabs in page.findChildren(QTabWidget):
        for index in range(tabs.count()):
            tabs.setCurrentIndex(index)
            QCoreApplication.processEvents()
            yield


def test_every_control_of_every_step_has_a_tooltip(window, qtbot, tmp_path):
    drive_demo(window, None, tmp_path)
    missing: dict[str, list[str]] = {}
    method_step = 3  # walked last: switching k-anonymity on changes the settings, so the run is done again
    for index in [i for i in range(len(window.pages)) if i != method_step] + [method_step]:
        page = window.pages[index]
        window.go_to(index)
        assert window.stack.currentIndex() == index
        if index == method_step:
            page.protection.enabled.setChecked(True)  # k, suppression, hierarchies become editable
        for _ in _every_tab(page):
            QCoreApplication.processEvents()
            for line in _untipped(window):
                missing.setdefault(page.title, [])
                if line not in missing[page.title]:
                    missing[page.title].append(line)
    guide = window.show_guide()
    missing["user guide"] = _untipped(guide)
    missing = {title: lines for title, lines in missing.items() if lines}
    assert not missing, "controls without a tooltip:\n" + "\n".join(
        f"{title}: {line}" for title, lines in missing.items() for line in lines)


def test_the_check_finds_a_control_without_a_tooltip(window):
    """The walk above can fail: a button added without a tooltip is reported."""
    from PySide6.QtWidgets import QPushButton

    button = QPushButton("Untipped", window.pages[0])
    button.show()
    assert any("Untipped" in line for line in _untipped(window))


def test_every_control_of_the_import_options_has_a_tooltip(window, qtbot, tmp_path):
    """Step 1's import options, opened by themselves for a file with a title above its column names."""
    path = tmp_path / "export.csv"
    path.write_text("Export vom 01.03.2024\n\nFall;Gewicht;Ort\n1;70,5;Köln\n2;82;Bonn\n3;90,25;Köln\n", encoding="utf-8")
    window.load_data(path)
    page = window.pages[0]
    qtbot.waitUntil(lambda: page.import_dialog is not None and page.import_dialog.isVisible(), timeout=10_000)
    dialog = page.import_dialog
    qtbot.waitUntil(lambda: dialog.preview_dataset is not None and dialog.kind_table.rowCount() > 0, timeout=10_000)
    assert dialog.delimiter.isVisible() and dialog.header_row.isVisible()
    assert _untipped(dialog) == []
    dialog.reject()

"""A column's kind changed on step 2 loses no taxonomy work (issue 31, point 1), and a second file shows none of the
first file's trees (point 8): driven as a person does, with clicks, keys and the file dialogs answered."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import shared_adult  # noqa: E402
from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMessageBox  # noqa: E402

from ppdp_desktop.core.data.schema import Kind, Role  # noqa: E402
from ppdp_desktop.core.taxonomy.io import to_dict  # noqa: E402
from ppdp_desktop.core.taxonomy.tree import Taxonomy  # noqa: E402
from ppdp_desktop.gui import taxonomy_editor  # noqa: E402
from ppdp_desktop.gui.pages.roles_page import CHANGE_KIND  # noqa: E402
from ppdp_desktop.gui.taxonomy_model import ALIAS1  # noqa: E402

ROLES_STEP, METHOD_STEP = 1, 3
IMPORTED = ("occupation", "native-country", "education")


def adult_subset(tmp_path: Path, rows: int = 800) -> Path:
    """The first ``rows`` records of the shared adult set (';'-separated, as ARX ships it)."""
    lines = shared_adult().read_text(encoding="utf-8").splitlines()[: rows + 1]
    path = tmp_path / "adult.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def load(qtbot, window, path: Path) -> None:
    window.load_data(path)
    qtbot.waitUntil(lambda: window.state.dataset is not None and window.state.project.data_path == str(path)
                    and not window.state.worker.is_running(), timeout=30_000)


def choose(qtbot, combo, text: str) -> None:
    """Pick an entry of a combo box as a person does: open its list with a click, walk to the entry with the arrow
    keys and press Enter (typing its first letter would commit the first match at once: "categorical" and
    "code / free text" both begin with c)."""
    matches = [i for i in range(combo.count()) if combo.itemText(i).lower().startswith(text.lower())]
    assert matches, f"{text!r} is not an entry of the combo box ({[combo.itemText(i) for i in range(combo.count())]})"
    combo.setFocus()
    qtbot.mouseClick(combo, Qt.MouseButton.LeftButton)
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=5000)
    steps = matches[0] - combo.currentIndex()
    for _ in range(abs(steps)):
        qtbot.keyClick(view, Qt.Key.Key_Down if steps > 0 else Qt.Key.Key_Up)
    qtbot.keyClick(view, Qt.Key.Key_Return)


def click_row(qtbot, page, column: str) -> None:
    """Click a column's name in step 2's table (its taxonomy opens on the right)."""
    row = list(page.state.dataset.frame.columns).index(column)
    index = page.table.model().index(row, 0)
    page.table.scrollTo(index)
    qtbot.mouseClick(page.table.viewport(), Qt.MouseButton.LeftButton, pos=page.table.visualRect(index).center())
    assert page.editor_box.title() == f"Taxonomy of {column}"


def kind_combo(page, column: str):
    return page.table.cellWidget(list(page.state.dataset.frame.columns).index(column), 1)


def type_into_cell(qtbot, tree, index, text: str) -> None:
    """Double-click a cell of the tree (a label or an alias), type and press Enter."""
    tree.scrollTo(index)
    where = tree.visualRect(index).center()
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=where)
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=where)
    editor = QApplication.focusWidget()
    assert editor is not tree, "no cell editor opened"
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: tree.state() != QAbstractItemView.State.EditingState)  # Qt commits on its next turn


def import_file(qtbot, editor, monkeypatch, path: Path) -> None:
    """Click Import… and choose ``path`` in the file dialog."""
    monkeypatch.setattr(taxonomy_editor.QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    qtbot.mouseClick(editor.button_for(editor.import_action), Qt.MouseButton.LeftButton)
    assert editor.status_label.text() == f"Imported {path.name}."


def answer_question(qtbot, button: str, seen: list[str], tries: int = 400) -> None:
    """When the next question box shows, note its text and click ``button`` ("Cancel" or its own text)."""
    def look(left: int = tries) -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            if left:
                QTimer.singleShot(25, lambda: look(left - 1))
            return
        seen.append(box.text())
        chosen = next(b for b in box.buttons() if b.text().replace("&", "") == button)
        qtbot.mouseClick(chosen, Qt.MouseButton.LeftButton)

    QTimer.singleShot(0, look)


def edit_adult_trees(qtbot, window, monkeypatch, tmp_path) -> dict[str, dict]:
    """Step 2 on adult: three ARX hierarchies imported, a group renamed, a value dragged, an alias typed."""
    load(qtbot, window, adult_subset(tmp_path))
    window.go_to(ROLES_STEP)
    page = window.pages[ROLES_STEP]
    page.set_role("salary-class", Role.SENSITIVE)
    for column in (*IMPORTED, "age"):
        page.set_role(column, Role.QUASI_IDENTIFIER)
    editor = page.editor
    for column in IMPORTED:
        click_row(qtbot, page, column)
        import_file(qtbot, editor, monkeypatch, shared_adult(f"adult_hierarchy_{column}.csv"))
    type_into_cell(qtbot, editor.tree, editor.model.index_for("Undergraduate"), "Studium ohne Abschluss")
    model = editor.model
    assert model.dropMimeData(model.mimeData([model.index_for("Masters")]), Qt.DropAction.MoveAction, -1, 0,
                              model.index_for("Studium ohne Abschluss"))  # a value dragged onto another group
    type_into_cell(qtbot, editor.tree, model.index_for("Doctorate", ALIAS1), "Dr.")
    assert editor.undo_stack.canUndo()
    return {column: to_dict(window.state.taxonomies[column]) for column in IMPORTED}


def test_changing_another_columns_kind_keeps_every_taxonomy_edit(window, qtbot, monkeypatch, tmp_path):
    before = edit_adult_trees(qtbot, window, monkeypatch, tmp_path)
    page = window.pages[ROLES_STEP]
    choose(qtbot, kind_combo(page, "age"), "categorical")
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["age"].kind is Kind.CATEGORICAL, timeout=30_000)
    after = {column: to_dict(window.state.taxonomies[column]) for column in IMPORTED}
    assert after == before  # the imported hierarchies, the rename, the dragged value and the alias
    education = window.state.taxonomies["education"]
    assert education.find("Masters").parent.label == "Studium ohne Abschluss"
    assert education.find("Doctorate").alias1 == "Dr."
    assert window.state.taxonomies["occupation"].depth == 2 and window.state.taxonomies["native-country"].depth == 2
    assert "'age' is read as categorical now" in page.status.text()
    click_row(qtbot, page, "education")
    assert page.editor.taxonomy() is education and page.editor.problems() == []


def test_the_shown_trees_edit_history_survives_its_own_kind_change(window, qtbot, monkeypatch, tmp_path):
    edit_adult_trees(qtbot, window, monkeypatch, tmp_path)
    page = window.pages[ROLES_STEP]
    education = window.state.taxonomies["education"]
    choose(qtbot, kind_combo(page, "education"), "code")  # the same labels: nothing to ask, nothing renamed
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["education"].kind is Kind.TEXT, timeout=30_000)
    assert window.state.taxonomies["education"] is education
    assert page.editor_box.title() == "Taxonomy of education" and page.editor.taxonomy() is education
    assert page.editor.undo_action.isEnabled()  # Undo takes the alias typed before the change back
    qtbot.mouseClick(page.editor.button_for(page.editor.undo_action), Qt.MouseButton.LeftButton)
    assert not education.find("Doctorate").alias1_is_set
    assert page.editor.problems() == []


def test_a_rename_in_a_reopened_project_survives_another_columns_kind_change(window, qtbot, monkeypatch, tmp_path):
    edit_adult_trees(qtbot, window, monkeypatch, tmp_path)
    project = tmp_path / "adult.ppdp.json"
    assert window.save_project(project)
    assert window.open_project(project)
    qtbot.waitUntil(lambda: window.state.dataset is not None and not window.state.worker.is_running(), timeout=30_000)
    window.go_to(ROLES_STEP)
    page = window.pages[ROLES_STEP]
    click_row(qtbot, page, "occupation")
    type_into_cell(qtbot, page.editor.tree, page.editor.model.index_for("Technical"), "Technik")
    choose(qtbot, kind_combo(page, "age"), "categorical")
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["age"].kind is Kind.CATEGORICAL, timeout=30_000)
    assert "Technik" in window.state.taxonomies["occupation"] and "Technical" not in window.state.taxonomies["occupation"]
    assert "Studium ohne Abschluss" in window.state.taxonomies["education"]  # and what the project had


def test_what_a_kind_change_cannot_keep_is_asked_first_and_cancel_keeps_everything(window, qtbot, tmp_path):
    load(qtbot, window, adult_subset(tmp_path))
    window.go_to(ROLES_STEP)
    page = window.pages[ROLES_STEP]
    page.set_role("occupation", Role.SENSITIVE)
    page.set_role("age", Role.QUASI_IDENTIFIER)
    window.go_to(METHOD_STEP - 1)  # through step 3 (its default rule), as Next does
    window.go_to(METHOD_STEP)
    assert window.stack.currentIndex() == METHOD_STEP
    protection = window.pages[METHOD_STEP].protection
    protection.widths["age"].setFocus()
    qtbot.keyClicks(protection.widths["age"], "5,10,20")
    assert window.state.project.protection["intervals"] == {"age": [5.0, 10.0, 20.0]}
    window.go_to(ROLES_STEP)
    seen: list[str] = []
    answer_question(qtbot, "Cancel", seen)
    choose(qtbot, kind_combo(page, "age"), "categorical")
    qtbot.waitUntil(lambda: "was not changed" in page.status.text(), timeout=30_000)
    assert len(seen) == 1 and "interval widths 5,10,20" in seen[0] and "Cancel leaves 'age' as it is" in seen[0]
    assert window.state.dataset.schema.attributes["age"].kind is Kind.NUMERIC
    assert kind_combo(page, "age").currentData() == "numeric" and kind_combo(page, "age").isEnabled()
    assert window.state.project.protection["intervals"] == {"age": [5.0, 10.0, 20.0]}
    assert "kinds" not in window.state.project.load_options
    # the same change, accepted: the widths go, as the question said
    answer_question(qtbot, CHANGE_KIND, seen)
    choose(qtbot, kind_combo(page, "age"), "categorical")
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["age"].kind is Kind.CATEGORICAL, timeout=30_000)
    assert len(seen) == 2
    assert window.state.project.protection["intervals"] == {}
    assert "not kept: its interval widths 5,10,20" in page.status.text()


def test_a_postcode_tree_follows_its_values_to_numbers_and_back(window, qtbot, monkeypatch, tmp_path):
    path = tmp_path / "zips.csv"
    rows = [f"{['02134', '47602', '02139'][i % 3]},{['flu', 'asthma', 'gout'][i % 3]}" for i in range(60)]
    path.write_text("ZIPCode,diagnosis\n" + "\n".join(rows) + "\n", encoding="utf-8")
    tree = Taxonomy("ZIPCode")
    for group, values in (("Boston", ["02134", "02139"]), ("Indiana", ["47602"])):
        tree.add(tree.root, group)
        for value in values:
            tree.add(group, value)
    tree.set_alias("02139", alias1="Cambridge")
    hierarchy = tmp_path / "zip_taxonomy.json"
    hierarchy.write_text(json.dumps(to_dict(tree)), encoding="utf-8")
    load(qtbot, window, path)
    window.go_to(ROLES_STEP)
    page = window.pages[ROLES_STEP]
    page.set_role("diagnosis", Role.SENSITIVE)
    page.set_role("ZIPCode", Role.QUASI_IDENTIFIER)
    click_row(qtbot, page, "ZIPCode")
    import_file(qtbot, page.editor, monkeypatch, hierarchy)
    choose(qtbot, kind_combo(page, "ZIPCode"), "numeric")  # nothing is lost: no question
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["ZIPCode"].kind is Kind.NUMERIC, timeout=30_000)
    numeric = window.state.taxonomies["ZIPCode"]
    assert numeric.parents() == {"*": None, "Boston": "*", "2134": "Boston", "2139": "Boston", "Indiana": "*",
                                 "47602": "Indiana"}
    assert numeric.find("2139").alias1 == "Cambridge"
    assert "'02134' is now '2134'" in page.status.text()
    choose(qtbot, kind_combo(page, "ZIPCode"), "code")
    qtbot.waitUntil(lambda: window.state.dataset.schema.attributes["ZIPCode"].kind is Kind.TEXT, timeout=30_000)
    assert window.state.taxonomies["ZIPCode"].parents() == tree.parents()  # "02134" again, in its group
    assert window.state.taxonomies["ZIPCode"].find("02139").alias1 == "Cambridge"
    assert page.editor.taxonomy() is window.state.taxonomies["ZIPCode"] and page.editor.problems() == []


def test_a_second_file_shows_none_of_the_first_files_trees(window, qtbot, monkeypatch, tmp_path):
    edit_adult_trees(qtbot, window, monkeypatch, tmp_path)
    page = window.pages[ROLES_STEP]
    assert page.editor.taxonomy() is window.state.taxonomies["education"]
    monkeypatch.setattr(window, "_confirm_discard", lambda name: True)  # yes, open it without saving
    window.state.confirm_discard = window._confirm_discard
    other = tmp_path / "ward.csv"
    other.write_text("ward,condition\n" + "\n".join(f"W{i % 4},{['Flu', 'Gout'][i % 2]}" for i in range(40)) + "\n",
                     encoding="utf-8")
    load(qtbot, window, other)
    window.go_to(ROLES_STEP)
    assert page.editor.taxonomy() is None and page.editor_box.title() == "Taxonomy"
    assert not page.editor.isEnabled() and page.editor.model.rowCount() == 0
    page.set_role("condition", Role.QUASI_IDENTIFIER)
    click_row(qtbot, page, "condition")
    assert sorted(page.editor.taxonomy().leaf_labels()) == ["Flu", "Gout"]  # its own column's tree only

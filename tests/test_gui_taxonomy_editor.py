"""The taxonomy editor: its model (checked by QAbstractItemModelTester), drag and drop, undo/redo,
refused edits, the validation line and import/export, driven offscreen with pytest-qt."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QModelIndex, Qt  # noqa: E402
from PySide6.QtGui import QKeySequence  # noqa: E402
from PySide6.QtTest import QAbstractItemModelTester  # noqa: E402
from PySide6.QtWidgets import QAbstractItemView  # noqa: E402

from ppdp_desktop.core.data.resources import DEMO_TAXONOMY, resource_path  # noqa: E402
from ppdp_desktop.core.errors import TaxonomyError  # noqa: E402
from ppdp_desktop.core.taxonomy.io import load_taxonomy, to_dict  # noqa: E402
from ppdp_desktop.core.taxonomy.tree import Taxonomy  # noqa: E402
from ppdp_desktop.gui.taxonomy_editor import TaxonomyEditor  # noqa: E402
from ppdp_desktop.gui.taxonomy_model import ALIAS1, ALIAS2, LABEL, MIME_TYPE, TaxonomyModel  # noqa: E402

MOVE = Qt.DropAction.MoveAction
FATAL = QAbstractItemModelTester.FailureReportingMode.Fatal


@pytest.fixture
def demo() -> Taxonomy:
    return load_taxonomy(resource_path(DEMO_TAXONOMY), "diagnosis")


@pytest.fixture
def editor(qtbot, demo) -> TaxonomyEditor:
    widget = TaxonomyEditor()
    qtbot.addWidget(widget)
    widget._tester = QAbstractItemModelTester(widget.model, FATAL)  # checks every signal of every edit
    widget.set_taxonomy(demo, demo.leaf_labels())
    return widget


def at(editor: TaxonomyEditor, label: str, column: int = LABEL) -> QModelIndex:
    return editor.model.index_for(label, column)


def test_model_shows_the_demo_taxonomy(demo):
    model = TaxonomyModel(demo)
    tester = QAbstractItemModelTester(model, FATAL)  # noqa: F841 - aborts on any inconsistency
    assert model.rowCount() == 1 and model.columnCount() == 3
    root = model.index(0, 0)
    assert model.data(root) == "Any diagnosis"
    assert model.rowCount(root) == len(demo.root.children)
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(3)] == [
        "Value / group", "Alias 1 (generalized)", "Alias 2 (code)"]
    chapter = model.index(0, 0, root)
    assert model.data(chapter) == "Cardiovascular" and model.parent(chapter) == root
    leaf = model.index(0, 0, chapter)
    assert model.data(leaf) == "Hypertension"
    assert model.data(leaf.siblingAtColumn(ALIAS1)) == "Cardiovascular"  # the default: its group
    assert model.data(leaf.siblingAtColumn(ALIAS2)) == demo.find("Hypertension").alias2
    assert model.data(chapter.siblingAtColumn(ALIAS1)) is None  # groups have no aliases
    assert model.data(leaf.siblingAtColumn(ALIAS1), Qt.ItemDataRole.FontRole).italic()  # default: grey italics
    assert "privacy choice 2" in model.data(leaf.siblingAtColumn(ALIAS1), Qt.ItemDataRole.ToolTipRole)
    assert "privacy choice 3" in model.data(leaf.siblingAtColumn(ALIAS2), Qt.ItemDataRole.ToolTipRole)
    assert model.flags(leaf.siblingAtColumn(ALIAS2)) & Qt.ItemFlag.ItemIsEditable
    assert not model.flags(chapter.siblingAtColumn(ALIAS1)) & Qt.ItemFlag.ItemIsEditable
    assert model.flags(chapter) & Qt.ItemFlag.ItemIsEditable
    assert not model.flags(root) & Qt.ItemFlag.ItemIsDragEnabled and model.flags(leaf) & Qt.ItemFlag.ItemIsDragEnabled
    demo.set_alias("Hypertension", alias1="Heart")
    assert model.data(leaf.siblingAtColumn(ALIAS1)) == "Heart"
    assert model.data(leaf.siblingAtColumn(ALIAS1), Qt.ItemDataRole.FontRole) is None


def test_model_stays_consistent_through_edits(demo):
    model = TaxonomyModel(demo)
    tester = QAbstractItemModelTester(model, FATAL)  # noqa: F841 - aborts on any inconsistency
    respiratory = model.index_for("Respiratory")
    added = model.add_node(respiratory, "Bronchitis", 1)
    assert added.row() == 1 and demo.find("Bronchitis").parent.label == "Respiratory"
    model.add_node(model.index_for("Asthma"), "Allergic asthma")  # a leaf becomes a group
    assert model.data(model.index_for("Asthma", ALIAS1)) is None
    model.rename(model.index_for("Respiratory"), "Lungs")
    assert model.data(model.index_for("COPD", ALIAS1)) == "Lungs"  # default alias 1 follows
    model.move(model.index_for("Hypertension"), model.index_for("Cardiovascular"), 3)  # down in its group
    model.move(model.index_for("Hypertension"), model.index_for("Cardiovascular"), 0)  # and back up
    model.move(model.index_for("Influenza"), model.index_for("Infectious"), 0)
    model.move(model.index_for("Pneumonia"), model.index_for("Sepsis"))  # under a leaf
    model.set_alias(model.index_for("COPD"), ALIAS2, "CODE-7")
    model.delete(model.index_for("Cancer"))
    rows = model.rowCount(model.index_for("Any diagnosis"))
    with pytest.raises(TaxonomyError, match="already used"):
        model.add_node(model.index_for("Any diagnosis"), "COPD")
    with pytest.raises(TaxonomyError, match="root"):
        model.delete(model.index_for("Any diagnosis"))
    assert model.rowCount(model.index_for("Any diagnosis")) == rows
    assert demo.validate() == []
    model.set_taxonomy(Taxonomy.flat("diagnosis", ["a", "b"]))
    assert model.rowCount(model.index(0, 0)) == 2


def test_drag_and_drop_moves_through_the_undo_stack(editor):
    model, before = editor.model, to_dict(editor.taxonomy())
    mime = model.mimeData([at(editor, "Influenza"), at(editor, "Influenza", ALIAS1)])
    assert mime.hasFormat(MIME_TYPE) and mime.text() == "Influenza"
    infectious = at(editor, "Infectious")
    assert model.canDropMimeData(mime, MOVE, 0, 0, infectious)
    assert model.dropMimeData(mime, MOVE, 0, 0, infectious)
    node = editor.taxonomy().find("Influenza")
    assert node.parent.label == "Infectious" and node.row() == 0
    view_model = editor.tree.model()
    assert view_model.data(view_model.index(0, 0, at(editor, "Infectious"))) == "Influenza"
    assert view_model.data(view_model.index(0, ALIAS1, at(editor, "Infectious"))) == "Infectious"
    assert editor.undo_stack.undoText() == "Move 'Influenza' under 'Infectious'"
    # Qt counts the drop row before the dragged row is taken out: row 3 in its own group ends at 2.
    mime = model.mimeData([at(editor, "Hypertension")])
    assert model.dropMimeData(mime, MOVE, 3, 0, at(editor, "Cardiovascular"))
    assert editor.taxonomy().find("Hypertension").row() == 2
    # After a move drop the view asks the model to remove the source rows; the model must not.
    assert not model.removeRows(0, 1, at(editor, "Cardiovascular"))
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    assert to_dict(editor.taxonomy()) == before


def test_dropping_a_group_into_its_own_child_is_refused(editor):
    model, before, count = editor.model, to_dict(editor.taxonomy()), editor.undo_stack.count()
    mime = model.mimeData([at(editor, "Respiratory")])
    assert not model.canDropMimeData(mime, MOVE, -1, 0, at(editor, "Asthma"))
    assert not model.dropMimeData(mime, MOVE, -1, 0, at(editor, "Asthma"))
    assert not model.dropMimeData(mime, MOVE, -1, 0, at(editor, "Respiratory"))
    assert not model.dropMimeData(mime, MOVE, 0, 0, QModelIndex())  # no second root
    assert to_dict(editor.taxonomy()) == before and editor.undo_stack.count() == count
    assert "cycle" in editor.validation_label.text()


def _explicit(editor: TaxonomyEditor) -> None:
    editor.set_alias(at(editor, "Asthma"), 1, "Lung disease")
    editor.set_alias(at(editor, "Asthma"), 2, "CODE-ASTHMA")
    editor.set_alias(at(editor, "COPD"), 2, "CODE-COPD")
    editor.set_alias(at(editor, "Sepsis"), 1, "Respiratory")  # a group's label may be another's alias 1


EDITS = {
    "add": lambda e: e.add_child(at(e, "Respiratory"), "Bronchitis").isValid(),
    "add sibling": lambda e: e.add_sibling(at(e, "Asthma"), "Bronchitis").isValid(),
    "add under a leaf with aliases": lambda e: e.add_child(at(e, "Asthma"), "Allergic asthma").isValid(),
    "rename": lambda e: e.rename(at(e, "Influenza"), "Flu"),
    "rename a group": lambda e: e.rename(at(e, "Respiratory"), "Lungs"),
    "move": lambda e: e.move(at(e, "Asthma"), at(e, "Infectious"), 1),
    "move onto a leaf with aliases": lambda e: e.move(at(e, "Sepsis"), at(e, "COPD")),
    "delete a leaf": lambda e: e.delete(at(e, "COPD")),
    "delete a group": lambda e: e.delete(at(e, "Respiratory")),
    "set alias 1": lambda e: e.set_alias(at(e, "Stroke"), 1, "Brain"),
    "reset alias 2": lambda e: e.set_alias(at(e, "COPD"), 2, None),
    "build from data": lambda e: e.build_from_data(),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_undo_and_redo_restore_the_tree(editor, qtbot, edit):
    _explicit(editor)
    before = to_dict(editor.taxonomy())
    with qtbot.waitSignal(editor.changed, timeout=1000):
        assert EDITS[edit](editor)
    after = to_dict(editor.taxonomy())
    assert after != before
    with qtbot.waitSignal(editor.changed, timeout=1000):
        editor.undo_stack.undo()
    assert to_dict(editor.taxonomy()) == before
    editor.undo_stack.redo()
    assert to_dict(editor.taxonomy()) == after
    editor.undo_stack.undo()
    assert to_dict(editor.taxonomy()) == before
    assert editor.taxonomy().validate(editor.data_values()) == []


def test_undo_restores_a_deleted_subtree_with_its_aliases(editor):
    _explicit(editor)
    before = to_dict(editor.taxonomy())
    assert editor.delete(at(editor, "Respiratory"))
    assert editor.undo_stack.undoText() == "Delete 'Respiratory' and 4 nodes under it"
    editor.undo_stack.undo()
    assert to_dict(editor.taxonomy()) == before
    asthma = editor.taxonomy().find("Asthma")
    assert (asthma.alias1, asthma.alias2) == ("Lung disease", "CODE-ASTHMA")
    assert editor.model.data(at(editor, "Asthma", ALIAS2)) == "CODE-ASTHMA"
    assert editor.tree.isExpanded(at(editor, "Respiratory"))


def test_cell_edits_are_undoable_commands(editor):
    model = editor.model
    assert model.setData(at(editor, "Influenza"), "Flu")
    assert editor.undo_stack.undoText() == "Rename 'Influenza' to 'Flu'"
    assert model.setData(at(editor, "Flu", ALIAS2), "CODE-FLU")
    assert editor.taxonomy().find("Flu").alias2 == "CODE-FLU"
    assert model.setData(at(editor, "Flu", ALIAS2), "")  # an empty cell: back to a random code
    assert not editor.taxonomy().find("Flu").alias2_is_set
    count = editor.undo_stack.count()
    assert model.setData(at(editor, "Flu", ALIAS1), "Respiratory")  # the default again: no command
    assert editor.undo_stack.count() == count
    editor.undo_stack.setIndex(0)
    assert editor.taxonomy().find("Influenza").alias2_is_set is False


def test_undo_and_redo_shortcuts(editor):
    assert QKeySequence("Ctrl+Z") in editor.undo_action.shortcuts()
    assert QKeySequence("Ctrl+Shift+Z") in editor.redo_action.shortcuts()
    assert editor.undo_action.shortcutContext() == Qt.ShortcutContext.WidgetWithChildrenShortcut
    assert editor.undo_action in editor.actions() and not editor.undo_action.isEnabled()
    editor.rename(at(editor, "Stroke"), "Stroke (CVA)")
    assert editor.undo_action.isEnabled() and "Rename 'Stroke'" in editor.undo_action.text()


def test_toolbar_actions_edit_the_current_node(editor, qtbot):
    editor.show()
    editor.tree.setCurrentIndex(at(editor, "Respiratory"))
    editor.add_child_action.trigger()
    assert editor.taxonomy().find("New value").parent.label == "Respiratory"
    assert editor.tree.state() == QAbstractItemView.State.EditingState  # type the label right away
    editor.tree.setCurrentIndex(at(editor, "Asthma"))
    editor.add_sibling_action.trigger()
    assert editor.taxonomy().find("New value 2").row() == 1
    editor.tree.setCurrentIndex(at(editor, "Asthma"))
    editor.delete_action.trigger()
    assert "Asthma" not in editor.taxonomy()
    editor.tree.setCurrentIndex(at(editor, "Any diagnosis"))
    assert not editor.delete_action.isEnabled() and not editor.add_sibling_action.isEnabled()
    editor.undo_action.trigger()
    assert "Asthma" in editor.taxonomy()


@pytest.mark.parametrize("edit, message", [
    (lambda e: e.rename(at(e, "Asthma"), "COPD"), "'COPD' is already used under 'Respiratory'"),
    (lambda e: e.rename(at(e, "Asthma"), ""), "empty"),
    (lambda e: e.model.setData(at(e, "Asthma"), "   "), "empty"),
    (lambda e: e.add_child(at(e, "Cancer"), "Sepsis").isValid(), "'Sepsis' is already used"),
    (lambda e: e.set_alias(at(e, "Asthma"), 2, "COPD"), "alias2 'COPD' of 'Asthma' is already a label"),
    (lambda e: e.model.setData(at(e, "Asthma", ALIAS1), "COPD"), "alias1 'COPD' of 'Asthma' is already"),
    (lambda e: e.delete(at(e, "Any diagnosis")), "root"),
    (lambda e: e.add_sibling(at(e, "Any diagnosis")).isValid(), "the root has none"),
], ids=["duplicate", "empty", "blank cell", "duplicate add", "alias2 is a value", "alias1 is a value",
        "delete root", "root sibling"])
def test_invalid_edits_are_refused_inline(editor, qtbot, edit, message):
    before, count = to_dict(editor.taxonomy()), editor.undo_stack.count()
    with qtbot.assertNotEmitted(editor.changed):
        assert not edit(editor)
    assert message in editor.validation_label.text()
    assert "Not changed" in editor.validation_label.text()
    assert to_dict(editor.taxonomy()) == before and editor.undo_stack.count() == count
    assert editor.rename(at(editor, "Stroke"), "Stroke (CVA)")  # the next edit clears the message
    assert "Not changed" not in editor.validation_label.text()


def test_deleting_a_group_refused_when_it_would_become_a_value_named_as_an_alias(editor):
    editor.set_alias(at(editor, "Sepsis"), 1, "Respiratory")
    for label in ("Asthma", "COPD", "Pneumonia"):
        assert editor.delete(at(editor, label))
    before = to_dict(editor.taxonomy())
    assert not editor.delete(at(editor, "Influenza"))
    assert "cannot delete 'Influenza'" in editor.validation_label.text()
    assert to_dict(editor.taxonomy()) == before


def test_validation_lists_values_without_a_leaf(editor):
    assert "Taxonomy is valid: 41 values" in editor.validation_label.text()
    assert editor.problems() == []
    assert editor.delete(at(editor, "Asthma"))
    text = editor.validation_label.text()
    assert "data values without a leaf (1): 'Asthma'" in text and "#b71c1c" in text
    editor.undo_stack.undo()
    assert "Taxonomy is valid" in editor.validation_label.text()


def test_build_from_data_makes_a_flat_taxonomy(editor, demo):
    editor.set_taxonomy(demo, demo.leaf_labels() + ["Gout"])
    assert "'Gout'" in editor.validation_label.text()
    assert editor.build_from_data()
    flat = editor.taxonomy()
    assert flat.root.label == "Any diagnosis" and flat.depth == 1 and "Gout" in flat
    assert editor.model.rowCount(at(editor, "Any diagnosis")) == 42
    assert "Taxonomy is valid: 42 values" in editor.validation_label.text()
    editor.undo_stack.undo()
    assert editor.taxonomy() is demo


@pytest.mark.parametrize("suffix", ["json", "csv"])
def test_import_export_round_trip(editor, qtbot, tmp_path, suffix):
    _explicit(editor)
    editor.move(at(editor, "Hypertension"), at(editor, "Any diagnosis"))  # uneven depth: ARX pads it
    path = tmp_path / f"diagnosis.{suffix}"
    assert editor.export_to(path)
    other = TaxonomyEditor()
    qtbot.addWidget(other)
    other.set_taxonomy(Taxonomy.flat("diagnosis", ["x"]), editor.data_values())
    with qtbot.waitSignal(other.changed, timeout=1000):
        assert other.import_from(path)
    if suffix == "json":
        assert to_dict(other.taxonomy()) == to_dict(editor.taxonomy())
    else:  # an ARX hierarchy keeps the tree, not the aliases
        assert other.taxonomy().parents() == editor.taxonomy().parents()
        assert "without the aliases" in editor.status_label.text()
    assert "Taxonomy is valid" in other.validation_label.text()
    assert other.undo_stack.undoText() == f"Import diagnosis.{suffix}"
    other.undo_stack.undo()
    assert other.taxonomy().leaf_labels() == ["x"]


def test_import_of_a_bad_file_is_refused_inline(editor, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a;*\nb\n")
    before = to_dict(editor.taxonomy())
    assert not editor.import_from(bad)
    assert "bad.csv" in editor.validation_label.text()
    assert not editor.export_to(tmp_path / "out.xlsx")
    assert "unknown taxonomy file type" in editor.validation_label.text()
    assert to_dict(editor.taxonomy()) == before


def test_editor_without_a_taxonomy(qtbot):
    editor = TaxonomyEditor()
    qtbot.addWidget(editor)
    assert editor.taxonomy() is None and editor.model.rowCount() == 0
    assert "No taxonomy" in editor.validation_label.text()
    assert not editor.add_child().isValid() and not editor.build_from_data()

"""Step 4's hierarchy of one quasi-identifier, as the job will build it (:func:`~ppdp_desktop.core.protection.hierarchies_for`).

A numeric column takes interval widths, cut points or a hierarchy file; any other column its taxonomy from step 2,
a hierarchy file, or else built-in levels, described with an example from its own values (a date's month, year
and decade; a code of digits losing a digit per level; a value kept or suppressed). A hierarchy file is an ARX
hierarchy .csv or our .json, checked against the column's values before it is taken
(:func:`~ppdp_desktop.core.protection.read_hierarchy`); it becomes the column's taxonomy, saved with the project.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QMessageBox, QPushButton, QWidget

from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.protection import builtin_hierarchy, hierarchy_problem, read_hierarchy
from ppdp_desktop.core.settings import ProtectionSettings
from ppdp_desktop.core.taxonomy.kind_change import has_edits
from ppdp_desktop.core.taxonomy.tree import Taxonomy
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.wording import window_name

WIDTHS, CUTS, FILE = "interval widths", "cut points", "hierarchy file"
PLACEHOLDERS = {WIDTHS: "finest first, e.g. 5,10,20", CUTS: "per level, finest first, levels separated by /: 18,40,65/40"}
FILE_FILTER = "Hierarchies (*.csv *.txt *.json);;ARX hierarchy (*.csv *.txt);;JSON taxonomy (*.json)"
IMPORT = "Import hierarchy…"
#: imported hierarchy files by column: (the tree taken, its file name), to say where a tree came from
Imported = dict[str, tuple[Taxonomy, str]]


def describe_builtin(name: str, values: pd.Series, kind: Kind | None) -> str:
    """What the job does with a non-numeric quasi-identifier that has no hierarchy, with one of its values."""
    try:
        hierarchy = builtin_hierarchy(name, values, kind)
    except PPDPError as exc:  # e.g. dates of several formats
        return f"no hierarchy, and its built-in levels cannot be made: {exc.phrase(window_name)}"
    example = " → ".join(hierarchy.chain(hierarchy.example))
    if kind is Kind.DATE:
        return f"no taxonomy: each date is generalized to its month, year and decade, e.g. {example}"
    if hierarchy.height > 1:
        return f"no taxonomy: its codes of digits lose one digit from the right per level, e.g. {example}"
    return f"no taxonomy: each value is either kept or suppressed to *, e.g. {example}"


class HierarchyRow(QWidget):
    """The hierarchy of quasi-identifier ``name``: its mode and numbers (numeric), its description, Import."""

    #: the numbers or the mode changed, or a hierarchy file was taken
    edited = Signal()

    def __init__(self, state: WizardState, name: str, settings: ProtectionSettings, imported: Imported,
                 open_editor: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state, self.name, self.imported = state, name, imported
        dataset = state.dataset
        self.kind = dataset.schema.attributes[name].kind if dataset is not None else None
        self.mode: QComboBox | None = None
        self.edit: QLineEdit | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.linkActivated.connect(open_editor)
        if self.kind is Kind.NUMERIC:
            self._numeric(settings, layout)
        self.import_button = QPushButton(IMPORT)
        self.import_button.setToolTip(f"Use a hierarchy file for {name!r}: an ARX hierarchy .csv (value;level 1;…;*) "
                                      "or a taxonomy .json; it must list every value of the column")
        self.import_button.clicked.connect(self.choose_file)
        layout.addWidget(self.note, 1)
        layout.addWidget(self.import_button)
        self._show()

    def _numeric(self, settings: ProtectionSettings, layout: QHBoxLayout) -> None:
        """Interval widths (5,10,20: bands of 5, then 10, then 20), cut points per level (18,40,65/40) or a file."""
        self.mode = QComboBox()
        self.mode.addItems([WIDTHS, CUTS, FILE])
        self.mode.setToolTip(f"How {self.name!r} is coarsened: into bands of equal width, at cut points you choose, "
                             "or by a hierarchy file")
        self.edit = QLineEdit()
        self.edit.setToolTip("Finest level first. Widths: 5,10,20 (bands of 5, then 10, then 20). Cut points: 18,40,65 "
                             "(levels separated by /). A numeric quasi-identifier needs one of them, or a hierarchy file.")
        tree = self._tree()
        if self.name in settings.cuts:
            self.mode.setCurrentText(CUTS)
            self.edit.setText("/".join(",".join(f"{c:g}" for c in level) for level in settings.cuts[self.name]))
        elif self.name in settings.intervals or tree is None:
            self.edit.setText(",".join(f"{w:g}" for w in settings.intervals.get(self.name, [])))
        else:
            self.mode.setCurrentText(FILE)
        self.mode.currentTextChanged.connect(self._on_mode_changed)
        self.edit.textChanged.connect(lambda _text: self.edited.emit())
        layout.addWidget(self.mode)
        layout.addWidget(self.edit, 1)

    # --- what it says -------------------------------------------------------------------------------
    def _tree(self) -> Taxonomy | None:
        """The column's own tree, if it says more than suppression (a flat tree does not: the job ignores it)."""
        tree = self.state.taxonomies.get(self.name)
        return tree if tree is not None and tree.depth > 1 else None

    def uses_file(self) -> bool:
        return self.mode is not None and self.mode.currentText() == FILE

    def _show(self) -> None:
        numeric = self.mode is not None
        if numeric:
            self.edit.setVisible(not self.uses_file())
            self.edit.setPlaceholderText(PLACEHOLDERS.get(self.mode.currentText(), ""))
        self.note.setVisible(not numeric or self.uses_file())
        self.import_button.setVisible(not numeric or self.uses_file())
        self.note.setText(self._description())

    def _description(self) -> str:
        tree = self._tree()
        if tree is not None:
            taken = self.imported.get(self.name)
            if taken is not None and taken[0] is tree:
                text = f"the hierarchy from {taken[1]} ({tree.depth} levels)"
            elif self.kind is Kind.NUMERIC:
                text = f"its hierarchy ({tree.depth} levels), kept with the project"
            else:
                text = f"its taxonomy from step 2 ({tree.depth} levels)"
        elif self.kind is Kind.NUMERIC:
            return "no hierarchy yet: import one (an ARX hierarchy .csv or a taxonomy .json)"
        else:
            values = self.state.dataset.frame[self.name] if self.state.dataset is not None else pd.Series(dtype=object)
            text = describe_builtin(self.name, values, self.kind)
        if self.kind is Kind.NUMERIC:
            return text
        return f"{text} — <a href='{self.name}'>edit it in step 2</a>"

    def problems(self) -> list[str]:
        """What blocks the run in this row, naming what to change (only when generalization is asked)."""
        name = self.name
        if self.mode is None:
            return []
        if self.uses_file():
            tree = self._tree()
            if tree is None:
                return [f"Import a hierarchy file for {name} ({IMPORT}), or choose interval widths or cut points."]
            problem = hierarchy_problem(tree, self.state.dataset.frame[name]) if self.state.dataset is not None else None
            return [f"The hierarchy of {name} does not fit its values: {problem}"] if problem else []
        text, cuts = self.edit.text().strip(), self.mode.currentText() == CUTS
        if not text:
            return [f"Give interval widths for {name} (e.g. 5,10,20), its cut points (e.g. 18,40,65/40) or a hierarchy file."]
        if cuts and parse_cuts(text) is None:
            return [f"The cut points of {name} must be numbers separated by commas, levels by '/', e.g. 18,40,65/40."]
        if not cuts and parse_widths(text) is None:
            return [f"The widths of {name} must be numbers separated by commas, e.g. 5,10,20."]
        return []

    def widths(self) -> list[float] | None:
        return parse_widths(self.edit.text()) if self.mode is not None and self.mode.currentText() == WIDTHS else None

    def cuts(self) -> list[list[float]] | None:
        return parse_cuts(self.edit.text()) if self.mode is not None and self.mode.currentText() == CUTS else None

    # --- edits --------------------------------------------------------------------------------------
    def _on_mode_changed(self, _text: str) -> None:
        self._show()
        self.edited.emit()

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"Hierarchy of {self.name}", "", FILE_FILTER)
        if path:
            self.take_file(path)

    def take_file(self, path: str | Path) -> bool:
        """Read a hierarchy file for this column; a file that does not fit is refused in a dialog saying why."""
        dataset = self.state.dataset
        if dataset is None:
            return False
        try:
            tree = read_hierarchy(path, self.name, dataset.frame[self.name])
        except PPDPError as exc:
            QMessageBox.warning(self, "This hierarchy does not fit", exc.phrase(window_name))
            return False
        current = self.state.taxonomies.get(self.name)
        if current is not None and has_edits(current) and QMessageBox.question(
                self, "Replace the taxonomy?",
                f"{self.name!r} has a taxonomy of {current.depth} level(s) made in the window. Replace it by "
                f"{Path(path).name}?") != QMessageBox.StandardButton.Yes:
            return False
        self.imported[self.name] = (tree, Path(path).name)
        self.state.set_taxonomy(tree)
        if self.mode is not None:
            self.mode.blockSignals(True)
            self.mode.setCurrentText(FILE)
            self.mode.blockSignals(False)
        self._show()
        self.edited.emit()
        return True


def parse_cuts(text: str) -> list[list[float]] | None:
    try:
        levels = [[float(c) for c in level.split(",") if c.strip()] for level in text.split("/") if level.strip()]
    except ValueError:
        return None
    return levels if levels and all(levels) else None


def parse_widths(text: str) -> list[float] | None:
    try:
        values = [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
    except ValueError:
        return None
    return values if values and all(v > 0 for v in values) else None

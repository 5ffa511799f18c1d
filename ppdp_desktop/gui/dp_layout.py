"""The layout of a differential-privacy release on its parameters card: linked (each row keeps its record's
other columns, and epsilon covers each protected column's values as a multiset) or unlinked (every released
column protected and shuffled on its own, no pseudonyms, and epsilon covers the whole release), what an unlinked
release does with the columns that are not ticked, and what epsilon covers in either case, in words."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QVBoxLayout, QWidget

from ppdp_desktop.core.data.sentences import full_stop

LINKED_SCOPE = ("What epsilon covers: each ticked column's released values taken as a multiset, even against "
                "someone who knows every other record. Not the rows: each row keeps the person's other columns, so a "
                "row that can be singled out by them shows its cluster's value (the release counts how many can).")
UNLINKED_SCOPE = ("What epsilon covers: the whole release, rows included, even against someone who knows every other "
                  "record. Each ticked column is shuffled on its own and no pseudonym is released: a row is not a "
                  "person's record, and relations between columns are lost.")
UNLINKED_OTHERS = ("Unlinked columns publish ticked columns only: {names} {verb} not ticked. Tick {them}, tag {them} as "
                   "identifiers in step 2, or tick \"Leave out the columns that are not ticked\".")
DROP_TEXT = "Leave out the columns that are not ticked"


class LayoutChoice(QWidget):
    """Two check boxes (unlinked; leave out what is not ticked) and the sentence saying what epsilon covers."""

    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        # short, so that the card fits a small window; the sentence below it says what each layout covers
        self.unlinked = QCheckBox("Unlink the columns (epsilon-DP for the whole release)")
        self.unlinked.setToolTip("Unticked (linked): rows keep the other columns, and epsilon covers each ticked "
                                 "column's values as a multiset, not the rows. Ticked (unlinked): every released column "
                                 "is protected and shuffled on its own, with no pseudonyms, so the whole release is "
                                 "epsilon-differentially private; a row is then not a person's record")
        self.drop = QCheckBox(DROP_TEXT)
        self.drop.setToolTip("With unlinked columns, a column that is neither ticked nor an identifier is left out of "
                             "the release (otherwise the job refuses it)")
        self.scope = QLabel()
        self.scope.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.unlinked, self.drop, self.scope):
            layout.addWidget(widget)
        self.unlinked.toggled.connect(self._on_toggled)
        self.drop.toggled.connect(self._on_toggled)

    def show_settings(self, layout: str, unprotected: str) -> None:
        """Show a project's choice (no ``changed`` signal)."""
        for box, on in ((self.unlinked, layout == "unlinked"), (self.drop, unprotected == "drop")):
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)
        self.drop.setEnabled(self.unlinked.isChecked())

    @property
    def layout_value(self) -> str:
        return "unlinked" if self.unlinked.isChecked() else "linked"

    @property
    def unprotected_value(self) -> str:
        return "drop" if self.drop.isChecked() else "refuse"

    def update_scope(self, left_out: list[str]) -> None:
        """Say what epsilon covers, and which columns an unlinked release leaves out."""
        unlinked = self.unlinked.isChecked()
        self.drop.setEnabled(unlinked)
        scope = UNLINKED_SCOPE if unlinked else LINKED_SCOPE
        if unlinked and self.drop.isChecked() and left_out:
            scope += " " + full_stop(f"Left out of the release: {', '.join(left_out)}")
        self.scope.setText(scope)

    def problem(self, left_out: list[str]) -> str | None:
        """What blocks an unlinked release: columns neither ticked nor identifiers, unless they are left out."""
        if not (self.unlinked.isChecked() and left_out and not self.drop.isChecked()):
            return None
        several = len(left_out) > 1
        return UNLINKED_OTHERS.format(names=", ".join(left_out), verb="are" if several else "is",
                                      them="them" if several else "it")

    def _on_toggled(self, _on: bool) -> None:
        self.drop.setEnabled(self.unlinked.isChecked())
        self.changed.emit()

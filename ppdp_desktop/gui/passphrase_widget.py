"""Entering a new passphrase twice, with zxcvbn's rating and feedback (for sealing a key file).

The rule is the core's (:mod:`ppdp_desktop.core.release.passphrase_policy`), the same as the CLI's: a
passphrase rated below ``MIN_SEALING_SCORE`` seals only when the user ticks "Use this weak passphrase
anyway", a checkbox shown only while the passphrase is weak.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QWidget

from ppdp_desktop.core.release.keyfile import MIN_PASSPHRASE
from ppdp_desktop.core.release.passphrase_policy import (
    MIN_SEALING_SCORE,
    SCORE_WORDS,
    PassphraseAssessment,
    assess,
    sealing_problem,
    user_inputs_for,
)
from ppdp_desktop.gui.preload import import_in_background

_COLOURS = ("#c0392b", "#d35400", "#b7950b", "#27ae60", "#1e8449")  # by score 0..4
WEAK_OVERRIDE = "Use this weak passphrase anyway"
_OVERRIDE_HOW = f'tick "{WEAK_OVERRIDE}"'


class PassphraseFields(QWidget):
    """Two password fields ("Passphrase", "Repeat"), zxcvbn's rating and feedback, the override and a message.

    The entry is valid when the passphrase has at least ``MIN_PASSPHRASE`` characters, both fields are
    equal, and it is rated at least ``MIN_SEALING_SCORE`` or the override is ticked. Nothing is stored
    anywhere but in the two fields.

    Signals
    -------
    validity_changed(bool)
        Emitted when the entry becomes valid or stops being valid.
    """

    validity_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        import_in_background("zxcvbn")  # rating the first character would import it on this thread
        self._inputs: tuple[str, ...] = ()
        self._found = assess("")
        self.first = QLineEdit()
        self.second = QLineEdit()
        for edit, hint in ((self.first, f"at least {MIN_PASSPHRASE} characters; four or five uncommon words"),
                           (self.second, "type it again")):
            edit.setEchoMode(QLineEdit.EchoMode.Password)
            edit.setPlaceholderText(hint)
        self.first.textChanged.connect(self._on_first_changed)
        self.second.textChanged.connect(self._update)
        self.first.setAccessibleName("Passphrase")
        self.second.setAccessibleName("Repeat passphrase")
        self.first.setToolTip("Seals the key file. Nobody can recover it: keep it apart from the key file.")
        self.second.setToolTip("The same passphrase again, to rule out a typing mistake")
        self.strength_bar = QProgressBar()
        self.strength_bar.setRange(0, 4)
        self.strength_bar.setTextVisible(False)
        self.strength_bar.setMaximumHeight(8)
        self.strength_bar.setAccessibleName("Passphrase strength")
        self.strength_label = QLabel()
        self.feedback_label = QLabel()  # zxcvbn's warning and suggestions, in words
        self.feedback_label.setWordWrap(True)
        self.weak_check = QCheckBox(WEAK_OVERRIDE)
        self.weak_check.setToolTip(f"Seal the key with a passphrase rated below {SCORE_WORDS[MIN_SEALING_SCORE]}: "
                                   "anyone who gets the key file may guess it.")
        self.weak_check.setVisible(False)
        self.weak_check.toggled.connect(self._update)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #c0392b;")
        strength = QHBoxLayout()
        strength.addWidget(self.strength_bar, 1)
        strength.addWidget(self.strength_label)
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("Passphrase", self.first)
        layout.addRow("Repeat", self.second)
        layout.addRow("Strength", strength)
        # a blank QLabel, not "": a row without a label item gets its wrapped text's sizeHint height (a gap of a
        # line or two under the text) instead of the height it needs at the field's width
        layout.addRow(QLabel(), self.feedback_label)
        layout.addRow(QLabel(), self.weak_check)
        layout.addRow(QLabel(), self.message)
        self._form = layout
        self._valid = False
        self._update()

    def set_job_names(self, *names: str | None) -> None:
        """The job's paths and names (data file, release folder, key file), whose words make a passphrase weak."""
        words = user_inputs_for(*names)
        if words != self._inputs:
            self._inputs = words
            self._on_first_changed()

    def assessment(self) -> PassphraseAssessment:
        """zxcvbn's rating of the passphrase as typed in the first field."""
        return self._found

    def passphrase(self) -> str | None:
        """The passphrase if the entry is valid (see the class), else None."""
        return self.first.text() if self._problem() is None else None

    def is_valid(self) -> bool:
        """Whether :meth:`passphrase` would return a passphrase."""
        return self._valid

    def clear(self) -> None:
        """Empty both fields (after the key is sealed, so the passphrase does not linger)."""
        self.first.clear()
        self.second.clear()

    def _problem(self) -> str | None:
        """What is wrong with the entry (a message), or None when it may seal a key."""
        problem = sealing_problem(self._found, allow_weak=self.weak_check.isChecked(), override=_OVERRIDE_HOW,
                                  with_feedback=False)
        if problem is not None:
            return problem
        second = self.second.text()
        if self.first.text() != second:
            return "The two passphrases differ." if second else "Type the passphrase again in Repeat."
        return None

    def _on_first_changed(self, *_: object) -> None:
        """Rate the new passphrase; an override given to the previous one does not carry over."""
        self._found = assess(self.first.text(), self._inputs)
        self.weak_check.blockSignals(True)
        self.weak_check.setChecked(False)
        self.weak_check.blockSignals(False)
        self._update()

    def _update(self, *_: object) -> None:
        found, typed = self._found, bool(self.first.text())
        self.strength_bar.setValue(found.score if typed else 0)
        self.strength_bar.setStyleSheet(f"QProgressBar::chunk {{ background: {_COLOURS[found.score]}; }}")
        self.strength_label.setText(f"{found.word} ({found.score} of 4)" if typed else "")
        self.feedback_label.setText(found.feedback() if typed else "")
        problem = self._problem()
        self.message.setText(problem if problem and (typed or self.second.text()) else "")
        # an empty row takes no room (its blank label would keep the row's spacing)
        self._form.setRowVisible(self.feedback_label, bool(self.feedback_label.text()))
        self._form.setRowVisible(self.weak_check, typed and not found.too_short and not found.strong_enough)
        self._form.setRowVisible(self.message, bool(self.message.text()))
        valid = problem is None
        if valid != self._valid:
            self._valid = valid
            self.validity_changed.emit(valid)

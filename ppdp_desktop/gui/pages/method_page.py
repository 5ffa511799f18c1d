"""Step 4: pick a method. One card per registered method, explained in plain words; methods added
to the registry appear here without changing the wizard."""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QButtonGroup, QFrame, QLabel, QPushButton, QScrollArea, QVBoxLayout, QWidget

from ppdp_desktop.core.errors import PPDPError, phrase
from ppdp_desktop.core.methods import REGISTRY, get_method
from ppdp_desktop.gui.method_editors import editor_for
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.protection_editor import ProtectionSection
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.wording import window_name
from ppdp_desktop.gui.wrap_button import WrapCheckBox, WrapRadioButton


class MethodCard(QFrame):
    """A method's name, what it protects against and what it does not, its parameters and "compare"."""

    def __init__(self, name: str, group: QButtonGroup, parameters: QWidget | None = None) -> None:
        super().__init__()
        method = REGISTRY[name]
        self.name = name
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.choose = WrapRadioButton(method.title)  # a long title wraps in a narrow window
        font = self.choose.font()
        font.setBold(True)
        self.choose.setFont(font)
        group.addButton(self.choose)
        self.choose.setToolTip(f"Protect the sensitive column with {method.title.lower()} (F1: when to choose it)")
        self.compare = WrapCheckBox("Also run it to compare in the report")
        self.compare.setToolTip("Run this method as well, on the same data, so that the report compares it "
                                "with the one chosen")
        summary = QLabel(method.summary)
        summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.choose)
        layout.addWidget(summary)
        if parameters is not None:
            layout.addWidget(parameters)
        layout.addWidget(self.compare)
        self.choose.toggled.connect(lambda on: self.compare.setEnabled(not on))


class MethodPage(WizardPage):
    title = "Method"
    help_anchor = "method"  # its section of the user guide (F1)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.group = QButtonGroup(self)
        self.editors = {name: editor for name, method in REGISTRY.items() if (editor := editor_for(name, method))}
        self.cards = {name: MethodCard(name, self.group, self.editors.get(name)) for name in REGISTRY}
        body = QWidget()
        column = QVBoxLayout(body)
        intro = QLabel("Choose how the sensitive column is protected. Each method says what it guarantees "
                       "and what it does not.")
        intro.setWordWrap(True)
        column.addWidget(intro)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        column.addWidget(self.notes)
        self.one_pair = QPushButton()
        self.one_pair.setToolTip("Drop the pairs typed into step 3's table for single values, so that every value has "
                                 "the pair of 'The same requirement for every value'")
        self.one_pair.clicked.connect(self._on_one_pair_clicked)
        column.addWidget(self.one_pair, 0, Qt.AlignmentFlag.AlignLeft)
        self.protection = ProtectionSection(state)  # first: it applies in front of every method below
        self.protection.changed.connect(self._on_parameters_changed)
        column.addWidget(self.protection)
        for card in self.cards.values():
            column.addWidget(card)
            card.choose.toggled.connect(self._on_changed)
            card.compare.toggled.connect(self._on_changed)
        column.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(body)
        QVBoxLayout(self).addWidget(self.scroll)
        for editor in self.editors.values():
            editor.changed.connect(self._on_parameters_changed)
        self._loading = False

    def refresh(self) -> None:
        project = self.state.project
        self._loading = True
        if project.method in self.cards:
            self.cards[project.method].choose.setChecked(True)
        for name, card in self.cards.items():
            card.compare.setChecked(name in project.compare and name != project.method)
        for editor in self.editors.values():
            editor.refresh(self.state)
        self.protection.refresh()
        self._loading = False
        self._update_notes()
        self.complete_changed.emit()

    def choose(self, name: str, compare: list[str] = ()) -> None:
        """Select a method (and the ones to compare with), as the user would."""
        self.cards[name].choose.setChecked(True)
        for other, card in self.cards.items():
            card.compare.setChecked(other in compare and other != name)

    def _on_changed(self) -> None:
        if self._loading:
            return
        project = self.state.project
        chosen = [n for n, c in self.cards.items() if c.choose.isChecked()]
        if chosen:
            project.method = chosen[0]
        project.compare = [n for n, c in self.cards.items() if c.compare.isChecked() and n != project.method]
        self.protection.refresh()  # what it allows depends on the method
        self.state.set_outcome(None)
        self._update_notes()
        self.complete_changed.emit()

    def _on_parameters_changed(self) -> None:
        """An editor wrote its method's settings into the project: results are stale, completeness may change."""
        if self._loading:
            return
        self.state.set_outcome(None)
        self._update_notes()
        self.complete_changed.emit()

    def problems(self) -> list[str]:
        """What blocks the chosen method and the compared ones, each naming what to change."""
        project = self.state.project
        return [p for name in (project.method, *project.compare) if name in self.editors
                for p in self.editors[name].problems()] + self.protection.problems()

    def compare_notes(self) -> list[str]:
        """Compared methods that will not run with today's settings, and why (the chosen one still runs)."""
        project, notes = self.state.project, []
        for name in project.compare:
            try:
                why = get_method(name).precheck(project.settings(method=name))
            except PPDPError as exc:
                why = [exc.message]
            notes += [f"{get_method(name).title} will not be run for comparison: {phrase(w, window_name)}" for w in why]
        return notes

    def is_complete(self) -> bool:
        project = self.state.project
        if project.method not in REGISTRY or self.problems():
            return False
        try:
            return not get_method(project.method).precheck(project.settings())
        except PPDPError:
            return False

    def own_pairs(self) -> list[str]:
        """The values with a pair of their own that keep a method needing one pair for every value from running
        (chosen or compared), when step 3's rule is one pair: one click drops them (:meth:`_on_one_pair_clicked`)."""
        project = self.state.project
        if project.rho1 is None or not any(get_method(n).needs_one_pair for n in (project.method, *project.compare)
                                           if n in REGISTRY):
            return []
        common = (project.rho1, project.rho2)
        return [v for v, pair in project.pairs.items() if (float(pair[0]), float(pair[1])) != common]

    def _on_one_pair_clicked(self) -> None:
        self.state.project.pairs.clear()
        self.state.set_outcome(None)
        self._update_notes()
        self.complete_changed.emit()

    def _update_notes(self) -> None:
        """The chosen method's blocking problems in red, compared methods that will be skipped in amber."""
        project = self.state.project
        own = self.own_pairs()
        self.one_pair.setText(f"Use one pair for every value (rho1 = {project.rho1:g}, rho2 = {project.rho2:g}): "
                              f"drop the pair{'s' * (len(own) > 1)} of {len(own):,} value{'s' * (len(own) > 1)}"
                              if own else "")
        self.one_pair.setVisible(bool(own))
        try:
            blocking = get_method(project.method).precheck(project.settings()) if project.method in REGISTRY else []
        except PPDPError as exc:
            blocking = [exc.message]
        self.notes.setText("<br>".join(
            [f"<span style='color:#b71c1c'>{html.escape(phrase(b, window_name), quote=False)}</span>" for b in blocking]
            + [f"<span style='color:#8a4b00'>{html.escape(n, quote=False)}</span>" for n in self.compare_notes()]))

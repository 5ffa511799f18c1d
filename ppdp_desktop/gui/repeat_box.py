"""Step 5's "Repeated releases" box (issue 30): which project of the release ledger this release belongs to, who a
patient is across its releases, the project's custodian secret (opened, or made, with a passphrase), its budget
and, after a refusal, the reason to go past it.

The box only gathers the user's choices (:meth:`RepeatBox.request`); the secret is opened or made in the run's
worker (:meth:`RepeatRequest.settings`: scrypt takes a moment), never on the GUI thread. The passphrase lives only
in its fields and is cleared once the release is exported.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QDoubleSpinBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QWidget

from ppdp_desktop.core.errors import ParameterError, PPDPError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.progress import Progress, no_progress
from ppdp_desktop.core.release.custodian_secret import create_secret, open_secret, secret_exists, secret_path
from ppdp_desktop.core.repeat.appdata import ledger_path
from ppdp_desktop.core.repeat.ledger import Ledger, LedgerRelease
from ppdp_desktop.core.repetition import planned_identity
from ppdp_desktop.core.settings import RepeatSettings
from ppdp_desktop.gui.passphrase_widget import PassphraseFields
from ppdp_desktop.gui.state import WizardState
from ppdp_desktop.gui.wording import STABLE, window_name

TITLE = "Repeated releases"
PROJECT_LABEL = "Project in the ledger"
BUDGET_LABEL = "Budget"
REASON_LABEL = "Reason to go past it"
BUDGET_MAX = 1000.0
FRESH = ("Without the passphrase, this release's random draws are fresh: every patient released before in this "
         "project composes (the epsilons of all their releases add up).")
FIRST_FRESH = ("Without a passphrase, this release's random draws are fresh: in the project's next release, every "
               "patient of this one composes (the epsilons of both releases add up). Type a new passphrase to make the "
               "project's custodian secret, then press Run.")
#: for a method that draws nothing (generalization only), in place of FRESH / FIRST_FRESH
GENERALIZED = ("This method randomizes nothing, so there are no draws to keep or renew: two generalized releases of "
               "the same patients reveal together the intersection of each patient's groups, and the project's next "
               "release flags the records whose combined group is smaller than the group size the releases promise.")
NOT_YET = ("No custodian secret for this project on this computer yet. Type a new passphrase below to make one "
           "(sealed with it, like the key file), or leave it empty.")
KEPT = "This project's custodian secret is kept on this computer; type its passphrase to open it."


@dataclass
class RepeatRequest:
    """What the box asks of the run: the project, the secret's passphrase (None: fresh draws), whether the secret
    is to be made, the budget (None: none) and the reason to go past it."""

    project_id: str
    passphrase: str | None
    make: bool
    budget: float | None
    reason: str | None = None
    from_export: bool = False  # the passphrase is the one typed on the export page
    seed: int | None = None  # a test's or script's fixed seed (WizardState.seed)
    stable_pseudonyms: bool = False

    def settings(self, progress: Progress = no_progress) -> RepeatSettings:
        """The job's repeated-release settings, the project's custodian secret opened or made (in the worker).

        Raises
        ------
        KeyFileError
            A wrong passphrase, or a secret file that is damaged or not this project's.
        """
        keys, notes = None, []
        if self.seed is not None:  # reproducible, as its draws are: the secret derived from the seed, as `ppdp --seed`
            from ppdp_desktop.cli.repeat_args import seeded_secret

            keys = PersistentKeys(seeded_secret(self.seed))
        elif self.passphrase:
            if self.make and not secret_exists(self.project_id):
                progress(0.0, "Making the project's custodian secret")
                secret = create_secret(self.project_id, self.passphrase)
                notes.append(f"Made the custodian secret of project '{self.project_id}' at "
                             f"{secret_path(self.project_id)}, sealed with the passphrase; keep it: an unchanged "
                             "patient gets the same released values in every release made with it, and without it the "
                             "next release counts as independent.")
            else:
                progress(0.0, "Opening the project's custodian secret")
                secret = open_secret(self.project_id, self.passphrase)
            keys = PersistentKeys(secret.key)
        return RepeatSettings(project_id=self.project_id, keys=keys, budget=self.budget, override_reason=self.reason,
                              stable_pseudonyms=self.stable_pseudonyms, notes=notes)


def ledger_history(project_id: str) -> tuple[list[LedgerRelease], str | None]:
    """The project's published releases in this computer's ledger (none while there is no ledger file: it is not
    made just to look), and why the ledger cannot be read if it cannot."""
    if not project_id or not ledger_path().is_file():
        return [], None
    try:
        with Ledger() as ledger:
            return ledger.releases(project_id), None
    except PPDPError as exc:
        return [], exc.phrase(window_name)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


class RepeatBox(QGroupBox):
    """The project's name in the ledger, who a patient is, the custodian secret and its passphrase, the budget.

    Signals
    -------
    changed()
        The user changed the project's name, its budget or its choice of pseudonyms (a result run before no longer
        matches them).
    """

    changed = Signal()

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(TITLE, parent)
        self.state = state
        self._secret = False  # whether the project shown has a custodian secret on this computer
        self._refused = False  # the last run was refused for the budget: the reason field is shown
        self._filling = False
        self._budget_for: tuple[int, str] | None = None  # (project, name) whose budget the spin box shows
        self._releases: list[LedgerRelease] = []
        self._ledger_error: str | None = None
        self.setToolTip("The same patients released again, month after month: this release is counted with the "
                        "project's earlier ones in this computer's release ledger (ppdp history lists them)")

        self.project_edit = QLineEdit()
        self.project_edit.setAccessibleName(PROJECT_LABEL)
        self.project_edit.setToolTip("The project's name in the release ledger: its releases are counted together "
                                     "and share one custodian secret. Keep it the same from one month to the next "
                                     "(it is saved with the project).")
        self.identity_label = QLabel()
        self.secret_label = QLabel()
        self.passphrase_edit = QLineEdit()  # opening the secret that exists
        self.passphrase_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase_edit.setAccessibleName("Custodian secret's passphrase")
        self.passphrase_edit.setPlaceholderText("the passphrase of this project's custodian secret")
        self.passphrase_edit.setToolTip("Opens the project's custodian secret, so that an unchanged patient gets the "
                                        "same released values as before. Empty: this release's draws are fresh.")
        self.new_passphrase = PassphraseFields()  # making the secret: typed twice, rated like a key's
        self.new_passphrase.first.setAccessibleName("New custodian secret's passphrase")
        self.new_passphrase.first.setToolTip("Seals the project's new custodian secret on this computer; the same "
                                             "passphrase opens it for the next releases. Nobody can recover it.")
        self.budget_spin = QDoubleSpinBox()
        self.budget_spin.setAccessibleName(BUDGET_LABEL)
        self.budget_spin.setRange(0.0, BUDGET_MAX)
        self.budget_spin.setDecimals(2)
        self.budget_spin.setSingleStep(0.5)
        self.budget_spin.setSpecialValueText("off")  # 0: no budget
        self.budget_spin.setToolTip("The largest cumulative epsilon a patient may reach over all the project's "
                                    "releases; a release past it is refused unless you give a reason. Off: no "
                                    "budget. Saved with the project.")
        self.budget_hint = QLabel("cumulative epsilon a patient may reach over the project's releases (off: no limit)")
        self.stable_check = QCheckBox(STABLE)
        self.stable_check.setToolTip("Give each patient the same pseudonym in every release of the project (made with "
                                     "the custodian secret, so it needs its passphrase, and followed by the identifier "
                                     "columns); unticked, the pseudonyms are fresh in each release. The project's "
                                     "choice: kept in the ledger, and proposed again for its next release.")
        self.reason_edit = QLineEdit()
        self.reason_edit.setAccessibleName(REASON_LABEL)
        self.reason_edit.setPlaceholderText("why this release may go past the budget (kept in the ledger)")
        self.reason_edit.setToolTip("Publish past the project's budget for this reason; the ledger keeps it with "
                                    "the release")
        self.note_label = QLabel()  # what Run will do with the secret, in words
        for label in (self.identity_label, self.secret_label, self.budget_hint, self.note_label):
            label.setWordWrap(True)
        self.budget_hint.setStyleSheet("color: #555;")

        self.form = QFormLayout(self)
        self.form.addRow(PROJECT_LABEL, self.project_edit)
        self.form.addRow("Patients recognised by", self.identity_label)
        self.form.addRow("Custodian secret", self.secret_label)
        self.form.addRow("Passphrase", self.passphrase_edit)
        self.form.addRow(self.new_passphrase)
        budget = QHBoxLayout()
        budget.addWidget(self.budget_spin)
        budget.addWidget(self.budget_hint, 1)
        self.form.addRow(BUDGET_LABEL, budget)
        self.form.addRow("Pseudonyms", self.stable_check)
        self.form.addRow(REASON_LABEL, self.reason_edit)
        self.form.addRow(self.note_label)
        self._align_labels()

        self.project_edit.textEdited.connect(self._on_project_edited)
        self.budget_spin.valueChanged.connect(self._on_budget_changed)
        self.stable_check.clicked.connect(lambda _on: self.changed.emit())
        self.passphrase_edit.textChanged.connect(self._update_note)
        self.new_passphrase.first.textChanged.connect(self._update_note)
        self.new_passphrase.validity_changed.connect(self._update_note)
        self.refresh()

    def _align_labels(self) -> None:
        """The new passphrase's own rows (Passphrase, Repeat, Strength) line up with the box's rows."""
        forms = [self.form, self.new_passphrase.layout()]
        labels = [form.itemAt(row, QFormLayout.ItemRole.LabelRole) for form in forms if isinstance(form, QFormLayout)
                  for row in range(form.rowCount())]
        widgets = [item.widget() for item in labels if item is not None and item.widget() is not None]
        width = max(w.sizeHint().width() for w in widgets)
        for widget in widgets:
            widget.setMinimumWidth(width)

    # --- what the box shows -------------------------------------------------------------------------
    def project_file(self) -> str | None:
        """The project file open in the window (None: none, or a page used on its own)."""
        return getattr(self.window(), "project_path", None)

    def project_id(self) -> str:
        """The project's name in the ledger, as shown."""
        return self.project_edit.text().strip()

    def budget(self) -> float | None:
        value = self.budget_spin.value()
        return float(value) if value > 0 else None

    def stable_pseudonyms(self) -> bool:
        """Whether each patient keeps one pseudonym in every release of the project."""
        return self.stable_check.isChecked() and self.stable_check.isEnabled()

    def refresh(self) -> None:
        """Re-read the project (its name, budget, roles), the ledger and whether the secret exists."""
        project = self.state.project
        name = project.repeat_project_id(self.project_file())
        if name != self.project_id():
            self.project_edit.setText(name)
        self._update_project()
        budget, shown_for = project.budget, (id(project), name)
        if budget is not None or self._budget_for != shown_for:
            if budget is None:  # as the command line does: the project's last budget in the ledger
                budget = next((r.budget for r in reversed(self._releases) if r.budget is not None), None)
            self._filling = True
            self.budget_spin.setValue(float(budget or 0.0))
            self._filling = False
        if self._budget_for != shown_for:  # the project's choice of pseudonyms: as in its last release
            self.stable_check.setChecked(bool(self._releases and self._releases[-1].stable_pseudonyms))
        self._budget_for = shown_for
        self._update_identity()

    def _update_project(self) -> None:
        """The secret's state and the ledger's releases of the project named now."""
        name = self.project_id()
        self._releases, self._ledger_error = ledger_history(name)
        had = self._secret
        try:
            self._secret = bool(name) and secret_exists(name)
        except PPDPError:
            self._secret = False
        if self._secret and not had and self.new_passphrase.passphrase() and not self.passphrase_edit.text():
            self.passphrase_edit.setText(self.new_passphrase.passphrase() or "")  # the secret just made opens with it
        if self._secret:
            self.new_passphrase.clear()
        self.secret_label.setText(KEPT if self._secret else NOT_YET)
        self.secret_label.setToolTip(str(secret_path(name)) if name else "")
        self.form.setRowVisible(self.passphrase_edit, self._secret)
        self.form.setRowVisible(self.new_passphrase, not self._secret)
        self.form.setRowVisible(self.reason_edit, self._refused or bool(self.reason_edit.text().strip()))
        self._update_note()

    def _update_identity(self) -> None:
        """Say which columns tell who a patient is (identifier columns, else those released unchanged)."""
        dataset = self.state.dataset
        if dataset is None:
            self.identity_label.setText("(load the data first)")
            return
        try:
            settings = self.state.project.settings(taxonomies=dict(self.state.taxonomies))
            columns, words = planned_identity(settings, list(map(str, dataset.frame.columns)))
        except PPDPError:
            self.identity_label.setText("(set the roles and the method first)")
            return
        self.stable_check.setEnabled(bool(settings.identifiers))  # a stable pseudonym follows the identifiers
        if not settings.identifiers:
            self.stable_check.setChecked(False)
        named = all(c in words for c in columns)
        shown = columns[:10]
        listed = "" if named else f": {', '.join(shown)}{' …' if len(columns) > len(shown) else ''}"
        self.identity_label.setText(f"{words}{listed}")
        self.identity_label.setToolTip("Columns: " + ", ".join(columns))

    def _update_note(self, *_: object) -> None:
        lines = []
        if self._ledger_error:
            lines.append(self._ledger_error)
        elif self._releases:
            last = self._releases[-1]
            lines.append(f"This computer's ledger holds {_plural(len(self._releases), 'release')} of this project, the "
                         f"last on {last.created[:10]}: this run would be release {last.ordinal + 1}.")
        else:
            lines.append("No release of this project is in this computer's ledger yet: this run would be its first.")
        passphrase, source = self._passphrase_at_hand()
        export = " (the one typed on the export page)" if source == "export" else ""
        if self.draws_nothing():
            lines.append(GENERALIZED)
        elif passphrase and self._secret:
            lines.append(f"Run opens the project's custodian secret with the passphrase{export}: a patient whose "
                         "values have not changed gets the same released values in every release drawn with it.")
        elif passphrase:
            lines.append(f"Run makes the project's custodian secret, sealed with the passphrase{export}, and keeps it "
                         "on this computer; the same passphrase opens it for the next releases.")
        elif source == "typed":  # a new passphrase that cannot seal yet
            lines.append("Run waits for a passphrase that can seal the secret (see above); empty both fields to run "
                         "with fresh draws instead.")
        elif self._releases or self._secret:
            lines.append(FRESH)
        else:
            lines.append(FIRST_FRESH)
        self.note_label.setText("\n".join(lines))

    def draws_nothing(self) -> bool:
        """Whether the project's method randomizes nothing (generalization only)."""
        try:
            return get_method(self.state.project.method).generalizes_only
        except PPDPError:
            return False

    # --- what the run gets --------------------------------------------------------------------------
    def _passphrase_at_hand(self) -> tuple[str | None, str]:
        """The passphrase Run would use and where it comes from ("typed", "export"; "" when there is none)."""
        typed = self.passphrase_edit.text() if self._secret else self.new_passphrase.first.text()
        if typed:
            return (typed if self._secret else self.new_passphrase.passphrase()), "typed"
        key = self.state.key_passphrase()
        return (key, "export") if key else (None, "")

    def needs_passphrase(self) -> bool:
        """Whether the project has a secret here and no passphrase is at hand to open it."""
        return self._secret and self._passphrase_at_hand()[0] is None

    def request(self) -> RepeatRequest:
        """The run's repeated-release choices (the project's name and budget are written to the project).

        Raises
        ------
        ParameterError
            No project name, or a new passphrase typed that cannot seal (too short, weak, not repeated).
        """
        name = self.project_id()
        if not name:
            raise ParameterError(f"Give the project a name in '{PROJECT_LABEL}' ({TITLE}): its releases are counted "
                                 "together under it.")
        passphrase, source = self._passphrase_at_hand()
        if source == "typed" and passphrase is None:
            problem = self.new_passphrase.message.text() or "it cannot seal the secret."
            raise ParameterError(f"The new custodian secret's passphrase ({TITLE}): {problem}")
        self._remember(name)
        reason = self.reason_edit.text().strip() or None
        return RepeatRequest(name, passphrase, not self._secret, self.budget(), reason, source == "export",
                             self.state.seed, self.stable_pseudonyms())

    def _remember(self, name: str) -> None:
        """Keep the name and budget in the project, so that the saved project file carries them: the name only
        when it is not already the project file's own (an old project file keeps matching its release)."""
        project, changed = self.state.project, False
        path = self.project_file()
        wanted = None if path and name == Path(path).stem and not project.project_id else name
        if project.project_id != wanted:
            project.project_id, changed = wanted, True
        if project.budget != self.budget():
            project.budget, changed = self.budget(), True
        if changed:
            self.state.project_changed.emit()

    # --- after a run or an export -------------------------------------------------------------------
    def refused_for_budget(self) -> None:
        """The run was refused for the budget: show the reason field (a reason lets the release go past it)."""
        self._refused = True
        self.form.setRowVisible(self.reason_edit, True)

    def ran(self, released: bool = False) -> None:
        """A run ended (``released``: with a release): the secret may exist now (made by it); the reason field
        goes once a release within the budget needs none."""
        if released and not self.reason_edit.text().strip():
            self._refused = False
        self._update_project()

    def clear_passphrases(self) -> None:
        """The release is exported: its passphrase does not linger."""
        self.passphrase_edit.clear()
        self.new_passphrase.clear()
        self.reason_edit.clear()
        self._refused = False
        self._update_project()

    # --- user edits ---------------------------------------------------------------------------------
    def _on_project_edited(self, text: str) -> None:
        self.state.project.project_id = text.strip() or None
        self._update_project()
        self.state.project_changed.emit()
        self.changed.emit()

    def _on_budget_changed(self, *_: object) -> None:
        if self._filling:
            return
        self.state.project.budget = self.budget()
        self._budget_for = (id(self.state.project), self.project_id())  # "off" stays off
        self.state.project_changed.emit()
        self.changed.emit()

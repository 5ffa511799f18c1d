"""The wizard's shared state: the project (every choice), the loaded data, edited taxonomies, results.

Pages read and edit it and emit its signals; they never talk to each other directly (napari's
model/view events). The state owns the one worker that runs core jobs.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.data.schema import Kind, Role
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.taxonomy.tree import Taxonomy
from ppdp_desktop.gui.figure_images import FigureImages
from ppdp_desktop.gui.worker import Worker

if TYPE_CHECKING:  # the job's code (pandas, scipy) is imported when a table or a result arrives, not at start-up
    from ppdp_desktop.core.data.column_stats import ColumnStats
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.jobs import RunOutcome
    from ppdp_desktop.core.taxonomy.kind_change import KindChange

#: why a kind change was not made when the user chose Cancel in the question of :attr:`WizardState.confirm_kind_change`
KIND_CANCELLED = "You chose Cancel: the column is read as before and every setting stays as it was."


def same_file(a: str | Path | None, b: str | Path | None) -> bool:
    """Whether two paths name the same file (relative or absolute, ``..`` or not); None matches nothing."""
    if a is None or b is None or str(a) == "" or str(b) == "":
        return False
    return str(a) == str(b) or Path(a).resolve() == Path(b).resolve()


class WizardState(QObject):
    dataset_changed = Signal()
    project_changed = Signal()
    outcome_changed = Signal()
    exported = Signal(str)  # the release folder
    reload_requested = Signal(dict)  # read the data file again with these load options (the load page does)
    kind_refused = Signal(str)  # a column cannot be read as the kind asked for: why
    #: another data file was loaded: a new, untitled project began; pages reset what they keep per file
    new_file = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.project = Project()
        self.project_path: str | None = None  # the project file in use (File > Save writes it); None: untitled
        self.dataset: Dataset | None = None
        self.column_stats: ColumnStats | None = None
        self.taxonomies: dict[str, Taxonomy] = {}
        self.outcome: RunOutcome | None = None
        self.figure_images: FigureImages = {}  # the outcome's figures, decoded off the GUI thread
        self.seed: int | None = None  # fixed only by tests and scripts: a guessable seed voids the guarantee
        self.dirty = False  # settings changed since the data was loaded or the project saved/opened
        #: asks the user whether unsaved settings may be discarded (the window sets it; None: always yes)
        self.confirm_discard: Callable[[str], bool] | None = None
        #: asks whether columns may be read as other kinds although some of their settings cannot be kept (the
        #: roles page sets it; None: always yes); each change lists what it cannot keep (``KindChange.lost``)
        self.confirm_kind_change: Callable[[list[KindChange]], bool] | None = None
        #: the kind changes of the last reading of the data in use, with what each kept (step 2 says it)
        self.kind_changes: list[KindChange] = []
        self._trees_of: Project | None = None  # the project whose data the trees being edited were made for
        self._retyping = False  # a table in memory converted to another kind (change_kind)
        #: the key's passphrase as typed on the export page, when valid (the export page sets it; the run page
        #: opens or makes the project's custodian secret with it when its own field is empty)
        self.key_passphrase: Callable[[], str | None] = lambda: None
        self.worker = Worker(self)
        self.project_changed.connect(self._on_project_changed)

    # --- data ---------------------------------------------------------------------------------
    def set_dataset(self, dataset: Dataset, path: str | Path | None, options: dict[str, str] | None = None,
                    stats: ColumnStats | None = None, project: Project | None = None,
                    project_path: str | None = None) -> bool:
        """A newly loaded table. The wizard's rules, in this one place:

        * with ``project`` (a project file opened, saved at ``project_path``): that project and its settings;
        * the data file of the project in use (loaded again): its roles, taxonomies and settings are kept for the
          columns that still exist;
        * another file than the one loaded: a new, untitled project — every choice back to its default (roles,
          taxonomies, sensitivity rule and pairs, method, k, each method's settings, the release paths) — and
          :attr:`new_file` tells the pages to reset what they hold for the previous file (the export format);
        * the data in use read again (a kind changed on step 2, other import options): the trees being edited
          stay as well, and a column read as another kind keeps what still applies to its values
          (:func:`~ppdp_desktop.core.taxonomy.kind_change.review_kind_change`). When that is not everything,
          :attr:`confirm_kind_change` is asked first; a no leaves everything as it was and returns False;
        * results are always reset.

        ``stats`` come from the load worker; without them (a table built in a script or test) they are
        computed here. Returns whether the table was taken."""
        from ppdp_desktop.core.data.column_stats import column_stats
        from ppdp_desktop.core.demo import DEMO_ROLES, demo_taxonomy

        again = project is None and self._reading_again(path)
        changes = self._kind_changes(dataset) if again else []
        if any(c.lost for c in changes) and self.confirm_kind_change is not None and not self.confirm_kind_change(changes):
            return False
        edited = dict(self.taxonomies) if again else {}
        fresh = False
        if project is not None:
            self.project, self.project_path = project, project_path
        elif self.dataset is not None and path is not None and not same_file(path, self.project.data_path):
            fresh = True
            self.project, self.project_path = Project(), None
            if same_file(path, resource_path(DEMO_DATA)):  # the demo's own roles and taxonomy
                self.project.roles.update({c: r.value for c, r in DEMO_ROLES.items()})
                self.project.set_taxonomy(demo_taxonomy())
        self.dataset = dataset
        self.column_stats = stats if stats is not None else column_stats(dataset)
        self.project.data_path = str(path) if path is not None else None
        self.project.load_options = dict(options or {})
        columns = list(dataset.frame.columns)
        self.project.roles = {c: self.project.roles.get(c, Role.INSENSITIVE.value) for c in columns}
        self.taxonomies = {}
        for name in list(self.project.taxonomies):
            if name in columns:
                self.taxonomies[name] = self.project.taxonomy(name)
        self.taxonomies.update({name: tree for name, tree in edited.items() if name in columns})
        self._apply_kind_changes(changes)
        self._trees_of = self.project
        self.outcome, self.figure_images = None, {}
        if fresh:
            self.new_file.emit()
        self.dataset_changed.emit()
        self.project_changed.emit()
        self.dirty = False  # a fresh start for this data
        return True

    def _reading_again(self, path: str | Path | None) -> bool:
        """Whether a table is the data in use read again (not another file, nor the data of a project opened)."""
        if self.dataset is None or self._trees_of is not self.project:
            return False
        return self._retyping or (path is not None and same_file(path, self.project.data_path))

    def _kind_changes(self, dataset: Dataset) -> list[KindChange]:
        """What each column read as another kind in ``dataset`` keeps of its settings."""
        from ppdp_desktop.core.taxonomy.kind_change import review_kind_change

        before, after, project = self.dataset.schema.attributes, dataset.schema.attributes, self.project
        changes = []
        for name in dataset.frame.columns:
            if name not in before or name not in self.dataset.frame.columns or before[name].kind is after[name].kind:
                continue
            sensitive = name == project.sensitive
            tree = self.taxonomies[name] if name in self.taxonomies else project.taxonomy(name)
            changes.append(review_kind_change(
                name, before[name].kind, after[name].kind, self.dataset.frame[name], dataset.frame[name],
                tree, project.protection, project.roles.get(name),
                project.pairs if sensitive else None, project.value_choices if sensitive else None))
        return changes

    def _apply_kind_changes(self, changes: list[KindChange]) -> None:
        for change in changes:
            if change.taxonomy is not None:
                self.taxonomies[change.column] = change.taxonomy
                if change.column in self.project.taxonomies:
                    self.project.set_taxonomy(change.taxonomy)
            if change.protection is not None:
                self.project.protection = change.protection
            if change.pairs is not None:
                self.project.pairs = change.pairs
            if change.value_choices is not None:
                self.project.value_choices = change.value_choices
        self.kind_changes = changes

    def _on_project_changed(self) -> None:
        self.dirty = True

    def may_replace_data(self, path: str | Path) -> bool:
        """Whether loading ``path`` may go on: yes for the file in use or with nothing unsaved; else ask."""
        if not self.dirty or self.dataset is None or same_file(path, self.project.data_path):
            return True
        return self.confirm_discard is None or self.confirm_discard(Path(path).name)

    def change_kind(self, column: str, kind: Kind) -> None:
        """Read ``column`` as ``kind`` from now on: the file is read again with the kind in its load options
        (so "02134" comes back exactly), and the project remembers it; a table made in memory is converted."""
        options = dict(self.project.load_options)
        options["kinds"] = {**dict(options.get("kinds") or {}), column: kind.value}
        if self.project.data_path and Path(self.project.data_path).is_file():
            self.reload_requested.emit(options)
            return
        from ppdp_desktop.core.data.kinds import retype
        from ppdp_desktop.gui.wording import window_name

        try:
            dataset = retype(self.dataset, column, kind)
        except PPDPError as exc:
            self.kind_refused.emit(exc.phrase(window_name))
            return
        self._retyping = True
        try:
            taken = self.set_dataset(dataset, None, options, None)
        finally:
            self._retyping = False
        if not taken:
            self.kind_refused.emit(KIND_CANCELLED)
            return
        self.dirty = True

    def set_role(self, column: str, role: Role) -> None:
        previous = self.project.sensitive
        if role is Role.SENSITIVE:  # one sensitive attribute per release for now
            for other, value in self.project.roles.items():
                if value == Role.SENSITIVE.value and other != column:
                    self.project.roles[other] = Role.INSENSITIVE.value
        self.project.roles[column] = role.value
        if self.project.sensitive != previous:  # per-value pairs and choices belong to the old column's values
            self.project.pairs = {}
            self.project.value_choices = {}
        self.outcome, self.figure_images = None, {}
        self.project_changed.emit()

    def taxonomy_for(self, attribute: str) -> Taxonomy:
        """The edited taxonomy of ``attribute``; a flat one built from the data on first use."""
        if attribute not in self.taxonomies:
            values = self.dataset.frame[attribute].dropna().unique() if self.dataset is not None else []
            self.taxonomies[attribute] = Taxonomy.flat(attribute, values)
        return self.taxonomies[attribute]

    def set_taxonomy(self, taxonomy: Taxonomy) -> None:
        self.taxonomies[taxonomy.attribute] = taxonomy
        self.project_changed.emit()

    def sync_project(self) -> Project:
        """Copy the edited taxonomies into the project (before saving it or running)."""
        for taxonomy in self.taxonomies.values():
            self.project.set_taxonomy(taxonomy)
        return self.project

    def set_outcome(self, outcome: RunOutcome | None, images: FigureImages | None = None) -> None:
        """The result of a run (None: no result any more); ``images``: its figures decoded in the worker
        (:func:`~ppdp_desktop.gui.figure_images.decode_figures`), which the report page shows."""
        self.outcome = outcome
        self.figure_images = dict(images or {}) if outcome is not None else {}
        self.outcome_changed.emit()

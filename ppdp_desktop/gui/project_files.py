"""File > Open project, Save project and Save project as: which file a project is written to, and the questions
asked before one data file's settings replace another's (issue 31).

The rules: a project belongs to one data file. A new data file starts an untitled project (the state forgets the
project file), so Save asks where, proposing a name made from the data file; saving over a project of another data
file asks first; opening a project never advises a save that would write over the project being opened.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog, QMessageBox

from ppdp_desktop.core.data.resources import resources_dir
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.project import Project
from ppdp_desktop.gui.state import same_file
from ppdp_desktop.gui.wording import window_name

if TYPE_CHECKING:
    from ppdp_desktop.gui.main_window import MainWindow

PROJECT_FILTER = "PPDP project (*.ppdp.json *.json)"
PROJECT_SUFFIX = ".ppdp.json"
DATA_FILTER = "Data files (*.csv *.tsv *.txt *.xlsx *.xls *.sav *.zsav *.dta *.parquet *.pq);;All files (*)"
Button = QMessageBox.StandardButton
#: Save as asks its own "replace?" question, naming whose project a file is (:meth:`ProjectFiles._may_write`)
ASKED_BY_US = QFileDialog.Option.DontConfirmOverwrite


def proposed_project_path(data_path: str | None, project_path: str | None) -> Path:
    """Where Save as proposes to write: ``<data file's name>.ppdp.json`` in the folder of the project in use, else
    beside the data file (the embedded demo data: the home folder, the app's own folder is no place for it)."""
    if not data_path:
        return (Path(project_path).parent if project_path else Path.home()) / f"project{PROJECT_SUFFIX}"
    data = Path(data_path)
    name = f"{data.stem}{PROJECT_SUFFIX}"
    if project_path:
        return Path(project_path).parent / name
    if resources_dir() in data.resolve().parents:
        return Path.home() / name
    return data.with_name(name)


def _name(path: str | None, default: str = "the data in use") -> str:
    return Path(path).name if path else default


class ProjectFiles:
    """Open, Save and Save as for one window (its state, its load page, its status bar)."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        self.state = window.state

    # --- open -------------------------------------------------------------------------------------
    def open(self, path: str | Path) -> bool:
        """Read the project at ``path`` and load its data file with it; the project in use and its data stay until
        that load has finished (a refused, failed or cancelled load changes nothing). False if not started."""
        if self.state.dirty and self.state.dataset is not None and not self._confirm_open(Path(path)):
            return False
        try:
            project = Project.load(path)
        except PPDPError as exc:
            QMessageBox.warning(self.window, "Cannot open the project", exc.phrase(window_name))
            return False
        data = project.data_path
        if not data or not Path(data).is_file():
            data = self._find_data(Path(path), project)
            if data is None:
                return False
        self.window.go_to(0)
        self.window.pages[0].load(data, project.load_options, confirmed=True, project=project, project_path=str(path))
        return True

    def choose_and_open(self) -> bool:
        """File > Open project…: choose a project file, then :meth:`open` it."""
        path, _ = QFileDialog.getOpenFileName(self.window, "Open project", "", PROJECT_FILTER)
        return self.open(path) if path else False

    def _confirm_open(self, path: Path) -> bool:
        """Ask before the project at ``path`` replaces unsaved settings; the way to keep them never writes ``path``."""
        current = self.state.project_path
        data = _name(self.state.project.data_path)
        if current and same_file(current, path):
            keep = ("To keep them as well as the saved project, choose Cancel and save them under another name "
                    "(File > Save project as…).")
            what = f"Opening {path.name} again discards the changes made to it since it was saved"
        elif current:
            keep = (f"To keep them, choose Cancel and save them first with File > Save project, which writes "
                    f"{Path(current).name} (not {path.name}).")
            what = f"Opening the project {path.name} discards the unsaved settings made for {data}"
        else:
            keep = (f"To keep them, choose Cancel and save them first with File > Save project as…, under a new name "
                    f"(not {path.name}, the project you are opening).")
            what = f"Opening the project {path.name} discards the unsaved settings made for {data}"
        answer = QMessageBox.question(self.window, "Discard the unsaved settings?", f"{what}. {keep}\n\nOpen "
                                      f"{path.name} anyway?", Button.Yes | Button.Cancel, Button.Cancel)
        return answer == Button.Yes

    def _find_data(self, path: Path, project: Project) -> str | None:
        """The project's data file is not where it was: let the user find it (None: the project is not opened)."""
        where = f" at {project.data_path}" if project.data_path else ""
        answer = QMessageBox.question(
            self.window, "Where is the data file?", f"The data file of the project {path.name} was not found{where}. "
            "Find it now? (Cancel: the project is not opened.)", Button.Yes | Button.Cancel, Button.Yes)
        if answer != Button.Yes:
            return None
        start = str(Path(project.data_path).parent) if project.data_path else ""
        found, _ = QFileDialog.getOpenFileName(self.window, f"The data file of {path.name}", start, DATA_FILTER)
        return found or None

    # --- save -------------------------------------------------------------------------------------
    def save(self) -> bool:
        """File > Save project (Ctrl+S): the project file in use; an untitled project asks where (as Save as)."""
        if self.state.project_path:
            return self.save_to(self.state.project_path)
        return self.save_as()

    def save_as(self) -> bool:
        """File > Save project as: asks where, proposing a name made from the data file in use."""
        start = proposed_project_path(self.state.project.data_path, self.state.project_path)
        path, _ = QFileDialog.getSaveFileName(self.window, "Save project as", str(start), PROJECT_FILTER, "", ASKED_BY_US)
        if not path:
            return False
        return self.save_to(path, chosen=True)

    def save_to(self, path: str | Path, chosen: bool = False) -> bool:
        """Write the project to ``path`` unless the user declines replacing what is there (``chosen``: picked in Save
        as, whose own "replace?" question is ours)."""
        if not self._may_write(Path(path), chosen):
            self.window.statusBar().showMessage("Not saved", 5000)
            return False
        try:
            self.state.sync_project().save(path)
        except PPDPError as exc:
            QMessageBox.warning(self.window, "Cannot save the project", exc.phrase(window_name))
            return False
        self.state.project_path = str(path)
        self.state.dirty = False
        self.window.update_title()
        self.window.statusBar().showMessage(f"Project saved to {path}", 5000)
        return True

    def _may_write(self, path: Path, chosen: bool) -> bool:
        """Whether ``path`` may be written: yes if it is new or this data file's project; a project of another data
        file only if the user says so (Cancel keeps it); another existing file chosen in Save as, likewise."""
        if not path.exists():
            return True
        ours = self.state.project.data_path
        try:
            theirs = Project.load(path).data_path
        except PPDPError:
            theirs = None
        if theirs and not same_file(theirs, ours):
            answer = QMessageBox.question(
                self.window, "Replace another data file's project?",
                f"{path.name} is the project of {_name(theirs)}. Saving here replaces its settings with the ones made "
                f"for {_name(ours)}, and the settings for {_name(theirs)} are lost.\n\nTo keep both, choose Cancel and "
                "save under another name (File > Save project as…).", Button.Save | Button.Cancel, Button.Cancel)
            return answer == Button.Save
        if chosen and not same_file(path, self.state.project_path):
            answer = QMessageBox.question(self.window, "Replace the file?", f"{path.name} already exists. Replace it?",
                                          Button.Yes | Button.Cancel, Button.Cancel)
            return answer == Button.Yes
        return True

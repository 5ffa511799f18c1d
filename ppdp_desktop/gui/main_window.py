"""The main window: the wizard's steps in a side list, one page each, menus and a status bar."""
from __future__ import annotations

import html
import math
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop import __version__
from ppdp_desktop.core.data.resources import resources_dir
from ppdp_desktop.gui import collector, wheel_guard
from ppdp_desktop.gui.collector import freeze_survivors
from ppdp_desktop.gui.guide_dialog import GuideDialog
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.pages.load_page import LoadPage
from ppdp_desktop.gui.pages.steps import STEPS
from ppdp_desktop.gui.project_files import ProjectFiles
from ppdp_desktop.gui.screen_fit import fit_to_screen
from ppdp_desktop.gui.state import WizardState

if TYPE_CHECKING:
    from ppdp_desktop.gui.lookup_dialog import LookupDialog

MAX_RECENT = 8
#: how long after the window is shown the other pages start being built (ms): its first frame is painted first;
#: then one page per turn of the event loop, so that no turn holds the window for all of them
PAGES_AFTER_MS = 100
#: how often the GUI thread looks whether the background thread has imported the next page's modules (ms)
PREPARE_POLL_MS = 20
APP_NAME = "PPDP Desktop"


JOB_WORDS = {"inspect": "First look at the file", "load": "Loading the data"}


def _job(name: str) -> str:
    """A worker job's name in words for the status bar."""
    return JOB_WORDS.get(name, name.capitalize())


def _warm_up() -> None:
    """Start loading the figures' renderer and font on a background thread (imported only now, not at start-up), then
    what an export imports; their objects are frozen once imported (:mod:`~ppdp_desktop.gui.collector`)."""
    from ppdp_desktop.core.evaluation.figures import warm_up
    from ppdp_desktop.gui.preload import EXPORT_MODULES, import_now

    def run() -> None:
        warm_up()
        freeze_survivors()
        import_now(*EXPORT_MODULES)

    threading.Thread(target=run, name="figure warm-up", daemon=True).start()


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None) -> None:
        freeze_survivors()  # what start-up imported lives on: no full collection walks it again (issue 34)
        super().__init__()
        wheel_guard.install()  # a stray wheel never changes a setting
        self.setWindowTitle(APP_NAME)
        fit_to_screen(self, 1200, 760, margin=40)  # an 800x600 screen shows the whole window, Next included
        self.settings = settings or QSettings("PPDP", "PPDP Desktop")
        self.state = WizardState(self)
        self.state.dataset_changed.connect(self._on_dataset_changed)
        self.state.confirm_discard = self._confirm_discard
        self.projects = ProjectFiles(self)
        self._shown_once = False
        self._warmed_up = False  # the figures' warm-up started (once every page is made)
        self.guide: GuideDialog | None = None  # the user guide's window, made on first use (F1)
        self.steps = QListWidget()
        self.steps.setToolTip("The steps, in order; a step opens once the ones before it are complete. "
                              "F1: the user guide at the step in view.")
        self.stack = QStackedWidget()
        for number, step in enumerate(STEPS, start=1):
            self.steps.addItem(QListWidgetItem(f"{number}. {step.title}"))
        #: the pages built so far: the first before the window is shown, the others just after (:meth:`_build_pages`)
        self._pages: list[WizardPage] = []
        self._preloader: threading.Thread | None = None
        self._add_page(LoadPage(self.state))
        # as wide as the longest step's name, no wider: on a small screen the pages need the room
        self.steps.setFixedWidth(self.steps.sizeHintForColumn(0) + 2 * self.steps.frameWidth() + 16)
        self.steps.currentRowChanged.connect(self._on_step_selected)
        self.back = QPushButton("< Back")
        self.back.setShortcut(QKeySequence("Alt+Left"))
        self.back.setToolTip("The previous step (Alt+Left); your choices stay")
        self.back.clicked.connect(lambda: self.go_to(self.stack.currentIndex() - 1))
        self.next = QPushButton("Next >")
        self.next.setShortcut(QKeySequence("Alt+Right"))
        self.next.setToolTip("The next step (Alt+Right), once this one is complete")
        self.next.setDefault(True)
        self.next.clicked.connect(lambda: self.go_to(self.stack.currentIndex() + 1))
        self.step_hint = QLabel()
        nav = QHBoxLayout()
        nav.addWidget(self.step_hint, 1)
        nav.addWidget(self.back)
        nav.addWidget(self.next)
        right = QVBoxLayout()
        right.addWidget(self.stack, 1)
        right.addLayout(nav)
        body = QWidget()
        layout = QHBoxLayout(body)
        layout.addWidget(self.steps)
        layout.addLayout(right, 1)
        self.setCentralWidget(body)
        self._build_menus()
        self.state.worker.progress.connect(self._on_progress)
        self.state.worker.finished.connect(lambda name, _r: self.statusBar().showMessage(f"{_job(name)} finished", 5000))
        self.state.worker.errored.connect(lambda name, msg, _d: self.statusBar().showMessage(f"{_job(name)} failed: {msg}"))
        self.state.worker.cancelled.connect(lambda name: self.statusBar().showMessage(f"{_job(name)} cancelled", 5000))
        self.state.dataset_changed.connect(self._update_steps)
        self.state.outcome_changed.connect(self._update_steps)
        self.setTabOrder(self.steps, self.stack)
        self.setTabOrder(self.stack, self.back)
        self.setTabOrder(self.back, self.next)
        self.steps.setCurrentRow(0)
        self._update_steps()
        self.statusBar().showMessage("Ready: open a data file or use the demo data")

    # --- menus -----------------------------------------------------------------------------------
    def _action(self, menu, text: str, slot, shortcut=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "&Open data…", self._on_open_data, QKeySequence.StandardKey.Open)
        self._action(file_menu, "Open data with &import options…", lambda: (self.go_to(0), self.pages[0]._on_options_clicked()))
        self._action(file_menu, "Open the &demo data", self.load_demo)
        self.recent_menu = file_menu.addMenu("&Recent files")
        file_menu.addSeparator()
        self._action(file_menu, "Open &project…", self._on_open_project)
        self._action(file_menu, "&Save project", self._on_save_project, QKeySequence.StandardKey.Save)
        self._action(file_menu, "Save project &as…", self._on_save_project_as, QKeySequence.StandardKey.SaveAs)
        file_menu.addSeparator()
        self._action(file_menu, "&Export…", lambda: self.go_to(len(STEPS) - 1), QKeySequence("Ctrl+E"))
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)
        tools = self.menuBar().addMenu("&Tools")
        self._action(tools, "&Reverse lookup…", self.open_lookup, QKeySequence("Ctrl+L"))
        help_menu = self.menuBar().addMenu("&Help")
        guide = self._action(help_menu, "&User guide", lambda: self.show_guide(), QKeySequence(Qt.Key.Key_F1))
        if QKeySequence(QKeySequence.StandardKey.HelpContents) != QKeySequence(Qt.Key.Key_F1):
            guide.setShortcuts([QKeySequence(Qt.Key.Key_F1), QKeySequence(QKeySequence.StandardKey.HelpContents)])
        self._action(help_menu, "The &methods explained", self._on_methods_help)
        self._action(help_menu, "&About", self._on_about)
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.recent_files():
            self._action(self.recent_menu, path, lambda _checked=False, p=path: self.load_data(p))
        self.recent_menu.setEnabled(bool(self.recent_files()))

    def recent_files(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _remember(self, path: str | Path) -> None:
        path = str(Path(path).resolve())
        recent = [path] + [p for p in self.recent_files() if p != path]
        self.settings.setValue("recent", recent[:MAX_RECENT])
        self._refresh_recent()

    # --- pages ---------------------------------------------------------------------------------
    @property
    def pages(self) -> list[WizardPage]:
        """Every step's page, in order (building the ones not built yet)."""
        self._build_pages()
        return self._pages

    def _add_page(self, page: WizardPage) -> None:
        self._pages.append(page)
        self.stack.addWidget(page)
        page.complete_changed.connect(self._update_steps)
        self.state.new_file.connect(page.reset_for_new_file)

    def _build_pages(self) -> None:
        """Build every page not built yet, at once: when something needs them now (data arriving, a step chosen)."""
        if len(self._pages) == len(STEPS):
            return
        if self._preloader is not None:
            self._preloader.join()  # its imports first: two threads importing the same modules could meet in a cycle
        while len(self._pages) < len(STEPS):
            self._add_page(STEPS[len(self._pages)].page_class()(self.state))
        self._update_steps()

    def _start_building_pages(self) -> None:
        """Once the first page is painted: import what the other pages need on a background thread (the method
        families and scipy take a few hundred ms, which would hold the event loop), then make the pages on the GUI
        thread, one per turn of the event loop (:meth:`_build_next_page`)."""
        self._preloader = threading.Thread(target=self._prepare_steps, name="ppdp pages", daemon=True)
        self._preloader.start()
        self._build_next_page()

    def _prepare_steps(self) -> None:
        """On the background thread: each later step's imports in turn."""
        try:
            for step in STEPS[1:]:
                step.prepare()
                freeze_survivors()  # the step's modules, imported now, live on
        except BaseException:  # noqa: BLE001 - the GUI thread imports the step again and shows what failed
            return

    def _build_next_page(self) -> None:
        """Make the next page once the background thread's imports are done, then come back on the next turn.

        Not while the thread runs: both would want the interpreter, and a page made meanwhile would hold the event
        loop for its own time and the thread's slices of it. Once every page is made, the figures' warm-up starts
        (also when a file's arrival made the pages at once)."""
        if len(self._pages) == len(STEPS):
            if not self._warmed_up:  # the figures' warm-up after the pages: a page made meanwhile would wait for its slices
                self._warmed_up = True
                _warm_up()
            return
        if self._preloader is not None and self._preloader.is_alive():
            QTimer.singleShot(PREPARE_POLL_MS, self._build_next_page)  # the imports are still on their way
            return
        self._add_page(STEPS[len(self._pages)].page_class()(self.state))
        self._update_steps()
        QTimer.singleShot(0, self._build_next_page)

    # --- navigation ------------------------------------------------------------------------------
    def reachable(self, index: int) -> bool:
        """A step is reachable when every step before it is complete."""
        if index > 0 and not self._pages[0].is_complete():
            return False  # nothing to build to know it
        return index == 0 or all(page.is_complete() for page in self.pages[:index])

    def go_to(self, index: int) -> None:
        if 0 <= index < len(STEPS) and self.reachable(index):
            self.steps.setCurrentRow(index)

    def _on_step_selected(self, index: int) -> None:
        if index < 0:
            return
        if not self.reachable(index):
            self.steps.blockSignals(True)
            self.steps.setCurrentRow(self.stack.currentIndex())
            self.steps.blockSignals(False)
            return
        page = self._pages[index] if index < len(self._pages) else self.pages[index]
        page.refresh()
        self.stack.setCurrentIndex(index)
        if hasattr(page, "start_automatically") and self.state.outcome is None and not self.state.worker.is_running():
            page.start_automatically()  # unless the project's custodian secret waits for its passphrase
        self._update_steps()

    def _update_steps(self) -> None:
        for index in range(len(STEPS)):
            item = self.steps.item(index)
            reachable = self.reachable(index)
            flags = item.flags()
            item.setFlags(flags | Qt.ItemFlag.ItemIsEnabled if reachable else flags & ~Qt.ItemFlag.ItemIsEnabled)
        current = self.stack.currentIndex()
        self.back.setEnabled(current > 0)
        self.next.setEnabled(current + 1 < len(STEPS) and self.reachable(current + 1))
        page = self._pages[current]
        loading = self._pages[0].loading()
        self.steps.setEnabled(not loading)
        if loading:
            self.step_hint.setText("Reading the file: the steps wait (Cancel stops it).")
        else:
            self.step_hint.setText("" if page.is_complete() else "Complete this step to go on.")

    # --- data and projects -------------------------------------------------------------------------
    def load_data(self, path: str | Path, options: dict[str, object] | None = None) -> None:
        """Load a data file: with the given options (a project's), else after a first look that shows the
        import options when it is unsure (recent files, the command line)."""
        self.go_to(0)
        self._build_pages()  # the data's pages before the data
        if options is None:
            self._pages[0].open_file(path)
        else:
            self._pages[0].load(path, options)

    def _confirm_discard(self, name: str) -> bool:
        """Ask before another file discards the settings made for the data in use."""
        save = (f"File > Save project, which writes {Path(self.project_path).name}" if self.project_path
                else "File > Save project, which asks where")
        answer = QMessageBox.question(
            self, "Discard the settings?",
            f"Opening {name} starts a new project with every setting at its default: the roles, sensitivity, "
            f"method, choices and taxonomies made for {Path(self.state.project.data_path or '').name or 'the data in use'} "
            f"are discarded unless you save the project first ({save}).\n\nOpen it anyway?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _on_dataset_changed(self) -> None:
        """Every file loaded — from the Open dialog, a drop, Recent files or a project — joins Recent files
        (the embedded demo data does not)."""
        path = self.state.project.data_path
        if path and Path(path).is_file() and resources_dir() not in Path(path).resolve().parents:
            self._remember(path)
        self.update_title()

    def load_demo(self) -> None:
        """The demo data with its roles and taxonomy preset."""
        self.go_to(0)
        self._build_pages()  # the data's pages before the data
        self._pages[0].load_demo()

    def _on_open_data(self) -> None:
        self.go_to(0)
        self._pages[0]._on_open_clicked()

    @property
    def project_path(self) -> str | None:
        """The project file in use (File > Save writes it); None: an untitled project."""
        return self.state.project_path

    @project_path.setter
    def project_path(self, path: str | None) -> None:
        self.state.project_path = path
        self.update_title()

    def update_title(self) -> None:
        """The window's title names the project file in use, or says the project is untitled."""
        if self.state.dataset is None and self.state.project_path is None:
            self.setWindowTitle(APP_NAME)
            return
        name = Path(self.state.project_path).name if self.state.project_path else "untitled project"
        self.setWindowTitle(f"{name} — {APP_NAME}")

    def open_project(self, path: str | Path) -> bool:
        """Open a project file and load its data file with it (see :class:`ProjectFiles`)."""
        return self.projects.open(path)

    def save_project(self, path: str | Path) -> bool:
        """Write the project to ``path``; a project of another data file there is replaced only if the user says so."""
        return self.projects.save_to(path)

    def _on_open_project(self) -> None:
        self.projects.choose_and_open()

    def _on_save_project(self) -> None:
        """Save: to the project file in use, else ask where (as Save as)."""
        self.projects.save()

    def _on_save_project_as(self) -> None:
        self.projects.save_as()

    # --- dialogs --------------------------------------------------------------------------------
    def open_lookup(self) -> LookupDialog:
        from ppdp_desktop.gui.lookup_dialog import LookupDialog  # pandas' release reading: on first use only

        dialog = LookupDialog(self.state.worker, self.state.project.release_folder, self.state.project.key_path, parent=self)
        dialog.show()
        return dialog

    def show_guide(self, anchor: str | None = None) -> GuideDialog:
        """The user guide (F1), at ``anchor`` or else at the section of the step in view; one window, reused."""
        if self.guide is None:
            self.guide = GuideDialog(self)
        self.guide.show_section(anchor or self._pages[self.stack.currentIndex()].help_anchor)
        self.guide.show()
        self.guide.raise_()
        self.guide.activateWindow()
        return self.guide

    def _on_methods_help(self) -> QDialog:
        """Every registered method in plain words, in a dialog that fits a 1366x768 screen and scrolls."""
        dialog = QDialog(self)
        dialog.setWindowTitle("The methods explained")
        from ppdp_desktop.core.methods import REGISTRY  # the method families: on first use only

        text = QTextBrowser()
        text.setHtml("".join(f"<h3>{html.escape(m.title)}</h3><p>{html.escape(m.summary)}</p>" for m in REGISTRY.values()))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(text)
        layout.addWidget(buttons)
        fit_to_screen(dialog, 640, 560, margin=80)
        dialog.show()
        return dialog

    def _on_about(self) -> None:
        QMessageBox.about(self, "About PPDP Desktop", f"PPDP Desktop {__version__}\n"
                          "Privacy-preserving publishing of patient tables. Works offline; opens no network connection.")

    def _on_progress(self, fraction: float, stage: str, eta: float) -> None:
        left = "" if math.isnan(eta) else f", about {eta:.0f} s left"
        self.statusBar().showMessage(f"{stage} — {fraction:.0%}{left}")

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        """Once the window is on screen, make the other pages, then load the figures' renderer and fonts on a
        background thread, so the first run never pays for them; neither opening the window nor its event loop
        waits for them (the figures are drawn in the worker and only shown here)."""
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            # the other pages once the first is painted, then the figures' renderer (:meth:`_build_next_page`)
            QTimer.singleShot(PAGES_AFTER_MS, self._start_building_pages)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        self.state.worker.shutdown()
        if len(self._pages) > 1:
            self._pages[1].risk.shutdown()
        for page in self._pages:
            page.shutdown()
        collector.shared().stop()  # the jobs ended above: no full collection while the window closes
        event.accept()

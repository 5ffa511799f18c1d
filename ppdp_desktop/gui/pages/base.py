"""What every wizard page offers the main window."""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from ppdp_desktop.gui.state import WizardState


class WizardPage(QWidget):
    """A step of the wizard. ``complete_changed`` tells the main window to update the step list."""

    title = "Step"
    help_anchor = "start"  # the user guide's section F1 opens on this step (docs/guide)
    complete_changed = Signal()

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state

    def is_complete(self) -> bool:
        """Whether the user may go on to the next step."""
        return True

    def refresh(self) -> None:
        """Called each time the page is shown: re-read the state."""

    def reset_for_new_file(self) -> None:
        """Another data file was loaded (a new, untitled project): put back to its default what the page keeps
        outside the project (most pages keep nothing and re-read the project in :meth:`refresh`)."""

    def shutdown(self) -> None:
        """Stop the page's own background work (the window is closing); most pages have none."""

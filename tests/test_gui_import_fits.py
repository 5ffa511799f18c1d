"""The import options of a wide clinical sheet fit a small screen (issue 31): opened larger than the screen, the
dialog hid its Cancel button off the right edge of an 800x600 display (seen under Xvfb)."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("PySide6")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from clinical_data import write_clinical_xlsx  # noqa: E402
from PySide6.QtWidgets import QDialogButtonBox  # noqa: E402

from ppdp_desktop.core.data.inspection import inspect_file  # noqa: E402
from ppdp_desktop.gui.import_dialog import ImportDialog  # noqa: E402


def test_the_import_options_keep_their_buttons_on_the_screen(qtbot, tmp_path):
    facts = inspect_file(write_clinical_xlsx(tmp_path / "klinik.xlsx", 200))
    dialog = ImportDialog(facts)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    area = dialog.screen().availableGeometry()
    assert area.width() < 900  # the offscreen screen is smaller than the dialog's preferred width
    assert dialog.frameGeometry().width() <= area.width() and dialog.frameGeometry().height() <= area.height()
    for button in dialog.findChild(QDialogButtonBox).buttons():  # Load and Cancel, whole, inside the screen
        right = button.mapToGlobal(button.rect().bottomRight())
        assert right.x() <= area.right() and right.y() <= area.bottom(), button.text()

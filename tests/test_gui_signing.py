"""Signing a release from the export page (issue 16, point 6): the custodian picks the signing key and
types its passphrase; the release verifies with that key's fingerprint; a wrong passphrase is said."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from ppdp_desktop.core.release.signing import check_signature, new_signing_key  # noqa: E402
from tests.test_gui_export_lookup import TIMEOUT, fill, outcome, page, state  # noqa: E402,F401 - fixtures

SIGNING = "the custodian's signing passphrase"


def test_the_export_page_signs_the_release(qtbot, page, state, tmp_path):  # noqa: F811 - the fixtures imported above
    key = new_signing_key(tmp_path / "custodian.ppdpsign", SIGNING)
    fill(page, tmp_path / "release")
    qtbot.keyClicks(page.signing.key_edit, str(tmp_path / "custodian.ppdpsign"))
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert "passphrase" in page.error_label.text()  # a key without its passphrase is refused before work
    qtbot.keyClicks(page.signing.passphrase_edit, SIGNING)
    with qtbot.waitSignal(state.exported, timeout=TIMEOUT):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert check_signature(tmp_path / "release", key.fingerprint) == key.fingerprint
    assert page.signing.passphrase_edit.text() == ""  # not kept after use


def test_a_wrong_signing_passphrase_is_said_and_nothing_is_written(qtbot, page, state, tmp_path):  # noqa: F811 - fixtures
    new_signing_key(tmp_path / "custodian.ppdpsign", SIGNING)
    fill(page, tmp_path / "release")
    qtbot.keyClicks(page.signing.key_edit, str(tmp_path / "custodian.ppdpsign"))
    qtbot.keyClicks(page.signing.passphrase_edit, "not the passphrase")
    with qtbot.waitSignal(state.worker.errored, timeout=TIMEOUT):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert not (tmp_path / "release").exists()


def test_the_release_key_is_never_written_over_the_signing_key(qtbot, page, state, tmp_path):  # noqa: F811 - fixtures
    """Issue 32, 1: the same file as signing key and as the release's key, "replace" ticked: the release was signed,
    then the custodian's signing key destroyed by the release's key. Refused before any work, the key untouched."""
    signing = tmp_path / "custodian.ppdpsign"
    new_signing_key(signing, SIGNING)
    before = signing.read_bytes()
    fill(page, tmp_path / "release", key=signing)
    qtbot.keyClick(page.overwrite_check, Qt.Key.Key_Space)  # "replace an existing release", ticked from the keyboard
    assert page.overwrite_check.isChecked()
    qtbot.keyClicks(page.signing.key_edit, str(signing))
    qtbot.keyClicks(page.signing.passphrase_edit, SIGNING)
    qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert "'Sign with'" in page.error_label.text() and str(signing) in page.error_label.text()
    assert page.error_box is not None and page.error_box.isVisible() and "'Sign with'" in page.error_box.text()
    assert not state.worker.is_running() and signing.read_bytes() == before and not (tmp_path / "release").exists()
    page.key_edit.setText(str(tmp_path / "release.ppdpkey"))  # another key file: the export goes ahead
    with qtbot.waitSignal(state.exported, timeout=TIMEOUT):
        qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
    assert signing.read_bytes() == before

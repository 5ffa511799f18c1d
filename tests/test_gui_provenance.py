"""Provenance in the window (issue 20.3, 28.1): an export with a project open records the project file's SHA-256
(sealed in the key; keyed with this installation's secret in release.json, never plain), and the reverse lookup
says when the key's release was made with other versions (a key re-sealed with an older recorded version: real files,
the real dialog)."""
from __future__ import annotations

import hashlib
import json

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402

from ppdp_desktop.core.anonymize import anonymize  # noqa: E402
from ppdp_desktop.core.data.checksums import manifest_sha256  # noqa: E402
from ppdp_desktop.core.data.loading import load_table  # noqa: E402
from ppdp_desktop.core.release import keyfile  # noqa: E402
from ppdp_desktop.core.release.package import write_release  # noqa: E402
from ppdp_desktop.gui.lookup_dialog import LookupDialog  # noqa: E402
from ppdp_desktop.gui.worker import Worker  # noqa: E402
from tests.test_provenance import KINDS, PASSPHRASE, _check_key, _check_public, _project, _settings, _table  # noqa: E402

RUN_STEP, EXPORT_STEP = 4, 6
TIMEOUT = 60_000


def test_an_export_with_a_project_open_records_the_project_file(window, qtbot, tmp_path):
    data = tmp_path / "patients.csv"
    _table(300).to_csv(data, index=False)
    project = _project(tmp_path, data)
    assert window.open_project(project)
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=TIMEOUT)
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=TIMEOUT)
    window.go_to(EXPORT_STEP)
    export = window.pages[EXPORT_STEP]
    export.folder_edit.setText(str(tmp_path / "release"))
    export.key_edit.setText(str(tmp_path / "release.ppdpkey"))
    export.passphrase.first.setText(PASSPHRASE)
    export.passphrase.second.setText(PASSPHRASE)
    assert export.export()
    qtbot.waitUntil(lambda: (tmp_path / "release" / "release.json").is_file(), timeout=TIMEOUT)
    block = json.loads((tmp_path / "release" / "release.json").read_text(encoding="utf-8"))["provenance"]
    _check_public(block, data, project)
    _check_key(tmp_path / "release.ppdpkey", tmp_path / "release", data)
    payload = keyfile.open_key(tmp_path / "release.ppdpkey", PASSPHRASE, manifest_sha256(tmp_path / "release"))
    assert payload["provenance"]["project_sha256"] == hashlib.sha256(project.read_bytes()).hexdigest()


def test_the_reverse_lookup_says_the_key_was_made_with_other_versions(qtbot, tmp_path):
    data = tmp_path / "patients.csv"
    _table(200).to_csv(data, index=False)
    folder, key = tmp_path / "release", tmp_path / "release.ppdpkey"
    write_release(anonymize(load_table(data, kinds=KINDS), _settings()), folder, include_report=False, key_path=key,
                  passphrase=PASSPHRASE)
    payload = keyfile.open_key(key, PASSPHRASE, manifest_sha256(folder))
    records = payload.pop(keyfile.RECORDS, None)
    payload["provenance"]["libraries"]["numpy"] = "1.0.0"
    key.unlink()
    keyfile.seal(payload, PASSPHRASE, manifest_sha256(folder), key, records=records)
    worker = Worker()
    try:
        dialog = LookupDialog(worker, str(folder), str(key))
        qtbot.addWidget(dialog)
        dialog.passphrase_edit.setText(PASSPHRASE)
        qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.ring is not None, timeout=TIMEOUT)
        assert dialog.tabs.isEnabled()
        assert "This release was made with numpy 1.0.0; you have" in dialog.message.text()
        assert "the same seed may not give the same release" in dialog.message.text()
    finally:
        worker.shutdown()

"""The export page's optional signature: a signing key file (made by ``ppdp signing-key``) and its own
passphrase. The key is opened in the export job (scrypt takes a moment), never on the GUI thread."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ppdp_desktop.core.release.signing import SigningKey, open_signing_key

KEY_FILTER = "Signing keys (*.ppdpsign *.ppdpkey *.key);;All files (*)"


class SigningFields(QWidget):
    """Signing key file and passphrase; both empty means "do not sign"."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key_edit = QLineEdit()
        self.key_edit.setPlaceholderText("optional: sign the release so recipients can check who made it")
        self.key_edit.setToolTip("Optional: your signing key file, so recipients can check that the release "
                                 "comes from you and was not changed")
        self.browse = QPushButton("Browse…")
        self.browse.setToolTip("Choose your signing key file")
        self.passphrase_edit = QLineEdit()
        self.passphrase_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase_edit.setPlaceholderText("the signing key's passphrase")
        self.passphrase_edit.setToolTip("The passphrase of the signing key (not the one of the release's key file)")
        self.hint = QLabel("Make a signing key once with  ppdp signing-key FILE  and give its fingerprint to your "
                           "recipients; they check a release with  ppdp verify RELEASE --signer FINGERPRINT.")
        self.hint.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.key_edit, 1)
        row.addWidget(self.browse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.passphrase_edit)
        layout.addWidget(self.hint)
        self.browse.clicked.connect(self._browse)
        self.key_edit.textChanged.connect(self.changed)
        self.passphrase_edit.textChanged.connect(self.changed)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Signing key", "", KEY_FILTER)
        if path:
            self.key_edit.setText(path)

    def problem(self) -> str | None:
        """Why the fields cannot be used as they are (None: fine, including "do not sign")."""
        path = self.key_edit.text().strip()
        if not path:
            return None
        if not Path(path).is_file():
            return f"The signing key {path} does not exist."
        if not self.passphrase_edit.text():
            return "Enter the signing key's passphrase (or clear the signing key to export unsigned)."
        return None

    def opener(self):
        """A function for the export job that opens the key (None when not signing)."""
        path, passphrase = self.key_edit.text().strip(), self.passphrase_edit.text()
        if not path:
            return None

        def open_key() -> SigningKey:
            return open_signing_key(path, passphrase)

        return open_key

    def clear_passphrase(self) -> None:
        self.passphrase_edit.clear()

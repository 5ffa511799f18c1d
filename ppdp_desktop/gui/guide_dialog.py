"""The user guide in a window of its own: the shipped HTML (``resources/guide/user-guide.html``, made by
``python -m ppdp_desktop.docs_build``) in a QTextBrowser, opened at a section's anchor.

F1 opens it at the section of the wizard step in view. A QTextBrowser, not a web view: it reads one local
file whose pictures are embedded, follows only links inside the guide and never opens a network connection.
"""
from __future__ import annotations

import base64

from PySide6.QtCore import QByteArray, Qt, QUrl
from PySide6.QtGui import QImage, QTextDocument
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from ppdp_desktop.core.data.resources import resource_path
from ppdp_desktop.gui.screen_fit import fit_to_screen

GUIDE = "guide/user-guide.html"
START = "start"
IMAGE_WIDTH = 760  # the largest width a screenshot is shown at (they are 1280 wide); fits a 1366x768 screen


class GuideBrowser(QTextBrowser):
    """A QTextBrowser that scales the guide's embedded screenshots smoothly, once, to ``image_width`` (Qt
    ignores CSS max-width and would show them at 1280 pixels, or scaled pixel by pixel with jagged text)."""

    image_width = IMAGE_WIDTH

    def loadResource(self, kind: int, url: QUrl | str) -> object:  # noqa: N802 - Qt API
        url = QUrl(url)
        if kind == QTextDocument.ResourceType.ImageResource.value and url.scheme() == "data":
            header, _, payload = url.toString().partition(",")
            image = QImage.fromData(QByteArray(base64.b64decode(payload))) if header.endswith(";base64") else QImage()
            if not image.isNull() and image.width() > self.image_width:
                ratio = self.devicePixelRatioF()
                image = image.scaledToWidth(round(self.image_width * ratio), Qt.TransformationMode.SmoothTransformation)
                image.setDevicePixelRatio(ratio)
                return image
        return super().loadResource(kind, url)


class GuideDialog(QDialog):
    """A non-modal window showing the user guide; :meth:`show_section` scrolls it to an anchor."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("PPDP Desktop — User guide")
        self.path = resource_path(GUIDE)
        self.browser = GuideBrowser()
        self.browser.setOpenExternalLinks(False)  # the guide has no outside link; never hand one to a browser
        self.browser.setToolTip("The user guide. Links in it go to other sections; Back returns.")
        self.browser.backwardAvailable.connect(lambda available: self.back_button.setEnabled(available))
        self.back_button = QPushButton("Back")
        self.back_button.setToolTip("Return to the place you were reading before following a link")
        self.back_button.setEnabled(False)
        self.back_button.clicked.connect(self.browser.backward)
        self.contents_button = QPushButton("Contents")
        self.contents_button.setToolTip("Go to the guide's list of sections")
        self.contents_button.clicked.connect(lambda: self.show_section("contents"))
        self.close_button = QPushButton("Close")
        self.close_button.setToolTip("Close the guide (F1 opens it again at the step you are on)")
        self.close_button.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(self.back_button)
        buttons.addWidget(self.contents_button)
        buttons.addWidget(QLabel("F1 on any step opens the guide at that step."), 1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addLayout(buttons)
        self._fit_to_screen()

    def _fit_to_screen(self) -> None:
        """Wide enough for the guide's pictures, never larger than the screen (1366x768 included)."""
        width = fit_to_screen(self, 900, 720).width()
        self.browser.image_width = max(320, min(IMAGE_WIDTH, width - 140))  # the text's margins and a scroll bar

    def show_section(self, anchor: str = START) -> None:
        """Show the guide scrolled to ``anchor`` (a heading's id, e.g. ``"load"``)."""
        if not self.path.is_file():
            self.browser.setPlainText(f"The user guide is missing ({self.path}); reinstall PPDP Desktop.")
            return
        url = QUrl.fromLocalFile(str(self.path))
        url.setFragment(anchor)
        first = self.browser.source().isEmpty()
        self.browser.setSource(url)  # the same document again only scrolls, and Back returns
        if first:
            self.browser.clearHistory()
        self.browser.scrollToAnchor(anchor)

    def current_anchor(self) -> str:
        """The anchor the guide was last sent to (the source URL's fragment)."""
        return self.browser.source().fragment()

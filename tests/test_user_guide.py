"""The user guide: the shipped HTML is the rendering of docs/guide/*.md, it reaches nothing outside itself,
every wizard step has its section, and F1 on each step of a real window opens the guide at that section."""
from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPoint, Qt

from ppdp_desktop.core.data.resources import resource_path
from ppdp_desktop.core.errors import InputError
from ppdp_desktop.docs_build import GUIDE_DIR, OUTPUT, inline, render_guide
from ppdp_desktop.gui.guide_dialog import GUIDE

PAGE_ANCHORS = ["load", "roles", "sensitivity", "method", "run", "report", "export"]


@pytest.fixture(scope="module")
def shipped() -> str:
    return OUTPUT.read_text(encoding="utf-8")


def test_the_shipped_guide_is_the_rendering_of_the_markdown(shipped):
    assert resource_path(GUIDE) == OUTPUT  # the file the window opens is the one checked here
    assert render_guide() == shipped, "docs/guide changed: run  python -m ppdp_desktop.docs_build"


def test_the_guide_is_self_contained(shipped):
    assert not re.search(r"https?:|ftp:|file:", shipped, re.IGNORECASE)
    assert not re.search(r"""(src|href)\s*=\s*["']?//""", shipped, re.IGNORECASE)
    sources = re.findall(r"""src\s*=\s*["']([^"']*)""", shipped, re.IGNORECASE)
    assert len(sources) >= 8 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert all(h.startswith("#") for h in re.findall(r"""href\s*=\s*["']([^"']*)""", shipped, re.IGNORECASE))
    assert "<link" not in shipped and "@import" not in shipped and "url(" not in shipped
    markdown = "".join(p.read_text(encoding="utf-8") for p in sorted(GUIDE_DIR.glob("*.md")))
    for png in sorted((GUIDE_DIR.parent / "screenshots").glob("0[1-8]-*.png")):
        assert f"../screenshots/{png.name}" in markdown  # every wizard screenshot is in the guide


def test_every_step_and_topic_has_a_section(shipped):
    ids = re.findall(r'<h[1-3] id="([a-z0-9-]+)">', shipped)
    for anchor in PAGE_ANCHORS + ["methods", "glossary", "key-file", "large-files", "verdicts", "contents"]:
        assert anchor in ids, anchor
    for term in ("rho1, rho2", "Gamma", "Differential privacy, epsilon", "k (k-anonymity)", "l (linking", "Quasi-identifier",
                 "Sensitive attribute", "Alias", "Pseudonym", "Grid step h"):
        assert f"<dt>{term}" in shipped, term


def test_the_renderer_refuses_a_broken_link_and_escapes_text(tmp_path):
    (tmp_path / "a.md").write_text("# A {#a}\n\nSee [b](#b) and <script> & `x < y`.\n", encoding="utf-8")
    with pytest.raises(InputError, match="#b"):
        render_guide(tmp_path)
    assert inline("<b> & `x < y` **s**") == "&lt;b&gt; &amp; <code>x &lt; y</code> <b>s</b>"


def test_f1_on_each_step_opens_the_guide_at_that_step(window, qtbot, tmp_path):
    from ppdp_desktop.gui.screenshots import drive_demo

    drive_demo(window, None, tmp_path)  # every step reachable
    for index, anchor in enumerate(PAGE_ANCHORS):
        window.go_to(index)
        assert window.stack.currentIndex() == index
        window.activateWindow()
        window.setFocus()
        qtbot.keyClick(window, Qt.Key.Key_F1)
        guide = window.guide
        assert guide is not None and guide.isVisible()
        assert guide.current_anchor() == anchor
        # the heading of that step is at the top of the view
        browser = guide.browser
        block = browser.cursorForPosition(QPoint(10, 5)).block()  # the text at the top of the view
        while block.isValid() and not block.text().strip():
            block = block.next()
        assert block.text().startswith(f"Step {index + 1}"), (anchor, block.text())
        guide.close()
    # Help > User guide opens it too, at the step in view, with the guide window already open (no close between)
    window.go_to(2)
    action = next(a for a in window.menuBar().actions() if a.text() == "&Help").menu().actions()[0]
    assert action.text() == "&User guide" and action.shortcut().toString() == "F1"
    action.trigger()
    assert window.guide.current_anchor() == "sensitivity"
    window.go_to(6)
    # the guide's own controls: Contents, then Back returns
    qtbot.keyClick(window, Qt.Key.Key_F1)
    qtbot.mouseClick(window.guide.contents_button, Qt.MouseButton.LeftButton)
    assert window.guide.current_anchor() == "contents"
    assert window.guide.back_button.isEnabled()
    qtbot.mouseClick(window.guide.back_button, Qt.MouseButton.LeftButton)
    assert window.guide.current_anchor() == "export"

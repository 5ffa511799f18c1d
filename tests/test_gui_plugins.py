"""The window and plug-ins: a method registered at test time gets a card and a generic editor on the
method page; a project saved by the window replays headless (``ppdp run``) to the same release."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402

from ppdp_desktop.cli import main  # noqa: E402
from ppdp_desktop.core.errors import ParameterError, phrase, setting_ref  # noqa: E402
from ppdp_desktop.core.methods import register, unregister  # noqa: E402
from ppdp_desktop.core.settings import MethodSettings  # noqa: E402
from ppdp_desktop.gui.method_editors import GenericParameters, setting_label  # noqa: E402
from tests.toy_method import TOY, ToyMethod, ToySettings  # noqa: E402

PASSPHRASE = "correct horse battery staple 7"
METHOD_STEP, RUN_STEP, EXPORT_STEP = 3, 4, 6


@pytest.fixture
def toy():
    method = register(ToyMethod())
    yield method
    unregister(TOY)


def test_a_registered_method_gets_a_card_and_an_editor(toy, window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    card = page.cards[TOY]
    assert card.choose.text() == toy.title
    editor = page.editors[TOY]
    assert isinstance(editor, GenericParameters) and set(editor.fields) == {"strength"}
    spin = editor.fields["strength"]
    assert (spin.minimum(), spin.maximum()) == (0.0, 1.0)  # the declared limits
    assert editor.layout().labelForField(spin).text() == "Toy strength:"  # the declared label
    assert spin.toolTip() == "how strongly the toy acts, from 0 to 1"  # the declared help
    page.scroll.ensureWidgetVisible(card)
    qtbot.mouseClick(card.choose, Qt.MouseButton.LeftButton, pos=QPoint(8, card.choose.height() // 2))  # its circle
    assert window.state.project.method == TOY
    spin.setFocus()
    qtbot.keyClick(spin, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(spin, "0.75")
    qtbot.keyClick(spin, Qt.Key.Key_Enter)
    assert window.state.project.options[TOY] == {"strength": 0.75}
    assert page.is_complete()


def test_ppdp_run_on_a_saved_project_gives_the_windows_release(window, qtbot, tmp_path, monkeypatch, capsys):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.state.seed = 7  # a test's fixed seed, as `ppdp run --seed 7` below
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    window.go_to(EXPORT_STEP)
    export = window.pages[EXPORT_STEP]
    export.folder_edit.setText(str(tmp_path / "window"))
    export.key_edit.setText(str(tmp_path / "window.ppdpkey"))
    export.passphrase.first.setText(PASSPHRASE)
    export.passphrase.second.setText(PASSPHRASE)
    export.export()
    qtbot.waitUntil(lambda: (tmp_path / "window" / "release.csv").is_file(), timeout=60_000)
    assert window.save_project(tmp_path / "monthly.ppdp")
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    code = main(["run", str(tmp_path / "monthly.ppdp"), "--out", str(tmp_path / "script"),
                 "--key", str(tmp_path / "script.ppdpkey"), "--seed", "7"])
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "script" / "release.csv").read_bytes() == (tmp_path / "window" / "release.csv").read_bytes()


def test_a_registered_methods_error_is_phrased_with_its_label_in_the_window(toy):
    with pytest.raises(ParameterError) as caught:
        ToySettings(2.0).check()
    assert caught.value.phrase(setting_label) == "'Toy strength' must be a number from 0 to 1; got 2.0."
    help_text = "see " + setting_ref("k-anonymity", "K") + " and " + setting_ref("rho1", "X")  # declared, and not
    assert phrase(help_text, setting_label) == "see 'k (smallest group)' and --rho1 X"


@dataclass
class CountSettings(MethodSettings):
    """Parameters without declared limits: the generic editor shows text boxes for them."""

    rounds: int = 3
    label: str = "first"


class CountMethod(ToyMethod):
    name = "toy-count"
    title = "Toy method with free-text parameters (plug-in test)"
    settings_type = CountSettings


@pytest.fixture
def counting():
    method = register(CountMethod())
    yield method
    unregister(CountMethod.name)


def test_free_text_parameters_keep_their_type(counting, window, qtbot):
    window.load_demo()
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    window.go_to(METHOD_STEP)
    page = window.pages[METHOD_STEP]
    editor = page.editors[counting.name]
    assert isinstance(editor, GenericParameters) and set(editor.fields) == {"rounds", "label"}
    rounds, label = editor.fields["rounds"], editor.fields["label"]
    assert (rounds.text(), label.text()) == ("3", "first")
    page.scroll.ensureWidgetVisible(rounds)
    qtbot.mouseClick(rounds, Qt.MouseButton.LeftButton)
    qtbot.keyClick(rounds, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(rounds, "12")
    qtbot.keyClick(rounds, Qt.Key.Key_Enter)
    assert window.state.project.options[counting.name] == {"rounds": 12, "label": "first"}  # a number, not "12"
    qtbot.keyClick(rounds, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(rounds, "many")
    qtbot.keyClick(rounds, Qt.Key.Key_Enter)
    assert window.state.project.options[counting.name]["rounds"] == 12  # unreadable text keeps the last number
    qtbot.mouseClick(label, Qt.MouseButton.LeftButton)
    qtbot.keyClick(label, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(label, "second")
    qtbot.keyClick(label, Qt.Key.Key_Enter)
    assert window.state.project.options[counting.name]["label"] == "second"

"""Editors of a method's own parameters on the method page, chosen by the method's settings type.

A method is reached through the registry only: its card gets the editor registered here under the name the
method gives (``Method.window_editor``), or a generic form built from the settings dataclass (a spin box per number, a combo box
per choice, declared limits as the widgets' ranges), or none when it has no parameters. Every editor
reads and writes ``project.options[method]`` through the project's ``method_settings``.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QSpinBox,
    QWidget,
)

from ppdp_desktop.core.data.schema import Kind, Role
from ppdp_desktop.core.declarations import Setting, declared
from ppdp_desktop.core.errors import cli_name, phrase
from ppdp_desktop.core.methods import Method, declared_setting
from ppdp_desktop.core.settings import Interval, MethodSettings, NoSettings, OneOf
from ppdp_desktop.gui.dp_parameters import DPParameters
from ppdp_desktop.gui.state import WizardState


class MethodEditor(QWidget):
    """Base of a method's parameter editor: ``refresh`` from the state, ``changed`` after an edit."""

    changed = Signal()

    def __init__(self, method: str) -> None:
        super().__init__()
        self.method = method
        self.state: WizardState | None = None
        self._filling = False

    def refresh(self, state: WizardState) -> None:
        self.state = state
        self._filling = True
        try:
            self.show_settings(state.project.method_settings(self.method))
        finally:
            self._filling = False

    def show_settings(self, settings: MethodSettings) -> None:  # pragma: no cover - every editor overrides it
        raise NotImplementedError

    def edited_settings(self) -> MethodSettings:  # pragma: no cover - every editor overrides it
        raise NotImplementedError

    def problems(self) -> list[str]:
        """What blocks running this method, each naming what to change (none by default)."""
        return []

    def _on_edited(self, *_args: Any) -> None:
        if self._filling or self.state is None:
            return
        self.state.project.set_method_settings(self.edited_settings(), self.method)
        self.changed.emit()


class RecodingParameters(MethodEditor):
    """Personalized recoding's parameters: which numeric columns to grade, and how (window editor "recoding":
    settings with ``graded``, ``categories`` and ``grading``, whose choices the settings declare)."""

    def __init__(self, method: str, registered: Method) -> None:
        super().__init__(method)
        self.settings_type = registered.settings_type
        self.graded = QListWidget()
        self.graded.setMaximumHeight(90)
        self.categories = QSpinBox(minimum=1, maximum=50, value=3)
        self.grading = QComboBox()
        self.grading.addItems(list(getattr(self.settings_type.constraints.get("grading"), "options", ())))
        self.graded.setToolTip("Tick the numeric columns to publish as secret grades (1, 2, 3 …) instead of their "
                               "values; the key file holds what each grade means")
        self.categories.setToolTip("How many grades each ticked column is cut into")
        self.grading.setToolTip("Where the grades are cut: at equal shares of the records (quantile) or at equal "
                                "steps of the value")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #8a4b00;")
        form = QFormLayout(self)
        form.addRow(_label(self.settings_type, "graded"), self.graded)
        form.addRow("", self.note)
        form.addRow(_label(self.settings_type, "categories"), self.categories)
        form.addRow(_label(self.settings_type, "grading"), self.grading)
        self.categories.valueChanged.connect(self._on_edited)
        self.grading.currentIndexChanged.connect(self._on_edited)
        self.graded.itemChanged.connect(self._on_edited)

    def show_settings(self, settings: Any) -> None:
        self.graded.clear()
        dataset, roles = self.state.dataset, self.state.project.roles
        if dataset is not None:
            for column in dataset.frame.columns:
                if dataset.schema.attributes[column].kind is Kind.NUMERIC and roles.get(column) != "identifier":
                    item = QListWidgetItem(column)
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    item.setCheckState(Qt.CheckState.Checked if column in settings.graded else Qt.CheckState.Unchecked)
                    self.graded.addItem(item)
        self.categories.setValue(settings.categories)
        self.grading.setCurrentText(settings.grading)
        self._update_note(settings.graded)

    def _update_note(self, graded: list[str]) -> None:
        """Grading decides a quasi-identifier's role: say so before Run."""
        quasi = [c for c in graded if self.state.project.roles.get(c) == Role.QUASI_IDENTIFIER.value]
        self.note.setText("" if not quasi else
                          f"{', '.join(quasi)}: a quasi-identifier; grading protects it (its values become secret "
                          "grades), so it is no longer kept as a quasi-identifier.")

    def _on_edited(self, *_args: Any) -> None:
        super()._on_edited(*_args)
        if not self._filling and self.state is not None:
            self._update_note(self.edited_settings().graded)

    def edited_settings(self) -> MethodSettings:
        items = [self.graded.item(i) for i in range(self.graded.count())]
        graded = [i.text() for i in items if i.checkState() == Qt.CheckState.Checked]
        return self.settings_type(graded=graded, categories=self.categories.value(),
                                  grading=self.grading.currentText())


class LinkingParameters(MethodEditor):
    """Randomized response's parameters: the bound 1/l and what to randomize (quasi-identifiers from step 2)
    (window editor "linking": settings with ``l`` and ``randomize``)."""

    def __init__(self, method: str, registered: Method) -> None:
        super().__init__(method)
        self.settings_type = registered.settings_type
        self.l = QDoubleSpinBox(decimals=1, minimum=1.1, maximum=100.0, singleStep=0.5, value=3.0)
        self.l.setToolTip("The paper's attacker, who un-randomizes records by drawing their original values from "
                          "the posterior, recovers a record of a person's group with the person's sensitive value at "
                          "most 1/l of the time; guessing a group's most common value is not bounded")
        self.randomize = QComboBox()
        for text, value in (("quasi-identifiers and sensitive", "both"), ("quasi-identifiers only", "qi"),
                            ("sensitive only", "s")):
            self.randomize.addItem(text, value)
        self.randomize.setToolTip("Which columns get random noise: the quasi-identifiers (age, sex, postcode …), the "
                                  "sensitive column, or both")
        form = QFormLayout(self)
        form.addRow(_label(self.settings_type, "l"), self.l)
        form.addRow(_label(self.settings_type, "randomize"), self.randomize)
        self.l.valueChanged.connect(self._on_edited)
        self.randomize.currentIndexChanged.connect(self._on_edited)

    def show_settings(self, settings: Any) -> None:
        self.l.setValue(settings.l if settings.l is not None else 3.0)
        self.randomize.setCurrentIndex(max(0, self.randomize.findData(settings.randomize)))

    def edited_settings(self) -> MethodSettings:
        return self.settings_type(l=self.l.value(), randomize=self.randomize.currentData())


class DifferentialPrivacyParameters(MethodEditor):
    """Differential privacy's card: the columns, epsilon, k and domains (:class:`DPParameters`; window editor "dp")."""

    def __init__(self, method: str, registered: Method) -> None:
        super().__init__(method)
        self.parameters = DPParameters(method)
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow(self.parameters)
        self.parameters.changed.connect(self.changed)

    def refresh(self, state: WizardState) -> None:
        self.state = state
        self.parameters.set_data(state.project, state.dataset, state.taxonomies, state.column_stats)

    def problems(self) -> list[str]:
        return self.parameters.problems()


class GenericParameters(MethodEditor):
    """A form for any settings dataclass, from its declarations (:func:`~ppdp_desktop.core.declarations.setting`):
    each parameter's label, its help as the tooltip, a spin box within its declared limits, a combo box of its
    choices, else a text box."""

    def __init__(self, method: str, settings_type: type[MethodSettings]) -> None:
        super().__init__(method)
        self.settings_type = settings_type
        self.fields: dict[str, QWidget] = {}
        self.defaults: dict[str, Any] = {}  # a free-text field's value is read back as its default's type
        self.shown: dict[str, Any] = {}
        form = QFormLayout(self)
        declarations = declared(settings_type)
        for f in dataclasses.fields(settings_type):
            if not f.metadata.get("json", True):
                continue
            declaration = declarations.get(f.name) or Setting(name=f.name)
            widget = _field_widget(settings_type.constraints.get(f.name), self._on_edited)
            widget.setToolTip(phrase(declaration.help, setting_label) if declaration.help
                              else f"The method's setting '{declaration.title}'")
            self.fields[f.name] = widget
            self.defaults[f.name] = _default(f)
            form.addRow(f"{declaration.title}:", widget)

    def show_settings(self, settings: MethodSettings) -> None:
        for name, widget in self.fields.items():
            value = self.shown[name] = getattr(settings, name)
            if isinstance(widget, QComboBox):
                widget.setCurrentText(str(value))
            elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
                widget.setValue(value if value is not None else widget.minimum())
            else:
                widget.setText("" if value is None else str(value))

    def edited_settings(self) -> MethodSettings:
        values = {}
        for name, widget in self.fields.items():
            if isinstance(widget, QComboBox):
                values[name] = widget.currentText()
            elif isinstance(widget, (QSpinBox, QDoubleSpinBox)):
                values[name] = widget.value()
            else:
                values[name] = self.shown[name] = _parse(widget.text(), self.defaults[name], self.shown.get(name))
        return self.settings_type(**values)


def _label(settings_type: type[MethodSettings], name: str) -> str:
    """The form label of parameter ``name``: its declared label (what the window's messages call it too)."""
    declaration = declared(settings_type).get(name)
    return f"{declaration.title if declaration else name.replace('_', ' ')}:"


def setting_label(key: str, metavar: str = "") -> str:
    """The window's name for a setting a text refers to (:func:`~ppdp_desktop.core.errors.setting_ref`): the label
    of a declared parameter of a registered method or of re-identification, in quotes; else the option."""
    declaration = declared_setting(key)
    return f"'{declaration.title}'" if declaration is not None else cli_name(key, metavar)


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _parse(text: str, default: Any, shown: Any) -> Any:
    """A free-text field's value, as a number when its default is one (unreadable text keeps ``shown``)."""
    text = text.strip()
    if not text and default is None:
        return None
    kind = type(default) if default is not None else type(shown) if shown is not None else str
    if kind is bool:
        return text.lower() in ("1", "true", "yes", "on")
    if kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            return shown
    return text


def _field_widget(constraint: Any, on_edit: Callable[..., None]) -> QWidget:
    if isinstance(constraint, OneOf):
        widget = QComboBox()
        widget.addItems(list(constraint.options))
        widget.currentIndexChanged.connect(on_edit)
        return widget
    if isinstance(constraint, Interval):
        low = constraint.low if constraint.low is not None else -1e9
        high = constraint.high if constraint.high is not None else 1e9
        if constraint.whole:
            widget = QSpinBox(minimum=int(math.ceil(low + (1 if constraint.open_low else 0))), maximum=int(min(high, 2**31 - 1)))
        else:
            step = 10 ** math.floor(math.log10(max(high - low, 1e-9))) / 10 if math.isfinite(high - low) else 0.1
            widget = QDoubleSpinBox(decimals=3, minimum=low + (1e-3 if constraint.open_low else 0.0), maximum=high,
                                    singleStep=step)
        widget.valueChanged.connect(on_edit)
        return widget
    widget = QLineEdit()
    widget.editingFinished.connect(on_edit)
    return widget


#: ``Method.window_editor`` -> its editor, built from the registry name and the method; any other method gets
#: :class:`GenericParameters`.
EDITORS: dict[str, Callable[[str, Method], MethodEditor]] = {
    "recoding": RecodingParameters,
    "linking": LinkingParameters,
    "dp": DifferentialPrivacyParameters,
}


def editor_for(name: str, method: Method) -> MethodEditor | None:
    """The editor of ``method``'s own parameters (None if it has none)."""
    settings_type = method.settings_type
    if method.window_editor in EDITORS:
        return EDITORS[method.window_editor](name, method)
    if settings_type is NoSettings or not dataclasses.fields(settings_type):
        return None
    return GenericParameters(name, settings_type)

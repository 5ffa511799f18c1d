"""Step 4: pick a method. One card per registered method, explained in plain words; methods added
to the registry appear here without changing the wizard."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from PySide6.QtCore import Qt

from ppdp_desktop.core.methods import REGISTRY
from ppdp_desktop.core.project import DP_METHOD
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.gui.dp_parameters import DPParameters
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.state import WizardState


class MethodCard(QFrame):
    """A method's name, what it protects against and what it does not, its parameters and "compare"."""

    def __init__(self, name: str, group: QButtonGroup, parameters: QWidget | None = None) -> None:
        super().__init__()
        method = REGISTRY[name]
        self.name = name
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.choose = QRadioButton(method.title)
        font = self.choose.font()
        font.setBold(True)
        self.choose.setFont(font)
        group.addButton(self.choose)
        self.compare = QCheckBox("Also run it to compare in the report")
        summary = QLabel(method.summary)
        summary.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.choose)
        layout.addWidget(summary)
        if parameters is not None:
            layout.addWidget(parameters)
        layout.addWidget(self.compare)
        self.choose.toggled.connect(lambda on: self.compare.setEnabled(not on))


class RecodingParameters(QWidget):
    """Personalized recoding's parameters: which numeric columns to grade, and how."""

    def __init__(self) -> None:
        super().__init__()
        self.graded = QListWidget()
        self.graded.setMaximumHeight(90)
        self.categories = QSpinBox(minimum=1, maximum=50, value=3)
        self.grading = QComboBox()
        self.grading.addItems(["equal-width", "quantile"])
        form = QFormLayout(self)
        form.addRow("Grade these numeric columns (secret categories):", self.graded)
        form.addRow("Number of categories:", self.categories)
        form.addRow("Cut points:", self.grading)


class LinkingParameters(QWidget):
    """Randomized response's parameters: the bound 1/l and what to randomize (quasi-identifiers come from step 2)."""

    def __init__(self) -> None:
        super().__init__()
        self.l = QDoubleSpinBox(decimals=1, minimum=1.1, maximum=100.0, singleStep=0.5, value=3.0)
        self.l.setToolTip("An attacker who knows a person's quasi-identifiers guesses the sensitive value with "
                          "probability at most 1/l")
        self.randomize = QComboBox()
        for text, value in (("quasi-identifiers and sensitive", "both"), ("quasi-identifiers only", "qi"),
                            ("sensitive only", "s")):
            self.randomize.addItem(text, value)
        form = QFormLayout(self)
        form.addRow("l (risk at most 1/l):", self.l)
        form.addRow("Randomize:", self.randomize)


class MethodPage(WizardPage):
    title = "Method"

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.group = QButtonGroup(self)
        self.recoding = RecodingParameters()
        self.linking = LinkingParameters()
        self.dp = DPParameters()
        extra = {"personalized": self.recoding, "rr": self.linking, DP_METHOD: self.dp}
        self.cards = {name: MethodCard(name, self.group, extra.get(name)) for name in REGISTRY}
        body = QWidget()
        column = QVBoxLayout(body)
        intro = QLabel("Choose how the sensitive column is protected. Each method says what it guarantees "
                       "and what it does not.")
        intro.setWordWrap(True)
        column.addWidget(intro)
        for card in self.cards.values():
            column.addWidget(card)
            card.choose.toggled.connect(self._on_changed)
            card.compare.toggled.connect(self._on_changed)
        column.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(body)
        QVBoxLayout(self).addWidget(self.scroll)
        self.recoding.categories.valueChanged.connect(self._on_changed)
        self.recoding.grading.currentIndexChanged.connect(self._on_changed)
        self.recoding.graded.itemChanged.connect(self._on_changed)
        self.linking.l.valueChanged.connect(self._on_changed)
        self.linking.randomize.currentIndexChanged.connect(self._on_changed)
        self.dp.changed.connect(self._on_dp_changed)
        self._loading = False

    def refresh(self) -> None:
        project, dataset = self.state.project, self.state.dataset
        self._loading = True
        if project.method in self.cards:
            self.cards[project.method].choose.setChecked(True)
        for name, card in self.cards.items():
            card.compare.setChecked(name in project.compare and name != project.method)
        self.recoding.graded.clear()
        if dataset is not None:
            for column in dataset.frame.columns:
                if dataset.schema.attributes[column].kind is Kind.NUMERIC and project.roles.get(column) != "identifier":
                    item = QListWidgetItem(column)
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                    item.setCheckState(Qt.CheckState.Checked if column in project.graded else Qt.CheckState.Unchecked)
                    self.recoding.graded.addItem(item)
        self.recoding.categories.setValue(project.categories)
        self.recoding.grading.setCurrentText(project.grading)
        self.linking.l.setValue(project.rr_l)
        self.linking.randomize.setCurrentIndex(max(0, self.linking.randomize.findData(project.rr_randomize)))
        self.dp.set_data(project, dataset, self.state.taxonomies, self.state.column_stats)
        self._loading = False
        self.complete_changed.emit()

    def choose(self, name: str, compare: list[str] = ()) -> None:
        """Select a method (and the ones to compare with), as the user would."""
        self.cards[name].choose.setChecked(True)
        for other, card in self.cards.items():
            card.compare.setChecked(other in compare and other != name)

    def _on_changed(self) -> None:
        if self._loading:
            return
        project = self.state.project
        chosen = [n for n, c in self.cards.items() if c.choose.isChecked()]
        if chosen:
            project.method = chosen[0]
        project.compare = [n for n, c in self.cards.items() if c.compare.isChecked() and n != project.method]
        items = [self.recoding.graded.item(i) for i in range(self.recoding.graded.count())]
        project.graded = [i.text() for i in items if i.checkState() == Qt.CheckState.Checked]
        project.categories = self.recoding.categories.value()
        project.grading = self.recoding.grading.currentText()
        project.rr_l = self.linking.l.value()
        project.rr_randomize = self.linking.randomize.currentData()
        self.state.set_outcome(None)
        self.complete_changed.emit()

    def _on_dp_changed(self) -> None:
        """The DP widget wrote its settings into the project: results are stale, completeness may change."""
        if self._loading:
            return
        self.state.set_outcome(None)
        self.complete_changed.emit()

    def is_complete(self) -> bool:
        method = self.state.project.method
        if DP_METHOD in (method, *self.state.project.compare) and self.dp.problems():
            return False
        return method in REGISTRY

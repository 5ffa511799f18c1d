"""Step 3: how sensitive each value is, and each record's privacy choice."""
from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QRadioButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.domain import encode_column
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.sensitivity_model import SensitivityModel
from ppdp_desktop.gui.state import WizardState

EXPLAIN = (
    "Rare values are usually the most sensitive. With the rule below, a value seen in a fraction f of the "
    "records gets rho1 = f and rho2 = theta x f: after the release, nobody's belief that a record holds that "
    "value may grow more than theta-fold. Smaller theta means more protection and more noise. You can set "
    "any value's pair by editing its rho1 or rho2 cell."
)


class SensitivityPage(WizardPage):
    title = "Sensitivity & choices"

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.model = SensitivityModel(self)
        self.model.validity_changed.connect(self._on_validity_changed)
        self.rule_theta = QRadioButton("Less frequent values are more sensitive, with tolerance theta")
        self.rule_pair = QRadioButton("The same requirement for every value")
        group = QButtonGroup(self)
        group.addButton(self.rule_theta)
        group.addButton(self.rule_pair)
        self.theta = QDoubleSpinBox(decimals=2, minimum=1.01, maximum=1000.0, singleStep=0.5, value=3.0)
        self.theta.setToolTip("theta > 1: how many times an observer's belief in a value may grow")
        self.rho1 = QDoubleSpinBox(decimals=4, minimum=0.0001, maximum=0.9998, singleStep=0.01, value=0.1)
        self.rho2 = QDoubleSpinBox(decimals=4, minimum=0.0002, maximum=0.9999, singleStep=0.01, value=0.3)
        for widget in (self.theta, self.rho1, self.rho2):
            widget.valueChanged.connect(self._on_rule_changed)
        self.rule_theta.toggled.connect(self._on_rule_changed)
        rule_box = QGroupBox("How sensitive are the values?")
        form = QFormLayout(rule_box)
        explain = QLabel(EXPLAIN)
        explain.setWordWrap(True)
        form.addRow(explain)
        form.addRow(self.rule_theta, self.theta)
        pair = QHBoxLayout()
        pair.addWidget(QLabel("rho1"))
        pair.addWidget(self.rho1)
        pair.addWidget(QLabel("rho2"))
        pair.addWidget(self.rho2)
        form.addRow(self.rule_pair, pair)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.choice_source = QComboBox()
        self.choice_source.setToolTip("Only used by personalized recoding")
        self.choice_source.currentIndexChanged.connect(self._on_choice_source_changed)
        choices = QFormLayout()
        choices.addRow("Each record's privacy choice (personalized recoding):", self.choice_source)
        self.message = QLabel()
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(rule_box)
        layout.addWidget(self.table, 1)
        layout.addLayout(choices)
        layout.addWidget(self.message)
        state.dataset_changed.connect(self.refresh)

    def refresh(self) -> None:
        project, dataset = self.state.project, self.state.dataset
        sensitive = project.sensitive
        for widget in (self.theta, self.rho1, self.rho2, self.rule_theta):
            widget.blockSignals(True)
        self.rule_theta.setChecked(project.rho1 is None)
        self.rule_pair.setChecked(project.rho1 is not None)
        self.theta.setValue(project.theta or 3.0)
        if project.rho1 is not None:
            self.rho1.setValue(project.rho1)
            self.rho2.setValue(project.rho2)
        for widget in (self.theta, self.rho1, self.rho2, self.rule_theta):
            widget.blockSignals(False)
        self.choice_source.blockSignals(True)
        self.choice_source.clear()
        self.choice_source.addItem("The default choice of its value (table's last column)", None)
        if dataset is not None:
            for column in dataset.frame.columns:
                if column != sensitive:
                    self.choice_source.addItem(f"From column {column}", column)
        index = self.choice_source.findData(project.choice_column)
        self.choice_source.setCurrentIndex(max(index, 0))
        self.choice_source.blockSignals(False)
        domain = None
        if dataset is not None and sensitive is not None:
            try:
                domain = encode_column(dataset.frame[sensitive], sensitive, dataset.label)[0]
            except PPDPError as exc:
                self.message.setText(str(exc))
        self.model.set_domain(domain, project)
        self._on_validity_changed(self.model.is_valid())

    def _on_rule_changed(self) -> None:
        project = self.state.project
        if self.rule_theta.isChecked():
            project.theta, project.rho1, project.rho2 = self.theta.value(), None, None
        else:
            project.rho1, project.rho2 = self.rho1.value(), self.rho2.value()
        self.model.refresh()

    def _on_choice_source_changed(self) -> None:
        self.state.project.choice_column = self.choice_source.currentData()

    def _on_validity_changed(self, valid: bool) -> None:
        method = get_method(self.state.project.method)
        if not method.needs_sensitive and (self.model.error or self.model.requirement is None):
            text, style = (f"{method.title} (the method chosen in step 4) needs no sensitivity pairs: "
                           "this step only matters for the other methods."), "color: #1b5e20;"
        elif self.model.invalid:
            (row, _), (_, message) = next(iter(self.model.invalid.items()))
            text, style = f"Fix the red cells first: {message}", "color: #b71c1c;"
        elif self.model.error:
            text, style = self.model.error, "color: #b71c1c;"
        else:
            req = self.model.requirement
            protected = int(req.concern.sum()) if req is not None else 0
            text, style = f"{protected} value(s) protected; the others carry no privacy concern.", "color: #1b5e20;"
        self.message.setStyleSheet(style)
        self.message.setText(text)
        self.complete_changed.emit()

    def is_complete(self) -> bool:
        method = get_method(self.state.project.method)
        if not method.needs_sensitive:  # needs no pairs (nor a categorical sensitive column)
            return True
        return not self.model.invalid and (self.model.requirement is not None or not method.needs_pairs)

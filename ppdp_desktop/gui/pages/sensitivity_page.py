"""Step 3: how sensitive each value is, and each record's privacy choice."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QRadioButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.domain import CategoricalDomain, encode_column
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.gui.dp_blanks import count_ahead
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.sensitivity_model import SensitivityModel, fit_value_column
from ppdp_desktop.gui.state import WizardState

EXPLAIN = (
    "Rare values are usually the most sensitive. With the rule below, a value seen in a fraction f of the "
    "records gets rho1 = f and rho2 = theta x f: someone who believed a record holds that value with probability "
    "at most f cannot believe it with more than theta x f after the release. Smaller theta means more protection "
    "and more noise. You can set any value's pair by editing its rho1 or rho2 cell; the Status column says whether "
    "the bound covers the value (it does not cover a value held by more than its rho1 of the records)."
)


def count_values(dataset: Dataset, column: str) -> CategoricalDomain:
    """The values of ``column`` and how many records hold each (the table's rows)."""
    return encode_column(dataset.frame[column], column, dataset.label)[0]


class SensitivityPage(WizardPage):
    title = "Sensitivity & choices"
    help_anchor = "sensitivity"  # its section of the user guide (F1)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self.model = SensitivityModel(self)
        self.model.validity_changed.connect(self._on_validity_changed)
        self.model.rule_changed.connect(self._show_rule)
        self.rule_theta = QRadioButton("Less frequent values are more sensitive, with tolerance theta")
        self.rule_pair = QRadioButton("The same requirement for every value")
        self.rule_theta.setToolTip("Rare values are protected most: a value seen in a fraction f of the records "
                                   "gets rho1 = f and rho2 = theta x f")
        self.rule_pair.setToolTip("One (rho1, rho2) pair for every value of the sensitive column")
        group = QButtonGroup(self)
        group.addButton(self.rule_theta)
        group.addButton(self.rule_pair)
        self.theta = QDoubleSpinBox(decimals=2, minimum=1.01, maximum=1000.0, singleStep=0.5, value=3.0)
        self.theta.setToolTip("theta > 1: a belief of at most f (the value's frequency) may grow to at most "
                              "theta x f")
        self.rho1 = QDoubleSpinBox(decimals=4, minimum=0.0001, maximum=0.9998, singleStep=0.01, value=0.1)
        self.rho2 = QDoubleSpinBox(decimals=4, minimum=0.0002, maximum=0.9999, singleStep=0.01, value=0.3)
        self.rho1.setToolTip("rho1: a belief that a record holds a value of at most this before the release…")
        self.rho2.setToolTip("rho2: …must stay below this after reading the release (rho1 < rho2 < 1)")
        for widget in (self.theta, self.rho1, self.rho2):
            widget.valueChanged.connect(self._on_rule_changed)
        self.rule_theta.toggled.connect(self._on_rule_changed)
        self.one_pair = QPushButton("Use one pair for every value")
        self.one_pair.setToolTip("Give every value the pair rho1, rho2 above: the pairs typed into the table's rows are "
                                 "dropped (perturbation partitioning needs one pair for every value)")
        self.one_pair.clicked.connect(self._on_one_pair_clicked)
        rule_box = QGroupBox("How sensitive are the values?")
        rules = QVBoxLayout(rule_box)
        explain = QLabel(EXPLAIN)
        explain.setWordWrap(True)
        rules.addWidget(explain)
        # one line per rule, its controls at their own width beside it (a small window shortens the stretch, not them)
        for line in ((self.rule_theta, self.theta), (self.rule_pair, QLabel("rho1"), self.rho1, QLabel("rho2"), self.rho2),
                     (self.one_pair,)):
            row = QHBoxLayout()
            for widget in line:
                row.addWidget(widget)
            row.addStretch(1)
            rules.addLayout(row)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setToolTip("One row per value of the sensitive column. Double-click its rho1, rho2 or default "
                              "choice to change it. Status: whether the value's bound covers it (not a value held by "
                              "more than its rho1 of the records, marked amber); the columns on the right show how many "
                              "records keep their value.")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # Columns sized from the rows on screen, not from every value: a column of thousands of values
        # would otherwise format every cell of the table at each layout (167 values: 50 ms per page switch).
        header.setResizeContentsPrecision(0)
        # ... except the values themselves, sized once per table from every label (:func:`fit_value_column`)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self._domain_of: tuple[Dataset | None, str | None, CategoricalDomain | None] = (None, None, None)
        self._ahead: tuple[Dataset, str, Future] | None = None  # a count running since the column was tagged
        self._counter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ppdp-count-values")
        self.choice_source = QComboBox()
        self.choice_source.setToolTip("Only used by personalized recoding")
        self.choice_source.currentIndexChanged.connect(self._on_choice_source_changed)
        choices = QFormLayout()
        choices.addRow("Each record's privacy choice (personalized recoding):", self.choice_source)
        self.message = QLabel()
        self.message.setWordWrap(True)
        layout = QVBoxLayout(self)
        # the rule's words and controls keep their height in a small window; the table (it scrolls) gives way
        rule_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        layout.addWidget(rule_box)
        layout.addWidget(self.table, 1)
        layout.addLayout(choices)
        layout.addWidget(self.message)
        state.dataset_changed.connect(self.refresh)
        state.project_changed.connect(self._count_ahead)

    def refresh(self) -> None:
        project, dataset = self.state.project, self.state.dataset
        sensitive = project.sensitive
        self._show_rule()
        self.choice_source.blockSignals(True)
        self.choice_source.clear()
        self.choice_source.addItem("The default choice of its value (the table's Default choice column)", None)
        if dataset is not None:
            for column in dataset.frame.columns:
                if column != sensitive:
                    self.choice_source.addItem(f"From column {column}", column)
        index = self.choice_source.findData(project.choice_column)
        self.choice_source.setCurrentIndex(max(index, 0))
        self.choice_source.blockSignals(False)
        self.model.set_domain(self._domain(), project)
        fit_value_column(self.table, self.model.labels)
        self._on_validity_changed(self.model.is_valid())

    def _show_rule(self) -> None:
        """The project's rule in the widgets above the table (no edit signals)."""
        project = self.state.project
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

    def _on_one_pair_clicked(self) -> None:
        """One click back to one pair for every value: the pair above (the rule's radio button ticked), no value's
        own pair, nothing typed left pending."""
        self.model.reset_pairs()
        self.rule_pair.setChecked(True)
        self._on_rule_changed()  # the pair above into the project, the table recomputed

    def _domain(self) -> CategoricalDomain | None:
        """The sensitive column's values and counts, counted once per table and column, not each time the
        page is shown: taken from the count started when the column was tagged (:meth:`_count_ahead`),
        waiting for its end if need be, or counted here (a table loaded with its roles)."""
        dataset, sensitive = self.state.dataset, self.state.project.sensitive
        if dataset is None or sensitive is None:
            self._domain_of = (None, None, None)
            return None
        seen, column, domain = self._domain_of
        if seen is dataset and column == sensitive:
            return domain
        ahead, self._ahead = self._ahead, None
        try:
            if ahead is not None and ahead[0] is dataset and ahead[1] == sensitive:
                domain = ahead[2].result()
            else:
                domain = count_values(dataset, sensitive)
        except PPDPError as exc:
            self.message.setText(str(exc))
            return None
        self._domain_of = (dataset, sensitive, domain)
        return domain

    def _count_ahead(self) -> None:
        """A sensitive column was tagged: count its values on a thread now (pandas releases the interpreter
        lock), so showing this page a moment later does not count a million records on the GUI thread.
        Not the :class:`~ppdp_desktop.gui.worker.Worker`: the page needs the result synchronously when it is
        shown, and a future gives that (waiting for the rest of the count) while a signal would not."""
        dataset, sensitive = self.state.dataset, self.state.project.sensitive
        if dataset is None or sensitive is None:
            self._ahead = None
            return
        if self._domain_of[0] is dataset and self._domain_of[1] == sensitive:
            return
        if self._ahead is not None and self._ahead[0] is dataset and self._ahead[1] == sensitive:
            return
        self._ahead = (dataset, sensitive, self._counter.submit(count_values, dataset, sensitive))
        count_ahead(dataset, sensitive)  # step 4's blank cells of it, as its values here

    def shutdown(self) -> None:
        self._ahead = None
        self._counter.shutdown(wait=False, cancel_futures=True)

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
        self.one_pair.setEnabled(not self.model.one_pair())
        method = get_method(self.state.project.method)
        if not method.needs_sensitive and (self.model.error or self.model.requirement is None):
            text, style = (f"{method.title} (the method chosen in step 4) needs no sensitivity pairs: "
                           "this step only matters for the other methods."), "color: #1b5e20;"
        elif self.model.invalid:
            (row, _), (_, message) = min(self.model.invalid.items())
            text, style = f"Fix the red cells first: {message}", "color: #b71c1c;"
        elif self.model.error:
            text, style = self.model.error, "color: #b71c1c;"
        else:
            text, style = self._coverage_message()
        self.message.setStyleSheet(style)
        self.message.setText(text)
        self.complete_changed.emit()

    def _coverage_message(self) -> tuple[str, str]:
        """How many values the bound covers, by the Status column's rule: those held by more than their rho1 of the
        records are named (amber), as the reports name them."""
        req = self.model.requirement
        protected = int(req.concern.sum()) if req is not None else 0
        rest = "; the others carry no privacy concern" if protected < len(self.model.labels) else ""
        outside = self.model.not_covered()
        if not outside:
            return f"{protected} value(s) protected{rest}.", "color: #1b5e20;"
        one = len(outside) == 1
        named = ", ".join(repr(v) for v in outside[:5]) + (f" and {len(outside) - 5:,} more" if len(outside) > 5 else "")
        return (f"{protected - len(outside)} of {protected} value(s) with a pair are covered by their bound; {named} "
                f"{'is' if one else 'are'} held by more than {'its' if one else 'their'} rho1 of the records, where the "
                f"bound says nothing about {'it' if one else 'them'} (Status column){rest}."), "color: #e65100;"

    def is_complete(self) -> bool:
        method = get_method(self.state.project.method)
        if not method.needs_sensitive:  # needs no pairs (nor a categorical sensitive column)
            return True
        return not self.model.invalid and (self.model.requirement is not None or not method.needs_pairs)

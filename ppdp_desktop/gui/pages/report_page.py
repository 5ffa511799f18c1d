"""Step 5b: the report of the run — what the release guarantees, what it keeps, and its figures.

Everything shown comes from :class:`ppdp_desktop.core.report.build.MethodReport` objects built by the run
job (``state.outcome.reports``, the chosen method first); the page only lays them out. A method
without a formal guarantee (personalized recoding) says so first and prominently.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QComboBox, QGroupBox, QHBoxLayout, QLabel, QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget

from ppdp_desktop.core.report.build import COMPARISON_COLUMNS, MethodReport, comparison_rows
from ppdp_desktop.core.report.panes import privacy_plain, utility_plain
from ppdp_desktop.core.report.summary import FirstPage
from ppdp_desktop.gui import figure_images
from ppdp_desktop.gui.alternatives_box import AlternativesBox
from ppdp_desktop.gui.group_panel import GroupPanel, brief_html
from ppdp_desktop.gui.model_panel import ModelPanel
from ppdp_desktop.gui.pages.base import WizardPage
from ppdp_desktop.gui.report_widgets import (  # noqa: F401 - VALUE_COLUMNS, format_number: the page's names
    VALUE_COLUMNS,
    FigureImage,
    fill,
    format_number,
    note_row,
    read_only_table,
    scrolled,
    value_table_rows,
)
from ppdp_desktop.gui.screen_fit import name_tab_scroll_buttons
from ppdp_desktop.gui.state import WizardState

RISK_COLORS = {"ok": "#1b6e20", "warning": "#8a4b00", "danger": "#b71c1c"}
_TITLE = "QGroupBox::title { subcontrol-origin: margin; subcontrol-position: top left; left: 6px; padding: 0 3px; }"
BOX_STYLES = {
    "ok": "",
    "warning": "QGroupBox { border: 2px solid #c77800; background: #fff4e0; margin-top: 1.2em; } " + _TITLE,
    "danger": "QGroupBox { border: 2px solid #c62828; background: #fdecea; margin-top: 1.2em; } " + _TITLE,
}
REPEAT_HEADING = "Among the project's releases"
EMPTY_TEXT = "Run the method first: its report (guarantee, utility and figures) appears here."



class ReportPage(WizardPage):
    """Privacy and utility summaries, a per-value table, figure tabs and a comparison table."""

    title = "Report"
    help_anchor = "report"  # its section of the user guide (F1)

    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._shown: MethodReport | None = None
        self.empty_label = QLabel(EMPTY_TEXT)
        self.empty_label.setWordWrap(True)

        self.report_choice = QComboBox()
        self.report_choice.setToolTip("Which method's report to read (when methods were compared)")
        self.report_choice.currentIndexChanged.connect(self._on_report_choice_changed)
        self.brief_label = QLabel()  # the plain first page: what was released, the verdicts, what it is good for
        self.brief_box = QGroupBox()
        QVBoxLayout(self.brief_box).addWidget(self.brief_label)
        self.privacy_label = QLabel()
        self.utility_label = QLabel()
        for label in (self.brief_label, self.privacy_label, self.utility_label):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.privacy_box = QGroupBox("Privacy")
        self.privacy_scroll = scrolled(self.privacy_label)  # nothing cut in a small window: it scrolls
        QVBoxLayout(self.privacy_box).addWidget(self.privacy_scroll)
        utility_box = QGroupBox("Utility")
        self.utility_scroll = scrolled(self.utility_label)
        QVBoxLayout(utility_box).addWidget(self.utility_scroll)
        self.value_table = read_only_table(VALUE_COLUMNS, "Each value of the sensitive column: its protection and "
                                            "how well its count can be estimated from the release")
        self.tabs = QTabWidget()
        name_tab_scroll_buttons(self.tabs)
        self.comparison_table = read_only_table([heading for _, heading in COMPARISON_COLUMNS],
                                                 "The methods run side by side: their protection and how much of the "
                                                 "data's information each keeps")
        self.comparison_box = QGroupBox("Comparison of the methods")
        QVBoxLayout(self.comparison_box).addWidget(self.comparison_table)
        self.models = ModelPanel()  # does my analysis survive? (its own worker)
        self.groups = GroupPanel()  # what the release's statistics reveal about a group

        chooser = QHBoxLayout()
        chooser.addWidget(QLabel("Report of:"))
        chooser.addWidget(self.report_choice, 1)
        summaries = QWidget()
        summaries_layout = QHBoxLayout(summaries)
        summaries_layout.setContentsMargins(0, 0, 0, 0)
        summaries_layout.addWidget(self.privacy_box, 3)  # the wider: two verdicts and their figures
        summaries_layout.addWidget(utility_box, 2)
        # the technical side: both summaries above the per-value table, the line between them draggable
        self.details = QSplitter(Qt.Orientation.Vertical)
        self.details.setChildrenCollapsible(False)
        self.alternatives = AlternativesBox()  # the chosen generalization and its runners-up, under the summaries
        self.details.addWidget(summaries)
        self.alternatives_area = scrolled(self.alternatives)
        self.details.addWidget(self.alternatives_area)
        self.details.addWidget(self.value_table)
        self.details.setStretchFactor(0, 2)
        self.details.setStretchFactor(1, 0)  # the few rows of alternatives: no taller than they need
        self.details.setStretchFactor(2, 1)
        self.details.setSizes([560, 190, 250])  # the summaries first: about two thirds of the height, whatever the table's
        details = self.details
        self.brief_label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        brief = QScrollArea()  # the plain first page, readable on a small screen
        brief.setWidgetResizable(True)
        brief.setWidget(self.brief_box)
        analysis = QWidget()
        analysis_layout = QVBoxLayout(analysis)
        analysis_layout.addWidget(self.models)
        analysis_layout.addWidget(self.comparison_box)
        analysis_layout.addStretch(1)
        self.sections = QTabWidget()
        name_tab_scroll_buttons(self.sections)
        self.sections.addTab(brief, "In brief")
        self.sections.addTab(details, "Privacy and utility")
        self.sections.addTab(self.tabs, "Figures")
        self.sections.addTab(scrolled(analysis), "Does my analysis survive?")  # its results scroll in a small window
        self.sections.insertTab(2, self.groups, "What a group reveals")
        for index, tip in enumerate(("What was released and the two verdicts, in plain words",
                                     "The figures behind the verdicts, value by value",
                                     "How often anyone who knows a person's quasi-identifiers can guess their "
                                     "sensitive value from the release's statistics, group by group",
                                     "The same as pictures",
                                     "Would a model fitted on the release give the same results as on the original?")):
            self.sections.setTabToolTip(index, tip)
        self.content = QWidget()
        body = QVBoxLayout(self.content)
        body.setContentsMargins(0, 0, 0, 0)
        body.addLayout(chooser)
        body.addWidget(self.sections, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.content, 1)

        state.outcome_changed.connect(self._on_outcome_changed)
        self._on_outcome_changed()

    # --- WizardPage -----------------------------------------------------------------------
    def is_complete(self) -> bool:
        return self.state.outcome is not None

    def refresh(self) -> None:
        """Re-read the outcome (cheap when it has not changed: the shown report is kept)."""
        reports = self._reports()
        self.empty_label.setVisible(not reports)
        self.content.setVisible(bool(reports))
        if not reports:
            self._shown = None
            self.report_choice.clear()
            return
        titles = [r.title for r in reports]
        if [self.report_choice.itemText(i) for i in range(self.report_choice.count())] != titles:
            self.report_choice.blockSignals(True)
            self.report_choice.clear()
            self.report_choice.addItems(titles)
            self.report_choice.setCurrentIndex(0)
            self.report_choice.blockSignals(False)
        self.report_choice.setEnabled(len(reports) > 1)
        index = max(self.report_choice.currentIndex(), 0)
        if reports[index] is not self._shown:
            self.show_report(reports[index])
        self._fill_comparison(reports)

    # --- slots ----------------------------------------------------------------------------
    def _on_outcome_changed(self) -> None:
        self._shown = None
        self.models.set_outcome(self.state.outcome)
        self.report_choice.blockSignals(True)
        self.report_choice.clear()
        self.report_choice.blockSignals(False)
        self.refresh()
        self.complete_changed.emit()

    def _on_report_choice_changed(self, index: int) -> None:
        reports = self._reports()
        if 0 <= index < len(reports):
            self.show_report(reports[index])

    # --- content --------------------------------------------------------------------------
    def _reports(self) -> list[MethodReport]:
        outcome = self.state.outcome
        return list(outcome.reports) if outcome is not None else []

    def show_report(self, report: MethodReport) -> None:
        """Lay out one report: summaries, per-value table and figure tabs."""
        self._shown = report
        sensitive = self._sensitive()
        self.privacy_label.setText(self._privacy_html(report, sensitive))
        # Never a lone green tick: the box is amber or red unless both verdicts hold.
        level = "ok" if report.has_guarantee and report.risk_level == "ok" else report.risk_level
        self.privacy_box.setStyleSheet(BOX_STYLES.get(level, BOX_STYLES["warning"]))
        plan = [line for line in report.lines if not line.startswith("record utility")]  # shown below
        lines = [html.escape(report.title), *map(html.escape, plan), *map(html.escape, report.utility_lines())]
        plain = html.escape(utility_plain(report, sensitive))  # what the figures mean, before the figures
        self.utility_label.setText(f"<b>{lines[0]}</b><p>{plain}</p>" + "<br>".join(lines[1:]))
        self._fill_values(report)
        reid = report.reidentification
        self.alternatives_area.setVisible(self.alternatives.show_generalization(reid.generalization if reid else None))
        self.brief_label.setText(self._brief_html(self._page_of(report)) + self._repeat_html(report)
                                 + brief_html(report.group_disclosure))
        self.groups.show_disclosure(report.group_disclosure)
        self.tabs.clear()
        from ppdp_desktop.core.report.document import figure_title  # with the report, not at the window's start

        index = next((i for i, r in enumerate(self._reports()) if r is report), -1)
        for key in report.figures:
            # Drawn and decoded in the worker: only shown here. An outcome set without its images (a script,
            # a test) has its PNG decoded now.
            decoded = self.state.figure_images.get((index, key))
            if decoded is None:
                decoded = figure_images.decode_png(report.image(key))
            image = FigureImage(QPixmap.fromImage(decoded))
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(image)
            tab = self.tabs.addTab(scroll, figure_title(key))
            self.tabs.setTabToolTip(tab, f"Figure: {figure_title(key).lower()}")

    def _page_of(self, report: MethodReport) -> FirstPage | None:
        outcome = self.state.outcome
        pages = getattr(outcome, "pages", None) or []
        for candidate, page in zip(outcome.reports if outcome is not None else [], pages):
            if candidate is report:
                return page
        return None

    @staticmethod
    def _brief_html(page: FirstPage | None) -> str:
        """The plain first page: what was released, the two verdicts in colour, what the release is good for."""
        if page is None:
            return ""
        esc = html.escape
        parts = ["<b>What was released</b><ul>" + "".join(f"<li>{esc(s)}</li>" for s in page.released) + "</ul>"]
        for _title, verdicts in page.verdicts:
            parts += [f"<p><b style='color:{RISK_COLORS.get(v.level, RISK_COLORS['warning'])}'>{esc(v.text)}</b></p>"
                      for v in verdicts]
        for _title, sentences in page.good_for:
            parts.append("<b>What the release is good for</b><ul>"
                         + "".join(f"<li>{esc(s)}</li>" for s in sentences) + "</ul>")
        return "".join(parts)

    def _repeat_html(self, report: MethodReport) -> str:
        """The chosen method's release among its project's releases (release n, who changed, the cumulative
        epsilon), under "What was released"; a compared method is never released, so it has none."""
        outcome = self.state.outcome
        if outcome is None or not outcome.reports or outcome.reports[0] is not report:
            return ""
        repeat = getattr(outcome.main, "repeat", None)
        if repeat is None:
            return ""
        return (f"<b>{html.escape(REPEAT_HEADING)}</b><ul>"
                + "".join(f"<li>{html.escape(s)}</li>" for s in repeat.sentences()) + "</ul>")

    def shutdown(self) -> None:
        """Stop a model comparison still running (the main window's close)."""
        self.models.shutdown()

    def _sensitive(self) -> str:
        """The sensitive column of the run shown ("" when there is none, e.g. a dp-microagg job)."""
        outcome = self.state.outcome
        settings = getattr(getattr(outcome, "main", None), "settings", None)
        return str(getattr(settings, "sensitive", "") or "")

    @staticmethod
    def _privacy_html(report: MethodReport, sensitive: str = "") -> str:
        """A plain sentence, then the two verdicts one under the other (seen without scrolling), then the figures
        behind each: the sensitive values' guarantee, then re-identification."""
        lines = [html.escape(line) for line in report.privacy_lines()]
        risk = [html.escape(line) for line in report.reidentification_lines()]
        plain = f"<p>{html.escape(privacy_plain(report, sensitive))}</p>"
        risk_head = f"<b style='color:{RISK_COLORS[report.risk_level]}'>{risk[0]}</b>"
        risk_html = f"<p>{'<br>'.join(risk[1:])}</p>" if risk[1:] else ""
        if not report.has_guarantee:
            return (f"{plain}<p><b style='color:#8a4b00'>Sensitive values — No formal privacy guarantee.</b><br>"
                    f"{risk_head}</p><p>{lines[0]}</p>{risk_html}")
        head = f"<b style='color:#1b6e20'>Sensitive values: {lines[0]}</b>"
        details = f"<p>{'<br>'.join(lines[1:])}</p>" if lines[1:] else ""
        return f"{plain}<p>{head}<br>{risk_head}</p>{details}{risk_html}"

    def _fill_values(self, report: MethodReport) -> None:
        self.value_table.clearSpans()  # the title rows of the report shown before
        self.value_table.setVisible(report.original is not None or bool(report.choice_counts))
        if report.original is None:  # personalized: how records were published; dp: nothing per value
            self.value_table.setColumnCount(2)
            self.value_table.setHorizontalHeaderLabels(["Published as", "Records"])
            fill(self.value_table, [[name, format_number(count)] for name, count in report.choice_counts.items()])
            return
        self.value_table.setColumnCount(len(VALUE_COLUMNS))
        self.value_table.setHorizontalHeaderLabels(list(VALUE_COLUMNS))
        rows, notes = value_table_rows(report)
        fill(self.value_table, rows)
        for row, text in notes:
            note_row(self.value_table, row, text)

    def _fill_comparison(self, reports: list[MethodReport]) -> None:
        self.comparison_box.setVisible(len(reports) > 1)
        rows = comparison_rows(reports)
        table = self.comparison_table
        fill(table, [[format_number(row[key]) for key, _ in COMPARISON_COLUMNS] for row in rows])
        height = table.horizontalHeader().height() + sum(table.rowHeight(r) for r in range(table.rowCount()))
        table.setFixedHeight(height + 2 * table.frameWidth() + 2)  # as tall as its few rows, no more

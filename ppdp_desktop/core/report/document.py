"""Report files: one self-contained HTML page or a PDF with every figure (Qt-free).

:func:`write_html` and :func:`write_pdf` take the :class:`~ppdp_desktop.core.report.build.MethodReport`
objects of one or more runs (from :func:`~ppdp_desktop.core.report.build.build_report`, or from
:func:`~ppdp_desktop.core.report.from_release.reports_from_release` for a written release) and a
:class:`ReportContext` describing the data. The text is meant for a data custodian or a recipient:
what was done, what is guaranteed (and what is not), and how much of the data's statistics survive.
The renderers live in :mod:`report_html` and :mod:`report_pdf`; this module holds the context and
the tables both share.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop import __version__
from ppdp_desktop.core.report.build import COMPARISON_COLUMNS, MethodReport, comparison_rows
from ppdp_desktop.core.report.changes import ColumnChange, changes_from_roles, column_changes
from ppdp_desktop.core.report.values import has_value_table, value_columns

if TYPE_CHECKING:
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.outcome import Anonymization
    from ppdp_desktop.core.repeat.outcome import RepeatOutcome

#: each figure's short title, as the window's report tabs and the documents' captions name it
FIGURE_TITLES = {"distribution": "Counts", "retention": "Retention", "posterior": "Posterior", "choices": "Choices",
                 "class sizes": "Re-identification"}

FIGURE_CAPTIONS = {
    "distribution": "Original counts and the counts an analyst estimates from the release; the error bars are the "
                    "95 % interval of each estimate (a seeded bootstrap of the same estimator).",
    "distribution (release only)": "Counts estimated from the release, with the 95 % interval of each estimate; "
                                   "the original counts stay with the custodian.",
    "retention": "Per value: the chance p that a record keeps its value; otherwise it is replaced by a uniform draw.",
    "posterior": "Per protected value: the largest belief an adversary can reach after seeing the release, "
                 "against the bound rho2 (the data's own frequencies as prior).",
    "choices": "How many records show their value, its alias1 or its alias2.",
    "class sizes": "Records by the size of the group that shares their quasi-identifiers, in the original and in the "
                   "release: a record in a group of 1 can be singled out by anyone who knows those facts about a person.",
}


@dataclass
class ReportContext:
    """What the report says about the data, beside the methods' results."""

    data_label: str
    n_records: int
    columns: list[tuple[str, str]] = field(default_factory=list)  # (name, role)
    sensitive: str = ""
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    app_version: str = f"PPDP Desktop {__version__}"
    changes: list[ColumnChange] = field(default_factory=list)  # what the release did to each column
    fingerprint: str = ""  # the release's fingerprint (its files' checksums), printed on every page
    #: the CSV file with the full per-value table, named where the report's table is shortened ("" if none)
    values_file: str = ""
    #: records the figures were measured on when fewer than ``n_records`` (a random sample of a streamed release)
    sample: int | None = None
    #: this release among its project's releases (issue 30): the "Repeated releases" section; None for none
    repeat: RepeatOutcome | None = None

    def __post_init__(self) -> None:
        if not self.changes:
            self.changes = changes_from_roles(self.columns)

    @classmethod
    def from_anonymization(cls, result: Anonymization, fingerprint: str = "") -> ReportContext:
        schema = result.dataset.schema
        released = getattr(result, "n_released", None)  # a streamed job's outcome holds a sample of its records
        return cls(
            data_label=result.dataset.label,
            n_records=len(result.table) if released is None else int(released),
            sample=None if released is None or released == len(result.table) else len(result.table),
            columns=[(name, attr.role.value) for name, attr in schema.attributes.items()],
            sensitive=result.settings.sensitive,
            changes=column_changes(result),
            fingerprint=fingerprint,
            repeat=getattr(result, "repeat", None),
        )

    @classmethod
    def from_release(cls, release: LoadedRelease, data_label: str | None = None) -> ReportContext:
        meta = release.metadata
        attributes = meta.get("attributes", {})
        sensitive = [a for a, v in attributes.items() if v.get("role") == "sensitive"]
        return cls(
            data_label=data_label or str(release.folder),
            n_records=int(meta.get("n_records", len(release.table))),
            columns=[(name, str(v.get("role", ""))) for name, v in attributes.items()],
            sensitive=", ".join(sensitive),
            fingerprint=_fingerprint(release.folder),
        )

    def sample_note(self) -> str:
        """What a streamed release's report measured on a sample (empty when it measured every record)."""
        if not self.sample:
            return ""
        return (f"This release was streamed: the per-value and utility figures of this report are measured on a random "
                f"sample of {self.sample:,} of its {self.n_records:,} records (those first in the release's random "
                "order); the guarantee, the counts estimated from the release files and the re-identification "
                "figures cover every record.")


def _fingerprint(folder: Path) -> str:
    """The release fingerprint of a written release ("" if its manifest cannot be read)."""
    from ppdp_desktop.core.data.checksums import release_fingerprint
    from ppdp_desktop.core.errors import PPDPError

    try:
        return release_fingerprint(Path(folder))
    except (PPDPError, OSError):
        return ""


def fmt(x: object, digits: int = 4) -> str:
    """A number for a table cell ("-" where it does not apply)."""
    if x is None:
        return "-"
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    if isinstance(x, (float, np.floating)):
        if np.isnan(x):
            return "-"
        if np.isinf(x):
            return "inf"
        return f"{x:,.0f}" if abs(float(x)) >= 1000 else f"{x:.{digits}f}"
    return str(x)


VALUE_HEADER = ("Value", "Records", "Estimated", "95 % interval", "Kept (p)", "rho1", "rho2", "Max posterior", "Status")


def value_rows(r: MethodReport, indices: np.ndarray | None = None) -> list[list[str]]:
    """The per-value table's rows as text: counts, reconstruction, retention and the verified guarantee, for
    ``indices`` into ``r.values`` in that order (every value by default). The numbers come from
    :func:`~ppdp_desktop.core.report.values.value_columns`, the same arrays the CSV appendix is written from."""
    if not has_value_table(r):
        return []
    c = value_columns(r)
    rows = []
    for i in range(len(r.values)) if indices is None else indices:
        band = "-" if r.band_low is None else f"{fmt(c['95 % interval low'][i], 1)} to {fmt(c['95 % interval high'][i], 1)}"
        records = "-" if r.original is None or not np.isfinite(c["Records"][i]) else fmt(int(c["Records"][i]))
        rows.append([str(c["Value"][i]), records, fmt(c["Estimated"][i], 1), band,
                     *(fmt(c[name][i]) for name in ("Kept (p)", "rho1", "rho2", "Max posterior")), str(c["Status"][i])])
    return rows


def utility_rows(r: MethodReport) -> list[list[str]]:
    """Measure / value rows: record utility, distances, and the workload's error per selectivity."""
    rows = []
    if r.record_utility is not None:
        rows.append(["Record utility (share of records released unchanged)", fmt(r.record_utility)])
    u = r.utility
    if u is not None:
        rows += [
            ["Aggregate utility", fmt(u.aggregate_utility)],
            ["Reconstruction error (mean relative, per value)", fmt(u.reconstruction_error)],
            ["KL divergence (nats)", fmt(u.kl, 5)],
            ["Chi-square distance (Pearson, the original as expected)", fmt(u.chi_square, 5)],
            ["Jensen-Shannon divergence (bits)", fmt(u.jensen_shannon, 5)],
        ]
        if u.workload is not None:
            for s, e, q in zip(u.workload.selectivity, u.workload.mean_error, u.workload.n_queries):
                rows.append([f"Count-query mean relative error, selectivity {s:.1%} ({q:,} queries)", fmt(e)])
    return rows


def comparison_table(reports: list[MethodReport]) -> tuple[list[str], list[list[str]]]:
    header = [heading for _, heading in COMPARISON_COLUMNS]
    body = [[fmt(row[key]) for key, _ in COMPARISON_COLUMNS] for row in comparison_rows(reports)]
    return header, body


def guarantee_headline(r: MethodReport) -> str:
    """One prominent sentence: verified guarantee, or plainly none."""
    if not r.has_guarantee:
        return "NO FORMAL PRIVACY GUARANTEE. " + str(r.guarantee.get("statement", ""))
    state = "verified" if r.guarantee.get("verified") else "NOT verified"
    scope = r.guarantee.get("epsilon_ldp_scope")  # partitioning: within each sub-table only
    eps = "" if r.epsilon_ldp is None else (f"; equivalent to epsilon-LDP with epsilon = {r.epsilon_ldp:.3f}"
                                            + (f" {scope}" if isinstance(scope, str) else ""))
    return f"Guarantee {state}: {r.kind}{eps}."


def figure_title(name: str) -> str:
    """The short title of figure ``name`` ("Counts" for "distribution")."""
    return FIGURE_TITLES.get(name, name[:1].upper() + name[1:])


def caption(name: str, report: MethodReport | None = None) -> str:
    """The caption of figure ``name`` (the release-only distribution has its own)."""
    if name == "distribution" and report is not None and report.original is None:
        name = "distribution (release only)"
    return FIGURE_CAPTIONS.get(name, "")

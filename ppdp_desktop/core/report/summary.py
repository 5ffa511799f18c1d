"""The report's first page in plain words: what was released, the two verdicts, and what the release is
good for, in sentences computed from the figures (Qt-free; the window, the HTML and the PDF show the same).

A clinician or an ethics board reads this page; the technical sections (pairs, gamma, epsilon, distances)
follow it in the report. Nothing here names a paper, a section or an internal document.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ppdp_desktop.core.data.sentences import full_stop
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.report.changes import (
    CHANGED,
    GENERALIZED,
    PSEUDONYMIZED,
    RANDOMIZED,
    REMOVED,
    UNCHANGED,
    ColumnChange,
    percent,
)
from ppdp_desktop.core.report.values import upward_verdict

#: shares of records at which the first page states how well counts can be estimated
SHARE_LADDER = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
#: a count "can be estimated" when its 95 % interval is within this share of the count
TOLERANCE = 0.25


@dataclass(frozen=True)
class Verdict:
    """One verdict: ``level`` is ``ok``, ``warning`` or ``danger`` (its colour), ``text`` the sentence."""

    topic: str
    level: str
    text: str


@dataclass
class FirstPage:
    """Everything the first page says, as sentences (see :func:`first_page`)."""

    released: list[str] = field(default_factory=list)
    verdicts: list[tuple[str, list[Verdict]]] = field(default_factory=list)  # (method title, its two verdicts)
    good_for: list[tuple[str, list[str]]] = field(default_factory=list)  # (method title, sentences)

    def text(self) -> str:
        """The page as plain text (for the window's clipboard and for tests)."""
        out = ["What was released", *self.released]
        for title, verdicts in self.verdicts:
            out += [f"Verdicts: {title}", *(v.text for v in verdicts)]
        for title, sentences in self.good_for:
            out += [f"What the release is good for: {title}", *sentences]
        return "\n".join(out)


def first_page(reports: list[MethodReport], changes: list[ColumnChange], n_records: int, sensitive: str) -> FirstPage:
    """The first page of the report of ``reports`` (one per method run on the same data)."""
    page = FirstPage(released=released_sentences(changes, n_records))
    page.released.insert(1, ("Method: " if len(reports) == 1 else "Methods compared: ")
                         + "; ".join(r.title for r in reports) + ".")
    for r in reports:
        page.verdicts.append((r.title, [sensitive_verdict(r, sensitive), reidentification_verdict(r)]))
        page.good_for.append((r.title, good_for(r, sensitive)))
    return page


def released_sentences(changes: list[ColumnChange], n_records: int) -> list[str]:
    """What the release holds: records and columns, then the columns by what happened to them."""
    kept = [c for c in changes if c.change not in (REMOVED, PSEUDONYMIZED)]
    out = [f"{n_records:,} records and {len(kept)} of {len(changes)} columns were released."]
    removed = [c for c in changes if c.change in (REMOVED, PSEUDONYMIZED)]
    if removed:
        pseudonyms = any(c.change == PSEUDONYMIZED for c in removed)
        out.append("Removed: " + ", ".join(f"{c.name} ({c.role})" for c in removed) + "."
                   + (" Each record carries a random pseudonym instead; only the sealed key links it back." if pseudonyms
                      else ""))
    for c in changes:
        if c.change == RANDOMIZED:
            out.append(f"{c.name} ({c.role}): {percent(c.share_changed or 0.0)} of the values were deliberately "
                       "replaced by random ones; the rest are the original values, and no one can tell which is which.")
        elif c.change == CHANGED and c.share_changed is None:  # said in words (a quasi-identifier kept at level 0)
            out.append(f"{c.name} ({c.role}): {c.detail}.")
        elif c.change == CHANGED:
            out.append(f"{c.name} ({c.role}): changed by the method; {percent(c.share_changed or 0.0)} of the values "
                       "differ from the original.")
        elif c.change == GENERALIZED:
            out.append(f"{c.name} ({c.role}): generalized to coarser categories ({c.detail}).")
    unchanged = [c.name for c in changes if c.change == UNCHANGED]
    if unchanged:
        out.append(full_stop("Released unchanged: " + ", ".join(unchanged)))
    as_released = [c.name for c in changes if c.change == "released"]
    if as_released:
        out.append(full_stop("Released (what changed was not measured for this report): " + ", ".join(as_released)))
    return out


def sensitive_verdict(r: MethodReport, sensitive: str) -> Verdict:
    """The first verdict: can anyone learn a person's sensitive value, in one or two sentences."""
    g = r.guarantee
    what = f" ({sensitive})" if sensitive else ""
    if not r.has_guarantee:
        return Verdict("sensitive", "danger", f"Sensitive values{what}: no formal guarantee. {g.get('statement', '')}".strip())
    if not g.get("verified"):
        return Verdict("sensitive", "danger", f"Sensitive values{what}: the guarantee was NOT verified. Do not publish.")
    kind = r.kind
    if kind.startswith("upward"):  # "protected" only where the bound covers every value with a pair (values.py)
        level, state = upward_verdict(r)
        return Verdict("sensitive", level, f"Sensitive values{what}: {state} " + _upward_sentence(r))
    if kind.startswith("attribute disclosure"):
        bound = 1.0 / float(g["l"])
        promise = g.get("statement") or (  # the method's own sentence names the attacker (rr/claims.py)
            f"The bound 1/l = {percent(bound)} (largest found {percent(float(g['max_risk']))}) holds against the "
            "method's own attacker only; guessing a group's most common value is not bounded.")
        return Verdict("sensitive", "ok", f"Sensitive values{what}: bounded, checked before the release was written. "
                       + promise)
    if kind.startswith("epsilon-differential"):
        return Verdict("sensitive", "ok", f"Released values: differential privacy with epsilon = {float(g['epsilon']):g}, "
                       "checked before the release was written. The release would look almost the same had any one "
                       "person's record been replaced by another's (the number of records is public), so it reveals "
                       "little about any one person, even to someone who knows every other record.")
    return Verdict("sensitive", "ok", f"Sensitive values{what}: {kind}, verified before the release was written.")


def _upward_sentence(r: MethodReport) -> str:
    """The (rho1, rho2) guarantee in words, with the bounds of this release."""
    g = r.guarantee
    pairs = g.get("pairs") or []
    rho1 = [float(p["rho1"]) for p in pairs if p.get("rho1") is not None] or ([float(g["rho1"])] if "rho1" in g else [])
    rho2 = [float(p["rho2"]) for p in pairs if p.get("rho2") is not None] or ([float(g["rho2"])] if "rho2" in g else [])
    if not rho1 or not rho2:
        return "No released value raises anyone's belief about a protected value above its bound."
    n = len(rho2)
    before = _range(rho1)
    after = _range(rho2)
    subject = "each protected value" if n > 1 else "a protected value"
    caveat = f" {g['not_covered']}" if isinstance(g.get("not_covered"), str) else ""  # partition: the sub-table
    return (f"Someone who was at most {before} sure that a given person has {subject} cannot become more than "
            f"{after} sure by reading the release.{caveat}")


def _range(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return percent(lo) if math.isclose(lo, hi) else f"{percent(lo)} to {percent(hi)} (depending on the value)"


def reidentification_verdict(r: MethodReport) -> Verdict:
    """The second verdict: who can be singled out by their quasi-identifiers."""
    return Verdict("reidentification", r.risk_level, r.reidentification_lines()[0])


def good_for(r: MethodReport, sensitive: str) -> list[str]:
    """What the release supports, in sentences computed from the report's figures."""
    out = count_sentences(r, sensitive)
    out += workload_sentences(r, sensitive)
    out += list(r.findings)
    if r.analysis is not None:  # the two accuracies, in words
        out += r.analysis.lines()[:2]
    if not out:
        out.append("This method's report has no estimate to state here; see its figures and measures below.")
    return out


def count_sentences(r: MethodReport, sensitive: str) -> list[str]:
    """How well the count of each sensitive value can be estimated from the release (95 % intervals)."""
    if r.reconstructed is None or r.band_low is None or r.band_high is None:
        return []
    estimate = np.asarray(r.reconstructed, dtype=float)
    base = np.asarray(r.original if r.original is not None else np.clip(estimate, 0.0, None), dtype=float)
    total = base.sum()
    if total <= 0:
        return []
    share = base / total
    half = np.maximum(np.asarray(r.band_high) - estimate, estimate - np.asarray(r.band_low))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(base > 0, half / base, np.inf)
    present = share > 0
    name = f"{sensitive} values" if sensitive else "values"
    out = []
    for threshold in SHARE_LADDER:
        chosen = present & (share >= threshold)
        if chosen.any() and rel[chosen].max() <= TOLERANCE:
            within = math.ceil(rel[chosen].max() * 100)
            scope = (f"Counts of all {name}" if chosen.sum() == present.sum()
                     else f"Counts of {name} held by at least {percent(threshold)} of records")
            out.append(f"{scope} can be estimated from the release within ±{within} % (95 % interval).")
            break
    else:
        best = int(np.argmin(np.where(present, rel, np.inf)))
        out.append(f"No single {name[:-1] if name.endswith('s') else name} count can be estimated within "
                   f"±{int(TOLERANCE * 100)} %; the closest, {r.values[best]!r}, within ±{math.ceil(rel[best] * 100)} % "
                   "(95 % interval). Combine values into groups for usable counts.")
    below = _unestimable_below(share[present], rel[present])
    if below is not None:
        out.append(f"Below {percent(below)} of records they cannot be estimated from this release: the uncertainty "
                   "is larger than the count itself.")
    return out


def _unestimable_below(share: np.ndarray, rel: np.ndarray) -> float | None:
    """The largest ladder share under which every value's interval is wider than its count, if any."""
    found = None
    for threshold in SHARE_LADDER:
        under = share < threshold
        if not under.any():
            continue
        if (rel[under] >= 1.0).all():
            found = threshold
        else:
            break
    return found


def workload_sentences(r: MethodReport, sensitive: str) -> list[str]:
    """The count-query workload at 1 % selectivity in words."""
    work = None if r.utility is None else r.utility.workload
    if work is None:
        return []
    for s, e, q in zip(work.selectivity, work.mean_error, work.n_queries):
        if np.isclose(s, 0.01) and q and not np.isnan(e):
            return [f"A count of records with one {sensitive or 'sensitive'} value and one to three conditions on other "
                    f"columns (for example sex and region) that covers at least 1 % of the records is off by "
                    f"{percent(float(e))} on average ({q:,} such test queries)."]
    return []

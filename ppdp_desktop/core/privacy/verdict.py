"""The one rule for the re-identification verdict, which every face shows (window, CLI, README.txt,
release.json, the report, ``ppdp verify``).

The attacker: someone who knows that a person is in the release and knows their quasi-identifiers
(age, sex, postcode ...). They pick one record of the person's group, so a record's risk is one over
its group's size (the prosecutor model of :mod:`.risk`). The custodian states two things: ``k`` (every
group has at least k records) and a threshold (no record's risk may be above it). The verdict is:

* **protected** (green): the stated k holds *and* every record's risk is within the threshold;
* **k-anonymous, but above the threshold** (amber): k holds but some records are above the threshold
  (k = 3 means a record's risk can be 1/3 = 33 %, above a threshold of 20 %); with k = 1 (criteria such as
  l-diversity but no k) the text says "above the threshold" and the smallest group measured, as k promises nothing;
* **NOT protected** (red): no k was stated, or it does not hold;
* **not measured**: no quasi-identifier was named, so nothing was measured (never "low").

Suppressed records (every quasi-identifier ``*``) are left out of the figures, as ARX does; but the attacker who
finds no released group matching a person knows the person is one of them, so to the verdict they are one more
group, of their number: fewer than ``1 / threshold`` suppressed records are above the threshold.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ppdp_desktop.core.privacy.risk import RiskAnalysis

PROTECTED = "protected"
ABOVE_THRESHOLD = "above threshold"
NOT_PROTECTED = "not protected"
NOT_MEASURED = "not measured"
#: each verdict's colour: ``ok`` green, ``warning`` amber, ``danger`` red
LEVELS = {PROTECTED: "ok", ABOVE_THRESHOLD: "warning", NOT_PROTECTED: "danger", NOT_MEASURED: "warning"}
NOT_MEASURED_TEXT = ("Re-identification: not measured — no quasi-identifiers were named, so the risk of singling "
                     "someone out by age, sex, postcode and the like was not measured.")


def _pct(share: float) -> str:
    """A share as a percentage a reader takes in at a glance: ``5.8 %``, ``100 %``, ``< 0.1 %``."""
    if 0.0 < share < 0.0005:
        return "< 0.1 %"
    text = f"{100.0 * share:.1f}"
    return f"{text[:-2] if text.endswith('.0') else text} %"


def _records(count: int) -> str:
    return f"{count:,} record{'' if count == 1 else 's'}"


def safe_k(threshold: float) -> int:
    """The smallest k whose groups keep every record's risk (at most ``1/k``) within ``threshold``."""
    k = max(1, math.ceil(1.0 / threshold))
    while k > 1 and 1.0 / (k - 1) <= threshold:  # 1 / 0.2 may round either way
        k -= 1
    while 1.0 / k > threshold:
        k += 1
    return k


@dataclass(frozen=True)
class RiskVerdict:
    """One verdict: ``code`` (one of the four above, as release.json states it) and ``text``, the sentence
    every face shows (it starts with ``"Re-identification: "``)."""

    code: str
    text: str

    @property
    def level(self) -> str:
        """The verdict's colour: ``ok``, ``warning`` or ``danger``."""
        return LEVELS[self.code]


def _others(k: int) -> str:
    return f"at least {k - 1:,} other{'' if k == 2 else 's'}"


def risk_verdict(analysis: RiskAnalysis | None, k_checked: bool = True, suppressed: int | None = None) -> RiskVerdict:
    """The verdict on the table ``analysis`` measured, under the stated k ``analysis.k``.

    Parameters
    ----------
    analysis : RiskAnalysis or None
        The risk of the table (the release's, suppressed records left out, as ARX does); None or no
        quasi-identifier: not measured.
    k_checked : bool
        Whether what k-anonymity needs besides group sizes was checked (the suppression limit); the group
        sizes themselves are read from ``analysis.records_below_k``.
    suppressed : int, optional
        Records suppressed to reach k (every quasi-identifier ``*``). The attacker who knows a person is in the
        release and finds no released group matching their quasi-identifiers knows the person is one of them: to
        that attacker they are one more group, of that size, and the verdict counts it against the threshold.
    """
    if analysis is None or not analysis.quasi:
        return RiskVerdict(NOT_MEASURED, NOT_MEASURED_TEXT)
    k, threshold, s = analysis.k, analysis.threshold, suppressed or 0
    if k is None:
        return RiskVerdict(NOT_PROTECTED, f"Re-identification: NOT protected — {analysis.lines()[0]} No k was stated, "
                                          "so no smallest group size is guaranteed.")
    below = analysis.records_below_k or 0
    if below or not k_checked:
        why = (f"{_records(below)} {'is' if below == 1 else 'are'} in groups smaller than {k}" if below
               else "it was not verified")
        return RiskVerdict(NOT_PROTECTED, f"Re-identification: NOT protected — k = {k} does not hold: {why}.")
    few = 0 < s < k  # the suppressed records are a group smaller than k of their own
    shares = (f"every record {f'apart from the {s:,} suppressed ' + ('one' if s == 1 else 'ones') + ' ' if few else ''}"
              f"shares its quasi-identifiers with {_others(k)} (k = {k}, verified)")
    if k == 1:  # k = 1 promises no group size (the protected text adds the smallest group measured)
        shares = "no k was asked (k = 1), so no group size is promised"
    tail = "" if suppressed is None else f"; {_records(s)} suppressed (every quasi-identifier '*')"
    star_above = s if s and 1.0 / s > threshold else 0
    above = analysis.records_above_threshold + star_above
    if not above:
        highest = max(analysis.highest_risk, 1.0 / s if s else 0.0)
        group = f", the suppressed ones a group of {s:,} of their own" if few else ""
        if k == 1 and analysis.highest_risk:
            group = f", but the smallest released group measured has {_records(round(1.0 / analysis.highest_risk))}"
        return RiskVerdict(PROTECTED, f"Re-identification: protected — {shares}{group}, and no record's risk is above "
                                      f"the threshold of {_pct(threshold)}" + (
                                          f" (the highest is {_pct(highest)}){tail}." if highest else f"{tail}."))
    reasons, remedies = [], []
    if analysis.records_above_threshold:
        smallest = round(1.0 / analysis.highest_risk)
        reasons.append(f"k = {k} means a record's risk can be 1/{k} = {_pct(1.0 / k)}" if smallest == k > 1 else
                       f"the smallest group has {smallest:,} records, so a record's risk can be 1/{smallest:,} = "
                       f"{_pct(1.0 / smallest)}")
        remedies.append(f"A k of at least {safe_k(threshold):,} would keep every group within {_pct(threshold)}.")
    if star_above:
        group = "1 suppressed record is a group" if s == 1 else f"{s:,} suppressed records are a group of {s:,}"
        reasons.append(f"the {group} of {'its' if s == 1 else 'their'} own (someone who finds no released group "
                       f"matching a person's quasi-identifiers knows the person is "
                       f"{'this record' if s == 1 else 'one of them'}): a risk of 1/{s:,} = {_pct(1.0 / s)}")
        remedies.append(f"Fewer than {safe_k(threshold):,} suppressed records are always a group above "
                        f"{_pct(threshold)}.")
    verb = "is" if above == 1 else "are"
    head = "above the threshold" if k == 1 else "k-anonymous, but above the threshold"
    return RiskVerdict(ABOVE_THRESHOLD, (
        f"Re-identification: {head} — {shares}, but {' and '.join(reasons)}, above the "
        f"threshold of {_pct(threshold)}: {above:,} of {_records(analysis.n_records + s)} {verb} above it{tail}. "
        + " ".join(remedies)))

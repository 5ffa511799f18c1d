"""The report's section on what a release's statistics reveal about a group, for every method (Qt-free).

:func:`for_anonymization` measures it on a job's release (in memory, from the released table and what
``release.json`` publishes, exactly as a recipient reads them), :func:`for_release` on a written one; the
custodian's copy also says how often the guess is right on the original records. :func:`headline`,
:func:`example`, :func:`lines` and :func:`table` put it in words a clinician reads: the attacker is anyone who
knows a person's quasi-identifiers, whether or not that person is in the data.
"""
from __future__ import annotations

import weakref
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.evaluation.group_disclosure import (
    FEW_RECORDS,
    TOLERANCE,
    GroupDisclosure,
    guess_hits,
    guess_success,
    not_applicable,
    text_codes,
)
from ppdp_desktop.core.evaluation.report_model import percent
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.group_crossfit import fold_of
from ppdp_desktop.core.methods.group_estimates import label_meanings, measure
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken

TITLE = "What the release reveals about a group"
MEANING = ("People who share their quasi-identifiers (say, married men with a bachelor's degree) form a group. If one "
           "sensitive value is very common in a group, anyone who knows that a person belongs to it can guess the "
           "value — whether or not the person is in the data. These figures come from the release's own statistics, "
           "as any recipient can compute them.")
#: why a streamed release's release.json has no figures (verify measures them, and knows this reason)
STREAMED = ("the release was streamed, so its records were not held in memory to measure it (ppdp report on the "
            "release measures it)")
HOW_TO_CAP = ("To cap it, ask for the group bound ('Limit what a group reveals' on the method page, --group-bound, or "
              "require_group_bound in the project file): the release is then refused unless every group stays within it.")


def for_anonymization(result: Anonymization, public: bool = False, cancel: CancelToken | None = None
                      ) -> GroupDisclosure:
    """The section for a job's release (``public``: without what was measured on the original records); ``cancel``
    stops the estimate (tens of seconds for rr near its limits)."""
    reid = result.reidentification
    quasi = list(reid.quasi) if reid is not None else []
    sensitive = result.settings.sensitive
    several, decode = label_meanings(result.plan, sensitive)
    found = replace(_from_release_side(result, quasi, sensitive, several, cancel),
                    required=bool(result.settings.protection.require_group_bound))
    if not public and found.applies:
        frame = result.dataset.frame
        generalization = reid.generalization if reid is not None else None
        groups = generalization.apply(frame[generalization.columns]) if generalization is not None else frame[quasi]
        found.measured_own = guess_success(found, groups, frame[sensitive], decode=decode)
        found.measured_right = found.measured_own if not found.folds else _measured_by_fold(
            found, result, groups, frame[sensitive], decode)
    return found


def _measured_by_fold(found: GroupDisclosure, result: Anonymization, groups: pd.DataFrame, truth: pd.Series,
                      decode: dict[str, str]) -> float | None:
    """The cross-fitted guess on the original records: each record guessed as its fold's released records are
    (the release's record ``j`` is the original record ``order[j]``); None where the release holds a sample."""
    n = len(groups)
    order = np.asarray(getattr(result, "order", np.zeros(0)), dtype=np.int64)
    if len(order) != n or len(result.table) != n:
        return None
    fold = np.empty(n, dtype=np.int64)
    fold[order] = fold_of(n)
    right = counted = 0
    for k, guesses in enumerate(found.fold_guesses):
        rows = fold == k
        if guesses.empty:
            counted += int(rows.sum())
            continue
        hit, kept = guess_hits(found.quasi, guesses, groups[rows], truth[rows], decode)
        right, counted = right + int(hit[kept].sum()), counted + int(kept.sum())
    return right / counted if counted else None


def _from_release_side(result: Anonymization, quasi: list[str], sensitive: str, several: list[str],
                       cancel: CancelToken | None = None) -> GroupDisclosure:
    """What the job's release alone shows (computed once per job: the report, the report inside the package and
    release.json all ask)."""
    hit = _MEASURED.get(id(result))
    if hit is not None and hit[0]() is result:
        return hit[1]
    method = get_method(result.plan.method)
    bound, source = method.group_bound(result.settings)
    if len(result.table) == 0 and len(result.dataset.frame):  # a streamed job's records are in its file only
        found = not_applicable(quasi, sensitive, STREAMED, bound, source)
    else:
        view = _view(result, quasi, sensitive)
        found = _measure(view, bound, source, quasi, sensitive, several, cancel)
        released = getattr(result, "n_released", None)  # a streamed job's report holds a random sample of its records
        if found.applies and released and released > len(result.table):
            found.how += (f"; measured on a random sample of {len(result.table):,} of the release's {released:,} "
                          "records, so the records counted here are the sample's")
    _MEASURED[id(result)] = (weakref.ref(result), found)
    while len(_MEASURED) > 4:
        _MEASURED.pop(next(iter(_MEASURED)))
    return found


_MEASURED: dict[int, tuple[weakref.ref, GroupDisclosure]] = {}


def _dict_at(meta: dict[str, Any], key: str) -> dict[str, Any]:
    """``meta[key]`` when it is a dict, else an empty one."""
    value = meta.get(key)
    return value if isinstance(value, dict) else {}


def for_release(release: LoadedRelease, original: pd.DataFrame | None = None) -> GroupDisclosure:
    """The section for a written release; with ``original`` (the custodian's data, same records) also how often
    the whole release's guess is right on it, where the release's groups are its quasi-identifiers as they are
    (no k). The cross-fitted guess needs each record's place in the release, which only the job knows."""
    meta = release.metadata
    entry, reid = _dict_at(meta, "group_disclosure"), _dict_at(meta, "reidentification")
    quasi = [str(c) for c in entry.get("quasi_identifiers") or reid.get("quasi_identifiers") or []]
    roles = meta.get("attributes") or {}
    sensitive = str(entry.get("sensitive") or next((n for n, a in roles.items() if a.get("role") == "sensitive"), ""))
    bound, source = release_bound(meta, entry)
    found = _measure(release, bound, source, quasi, sensitive, several_values(entry))
    found.required = bool(entry.get("required"))
    if original is not None and found.applies and not reid.get("generalization") \
            and all(c in original.columns for c in [*quasi, sensitive]):
        found.measured_own = guess_success(found, original[quasi], original[sensitive])
        found.measured_right = None if found.folds else found.measured_own
    return found


def several_values(entry: dict) -> list[str]:
    """The labels a release's group_disclosure entry says stand for several values (counted toward none)."""
    listed = entry.get("several_values") if isinstance(entry, dict) else None
    return [str(v) for v in listed] if isinstance(listed, list) else []


def _measure(release: LoadedRelease, bound: float, source: str, quasi: list[str], sensitive: str,
             several: list[str], cancel: CancelToken | None = None) -> GroupDisclosure:
    """The figures (or why there are none), with the interval of the example group's share (widened to hold the
    share shown, a maximum-likelihood estimate that can lie outside the unbiased estimate's interval)."""
    found = measure(release, quasi, sensitive, bound, source, several, cancel)
    if found.applies and found.estimated and found.worst:
        shown = found.worst[0]  # chosen by the estimates among every (group, value): the simultaneous interval
        found.example_interval = (min(shown.low, shown.share), max(shown.high, shown.share))
    return found


def _view(result: Anonymization, quasi: list[str], sensitive: str) -> LoadedRelease:
    """The job's release as a recipient reads it: the columns the estimate needs as text, and what
    ``release.json`` publishes about them."""
    metadata = {"method": result.plan.method, **result.plan.release_json()}
    extra = [e.get("subtable_column") for e in metadata.get("sensitive") or [] if e.get("subtable_column")]
    columns = [c for c in dict.fromkeys([*quasi, sensitive, *extra]) if c in result.table.columns]
    table = pd.DataFrame({c: _as_text(result.table[c]) for c in columns})
    return LoadedRelease(Path("."), metadata, table)


def _as_text(column: pd.Series) -> pd.Series:
    """A column as a recipient reads it (text, missing as ""), held as a categorical: one label per value."""
    codes, labels = text_codes(column)
    return pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object)))


def release_bound(meta: dict, entry: dict, source: str | None = None) -> tuple[float, str]:
    """``(bound, its name)`` of a written release: the one its entry states, else ``1/l`` from its parameters,
    else its re-identification threshold. With ``source`` ("1/l" or "the threshold"), the one of that name as the
    release's parameters give it (``(nan, "")``: it has no l)."""
    if source is None and entry.get("bound") is not None:
        return float(entry["bound"]), str(entry.get("bound_source") or "the bound")
    l = (meta.get("parameters") or {}).get("l")
    if source in (None, "1/l") and isinstance(l, (int, float)) and not isinstance(l, bool) and l > 1:
        return 1.0 / float(l), "1/l"
    if source == "1/l":
        return float("nan"), ""
    threshold = ((meta.get("reidentification") or {}).get("release") or {}).get("threshold", 0.2)
    return float(threshold), "the threshold"


# --- words ------------------------------------------------------------------------------------------------------

def _group_words(d: GroupDisclosure, labels: tuple[str, ...]) -> str:
    parts = [f"{c} {v!r}" if v else f"{c} missing" for c, v in zip(d.quasi, labels)]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _records(d: GroupDisclosure, n: float) -> str:
    return f"about {n:,.0f}" if d.records_estimated else f"{n:,.0f}"


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else ""


def headline(d: GroupDisclosure) -> str:
    """One sentence (two where estimated): the groups above the bound and the records they hold; counted, the
    largest share; estimated, the groups the release *shows* above it (their interval above it, 95 % for every
    group at once) and those its estimates put above it."""
    if not d.applies:
        return f"Not measured: {d.reason}."
    among = f"Among the {d.n_groups:,} groups of records sharing their {_and(d.quasi)}, "
    bound = f"{d.bound_source} = {percent(d.bound)}"
    held = (f"{d.groups_above:,} groups holding {_records(d, d.records_above)} records "
            f"({percent(d.records_above / d.n_records if d.n_records else 0.0)})")
    if d.several_labels and d.several_records >= d.n_records:
        return (f"{among}every released {d.sensitive} label stands for several values "
                f"({', '.join(map(repr, d.several_labels[:5]))}{', ...' if len(d.several_labels) > 5 else ''}), so "
                "the release shows no value's share in any group.")
    if not d.estimated:
        where = f"no group is above {bound}" if not d.groups_above else f"{held} are above {bound}"
        return f"{among}the most frequent {d.sensitive} value holds up to {percent(d.largest_share)} of a group; {where}."
    shown = (f"{among}the release shows no {d.sensitive} value holding more than {bound} of a group"
             if not d.groups_above else
             f"{among}the release shows one {d.sensitive} value holding more than {bound} in {held}, at least "
             f"{percent(d.largest_supported)} in one of them")
    shown += ", with 95 % confidence for every group at once."
    if not d.groups_noisy:
        return shown
    more = "more " if d.groups_above else ""
    return (f"{shown} Its estimates put {d.groups_noisy:,} {more}groups above it (up to {percent(d.largest_share)}), "
            "by amounts the randomization's noise alone could explain.")


def level(d: GroupDisclosure) -> str:
    """The headline's colour: ``warning`` when groups are (shown) above the bound, ``normal`` otherwise (a measure
    of what any recipient can infer, not a verdict on the method)."""
    return "warning" if d.applies and d.groups_above else "normal"


def example(d: GroupDisclosure) -> str:
    """The clinician's sentence, about the group above the bound with the most records (else the one whose share
    the release shows best)."""
    if not d.applies or not d.worst:
        return ""
    g = d.worst[0]
    share = percent(g.share)
    lead = f"an estimated {share}" if d.estimated else share
    if d.example_interval is not None:
        low, high = d.example_interval
        lead += f" (likely between {percent(low)} and {percent(high)})"
    elif d.estimated and g.records < FEW_RECORDS:
        lead += " (estimated from few records, so uncertain)"
    said = f"In the release, {lead} of the {_records(d, g.records)} records with {_group_words(d, g.labels)} have "
    if d.estimated and not g.supported > d.bound + TOLERANCE:  # the release does not show this group above it
        return (f"{said}{d.sensitive} {g.value!r}; the release does not show that it holds more than "
                f"{percent(d.bound)} of that group: the randomization leaves too much uncertainty.")
    return (f"{said}{d.sensitive} {g.value!r} — anyone known to be in that group can be guessed to have {g.value!r} "
            f"and be right {'about that often' if d.estimated else share + ' of the time'}, whether or not they are "
            "in the data.")


GROUP_INFERENCE = ("This is inference about a group, not a leak of one record: it works on people who are not in the "
                   "data too, and any release that keeps the statistics useful allows some of it.")


def guess_sentence(d: GroupDisclosure) -> str:
    """How often guessing a group's most frequent value is right, with the attacker it holds against."""
    who = f"Someone who knows a person's {_and(d.quasi)} and guesses the most frequent {d.sensitive} value of their group"
    if not d.estimated:
        return (f"{who} in the release would be right for {percent(d.guess_right)} of the records (counted in the "
                "release, each record's own value included).")
    return (f"{who} from the release's estimates would be right for about {percent(d.guess_right)} of the people whose "
            f"own record the guess does not use, such as people not in the data (give or take "
            f"{_points(d.guess_margin)}, 95 % confidence). This is estimated without the inflation of the largest of "
            f"noisy estimates: each of {d.folds} parts of the records is guessed from the other part's estimates and "
            "checked by an unbiased count of the guessed value, so it describes a guess made from part of the release; "
            "the whole release's guess, and for someone known to be in the data their own released value, can make "
            "it right more often.")


def _points(share: float) -> str:
    points = share * 100.0
    return f"{points:.1f} points" if points < 9.95 else f"{points:.0f} points"


def lines(d: GroupDisclosure) -> list[str]:
    """The section's sentences after the headline: the example, the attacker, how the shares were made, the
    caveats, the custodian's check on the original records and the bound asked for."""
    if not d.applies:
        return []
    out = [s for s in (example(d),) if s]
    out.append(f"{guess_sentence(d)} {GROUP_INFERENCE}")
    out.append(f"The shares are {d.how}.")
    if d.estimated:
        out.append(f"A group counts as above {d.bound_source} only where the release shows it: the lower end of the "
                   "group's interval is above it (95 % for every group and value at once; from Bernstein's inequality, "
                   "which holds for a group of any size, not from a normal approximation).")
    if d.few_groups:
        out.append(f"{d.few_groups:,} groups have fewer than {FEW_RECORDS} records ({_records(d, d.few_records)} "
                   "records): their shares are estimated from too few records to be reliable, in either direction.")
    if d.several_labels:
        out.append(f"{d.several_records:,.0f} records ({percent(d.several_records / d.n_records if d.n_records else 0)}) "
                   f"show a {d.sensitive} label that stands for several values ({', '.join(map(repr, d.several_labels[:5]))}"
                   f"{', and others' if len(d.several_labels) > 5 else ''}): they count in their group's records but "
                   "toward no value. A code that stands for one value counts as that value: it can be decoded by how "
                   "often it occurs.")
    checked = _checked(d)
    if checked:
        out.append(checked)
    if d.required:
        out.append(f"The custodian required that no group's most frequent {d.sensitive} value holds more than "
                   f"{percent(d.bound)} of the group; this was checked exactly on the original records before the "
                   "release was written (the release's estimates converge to those shares"
                   + ("; estimated shares above it come from the randomization's noise" if d.estimated else "") + ").")
    else:
        out.append(HOW_TO_CAP)
    return out


def _checked(d: GroupDisclosure) -> str:
    """The custodian's check on the original records (this report only; empty in the recipient's)."""
    def known(x: float | None) -> TypeGuard[float]:
        return x is not None and x == x

    if not known(d.measured_own):
        return ""
    if not d.folds:
        return f"Checked on the original records (this report only): that guess is right for {percent(d.measured_own)} of them."
    same = (f"the guess made as above (each part from the other) is right for {percent(d.measured_right)} of them; "
            if known(d.measured_right) else "")
    return (f"Checked on the original records (this report only): {same}the whole release's guess is right for "
            f"{percent(d.measured_own)} of the people in the data.")


TABLE_HEADER = ("Group (quasi-identifiers)", "Records", "Most frequent value", "Share")


def table(d: GroupDisclosure) -> list[tuple[str, str, str, str]]:
    """The groups shown (above the bound, most records first; else the shares the release shows best) as rows of
    text; an estimated share with its interval."""
    def share(g) -> str:
        if not d.estimated or g.low != g.low:
            return percent(g.share)
        return f"{percent(g.share)} ({percent(min(g.low, g.share))} to {percent(max(g.high, g.share))})"

    return [(_group_words(d, g.labels), _records(d, g.records), g.value, share(g)) for g in d.worst]

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

import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.evaluation.group_disclosure import (
    FEW_RECORDS, GroupDisclosure, guess_success, not_applicable, summarize, text_codes,
)
from ppdp_desktop.core.evaluation.report_model import percent
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.group_estimates import release_cells
from ppdp_desktop.core.methods.group_interval import share_interval
from ppdp_desktop.core.outcome import Anonymization

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


def for_anonymization(result: Anonymization, public: bool = False) -> GroupDisclosure:
    """The section for a job's release (``public``: without what was measured on the original records)."""
    reid = result.reidentification
    quasi = list(reid.quasi) if reid is not None else []
    sensitive = result.settings.sensitive
    found = replace(_from_release_side(result, quasi, sensitive),
                    required=bool(result.settings.protection.require_group_bound))
    if not public and found.applies:
        frame = result.dataset.frame
        generalization = reid.generalization if reid is not None else None
        groups = generalization.apply(frame[quasi]) if generalization is not None else frame[quasi]
        found.measured_right = guess_success(found, groups, frame[sensitive])
    return found


def _from_release_side(result: Anonymization, quasi: list[str], sensitive: str) -> GroupDisclosure:
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
        found = _measure(release_cells(view, quasi, sensitive), view, bound, source, quasi, sensitive)
        released = getattr(result, "n_released", None)  # a streamed job's report holds a random sample of its records
        if found.applies and released and released > len(result.table):
            found.how += (f"; measured on a random sample of {len(result.table):,} of the release's {released:,} "
                          "records, so the records counted here are the sample's")
    _MEASURED[id(result)] = (weakref.ref(result), found)
    while len(_MEASURED) > 4:
        _MEASURED.pop(next(iter(_MEASURED)))
    return found


_MEASURED: dict[int, tuple[weakref.ref, GroupDisclosure]] = {}


def for_release(release: LoadedRelease, original: pd.DataFrame | None = None) -> GroupDisclosure:
    """The section for a written release; with ``original`` (the custodian's data, same records) also how often
    the guess is right on it, where the release's groups are its quasi-identifiers as they are (no k)."""
    meta = release.metadata
    entry = meta.get("group_disclosure") if isinstance(meta.get("group_disclosure"), dict) else {}
    reid = meta.get("reidentification") if isinstance(meta.get("reidentification"), dict) else {}
    quasi = [str(c) for c in entry.get("quasi_identifiers") or reid.get("quasi_identifiers") or []]
    roles = meta.get("attributes") or {}
    sensitive = str(entry.get("sensitive") or next((n for n, a in roles.items() if a.get("role") == "sensitive"), ""))
    bound, source = release_bound(meta, entry)
    found = _measure(release_cells(release, quasi, sensitive), release, bound, source, quasi, sensitive)
    found.required = bool(entry.get("required"))
    if original is not None and found.applies and not reid.get("generalization") \
            and all(c in original.columns for c in [*quasi, sensitive]):
        found.measured_right = guess_success(found, original[quasi], original[sensitive])
    return found


def _measure(cells, release: LoadedRelease, bound: float, source: str, quasi: list[str] | None = None,
             sensitive: str = "") -> GroupDisclosure:
    """The summary of ``cells`` (or why there is none), with the interval of the example group's share."""
    if isinstance(cells, str):
        return not_applicable(quasi or [], sensitive, cells, bound, source)
    found = summarize(cells, bound, source)
    if found.estimated and found.worst:
        shown = found.worst[0]  # chosen by the estimates among every (group, value): a simultaneous interval
        found.example_interval = share_interval(release, found.quasi, found.sensitive, shown.labels, shown.value,
                                                shown.share, comparisons=found.n_groups * max(len(cells.values), 1))
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
    """One sentence: the largest share, and the groups (and records) above the bound."""
    if not d.applies:
        return f"Not measured: {d.reason}."
    est = " (estimated)" if d.estimated else ""
    where = (f"no group is above {d.bound_source} = {percent(d.bound)}" if not d.groups_above else
             f"{d.groups_above:,} groups holding {_records(d, d.records_above)} records "
             f"({percent(d.records_above / d.n_records if d.n_records else 0.0)}) are above {d.bound_source} = "
             f"{percent(d.bound)}")
    return (f"Among the {d.n_groups:,} groups of records sharing their {_and(d.quasi)}, the most frequent "
            f"{d.sensitive} value holds up to {percent(d.largest_share)} of a group{est}; {where}.")


def level(d: GroupDisclosure) -> str:
    """The headline's colour: ``warning`` when groups are above the bound, ``normal`` otherwise (a measure of what
    any recipient can infer, not a verdict on the method)."""
    return "warning" if d.applies and d.groups_above else "normal"


def example(d: GroupDisclosure) -> str:
    """The clinician's sentence, about the group above the bound with the most records (else the one with the
    largest share)."""
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
    return (f"In the release, {lead} of the {_records(d, g.records)} records with {_group_words(d, g.labels)} have "
            f"{d.sensitive} {g.value!r} — anyone known to be in that group can be guessed to have {g.value!r} and "
            f"be right {'about that often' if d.estimated else share + ' of the time'}, whether or not they are in "
            "the data.")


def lines(d: GroupDisclosure) -> list[str]:
    """The section's sentences after the headline: the example, the attacker, how the shares were made, the
    caveats, the custodian's check on the original records and the bound asked for."""
    if not d.applies:
        return []
    out = [s for s in (example(d),) if s]
    right = "about " if d.estimated else ""
    caveat = (" by the release's estimates (estimated from randomized values, so the attack on the true values can "
              "succeed several points more or less often)" if d.estimated else "")
    out.append(f"Someone who knows a person's {_and(d.quasi)} and guesses the most frequent {d.sensitive} value "
               f"of their group in the release would be right for {right}{percent(d.guess_right)} of the records"
               f"{caveat}. This is inference about a group, not a leak of one record: it works on people who are not "
               "in the data too, and any release that keeps the statistics useful allows some of it.")
    out.append(f"The shares are {d.how}.")
    if d.few_groups:
        out.append(f"{d.few_groups:,} groups have fewer than {FEW_RECORDS} records ({_records(d, d.few_records)} "
                   "records): their shares are estimated from too few records to be reliable, in either direction.")
    if d.measured_right is not None and d.measured_right == d.measured_right:
        out.append(f"Checked on the original records (this report only): that guess is right for "
                   f"{percent(d.measured_right)} of them.")
    if d.required:
        out.append(f"The custodian required that no group's most frequent {d.sensitive} value holds more than "
                   f"{percent(d.bound)} of the group; this was checked exactly on the original records before the "
                   "release was written (the release's estimates converge to those shares"
                   + ("; estimated shares above it come from the randomization's noise" if d.estimated else "") + ").")
    else:
        out.append(HOW_TO_CAP)
    return out


TABLE_HEADER = ("Group (quasi-identifiers)", "Records", "Most frequent value", "Share")


def table(d: GroupDisclosure) -> list[tuple[str, str, str, str]]:
    """The groups shown (above the bound, most records first; else the largest shares) as rows of text."""
    return [(_group_words(d, g.labels), _records(d, g.records), g.value, percent(g.share)) for g in d.worst]

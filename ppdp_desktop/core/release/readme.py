"""``README.txt`` for the recipient of a release: what was done, what it guarantees, how to use it.

The common head (files, checksums, the two verdicts, what was done to each column) is written here; each
method writes its own sections through ``Method.readme_text`` (the registry), from the content of
``release.json``.
"""
from __future__ import annotations

import textwrap
from typing import Any

from ppdp_desktop.core.data.sentences import full_stop
from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.evaluation.reidentification import entry_verdict
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.release.recoding_words import recoded_columns
from ppdp_desktop.core.shell_words import shell_option

WIDTH = 100  # README lines wrap here

COMMON = """\
PPDP Desktop release
====================
Created {created} by {app}; {n_records:,} records; method: {method}.

Files
  {data_file}   the released data ({format}){format_note}
  release.json  how it was made: roles, parameters, matrices, the guarantee checked (or that there is none)
  report.html / report.pdf   the utility and privacy report
  SHA256SUMS    checksums of every file; check with:  ppdp verify THIS_FOLDER
                (or: sha256sum -c SHA256SUMS)

"""



def recipient_readme(metadata: dict[str, Any]) -> str:
    """The README text for ``metadata`` (the content of release.json)."""
    fmt, note = _format(metadata)
    text = COMMON.format(
        created=metadata.get("created", ""), app=metadata.get("app", "PPDP Desktop"),
        n_records=metadata.get("n_records", 0), method=metadata.get("method", ""),
        data_file=metadata.get("data_file", ""), format=fmt, format_note=note,
    )
    signer = metadata.get("signer") or {}
    if isinstance(signer, dict) and signer.get("fingerprint"):
        text += (f"Signed\n  The manifest (SHA256SUMS) is signed ({signer.get('algorithm', 'Ed25519')}) by the key with\n"
                 f"  fingerprint {signer['fingerprint']}. Ask the custodian for that fingerprint by another\n"
                 f"  channel, then check:  ppdp verify THIS_FOLDER {shell_option('--signer', str(signer['fingerprint']))}\n\n")
    text += (_verdicts(metadata) + _groups(metadata) + _population(metadata) + _repeated(metadata)
             + column_treatments(metadata))
    return text + get_method(str(metadata.get("method", ""))).readme_text(metadata)


_NOTE = "\n                "  # continues a line of the file list


def _repeated(metadata: dict[str, Any]) -> str:
    """What this release adds to its project's earlier releases (release.json's ``repeated_release``)."""
    block = _dict_at(metadata, "repeated_release")
    statement = block.get("statement")
    if not isinstance(statement, list) or not statement:
        return ""
    return "Repeated releases\n" + "".join(_fill(str(line), "  ", "  ") + "\n" for line in statement) + "\n"


def _population(metadata: dict[str, Any]) -> str:
    """The risk in the population the custodian asked for (release.json's ``reidentification.population``)."""
    block = _dict_at(_dict_at(metadata, "reidentification"), "population")
    statement = block.get("statement")
    if not isinstance(statement, list) or not statement:
        return ""
    return "Risk in the population\n" + "".join(_fill(str(line), "  ", "  ") + "\n" for line in statement) + "\n"


def _format(metadata: dict[str, Any]) -> tuple[str, str]:
    """The data file's format and, for a CSV, lines on its encoding (with or without the byte-order mark)."""
    fmt = str(metadata.get("format", "csv"))
    if fmt != "csv":
        return fmt, ""
    csv = metadata.get("csv", {})
    sep = csv.get("delimiter", ",")
    named = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}.get(sep, repr(sep))
    guard = (csv.get("formula_guard") or {}).get("columns") or []
    guarded = _NOTE.join(["", "Cells that a spreadsheet would run as a formula (starting with = + - @) carry a",
                          f"leading ' so they stay text; columns: {', '.join(guard)}. Remove one leading '",
                          "before such a character to get the value back (ppdp does)."]) if guard else ""
    if csv.get("encoding") == "utf-8-sig":
        return f"csv, {named}-separated, UTF-8 with a byte-order mark", guarded + _NOTE.join([
            "", "The mark lets Excel show accented letters; pandas and readr skip it. To skip it",
            'in base R use read.csv(..., fileEncoding = "UTF-8-BOM"), with Python\'s csv module',
            'open(..., encoding="utf-8-sig").'])
    return f"csv, {named}-separated, UTF-8 without a byte-order mark", guarded + _NOTE.join([
        "", "In Excel open it with Data > From Text/CSV and File origin: UTF-8."])


def _verdicts(metadata: dict[str, Any]) -> str:
    """The two verdicts side by side: the sensitive values' guarantee and the re-identification verdict (the one
    rule, :func:`~ppdp_desktop.core.evaluation.reidentification.entry_verdict`, on the figures release.json states)."""
    guarantee: dict[str, Any] = metadata.get("guarantee") or next(
        (e.get("guarantee") for e in metadata.get("sensitive", []) if e.get("guarantee")), {})
    kind = guarantee.get("kind", "none")
    sensitive = (f"guarantee verified ({kind})" if guarantee.get("verified") else
                 "no formal guarantee" if kind == "none" else f"guarantee stated ({kind})")
    sensitive += _uncovered(guarantee)
    reid = entry_verdict(metadata.get("reidentification")).text
    verdicts = _fill(full_stop(f"Sensitive values: {sensitive}"), "  ", "    ") + "\n" + _fill(reid, "  ", "    ")
    return "Two verdicts\n" + verdicts + "\n\n"


def _uncovered(guarantee: dict[str, Any]) -> str:
    """The values a per-value bound says nothing about (held by more than their rho1 of the records), named beside
    the verdict so that "verified" is never read as covering them."""
    above = [str(v) for v in guarantee.get("prior_above_rho1") or []]
    pairs = [p for p in guarantee.get("pairs") or [] if isinstance(p, dict) and p.get("rho1") is not None]
    if not above:
        return ""
    shown = ", ".join(repr(v) for v in above[:5]) + (f" and {len(above) - 5:,} more" if len(above) > 5 else "")
    if pairs and len(above) >= len(pairs):
        return (f"; but no value is covered by its bound: {shown} "
                f"{'is' if len(above) == 1 else 'are'} held by more than rho1 of the records")
    return (f" for the values it covers; not covered: {shown} (held by more than {'its' if len(above) == 1 else 'their'} "
            "rho1 of the records, where the bound says nothing)")


def _groups(metadata: dict[str, Any]) -> str:
    """What the release's statistics reveal about a group (release.json's ``group_disclosure``): no method hides
    it, so README states it beside the verdicts, from the figures the release itself gives (empty: not recorded).
    Estimated shares: the groups the release shows above the bound (their interval above it, 95 % for every group
    at once) and those its estimates put above it, and the cross-fitted guess with its margin."""
    entry = metadata.get("group_disclosure")
    if not isinstance(entry, dict):
        return ""
    if entry.get("not_measured"):
        return "What a group reveals\n" + _fill(f"Not measured: {entry['not_measured']}", "  ", "  ") + "\n\n"
    try:
        share, bound = float(entry["largest_share"]), float(entry["bound"])
        groups, above = int(entry["groups"]), int(entry["groups_above"])
        records, right = float(entry["records_above"]), float(entry["guess_right"])
        estimated_above = int(entry.get("groups_estimated_above", above))
        margin, supported = float(entry.get("guess_right_margin", 0.0)), float(entry.get("largest_supported", share))
    except (KeyError, TypeError, ValueError):
        return ""
    sensitive = entry.get("sensitive")
    text = f"People who share their {', '.join(map(str, entry.get('quasi_identifiers') or []))} form a group. "
    if entry.get("estimated"):
        shown = (f"the release shows one {sensitive} value holding more than {bound * 100:.0f} % of a group in {above:,} "
                 f"of {groups:,} groups (about {records:,.0f} records; at least {supported * 100:.0f} % in one of them)"
                 if above else f"the release shows no {sensitive} value holding more than {bound * 100:.0f} % of any of "
                 f"its {groups:,} groups")
        text += (f"Estimated from the release's randomized values, {shown}, with 95 % confidence for every group at once. "
                 + (f"Its estimates put {estimated_above:,} groups above it (up to {share * 100:.0f} %), the others by "
                    "amounts the randomization's noise alone could explain. " if estimated_above > above else "")
                 + f"Guessing each group's most frequent value from the estimates is right for about {right * 100:.0f} % "
                 f"of the people whose own record the guess does not use (give or take {margin * 100:.0f} points; each "
                 "half of the records checked against the guesses the other half gives), and can be right more often "
                 "for someone known to be in the data. ")
    else:
        text += (f"In the release (counted in the release), the most frequent {sensitive} value holds up to "
                 f"{share * 100:.0f} % of a group; {above:,} of {groups:,} groups (about {records:,.0f} records) are "
                 f"above {bound * 100:.0f} %. Guessing each group's most frequent value is right for {right * 100:.0f} % "
                 "of the records. ")
    several = entry.get("several_values")
    if isinstance(several, list) and several:
        text += (f"{float(entry.get('several_records', 0.0)):,.0f} records show a label that stands for several values "
                 f"({', '.join(map(str, several[:5]))}{', ...' if len(several) > 5 else ''}): they count in their "
                 "group but toward no value. ")
    text += ("This is inference about a group, not a leak of one record: it works on people who are not in the data "
             "too, and no method here bounds it unless the custodian asked for a group bound"
             + (" (asked: every group was checked to be within it before release)." if entry.get("required") else "."))
    return "What a group reveals\n" + _fill(text, "  ", "  ") + "\n\n"


#: the release.json keys by which a method of the app declares the columns it changed (a method whose release.json
#: has none of them, such as a plug-in's, never has a column it may have changed called unchanged)
DECLARING = ("sensitive", "randomized", "recoded", "graded", "protected", "generalization_only")


def _method_title(metadata: dict[str, Any]) -> str:
    try:
        return get_method(str(metadata.get("method", ""))).title
    except PPDPError:
        return "perturbation"


def _perturbed(entry: dict[str, Any], title: str) -> str:
    """A perturbed column (release.json's ``sensitive`` entry): its retentions, per value or per sub-table."""
    subtables = [s for s in entry.get("subtables") or [] if isinstance(s, dict)]
    retention = [float(s.get("retention", 0.0)) for s in subtables] or [float(r) for r in entry.get("retention") or [0.0]]
    if min(retention) >= 1.0:
        return "unchanged (every retention is 1)"
    if subtables:
        return (f"randomized: {title}; within its sub-table, each record kept its value with the sub-table's "
                "probability, else got one of the sub-table's values drawn uniformly")
    kept = "one probability for every value" if len(set(retention)) == 1 else "a probability set per value"
    return (f"randomized: {title}; each record kept its value with {kept}, else got a value drawn uniformly from "
            "the column's values")


def _changed_by_method(metadata: dict[str, Any]) -> dict[str, str]:
    """What the method did to each column it changed, as release.json declares it."""
    params = _dict_at(metadata, "parameters")
    title = _method_title(metadata)
    out: dict[str, str] = {}
    for entry in _entries(metadata, "sensitive"):
        out[str(entry["attribute"])] = _perturbed(entry, title[:1].lower() + title[1:])
    for entry in _entries(metadata, "randomized"):
        p = float(entry.get("p", 1.0))
        out[str(entry["attribute"])] = ("unchanged (kept with probability p = 1)" if p >= 1.0 else
                                        f"randomized: randomized response (each record kept its value with "
                                        f"probability p = {p:.4g}, else got another of its values drawn uniformly)")
    for entry in _entries(metadata, "recoded"):
        out[str(entry["attribute"])] = ("recoded record by record (personalized recoding): "
                                        f"{entry.get('published', 'the value or a code')}")
    for entry in _entries(metadata, "graded"):
        out[str(entry["attribute"])] = ("graded (personalized recoding): a category number and the position "
                                        "within it; the category bounds are secret")
    for entry in _entries(metadata, "protected"):
        how = ("a noisy cluster value (microaggregation plus discrete Laplace noise)" if entry.get("kind") == "numeric"
               else "a label of its taxonomy drawn once per cluster")
        epsilon = float(entry.get("epsilon", params.get("epsilon", float("nan"))))
        out[str(entry["attribute"])] = (f"protected by differential privacy (epsilon = {epsilon:g} for this column): "
                                        f"each cluster of k = {params.get('k', '?')} records shows {how}")
    return out


def _fill(text: str, first: str, rest: str) -> str:
    """``text`` wrapped at :data:`WIDTH` (never inside a hyphenated word such as quasi-identifier)."""
    return textwrap.fill(text, WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False)


def _dict_at(metadata: dict[str, Any], key: str) -> dict[str, Any]:
    """``metadata[key]`` when it is a dict, else an empty one."""
    value = metadata.get(key)
    return value if isinstance(value, dict) else {}


def _entries(metadata: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [e for e in metadata.get(key) or [] if isinstance(e, dict) and e.get("attribute") is not None]


def _generalized(metadata: dict[str, Any]) -> tuple[dict[str, str], int]:
    """What k-anonymity did to each quasi-identifier (its hierarchy level), and how many records it suppressed."""
    g = _dict_at(_dict_at(metadata, "reidentification"), "generalization")
    levels, heights, suppressed = g.get("levels") or {}, g.get("heights") or {}, int(g.get("suppressed", 0) or 0)
    meanings = _dict_at(g, "meanings")
    out = {}
    recoded = recoded_columns(g)
    for name, level in levels.items():
        level, height = int(level), int(heights.get(name, level))
        if name in recoded:
            out[name] = (f"level {level} of {height} of its hierarchy for the records the chosen generalization keeps "
                         f"(level 0 is the value itself); {recoded[name]}")
        elif name in meanings and 0 < level < height:
            out[name] = f"generalized: level {level} of {height} ({meanings[name]})"
        elif level == 0:
            out[name] = "unchanged (level 0 of its hierarchy: the values themselves)"
        elif level >= height:
            out[name] = (f"generalized to level {level} of {height}, the top of its hierarchy: one label for every "
                         "record, which says nothing")
        else:
            out[name] = (f"generalized to level {level} of {height} of its hierarchy (level 0 is the value itself, "
                         f"level {height} one label for all): coarser categories")
    return out, suppressed


def column_treatments(metadata: dict[str, Any]) -> str:
    """README's list of what was done to every column, from release.json: removed (identifier), pseudonymized,
    randomized (how), generalized (to which level), suppressed (how many records), protected by differential
    privacy, recoded or unchanged — one common section whatever the method."""
    attributes = _dict_at(metadata, "attributes")
    pseudonyms = metadata.get("pseudonym_column")
    changed = _changed_by_method(metadata)
    generalized, suppressed = _generalized(metadata)
    declared = any(key in metadata for key in DECLARING)
    rows = []
    for name, attribute in attributes.items():
        attribute = attribute if isinstance(attribute, dict) else {}
        role = attribute.get("role")
        if role == "identifier":
            what = ("pseudonymized: removed (identifier); each record carries a random pseudonym in column "
                    f"{pseudonyms!r} instead, which only the custodian's sealed key links back" if pseudonyms
                    else "removed (identifier)")
        elif not attribute.get("released", True):
            what = "removed (not released)"
        else:
            parts = [p for p in (generalized.get(name), changed.get(name)) if p]
            if name in generalized and suppressed:
                parts.append(f"suppressed ('*') in {suppressed:,} records")
            if not parts:
                parts = ["unchanged" if declared or role not in ("sensitive",) else
                         "released as the method made it (see below)"]
            what = "; ".join(parts)
        rows.append((name, what))
    if pseudonyms and pseudonyms not in attributes:
        rows.append((pseudonyms, "added: a random pseudonym per record"))
    for entry in _entries(metadata, "sensitive"):
        column = entry.get("subtable_column")
        if column and column not in attributes:
            rows.append((column, f"added: each record's sub-table (which few values of {entry['attribute']!r} "
                                 "it can hold)"))
    width = min(max((len(str(n)) for n, _ in rows), default=0), 22) + 2
    lines = [_fill(what, f"  {str(name):<{width}}", " " * (width + 2)) for name, what in rows]
    if suppressed:
        were = "record was" if suppressed == 1 else "records were"
        k = _dict_at(_dict_at(metadata, "reidentification"), "generalization").get("k")
        reach = ("meet the criteria below" if k == 1 else "reach k-anonymity and the criteria below") \
            if _criteria_met(metadata) else "reach k-anonymity"
        lines.append(_fill(f"{suppressed:,} {were} suppressed to {reach}: every quasi-identifier of theirs "
                           "shows '*'; their other columns are released as for every record.", "  ", "  "))
    lines += _criteria_met(metadata)
    lines.append("  Rows are in random order.")
    return "What was done to each column\n" + "\n".join(lines) + "\n\n"


def _criteria_met(metadata: dict[str, Any]) -> list[str]:
    """The criteria beyond k the release meets, one line each (checked before writing and by ``ppdp verify``)."""
    g = _dict_at(_dict_at(metadata, "reidentification"), "generalization")
    if not isinstance(g.get("criteria"), dict):
        return []
    from ppdp_desktop.core.generalization import Criteria

    criteria = Criteria.from_json(dict(g["criteria"]))
    sensitive = g.get("sensitive") if isinstance(g.get("sensitive"), str) else None
    where = ("" if g.get("criteria_checked_on", "released") == "released" else
             f" (those on {sensitive!r} hold for its original values, checked before the values were randomized)")
    lines = criteria.lines(sensitive)[(1 if criteria.k == 1 else 0):]  # k = 1: no group size asked
    return [_fill(f"Criteria met by every released group{where}:", "  ", "  ")] + [
        _fill(line, "  - ", "    ") for line in lines]

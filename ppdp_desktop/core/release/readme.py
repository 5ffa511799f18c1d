"""``README.txt`` for the recipient of a release: what was done, what it guarantees, how to use it.

The common head (files, checksums) is written here; each method writes its own sections through
``Method.readme_text`` (the registry), from the content of ``release.json``.
"""
from __future__ import annotations

from typing import Any

from ppdp_desktop.core.methods import get_method

COMMON = """\
PPDP Desktop release
====================
Created {created} by {app}; {n_records:,} records; method: {method}.

Files
  {data_file}   the released data ({format}){format_note}
  release.json  how it was made: roles, parameters, matrices, the verified guarantee
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
                 f"  channel, then check:  ppdp verify THIS_FOLDER --signer \"{signer['fingerprint']}\"\n\n")
    text += _verdicts(metadata)
    return text + get_method(str(metadata.get("method", ""))).readme_text(metadata)


_NOTE = "\n                "  # continues a line of the file list


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
    """The two verdicts side by side: the sensitive values' guarantee and the re-identification risk."""
    guarantee = metadata.get("guarantee") or next(
        (e.get("guarantee") for e in metadata.get("sensitive", []) if e.get("guarantee")), {})
    kind = guarantee.get("kind", "none")
    sensitive = (f"guarantee verified ({kind})" if guarantee.get("verified") else
                 "no formal guarantee" if kind == "none" else f"guarantee stated ({kind})")
    risk = metadata.get("reidentification")
    if not risk:
        reid = "not measured"
    elif not risk.get("quasi_identifiers"):
        reid = "not measured: no quasi-identifiers were named"
    elif risk.get("generalization"):
        g = risk["generalization"]
        reid = (f"protected: k-anonymity with k = {g.get('k')} verified ({g.get('suppressed', 0):,} records "
                f"suppressed)")
    else:
        after = risk.get("release", {})
        reid = (f"NOT protected: {after.get('sample_uniques', 0):,} of {after.get('n_records', 0):,} records are "
                f"the only one with their {', '.join(risk['quasi_identifiers'])}")
    return f"Two verdicts\n  Sensitive values: {sensitive}.\n  Re-identification: {reid}.\n\n"

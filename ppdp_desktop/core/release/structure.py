"""What every release's data must agree with in its own ``release.json``, re-checked by ``ppdp verify``.

Two checks shared by all methods, made from the released data rather than taken from the stated figures:

* the columns: every column of the data file is one that ``release.json`` describes as released (an
  attribute, the pseudonym column or a sub-table column), every attribute it says is released is there,
  and none it says was removed (an identifier, a choice column) is;
* the re-identification figures: the release's risk over its quasi-identifiers (records alone in their
  group, the largest risk, records above the threshold) is measured again on the released columns, as
  ``ppdp report`` does, and must be the one stated (README.txt and the report repeat it).
"""
from __future__ import annotations

import math

import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError, PrivacyError, ReleaseError
from ppdp_desktop.core.evaluation.reidentification import check_stated_verdict
from ppdp_desktop.core.generalization.verify import SUPPRESSED
from ppdp_desktop.core.privacy.population import population_risk
from ppdp_desktop.core.privacy.risk import analyse_risk

#: the figures of the release's risk that are compared with the stated ones
RISK_FIGURES = ("n_records", "n_classes", "sample_uniques", "records_above_threshold", "highest_risk")


def check_columns(release: LoadedRelease) -> str:
    """The data's columns are exactly those ``release.json`` says are released; return the line for verify."""
    meta, columns = release.metadata, release.column_names
    attributes = meta.get("attributes") or {}
    released = {name for name, a in attributes.items() if a.get("released", a.get("role") != "identifier")}
    added = {meta.get("pseudonym_column")} | {e.get("subtable_column") for e in meta.get("sensitive") or []}
    added.discard(None)
    unknown = [c for c in columns if c not in released and c not in added]
    if unknown:
        said = attributes.get(unknown[0])
        why = "which release.json says was removed" if said is not None else "which release.json does not describe"
        raise PrivacyError(f"The released data has a column {unknown[0]!r}, {why}: the release was altered.")
    missing = sorted(released - set(columns))
    if missing:
        raise ReleaseError(f"release.json says column {missing[0]!r} is released, but the data has no such column.")
    if len(set(columns)) != len(columns):
        raise ReleaseError("The released data has two columns of the same name.")
    return f"columns: the {len(columns)} columns of the data are those release.json describes"


def recheck_reidentification(release: LoadedRelease) -> list[str]:
    """The stated re-identification figures of the release, measured again on its quasi-identifier columns."""
    entry = release.metadata.get("reidentification")
    if not isinstance(entry, dict) or not entry.get("quasi_identifiers") or not isinstance(entry.get("release"), dict):
        return [check_stated_verdict(entry, None)] if isinstance(entry, dict) else []  # "not measured", as stated
    stated = entry["release"]
    try:
        quasi = [str(c) for c in entry["quasi_identifiers"]]
        threshold = float(stated.get("threshold", 0.2))
        claimed = entry.get("generalization")
        k = None if not claimed else int(claimed["k"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReleaseError(f"release.json: the re-identification entry is malformed ({exc}).") from None
    missing = [c for c in quasi if c not in release.table.columns]
    if missing:
        raise ReleaseError(f"release.json names quasi-identifier {missing[0]!r}, which is not in the data.")
    released = release.table[quasi]
    kept = ~released.eq(SUPPRESSED).all(axis=1) if claimed else slice(None)
    try:
        analysis = analyse_risk(released.loc[kept], quasi, threshold, k)
        measured = analysis.to_json()
    except PPDPError as exc:
        raise ReleaseError(f"release.json: the re-identification entry is malformed ({exc}).") from None
    for name in RISK_FIGURES:
        said, found = stated.get(name), measured[name]
        same = isinstance(said, (int, float)) and not isinstance(said, bool) and math.isclose(said, found, rel_tol=1e-9)
        if not same:
            raise PrivacyError(f"release.json states {name.replace('_', ' ')} {said!r} for the release's "
                               f"{', '.join(quasi)}, but the released data gives {found!r}: the release was altered.")
    suppressed = int(len(released) - released.loc[kept].shape[0]) if claimed else None  # all '*', found in the data
    verdict = check_stated_verdict(entry, analysis, suppressed)  # the one rule; k-anonymity is re-checked on its own
    return [f"re-identification: measured again on {', '.join(quasi)}: {measured['sample_uniques']:,} of "
            f"{measured['n_records']:,} records alone in their group, as stated", verdict,
            *recheck_population(entry.get("population"), released.loc[kept], quasi, len(released), threshold)]


#: the start of a verify line that says what could not be checked (printed as it is, not after "OK")
NOT_CHECKED = "NOT CHECKED"


def recheck_population(entry: object, kept: pd.DataFrame, quasi: list[str], n_records: int,
                       threshold: float) -> list[str]:
    """The stated population uniqueness, estimated again from the released records and the stated sampling fraction;
    the journalist risk cannot be (the custodian's population table is not part of the release), which is said."""
    if not isinstance(entry, dict):
        return []
    out = []
    stated = entry.get("population_uniqueness")
    if isinstance(stated, dict):
        try:
            fraction = float(entry["stated_sampling_fraction"])
            said = float(stated["population_uniques"]), str(stated["model"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ReleaseError(f"release.json: the population entry is malformed ({exc}).") from None
        found = population_risk(kept, quasi, n_records, threshold, fraction).uniqueness
        if found is None or found.model != said[1] or not math.isclose(found.uniques, said[0], rel_tol=1e-6, abs_tol=1e-9):
            raise PrivacyError(f"release.json states {said[0]:,.1f} population uniques ({said[1]}) for the release's "
                               f"{', '.join(quasi)}, but the released data gives "
                               f"{'none' if found is None else f'{found.uniques:,.1f} ({found.model})'}: the release "
                               "was altered.")
        out.append(f"population uniqueness: estimated again from the released records and the stated sampling fraction "
                   f"{fraction:g}: about {found.uniques:,.0f} ({found.model}), as stated")
    if isinstance(entry.get("journalist"), dict):
        out.append(f"{NOT_CHECKED} journalist risk: stated against the custodian's population table, which is not "
                   "part of the release, so it is not measured again")
    return out

"""``ppdp verify``'s re-check of ``release.json``'s ``group_disclosure`` (Qt-free).

Every figure of that entry is computed from the release alone (the released groups and values, and the published
matrices), so the recipient recomputes it with the same estimator and compares: a doctored largest share, count of
groups above the bound (shown or estimated) or of the records they hold, guess_right or its margin is refused,
stating both figures. The labels the entry says stand for several values (``several_values``: a personalized
release's generalizations) are taken as stated, as only the sealed key knows them, but each must be one the release
holds. The bound is checked against
what it is named after (``1/l`` from the parameters, the threshold of the re-identification entry), and the groups
must be those of the release's quasi-identifiers. A release written before the entry existed verifies without it;
one streamed to disk says the figures were not measured (``ppdp report`` measures them; verify leaves a file of
any size alone), and so does one where they cannot be measured (verify says why).
"""
from __future__ import annotations

import math

import numpy as np

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PrivacyError, ReleaseError
from ppdp_desktop.core.evaluation.group_disclosure import summarize
from ppdp_desktop.core.methods.group_estimates import measure, release_cells
from ppdp_desktop.core.report.groups import STREAMED, headline, release_bound, several_values

#: the stated figures and how far a genuine one can lie from its recomputation (release.json rounds shares to 6
#: digits and record counts to 0.1; group counts are exact)
FIGURES = {"groups": 0, "groups_above": 0, "groups_estimated_above": 0, "records": 0.1 + 1e-9,
           "records_above": 0.1 + 1e-9, "largest_share": 1.5e-6, "largest_supported": 1.5e-6, "guess_right": 1.5e-6,
           "guess_right_margin": 1.5e-6, "folds": 0}
#: the figures an earlier version of the entry did not state (its groups_above and guess_right meant otherwise)
NEWER = ("largest_supported", "groups_estimated_above", "guess_right_margin", "folds")
#: how far a stated bound may lie from what it is named after (rounding of older releases)
BOUND_TOLERANCE = 1e-6


def recheck_group_disclosure(release: LoadedRelease) -> list[str]:
    """The stated group-disclosure figures, recomputed from the release; one line for verify (none for a release
    without the entry). Raises :class:`PrivacyError` when a figure differs, :class:`ReleaseError` when the entry
    is malformed."""
    meta = release.metadata
    if "group_disclosure" not in meta:
        return []
    entry = meta["group_disclosure"]
    quasi, sensitive = _subject(entry, meta)
    if entry.get("not_measured") == STREAMED:  # nothing is stated; measuring a file of any size is ppdp report's job
        return ["group disclosure: not measured, as stated (the release was streamed; ppdp report measures it)"]
    several = several_values(entry)
    if "not_measured" in entry:
        cells = release_cells(release, quasi, sensitive, several)
        if isinstance(cells, str):
            return [f"group disclosure: not measured, as stated ({cells})"]
        found = summarize(cells, 1.0, "")
        raise PrivacyError(f"release.json says group_disclosure was not measured ({entry['not_measured']}), but the "
                           f"release measures it: among its {found.n_groups:,} groups, the most frequent {sensitive} "
                           f"value holds up to {found.largest_share:.1%} of a group. The release was altered.")
    found = measure(release, quasi, sensitive, *_bound(entry, meta), several)
    if not found.applies:
        raise PrivacyError(f"release.json states group_disclosure figures, but they cannot be measured from the "
                           f"release: {found.reason}. The release was altered.")
    measured = found.to_json()
    if several and measured.get("several_values") != several:
        raise PrivacyError(f"release.json says the {sensitive} labels {several} stand for several values, but the "
                           f"release holds {measured.get('several_values') or 'none of them'}: the release was altered.")
    if entry.get("estimated") is not measured["estimated"]:
        raise PrivacyError(f"release.json states group_disclosure.estimated = {entry.get('estimated')!r}, but the "
                           f"release's shares are {found.how}: the release was altered.")
    for name, tolerance in FIGURES.items():
        said, again = entry.get(name), measured[name]
        if not isinstance(again, (int, float, np.integer, np.floating)):  # to_json states each of FIGURES as a number
            raise TypeError(f"group_disclosure.{name} was recomputed as {again!r}, not a number")
        number = isinstance(said, (int, float)) and not isinstance(said, bool) and math.isfinite(said)
        if not number or abs(said - again) > tolerance:
            if name in NEWER and name not in entry:
                raise PrivacyError(f"release.json's group_disclosure has no {name}: it was written by an earlier "
                                   "version of these figures, which counted estimated shares as they came (the largest "
                                   "of noisy estimates); ppdp report on the release states today's.")
            raise PrivacyError(
                f"release.json states group_disclosure.{name} = {said!r} for the groups of {', '.join(quasi)} and "
                f"{sensitive}, but the release gives {again!r} (recomputed: {found.how}): the release was altered.")
    said, again = entry.get("several_records", 0.0), measured.get("several_records", 0.0)
    if not isinstance(again, (int, float, np.integer, np.floating)):  # to_json states it as a number, when it states it
        raise TypeError(f"group_disclosure.several_records was recomputed as {again!r}, not a number")
    if not isinstance(said, (int, float)) or isinstance(said, bool) or abs(said - again) > 0.1 + 1e-9:
        raise PrivacyError(f"release.json states group_disclosure.several_records = {said!r}, but the release gives "
                           f"{again!r}: the release was altered.")
    return [f"group disclosure: recomputed from the release, as stated: {headline(found)}"]


def _subject(entry: object, meta: dict) -> tuple[list[str], str]:
    """The entry's quasi-identifiers (those of the re-identification entry) and sensitive column."""
    if not isinstance(entry, dict):
        raise ReleaseError("release.json: group_disclosure is malformed (not an object).")
    quasi, sensitive = entry.get("quasi_identifiers"), entry.get("sensitive")
    if (not isinstance(quasi, list) or not all(isinstance(c, str) for c in quasi)
            or not isinstance(sensitive, str)):
        raise ReleaseError("release.json: group_disclosure's quasi_identifiers or sensitive column is malformed.")
    reid = meta.get("reidentification")
    named = [str(c) for c in reid.get("quasi_identifiers") or []] if isinstance(reid, dict) else []
    if quasi != named:
        raise PrivacyError(f"release.json's group_disclosure is about the groups of {quasi}, but the release's "
                           f"quasi-identifiers are {named}: the release was altered.")
    return quasi, sensitive


def _bound(entry: dict, meta: dict) -> tuple[float, str]:
    """The bound the groups are compared with, checked against what it is named after: 1/l (the parameters' l),
    the threshold (the re-identification entry's) or the custodian's group bound (as stated, in (0, 1])."""
    source = entry.get("bound_source")
    try:
        expected, named = release_bound(meta, {}, source) if source in ("1/l", "the threshold") else (None, None)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the parameters or threshold behind the group bound are malformed "
                           f"({exc}).") from None
    bound = entry.get("bound")
    if not isinstance(bound, (int, float)) or isinstance(bound, bool) or not 0.0 < bound <= 1.0:
        raise ReleaseError(f"release.json: group_disclosure's bound {bound!r} is not a share in (0, 1].")
    if source == "the group bound":
        return float(bound), "the group bound"
    if expected is None or not isinstance(source, str):  # expected is set only for the two names above
        raise ReleaseError(f"release.json: group_disclosure's bound_source {source!r} is none this app writes.")
    if named != source or abs(expected - bound) > BOUND_TOLERANCE:
        what = "l" if source == "1/l" else "re-identification threshold"
        raise PrivacyError(f"release.json states a group bound of {bound!r} as {source}, but the release's {what} "
                           f"gives {repr(expected) if named == source else 'none'}: the release was altered.")
    return expected, source

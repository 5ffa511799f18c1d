"""What the published parameters of a perturbed column reveal about the data they were computed from.

The (rho1, rho2) bound and the epsilon-LDP equivalent speak of what a person's released value tells someone who
knows the matrix: they take its parameters as given. The app computes those parameters from the data. The list of
values is the set the column holds; under the theta rule each value's rho1 is its exact share of the records (so
``rho1 x n_records`` is its count) and fine-grain's retentions follow from those counts; ``prior_above_rho1`` and
``downward_breaches`` are thresholds on the counts. Someone who already knows every other record therefore learns
the last one's value from release.json alone (under the theta rule: whether it holds a value whose pair the rule
set, and which), whatever the randomization. That attacker is outside the bound; :func:`parameters_statement` says
so in plain words, release.json states it as the guarantee's ``not_covered`` and every face prints it.

Perturbation partitioning publishes more of the same kind (:func:`partition_statement`): each sub-table's exact
number of records, its rho1 (the count of its most frequent protected value over that number), and a split planned
from every value's count. Planning the split again with each value the last record could hold and keeping those
that give the published sub-tables finds it (on 2,000 Adult records, native-country in five sub-tables: the value of
1,965 of them).
"""
from __future__ import annotations

from ppdp_desktop.core.errors import PrivacyError

#: how the theta rule's requirement names itself (:func:`~ppdp_desktop.core.privacy.sensitivity.theta_rule`), as
#: release.json's ``parameters.rule`` publishes it (per-value overrides append to it)
THETA_RULE_PREFIX = "theta="

#: the window's method description: the same fact in one sentence, before any data is chosen
PARAMETERS_CAVEAT = ("The published parameters are computed from each value's count in the data and can reveal it: "
                     "someone who already knows every other record can learn the last one's value from them (with "
                     "the theta rule, whenever it is a value the rule protects); the bound covers attackers whose "
                     "belief before the release is at most rho1, about what a released value tells them.")

#: the same fact for perturbation partitioning, in the window's description
PARTITION_CAVEAT = ("The published sub-tables (their values, record counts and rho1) are computed from each value's "
                    "count in the data and can reveal it: someone who already knows every other record can learn the "
                    "last one's value from them; the bound covers attackers whose belief before the release is at most "
                    "the sub-table's rho1, about what a released value tells them.")

_COVERS = ("The bound covers attackers whose belief before the release is at most rho1, about what a person's "
           "released value tells them; it takes the published parameters as given.")


def set_by_frequency(rule: object) -> bool:
    """Whether the pairs were set by the theta rule (``rho1`` = each value's share of the records)."""
    return str(rule or "").startswith(THETA_RULE_PREFIX)


def parameters_statement(method: str, rule: object) -> str:
    """The plain-words statement of what release.json's parameters reveal, for ``method``'s release whose pairs
    were set by ``rule`` (release.json's ``parameters.rule``): computable from release.json alone, so that
    ``ppdp verify`` can check it."""
    finegrain = method == "finegrain"
    if set_by_frequency(rule):
        retentions = ", and fine-grain's retentions are computed from these counts" if finegrain else ""
        return ("Not covered: the published parameters are computed from each value's count in the data and reveal "
                "it. Under the theta rule a value's rho1 is its exact share of the records (its count divided by the "
                "number of records), so release.json gives the exact count of every value whose pair the rule set"
                f"{retentions}. Someone who already knows every other record learns from them whether the last one "
                "holds such a value, and which. " + _COVERS)
    retentions = "; fine-grain's retentions are chosen with each value's count as its weight" if finegrain else ""
    return ("Not covered: the published parameters are computed from the data and can reveal a value's count. "
            "release.json lists only the values the column holds, and which of them are held by more than their rho1 "
            f"of the records or fall in a downward breach{retentions}. Someone who already knows every other record "
            "learns from them the last one's value when no other record holds that value, and can learn it when one "
            "record more or less changes them. " + _COVERS)


def partition_statement() -> str:
    """What a partitioned column's published parameters reveal (release.json's sub-tables): the plain-words
    statement every face of a perturbation-partitioning release prints, computable from nothing but the method."""
    return ("Not covered: the published parameters are computed from each value's count in the data and reveal it. "
            "release.json gives each sub-table's exact number of records (as the sub-table column does) and its rho1, "
            "the count of its most frequent protected value divided by that number, so that count too; it lists only "
            "the values the column holds; and the split into sub-tables is planned from every value's count. Someone "
            "who already knows every other record can learn from them the last one's value, by planning the split "
            "again with each value it could hold and keeping those that give the published sub-tables (a value no "
            "other record holds is the last one's). The bound covers attackers whose belief before the release is at "
            "most the sub-table's rho1, about what a person's released value tells them; it takes the published "
            "parameters as given.")


def check_parameters_statement(metadata: dict, entry: dict, expected: str | None = None,
                               older: tuple[str, ...] = ()) -> str:
    """What release.json's parameters reveal about the data (``guarantee.not_covered``) must be stated as this app
    states it for the release's method and rule (or as ``expected``, a method's own statement); an older release
    that states nothing, or one of the ``older`` statements an earlier version wrote, gets it said here."""
    if expected is None:
        expected = parameters_statement(str(metadata.get("method", "")),
                                        (metadata.get("parameters") or {}).get("rule"))
    stated = entry["guarantee"].get("not_covered")
    if stated is not None and stated != expected and stated not in older:
        raise PrivacyError(f"release.json's statement of what the parameters of {entry['attribute']!r} reveal about the "
                           "data is not the one this release's method and rule give: the release was altered.")
    return expected

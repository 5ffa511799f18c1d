"""What randomized response's bound promises, in plain words, and against whom: one source for release.json's
statement, README.txt, the report, the command line and the window.

The bound ``max risk <= 1/l`` is the one of the method's paper (Guo, Ying & Wu; SPEC 1.3). It holds against the
paper's attacker only, and the exact event it bounds is: *a record of the person's group, taken at random, holds
the person's sensitive value and is un-randomized exactly right* (its quasi-identifiers and its sensitive value
both drawn back correctly from their posterior). ``tests/test_claims_rr.py`` computes that attacker's success
exactly on real data and checks it against release.json's ``max_risk``.

It does not bound group-level inference: the release's estimated counts show how common each sensitive value is
among people sharing quasi-identifiers, and guessing a group's most common value is right as often as that value's
share (on adult, education, marital-status, sex and race x occupation at l = 5: about 30 % of the records, above
1/l = 20 %; with workclass, where one value covers three records in four, about 67 %). It works on people who are
not in the data too. Drawing a record's value from its posterior and reading it as the person's is right as often as the
value's share in the group as well, so that is not bounded either.
"""
from __future__ import annotations

from ppdp_desktop.core.evaluation.report_model import percent

#: release.json's ``guarantee.kind`` (the command line prints it after "guarantee verified:")
KIND = ("attribute disclosure to one attacker, the method's paper's (someone who un-randomizes records by drawing "
        "their original values from the posterior): risk <= 1/l; group-level inference (guessing a group's most "
        "common value) is not bounded")

#: the attacker, in plain words, without figures (the window's method description uses it)
ATTACKER = ("someone who knows a person's quasi-identifiers and that the person is in the data, and who un-randomizes "
            "released records by drawing each one's original values at random in proportion to how likely the "
            "published matrices make them")

#: what the bound does not cover, in plain words
NOT_BOUNDED = ("It does not bound group-level inference: the release's estimated counts show how common each sensitive "
               "value is among people who share quasi-identifiers, and guessing a group's most common value is right "
               "as often as that value's share, for people in the data and for people who are not.")


def bounded_event(sensitive: str = "sensitive value") -> str:
    """The event the bound is about, in plain words."""
    return (f"a record of the person's group, taken at random, holds the person's {sensitive} and is un-randomized "
            f"exactly right (its quasi-identifiers and its {sensitive} both recovered)")


def statement(l: float, max_risk: float, sensitive: str = "sensitive value") -> str:
    """The whole promise with this release's figures: the attacker, the bound, what it leaves out."""
    return (f"The bound holds against the attacker of the method's paper, and only that one: {ATTACKER}. The chance "
            f"that {bounded_event(sensitive)} is at most 1/l = {percent(1.0 / l)} (largest in this release: "
            f"{percent(max_risk)}). {NOT_BOUNDED}")


def short_statement(l: float, max_risk: float) -> str:
    """One line for the command line's summary (the next line, the guarantee's kind, names the attacker)."""
    return f"largest attribute-disclosure risk {max_risk:.4f} <= 1/l = {1.0 / l:.4f}, against one attacker only (below)"

"""Perturbation of one categorical sensitive attribute by a retention matrix (UP and fine-grain).

``P = diag(p) + 1 (1 - p)^T / m``: value ``x_i`` is kept with probability ``p_i``, else replaced
by a uniform draw over the domain. The methods differ only in how they choose ``p``.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import CategoricalDomain, encode_column, label_text
from ppdp_desktop.core.errors import PrivacyError
from ppdp_desktop.core.methods.base import Applied
from ppdp_desktop.core.methods.perturbation.disclosure import parameters_statement
from ppdp_desktop.core.methods.perturbation.ldp import epsilon_json, no_bound_statement
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy.amplification import held_above_rho1
from ppdp_desktop.core.privacy.persistent import mechanism_digests
from ppdp_desktop.core.privacy.randomness import RandomSource, keyed_streams
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement
from ppdp_desktop.core.privacy.structured import RetentionMatrix, never_kept_note

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.base import Plan
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness
    from ppdp_desktop.core.settings import AnonymizationSettings


def retention_matrix(retention: np.ndarray) -> np.ndarray:
    """The dense ``P = diag(p) + 1 (1 - p)^T / m`` (keep ``x_i`` with probability ``p_i``, else draw uniformly):
    the reference the tests compare the structured form with; the app itself never builds it."""
    return RetentionMatrix(np.asarray(retention, dtype=float)).to_dense()


#: how release.json (format 2) names the matrix it publishes through its parameters
MATRIX_FORM = "retention"
MATRIX_FORMULA = ("P[y][x] = p_x [y = x] + (1 - p_x) / m: a record holding value x keeps it with probability p_x "
                  "(its retention), else gets one of the m values drawn uniformly")


def perturb_records(codes: np.ndarray, retention: np.ndarray, keyed: KeyedRandomness, attribute: str,
                    start: int = 0, mechanism: np.ndarray | None = None) -> np.ndarray:
    """Retain each record's code with its value's probability, else replace it by a uniform draw, every draw
    keyed by the record's index (``start`` is the first record's): two named streams, "keep" and "value", so the
    result does not depend on how the records are split into chunks. ``mechanism``: per value, its mechanism
    digest, for persistent draws when the records are bound
    (:meth:`~ppdp_desktop.core.privacy.keyed.KeyedRandomness.keep_or_draw`)."""
    p = retention[0] if np.all(retention == retention[0]) else retention[codes]
    keep, drawn = keyed.keep_or_draw(attribute, start, start + len(codes), p, len(retention),
                                     mechanism=None if mechanism is None else mechanism[codes])
    return np.where(keep, codes, drawn.astype(codes.dtype))


def perturb_codes(codes: np.ndarray, retention: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Retain each code with its value's probability, else replace it by a uniform draw (vectorized), from a
    sequential generator: for simulations (the report's baselines and bands), not for a release."""
    m = len(retention)
    threshold = retention[0] if np.all(retention == retention[0]) else retention[codes]
    keep = rng.random(len(codes)) < threshold
    out = rng.integers(0, m, size=len(codes), dtype=codes.dtype)
    np.copyto(out, codes, where=keep)
    return out


@dataclass
class PerturbationPlan:
    """A plan to perturb one sensitive attribute: its domain, pairs and retention probabilities."""

    method: str
    domain: CategoricalDomain
    requirement: SensitivityRequirement
    retention: np.ndarray
    parameters: dict[str, object] = field(default_factory=dict)
    needs_pseudonyms: bool = False

    @property
    def attribute(self) -> str:
        return self.domain.attribute

    @property
    def matrix(self) -> RetentionMatrix:
        """The published matrix, held by its retentions (O(m), never m x m)."""
        return RetentionMatrix(self.retention)

    @property
    def record_utility(self) -> float:
        """``sum_i (f_i/n) P[i][i]`` (thesis Def. 7): the chance a record keeps its value."""
        m = self.domain.m
        return float(np.dot(self.domain.prior, self.retention + (1.0 - self.retention) / m))

    def guarantee(self) -> privacy.GuaranteeReport:
        """Check the plan's matrix against its pairs; raises ``PrivacyError`` if it fails."""
        return privacy.verify(self.attribute, self.domain.values, self.matrix, self.requirement, self.domain.prior)

    def verify(self) -> dict[str, Any]:
        """The guarantee release.json states: the pairs and gammas, the epsilon-LDP equivalent (``null`` with the
        ``no_ldp_bound`` statement when a value is never replaced), the protected values held by more than their
        rho1 of the records (their pair's bound does not speak about them for the data's own frequencies), the
        downward breaches, and (``not_covered``) what these parameters, computed from the data, reveal about it."""
        report = self.guarantee()
        values = self.domain.json_values()
        statement = no_bound_statement(values, self.retention)
        epsilon = epsilon_json(report.epsilon_ldp)
        if (statement is None) != (epsilon is not None):  # the two readings of one matrix must agree (fail closed)
            raise PrivacyError(f"The epsilon-LDP of {self.attribute!r} ({report.epsilon_ldp!r}) and its retentions "
                               "disagree on whether a value is never replaced.")
        above = self.requirement.concern & held_above_rho1(self.domain.prior, self.requirement.rho1)
        return {
            "kind": "upward (rho1, rho2)-privacy per value (gamma-amplification)",
            "pairs": self.requirement.pairs_json(values),
            "gamma": np.where(np.isfinite(gamma := self.requirement.gamma), gamma, np.array(None)).tolist(),
            "epsilon_ldp": epsilon,
            **({} if statement is None else {"no_ldp_bound": statement}),
            "prior_above_rho1": [label_text(values[j]) for j in np.flatnonzero(above)],
            "downward_breaches": [b["value"] for b in report.downward_breaches],
            "not_covered": parameters_statement(self.method, self.parameters.get("rule", self.requirement.rule)),
            "verified": True,
        }

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0, bound: None = None) -> Applied:
        keyed = keyed_streams(randomness)
        codes = self.domain.encode(frame[self.attribute])
        mechanism = (mechanism_digests(self.attribute, self.domain.values, self.retention, len(self.retention))
                     if keyed.persistent else None)
        released = perturb_records(codes, self.retention, keyed, self.attribute, start, mechanism)
        return Applied({self.attribute: self.domain.categorical(released)}, codes={self.attribute: (codes, released)},
                       mechanisms={} if mechanism is None else {self.attribute: mechanism[codes]})

    def _parameters_json(self) -> dict[str, Any]:
        return {k: (float(v) if isinstance(v, (np.floating, float)) else v) for k, v in self.parameters.items()}

    def release_json(self) -> dict[str, Any]:
        return {
            "parameters": self._parameters_json(),
            "sensitive": [
                {
                    "attribute": self.attribute,
                    "values": self.domain.json_values(),
                    "retention": self.retention.tolist(),
                    "matrix_form": MATRIX_FORM,
                    "matrix_formula": MATRIX_FORMULA,
                    "guarantee": self.verify(),
                }
            ],
        }

    def key_json(self) -> dict[str, Any]:
        return {"parameters": self._parameters_json()}  # not release_json(): that re-verifies the whole plan

    def describe(self) -> list[str]:
        return [
            f"sensitive: {self.attribute} ({self.domain.m} values, {int(self.requirement.concern.sum())} protected; "
            f"{self.requirement.rule})",
            f"record utility: {self.record_utility:.4f}",
        ] + [note for note in [never_kept_note([str(v) for v in self.domain.values], self.retention)] if note]


def perturbation_plan(result_or_plan: Anonymization | Plan) -> PerturbationPlan:
    """The :class:`PerturbationPlan` of a job's result (or the plan itself), checked at run time: the family's report
    and utility parts never read the fields of another method's plan.

    Raises
    ------
    PrivacyError
        If it is another kind of plan (fail closed).
    """
    plan = result_or_plan.plan if isinstance(result_or_plan, Anonymization) else result_or_plan
    if not isinstance(plan, PerturbationPlan):
        raise PrivacyError(f"The perturbation family was given a plan of method {getattr(plan, 'method', '?')!r} "
                           f"({type(plan).__name__}, expected PerturbationPlan).")
    return plan


def prepare_perturbation(
    name: str,
    choose: Callable[[CategoricalDomain, SensitivityRequirement], PerturbationPlan],
    dataset: Dataset,
    settings: AnonymizationSettings,
) -> PerturbationPlan:
    """Count the sensitive column, set its pairs from ``settings`` and let ``choose`` plan."""
    domain, _ = encode_column(dataset.frame[settings.sensitive], settings.sensitive, dataset.label)
    requirement = settings.sensitivity.requirement(domain)
    kept = kept_plan(name, domain, requirement, settings.repeat.previous_plan)
    if kept is not None:
        return kept
    plan = choose(domain, requirement)
    plan.parameters.setdefault("rule", requirement.rule)
    return plan


def _json_pairs(values: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else float(v) for v in np.asarray(values, dtype=float)]


def plan_state(plan: PerturbationPlan) -> dict[str, Any]:
    """What the release ledger keeps of a perturbation plan for the project's next release (all of it is in
    release.json already): the values in order, their pairs, the rule the pairs came from, the retentions."""
    return {"method": plan.method, "attribute": plan.attribute,
            "values": [label_text(v) for v in plan.domain.values], "rho1": _json_pairs(plan.requirement.rho1),
            "rho2": _json_pairs(plan.requirement.rho2), "rule": plan.requirement.rule,
            "asked": plan.parameters.get("asked", plan.requirement.rule), "retention": [float(p) for p in plan.retention],
            "parameters": {k: v for k, v in plan.parameters.items() if k not in ("rule", "asked", "kept_from_release")
                           and isinstance(v, str | int | float | bool)}}


def kept_plan(name: str, domain: CategoricalDomain, requirement: SensitivityRequirement,
              previous: dict[str, Any] | None) -> PerturbationPlan | None:
    """The project's previous plan, kept when the column holds the same values and the custodian asked for the same
    pairs (the same rule, e.g. theta = 3): its pairs and retentions as they were, so that an unchanged patient's
    mechanism, and so its draw, stays the same (a rule such as theta's moves every retention with the counts,
    which would make every draw fresh). The job verifies it as any plan; None when it does not fit."""
    if not previous or previous.get("method") != name or previous.get("attribute") != domain.attribute:
        return None
    values = [label_text(v) for v in domain.values]
    if previous.get("values") != values or previous.get("asked") != requirement.rule:
        return None
    try:
        rho1 = np.array([np.nan if v is None else float(v) for v in previous["rho1"]])
        rho2 = np.array([np.nan if v is None else float(v) for v in previous["rho2"]])
        retention = np.array([float(p) for p in previous["retention"]])
    except (KeyError, TypeError, ValueError):
        return None
    if not (len(rho1) == len(rho2) == len(retention) == len(values)):
        return None
    ordinal = previous.get("ordinal")
    rule = str(previous.get("rule", requirement.rule))
    kept = SensitivityRequirement(rho1, rho2, rule)
    parameters: dict[str, object] = {**previous.get("parameters", {}), "rule": rule, "asked": requirement.rule,
                                     "kept_from_release": ordinal}
    return PerturbationPlan(name, domain, kept, retention, parameters)

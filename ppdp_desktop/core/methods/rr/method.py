"""Randomizing quasi-identifiers and/or the sensitive attribute under an attribute-disclosure bound
(seed 001: RR-QI, RR-S, RR-Both; SPEC 1.3 and 2.4).

Each randomized attribute keeps its value with probability ``p_i`` and otherwise moves to each other
value with ``(1 - p_i)/(d_i - 1)``. The ``p_i`` minimize the expected reconstruction error subject to
``max risk <= 1/l``, the risk of the paper's attacker (:mod:`ppdp_desktop.core.methods.rr.claims` says in plain
words who that is and what it leaves out: guessing a group's most common value is not bounded). The risk is
recomputed from the data before anything is written, and the written release is checked against the plan exactly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import CategoricalDomain, encode_column, label_text
from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_ref
from ppdp_desktop.core.methods.base import Method, Plan
from ppdp_desktop.core.methods.rr import claims
from ppdp_desktop.core.methods.rr import release as rr_release
from ppdp_desktop.core.methods.rr.estimate import randomize_records
from ppdp_desktop.core.methods.rr.limits import check_table_size
from ppdp_desktop.core.methods.rr.parameters import RRParameters, is_randomize, optimal_parameters
from ppdp_desktop.core.methods.rr.risk import contingency, max_risk, rr_matrix
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy.persistent import mechanism_digests
from ppdp_desktop.core.privacy.randomness import RandomSource, keyed_streams
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.methods.hooks import Comparison
    from ppdp_desktop.core.settings import AnonymizationSettings

TOLERANCE = 1e-9


@dataclass
class RRPlan:
    """Domains of the quasi-identifiers and the sensitive attribute, their counts tensor and the p's."""

    qi: list[CategoricalDomain]
    sensitive: CategoricalDomain
    counts: np.ndarray
    parameters: RRParameters
    method: str = "rr"
    needs_pseudonyms: bool = False
    kept_from_release: int | None = None  # the project's release whose p's this plan keeps

    def _randomized(self) -> list[tuple[CategoricalDomain, str, float]]:
        out = []
        if self.parameters.p_qi is not None:
            out += [(d, "quasi-identifier", p) for d, p in zip(self.qi, self.parameters.p_qi) if p < 1.0]
        if self.parameters.p_s is not None and self.parameters.p_s < 1.0:
            out.append((self.sensitive, "sensitive", self.parameters.p_s))
        return out

    def verify(self) -> dict[str, Any]:
        """Recompute the largest disclosure risk from the data; it must not exceed 1/l (fail closed)."""
        risk = max_risk(self.counts, self.parameters.p_qi, self.parameters.p_s)
        bound = 1.0 / self.parameters.l
        if not risk <= bound + TOLERANCE:  # NaN fails
            raise PrivacyError(f"The largest attribute-disclosure risk is {risk:.4f}, above 1/l = {bound:.4f}.")
        return {"kind": claims.KIND, "l": self.parameters.l, "max_risk": float(risk), "verified": True,
                "statement": claims.statement(self.parameters.l, float(risk), self.sensitive.attribute)}

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0, bound: None = None) -> Applied:
        keyed = keyed_streams(randomness)
        columns, mechanisms = {}, {}
        for domain, _role, p in self._randomized():
            codes = domain.encode(frame[domain.attribute])
            mechanism = (mechanism_digests(domain.attribute, domain.values, np.full(domain.m, p), domain.m - 1)
                         if keyed.persistent else None)
            columns[domain.attribute] = domain.categorical(randomize_records(codes, domain.m, p, keyed, domain.attribute,
                                                                             start, mechanism))
            if mechanism is not None:
                mechanisms[domain.attribute] = mechanism[codes]
        return Applied(columns, mechanisms=mechanisms)

    def release_json(self) -> dict[str, Any]:
        randomized = [
            {"attribute": d.attribute, "role": role, "values": d.json_values(), "p": float(p),
             "matrix": rr_matrix(d.m, p).tolist()}
            for d, role, p in self._randomized()
        ]
        return {
            "parameters": {"l": self.parameters.l, "randomize": self.parameters.randomize,
                           "quasi_identifiers": [d.attribute for d in self.qi]},
            "randomized": randomized,
            "guarantee": self.verify(),
            "reconstruction": "Estimate the contingency table of the randomized attributes axis by axis: apply the "
                              "inverse of each attribute's matrix along its own axis of the observed counts.",
        }

    def key_json(self) -> dict[str, Any]:
        return {"parameters": self.release_json()["parameters"]}

    def describe(self) -> list[str]:
        parts = [f"{d.attribute} p={p:.3f}" for d, _r, p in self._randomized()] or ["nothing (already within the bound)"]
        return [f"randomized: {', '.join(parts)}",
                claims.short_statement(self.parameters.l, self.parameters.verified_max_risk)]


def rr_epsilon(d: int, p: float) -> float:
    """The local-DP epsilon of keeping a value with probability ``p`` else moving it to one of the other ``d - 1``
    uniformly: ``ln(p (d - 1) / (1 - p))`` (``|.|``: below ``1/d`` the largest ratio is the inverse one)."""
    if d <= 1 or p == 1.0 / d:
        return 0.0
    if p >= 1.0 or p <= 0.0:
        return math.inf
    return abs(math.log(p * (d - 1) / (1.0 - p)))


class RandomizedResponse(Method[RRPlan, RRSettings]):
    name = "rr"
    title = "Randomized quasi-identifiers and/or sensitive value (linking-attack bound)"
    summary = (
        "Quasi-identifiers (age, postcode, sex) and/or the sensitive column are randomized just enough to keep the "
        "paper's attribute-disclosure risk at most 1/l, while the joint distribution stays estimable. The bound holds "
        f"against one attacker: {claims.ATTACKER}; it caps the chance that a record of the person's group, taken at "
        "random, holds their sensitive value and is un-randomized exactly right. It does not bound group-level "
        "inference: guessing a group's most common value, which the release shows, is right as often as that "
        "value's share, for people in the data or not. It needs the quasi-identifiers named; a record alone in its "
        "quasi-identifier group may force strong noise."
    )

    settings_type = RRSettings
    plan_type = RRPlan
    draws_per_record = True
    randomizes_quasi = True
    public_report = True  # the report inside the release: released and estimated counts only (rr/report.py)
    window_editor = "linking"

    def release_epsilon(self, plan: Plan, guarantee: dict[str, Any]) -> float:
        """The randomized attributes' epsilons added up (each record's attributes are randomized independently);
        ``inf`` when the sensitive column is released as it is (no epsilon covers an exact value)."""
        randomized = self.own_plan(plan)._randomized()
        if not any(role == "sensitive" for _d, role, _p in randomized):
            return math.inf
        return float(sum(rr_epsilon(d.m, p) for d, _role, p in randomized))

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings, progress: Progress = no_progress,
                cancel: CancelToken | None = None) -> RRPlan:
        """The p's for this job: refused at once when the table of every combination is too large to plan and check
        (:mod:`~ppdp_desktop.core.methods.rr.limits`); the optimizer reports its ``progress`` and stops when
        ``cancel`` is set (issue 31)."""
        rr = self.settings(settings)
        rr.check()
        if rr.l is None:
            raise ParameterError(f"Randomized response needs {setting_ref('l')} greater than 1; got None.",
                                 setting="l", value=None, allowed="a number greater than 1")
        if not settings.quasi:
            raise ParameterError("Randomized response needs the quasi-identifier columns: give them "
                                 f"{setting_ref('quasi', 'COLS')}.", setting="quasi")
        frame = dataset.frame
        qi, codes = [], []
        for column in settings.quasi:
            domain, c = encode_column(frame[column], column, dataset.label)
            qi.append(domain)
            codes.append(c)
        sensitive, s_codes = encode_column(frame[settings.sensitive], settings.sensitive, dataset.label)
        if rr.l > sensitive.m:  # l-diversity's l: at most one per value; a larger l promises what no release can keep
            raise ParameterError(f"{setting_ref('l')} {rr.l:g} is more than the {sensitive.m} values of "
                                 f"{settings.sensitive!r}: l counts the sensitive values an attacker must choose among "
                                 f"(as in l-diversity), so it is at most their number; choose l of at most "
                                 f"{sensitive.m}.", setting="l", value=rr.l, allowed=f"at most {sensitive.m}")
        dims = [d.m for d in qi] + [sensitive.m]
        names = [*settings.quasi, settings.sensitive]
        attributes = dataset.schema.attributes
        check_table_size(names, dims, [attributes[n].kind if n in attributes else None for n in names])
        counts = contingency(codes + [s_codes], dims)
        randomize = rr.randomize
        if not is_randomize(randomize):  # checked by rr.check() too; optimal_parameters refuses it in the same words
            raise ParameterError(f"randomize must be 'qi', 's' or 'both'; got {randomize!r}.")
        kept = kept_parameters(settings.repeat.previous_plan, qi, sensitive, rr.l, randomize)
        if kept is not None:  # the project's last p's, while they keep the risk within 1/l on these records
            risk = max_risk(counts, kept.p_qi, kept.p_s)
            if risk <= 1.0 / rr.l + TOLERANCE:
                previous = settings.repeat.previous_plan or {}
                return RRPlan(qi, sensitive, counts, replace(kept, max_risk=float(risk), verified_max_risk=float(risk)),
                              kept_from_release=previous.get("ordinal"))
        return RRPlan(qi, sensitive, counts, optimal_parameters(counts, rr.l, randomize, progress, cancel))

    def repeat_state(self, plan: Plan) -> dict[str, Any] | None:
        """The p's, the domains they randomize and the asked l (all published in release.json), for the project's
        next release: kept while they keep the risk within 1/l, so an unchanged patient's draws stay the same."""
        own = self.own_plan(plan)
        p = own.parameters
        return {"method": self.name, "quasi": [d.attribute for d in own.qi], "sensitive": own.sensitive.attribute,
                "values": {d.attribute: [label_text(v) for v in d.values] for d in [*own.qi, own.sensitive]},
                "l": p.l, "randomize": p.randomize, "p_qi": None if p.p_qi is None else [float(x) for x in p.p_qi],
                "p_s": None if p.p_s is None else float(p.p_s), "objective": float(p.objective)}

    def repeat_notes(self, plan: Plan) -> list[str]:
        own = self.own_plan(plan)
        if own.kept_from_release is None:
            return []
        return [f"The chances of keeping a value of release {own.kept_from_release} of this project were kept (the same "
                "columns, values and l; they still keep the largest risk within 1/l on these records, checked before "
                "anything was written), so that an unchanged patient's draws stay the same; when they no longer do, "
                "new ones are chosen and every patient's draw is fresh."]

    def report_part(self, report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken,
                    public: bool = False) -> None:
        from ppdp_desktop.core.methods.rr.report import rr_report_part

        plan = self.own_plan(result)
        report.lines.append(claims.statement(result.guarantee["l"], result.guarantee["max_risk"], plan.sensitive.attribute))
        rr_report_part(report, result, plan, progress, cancel, public)

    def verify_release(self, release: LoadedRelease) -> list[str]:
        return rr_release.verify_rr_release(release)

    def verify_written(self, release: LoadedRelease, plan: RRPlan) -> list[str]:
        """Before publishing: the release checked exactly against the plan and the original table (never refuses
        a genuine release; :meth:`verify_release` is the recipient's test)."""
        return rr_release.verify_against_plan(release, plan)

    def readme_text(self, metadata: dict[str, Any]) -> str:
        return rr_release.readme_text(metadata)

    def estimate_table(self, release: LoadedRelease, attributes: list[str], project: bool = False) -> pd.DataFrame:
        """The randomized columns un-mixed with their published matrices, the others counted as released."""
        from ppdp_desktop.core.methods.rr.evaluation import estimate_release_table

        return estimate_release_table(release, attributes, project=project)

    def comparisons(self) -> tuple[Comparison, ...]:
        """``ppdp compare --l --quasi``: the QI x S table reconstructed from rr, Anatomy and Mondrian."""
        from ppdp_desktop.core.methods.rr.comparisons import LinkingComparison

        return (LinkingComparison(),)


def kept_parameters(previous: dict[str, Any] | None, qi: list[CategoricalDomain], sensitive: CategoricalDomain,
                    l: float, randomize: str) -> RRParameters | None:
    """The p's of the project's previous rr release when it asked for the same l and randomization over the same
    quasi-identifiers, sensitive column and values (``RandomizedResponse.repeat_state``); None otherwise."""
    if not previous or previous.get("method") != "rr" or previous.get("l") != l or previous.get("randomize") != randomize:
        return None
    if previous.get("quasi") != [d.attribute for d in qi] or previous.get("sensitive") != sensitive.attribute:
        return None
    values = previous.get("values") or {}
    if any(values.get(d.attribute) != [label_text(v) for v in d.values] for d in [*qi, sensitive]):
        return None
    try:
        p_qi = None if previous.get("p_qi") is None else tuple(float(x) for x in previous["p_qi"])
        p_s = None if previous.get("p_s") is None else float(previous["p_s"])
        objective = float(previous.get("objective", math.nan))
    except (TypeError, ValueError):
        return None
    if p_qi is not None and len(p_qi) != len(qi):
        return None
    return RRParameters(randomize, l, p_qi, p_s, math.nan, objective, math.nan)

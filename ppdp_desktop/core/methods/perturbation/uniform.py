"""Uniform perturbation, UP (thesis ch. 3.1, SPEC 2.1): k-ary randomized response.

Every value is kept with the same probability ``p = (gamma - 1)/(m - 1 + gamma)`` and otherwise
replaced by a uniform draw over the domain, with ``gamma`` the smallest of the values' bounds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, overload

import numpy as np

from ppdp_desktop.core.data.domain import CategoricalDomain
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.perturbation.disclosure import PARAMETERS_CAVEAT
from ppdp_desktop.core.methods.perturbation.family import PerturbationFamily
from ppdp_desktop.core.methods.perturbation.plan import PerturbationPlan, prepare_perturbation
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.settings import AnonymizationSettings


@overload
def uniform_retention(gamma: float, m: int) -> float: ...


@overload
def uniform_retention(gamma: np.ndarray, m: np.ndarray | int) -> np.ndarray: ...


def uniform_retention(gamma: float | np.ndarray, m: int | np.ndarray) -> float | np.ndarray:
    """``p = (gamma - 1)/(m - 1 + gamma)``: diagonal ``gamma/(m-1+gamma)``, off-diagonal ``1/(m-1+gamma)`` (element by
    element for arrays: partitioning's sub-tables)."""
    return (gamma - 1.0) / (m - 1.0 + gamma)


class UniformPerturbation(PerturbationFamily[PerturbationPlan]):
    name = "uniform"
    title = "Uniform perturbation"
    summary = (
        "Every record keeps its value with the same probability and otherwise gets a random value of the "
        "column. Protects each value up to its (rho1, rho2) pair (no observed value raises belief in a rare "
        "value above rho2); it does not hide that a frequent value is frequent, and the strictest value sets "
        "the noise for all. " + PARAMETERS_CAVEAT
    )
    plan_type = PerturbationPlan
    retention_header = "Keeps value: uniform"

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> PerturbationPlan:
        return prepare_perturbation(self.name, self.plan, dataset, settings)

    def plan(self, domain: CategoricalDomain, requirement: SensitivityRequirement) -> PerturbationPlan:
        gamma = requirement.min_gamma
        if not np.isfinite(gamma):
            raise ParameterError(
                f"No value of {domain.attribute!r} needs protection under {requirement.rule}; "
                f"lower {setting_ref('theta')} or set {setting_ref('rho1')} and {setting_ref('rho2')}.",
                setting="theta"
            )
        p = uniform_retention(gamma, domain.m)
        return PerturbationPlan(self.name, domain, requirement, np.full(domain.m, p), {"gamma": gamma})

    def planned_retention(self, prior: np.ndarray, gamma: np.ndarray) -> np.ndarray:
        """The same retention for every value, set by the strictest bound."""
        return np.full(len(prior), uniform_retention(float(np.min(gamma)), len(prior)))

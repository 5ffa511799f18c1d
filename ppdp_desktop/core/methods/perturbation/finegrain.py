"""Fine-grain perturbation (seed 000, thesis ch. 5, SPEC 2.2): a retention probability per value.

The retentions maximize record utility subject to each value's own (rho1_i, rho2_i) pair, solved
exactly by :func:`ppdp_desktop.core.methods.perturbation.solver.solve_exact` (proven equal to the LP by tests).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.data.domain import CategoricalDomain
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.perturbation.disclosure import PARAMETERS_CAVEAT
from ppdp_desktop.core.methods.perturbation.family import PerturbationFamily
from ppdp_desktop.core.methods.perturbation.plan import PerturbationPlan, prepare_perturbation
from ppdp_desktop.core.methods.perturbation.solver import solve_exact
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.settings import AnonymizationSettings


class FineGrainPerturbation(PerturbationFamily[PerturbationPlan]):
    name = "finegrain"
    title = "Fine-grain perturbation"
    summary = (
        "Each value gets its own retention probability, the largest its own (rho1, rho2) pair allows, so "
        "common, less sensitive values are kept more often than rare, sensitive ones. Protects "
        "against raising belief in a value above its rho2 (upward breaches); it does not rule out lowering "
        "belief in a common value (downward breaches are reported, not prevented). " + PARAMETERS_CAVEAT
    )
    plan_type = PerturbationPlan
    retention_header = "Keeps value: fine-grain"

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> PerturbationPlan:
        return prepare_perturbation(self.name, self.plan, dataset, settings)

    def plan(self, domain: CategoricalDomain, requirement: SensitivityRequirement) -> PerturbationPlan:
        if not requirement.concern.any():
            raise ParameterError(
                f"No value of {domain.attribute!r} needs protection under {requirement.rule}; "
                f"lower {setting_ref('theta')} or set {setting_ref('rho1')} and {setting_ref('rho2')}.",
                setting="theta"
            )
        retention = solve_exact(domain.prior, requirement.gamma)
        return PerturbationPlan(self.name, domain, requirement, retention, {"solver": "exact"})

    def planned_retention(self, prior: np.ndarray, gamma: np.ndarray) -> np.ndarray:
        """Each value's own retention, the exact optimum under its bound."""
        return solve_exact(prior, gamma)

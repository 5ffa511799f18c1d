"""The shape every method shares: plan from statistics, then apply to rows.

A :class:`PerturbationPlan` holds global statistics only (the domain, its counts, the pairs and
the per-value retention probabilities): it is small, serializable and verified before use.
``apply`` then perturbs each record independently, so the same plan can be applied to a file
chunk by chunk.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ppdp_desktop.core import privacy
from ppdp_desktop.core.domain import CategoricalDomain
from ppdp_desktop.core.sensitivity import SensitivityRequirement


def retention_matrix(retention: np.ndarray) -> np.ndarray:
    """``P = diag(p) + 1 (1 - p)^T / m``: keep ``x_i`` with probability ``p_i``, else draw uniformly."""
    m = len(retention)
    matrix = np.tile((1.0 - retention) / m, (m, 1))
    matrix[np.diag_indices(m)] += retention
    return matrix


def perturb_codes(codes: np.ndarray, retention: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Retain each code with its value's probability, else replace it by a uniform draw (vectorized)."""
    m = len(retention)
    keep = rng.random(len(codes)) < retention[codes]
    out = rng.integers(0, m, size=len(codes), dtype=codes.dtype)
    np.copyto(out, codes, where=keep)
    return out


@dataclass
class PerturbationPlan:
    """A verified-before-use plan to perturb one sensitive attribute."""

    method: str
    domain: CategoricalDomain
    requirement: SensitivityRequirement
    retention: np.ndarray
    parameters: dict[str, object] = field(default_factory=dict)

    @property
    def attribute(self) -> str:
        return self.domain.attribute

    @property
    def matrix(self) -> np.ndarray:
        return retention_matrix(self.retention)

    @property
    def record_utility(self) -> float:
        """``sum_i (f_i/n) P[i][i]`` (thesis Def. 7): the chance a record keeps its value."""
        m = self.domain.m
        return float(np.dot(self.domain.prior, self.retention + (1.0 - self.retention) / m))

    def verify(self) -> privacy.GuaranteeReport:
        """Check the plan's matrix against its pairs; raises ``PrivacyError`` if it fails."""
        return privacy.verify(self.attribute, self.domain.values, self.matrix, self.requirement, self.domain.prior)

    def apply(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return perturb_codes(codes, self.retention, rng)


class Method(Protocol):
    """A privacy method of the registry."""

    name: str
    title: str
    summary: str

    def plan(self, domain: CategoricalDomain, requirement: SensitivityRequirement) -> PerturbationPlan: ...

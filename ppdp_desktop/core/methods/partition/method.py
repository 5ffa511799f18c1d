"""Perturbation Partitioning, PP (thesis ch. 4, SPEC 2.3): small-domain randomization.

The records are split into sub-tables with small sensitive sub-domains (planned from the value
counts by :func:`ppdp_desktop.core.methods.partition.subtables.partition_domain`); each sub-table is perturbed with
its own uniform matrix over its own values. Published: each record's sub-table id and every
sub-table's matrix. Guarantees (rho1, rho2)-privacy against upward breaches; it does not cover
downward breaches, and a record's sub-table reveals that its value is one of that sub-table's values.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.data.domain import CategoricalDomain, encode_column
from ppdp_desktop.core.data.schema import free_name
from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.methods.perturbation.family import PerturbationFamily
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.progress import CancelToken, Progress
from ppdp_desktop.core.methods.perturbation.plan import perturb_codes, retention_matrix
from ppdp_desktop.core.methods.perturbation.uniform import uniform_retention
from ppdp_desktop.core.methods.partition.subtables import Partition, assign_records, partition_domain
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement

if TYPE_CHECKING:
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.settings import AnonymizationSettings
    from ppdp_desktop.core.data.dataset import Dataset

SUBTABLE_COLUMN = "subtable"  # the preferred name of the sub-table id column (see ``free_name``)
NOT_COVERED = (
    "Not covered: downward breaches (belief in a common value falling), and a record's sub-table id "
    "reveals that its value is one of that sub-table's values."
)


ONE_PAIR = "Perturbation partitioning needs one pair for all values: give --rho1 X --rho2 Y."


@dataclass
class PartitionPlan:
    """The partition (sub-table counts) and, per sub-table, its values and UP retention."""

    domain: CategoricalDomain
    rho1: float
    rho2: float
    partition: Partition
    method: str = "partition"
    needs_pseudonyms: bool = False
    subtable_column: str = SUBTABLE_COLUMN  # a free name: never one of the data's columns
    retention: list[np.ndarray] = field(default_factory=list)
    members: list[np.ndarray] = field(default_factory=list)  # value codes of each sub-table

    def __post_init__(self) -> None:
        for s, row in enumerate(self.partition.table_counts):
            members = np.flatnonzero(row > 0)
            gamma = float(self.partition.gamma_i[s])
            p = 1.0 if not np.isfinite(gamma) else uniform_retention(gamma, len(members))
            self.members.append(members)
            self.retention.append(np.full(len(members), p))

    @property
    def attribute(self) -> str:
        return self.domain.attribute

    @property
    def record_utility(self) -> float:
        """Expected share of records released unchanged: sum over sub-tables of counts x diagonal."""
        kept = 0.0
        for s, members in enumerate(self.members):
            diagonal = self.retention[s] + (1.0 - self.retention[s]) / len(members)
            kept += float(self.partition.table_counts[s][members] @ diagonal)
        return kept / float(self.domain.counts.sum())

    def _requirement(self, s: int) -> tuple[SensitivityRequirement, np.ndarray]:
        members = self.members[s]
        counts = self.partition.table_counts[s][members]
        protected = self.partition.sa_prime[members]
        rho1 = np.where(protected, self.partition.rho1_i[s], np.nan)
        return SensitivityRequirement(rho1, np.where(protected, self.rho2, np.nan), "sub-table"), counts / counts.sum()

    def verify(self) -> dict[str, Any]:
        """Every sub-table has rho1_i < rho2 and a matrix within its gamma_i; fail closed."""
        epsilons = []
        for s, members in enumerate(self.members):
            if not self.partition.rho1_i[s] < self.rho2:  # NaN fails
                raise PrivacyError(f"Sub-table {s} of {self.attribute!r} has rho1_i >= rho2; the partition is invalid.")
            requirement, prior = self._requirement(s)
            values = tuple(self.domain.values[i] for i in members)
            report = privacy.verify(self.attribute, values, retention_matrix(self.retention[s]), requirement, prior)
            epsilons.append(report.epsilon_ldp)
        return {
            "kind": "upward (rho1, rho2)-privacy per sub-table (perturbation partitioning)",
            "rho1": self.rho1,
            "rho2": self.rho2,
            "epsilon_ldp": float(max(epsilons)),
            "not_covered": NOT_COVERED,
            "verified": True,
        }

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Applied:
        codes = self.domain.encode(frame[self.attribute])
        sub = assign_records(codes, self.partition.table_counts, rng)
        released = codes.copy()
        for s, members in enumerate(self.members):
            rows = np.flatnonzero(sub == s)
            local = np.searchsorted(members, codes[rows]).astype(np.int32)
            released[rows] = members[perturb_codes(local, self.retention[s], rng)]
        return Applied(
            {self.attribute: self.domain.categorical(released), self.subtable_column: sub.astype(np.int32)},
            codes={self.attribute: (codes, released)},
        )

    def estimator(self, released: np.ndarray, sub: np.ndarray):
        """``estimate(mask)``: each sub-table's records estimated with its own matrix, then summed."""
        inverses = [np.linalg.inv(retention_matrix(r)) for r in self.retention]
        m = self.domain.m

        def estimate(mask: np.ndarray) -> np.ndarray:
            total = np.zeros(m)
            for s, members in enumerate(self.members):
                chosen = released[mask & (sub == s)]
                local = np.searchsorted(members, chosen)
                total[members] += inverses[s] @ np.bincount(local, minlength=len(members))
            return total

        return estimate

    def release_json(self) -> dict[str, Any]:
        values = self.domain.json_values()
        subtables = [
            {
                "id": s,
                "values": [values[i] for i in members],
                "matrix": retention_matrix(self.retention[s]).tolist(),
                "retention": float(self.retention[s][0]) if len(members) else 1.0,
                "n_records": int(self.partition.table_counts[s].sum()),
                "rho1": float(self.partition.rho1_i[s]),
                "gamma": None if not np.isfinite(self.partition.gamma_i[s]) else float(self.partition.gamma_i[s]),
            }
            for s, members in enumerate(self.members)
        ]
        return {
            "parameters": {"rho1": self.rho1, "rho2": self.rho2, "eps_part": float(self.partition.eps_part),
                           "eps_unpartitioned": float(self.partition.eps_unpartitioned)},
            "sensitive": [{"attribute": self.attribute, "values": values, "subtable_column": self.subtable_column,
                           "subtables": subtables, "guarantee": self.verify()}],
        }

    def key_json(self) -> dict[str, Any]:
        return {"parameters": self.release_json()["parameters"]}

    def describe(self) -> list[str]:
        k = len(self.members)
        sizes = ", ".join(str(len(m)) for m in self.members[:12]) + ("…" if k > 12 else "")
        return [
            f"sensitive: {self.attribute} ({self.domain.m} values) split into {k} sub-tables of {sizes} values",
            f"expected error bound eps(Part) {self.partition.eps_part:.4f} vs {self.partition.eps_unpartitioned:.4f} "
            "for plain uniform perturbation",
            NOT_COVERED,
        ]


class PerturbationPartitioning(PerturbationFamily):
    name = "partition"
    title = "Perturbation partitioning (small-domain randomization)"
    summary = (
        "Records are split into sub-tables that each hold only a few of the column's values, and each sub-table "
        "is randomized on its own, so far less noise is needed for columns with many values (diagnoses). "
        "Protects each value against raising belief above rho2; it does not cover downward breaches, and a "
        "record's sub-table reveals that its value is one of that sub-table's few values."
    )

    def prepare(self, dataset: "Dataset", settings: "AnonymizationSettings") -> PartitionPlan:
        sens = settings.sensitivity
        if sens.rho1 is None or sens.rho2 is None or sens.theta is not None or sens.overrides:
            raise ParameterError(ONE_PAIR)
        domain, _ = encode_column(dataset.frame[settings.sensitive], settings.sensitive, dataset.label)
        partition = partition_domain(domain.counts, sens.rho1, sens.rho2)
        return PartitionPlan(domain, sens.rho1, sens.rho2, partition,
                             subtable_column=free_name(SUBTABLE_COLUMN, dataset.frame.columns))

    def precheck(self, settings: "AnonymizationSettings") -> list[str]:
        sens = settings.sensitivity
        if sens.rho1 is None or sens.rho2 is None or sens.theta is not None or sens.overrides:
            return [ONE_PAIR]
        return super().precheck(settings)

    def report_part(self, report: "MethodReport", result: Anonymization, progress: Progress, cancel: CancelToken,
                    public: bool = False) -> None:
        from ppdp_desktop.core.methods.partition.report import partition_part

        partition_part(report, result, progress, cancel)

    def verify_release(self, release: "LoadedRelease") -> list[str]:
        from ppdp_desktop.core.methods.partition.release import verify_partition_release

        return verify_partition_release(release)

"""Perturbation Partitioning, PP (thesis ch. 4, SPEC 2.3): small-domain randomization.

The records are split into sub-tables with small sensitive sub-domains (planned from the value
counts by :func:`ppdp_desktop.core.methods.partition.subtables.partition_domain`); each sub-table is perturbed with
its own uniform matrix over its own values. Published: each record's sub-table id and every
sub-table's matrix. Guarantees (rho1, rho2)-privacy against upward breaches; it does not cover
downward breaches, a record's sub-table reveals that its value is one of that sub-table's values, and the
sub-tables' parameters, planned from the counts, reveal them to someone who knows every other record
(release.json's ``not_covered``: :data:`~ppdp_desktop.core.methods.partition.release.NOT_COVERED`).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import CategoricalDomain, encode_column, label_text
from ppdp_desktop.core.data.schema import free_name
from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_ref
from ppdp_desktop.core.methods.partition.blocks import SubtableBlocks, assign_records, canonical_counts
from ppdp_desktop.core.methods.partition.kept import kept_notes, kept_partition, layout_state, same_column_and_pair
from ppdp_desktop.core.methods.partition.release import EPSILON_SCOPE, NOT_COVERED, subtables_statement
from ppdp_desktop.core.methods.partition.subtables import Partition, partition_domain
from ppdp_desktop.core.methods.perturbation.disclosure import PARTITION_CAVEAT
from ppdp_desktop.core.methods.perturbation.family import PerturbationFamily
from ppdp_desktop.core.methods.perturbation.plan import MATRIX_FORM
from ppdp_desktop.core.methods.perturbation.uniform import uniform_retention
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy.persistent import mechanism_digests
from ppdp_desktop.core.privacy.randomness import RandomSource, keyed_streams
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement
from ppdp_desktop.core.privacy.structured import RetentionMatrix
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.evaluation.utility import UtilitySummary
    from ppdp_desktop.core.methods.base import Plan
    from ppdp_desktop.core.methods.hooks import Comparison
    from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

SUBTABLE_COLUMN = "subtable"  # the preferred name of the sub-table id column (see ``free_name``)


ONE_PAIR = (f"Perturbation partitioning needs one pair for all values: set {setting_ref('rho1', 'X')} and "
            f"{setting_ref('rho2', 'Y')}.")


def one_pair_problem(sens: SensitivitySettings) -> str | None:
    """Why the settings are not one pair for every value (None if they are): no common pair, or values whose own
    pair differs from it (named, with where to remove them)."""
    if sens.one_pair() is not None:
        return None
    own = sens.own_pairs()
    if sens.rho1 is None or sens.rho2 is None or sens.theta is not None or not own:
        return ONE_PAIR
    named = ", ".join(repr(v) for v in own[:5]) + (f" and {len(own) - 5:,} more" if len(own) > 5 else "")
    has = "1 value has a pair of its own" if len(own) == 1 else f"{len(own):,} values have pairs of their own"
    return (f"Perturbation partitioning needs one pair for all values, but {has} ({named}) in "
            f"{setting_ref('pairs', 'FILE')}: set {'it' if len(own) == 1 else 'them'} back to rho1 = {sens.rho1:g}, "
            f"rho2 = {sens.rho2:g} or remove {'it' if len(own) == 1 else 'them'}.")


@dataclass
class PartitionPlan:
    """The partition (sub-table counts) and its sub-tables as one block-diagonal retention matrix
    (:class:`~ppdp_desktop.core.methods.partition.blocks.SubtableBlocks`: each sub-table's values and UP retention)."""

    domain: CategoricalDomain
    rho1: float
    rho2: float
    partition: Partition
    method: str = "partition"
    needs_pseudonyms: bool = False
    subtable_column: str = SUBTABLE_COLUMN  # a free name: never one of the data's columns
    #: each sub-table's randomization as retention stages (:mod:`~ppdp_desktop.core.methods.partition.kept`; None:
    #: one stage, the retention Eq. 9's gamma gives); the published retention is their product
    stages: list[list[float]] | None = None
    kept_from_release: int | None = None  # the project's release whose layout this plan keeps
    blocks: SubtableBlocks = field(init=False)
    entry_counts: np.ndarray = field(init=False, repr=False)
    _verified: tuple | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        counts = canonical_counts(self.partition.table_counts)
        sizes = np.diff(counts.indptr)  # values per sub-table
        if self.stages is None:
            gamma = np.asarray(self.partition.gamma_i, dtype=float)
            with np.errstate(invalid="ignore"):
                retention = np.where(np.isfinite(gamma), uniform_retention(gamma, sizes), 1.0)
            self.stages = [[float(p)] for p in retention]
        if len(self.stages) != len(sizes) or not all(self.stages):
            raise ParameterError(f"{len(self.stages)} retention stages for {len(sizes)} sub-tables.")
        retention = np.array([math.prod(stage) for stage in self.stages])
        self.blocks = SubtableBlocks.from_counts(counts, retention)
        self.entry_counts = counts.data.astype(float)  # records per entry (sub-table, value), the blocks' order

    def _stage_blocks(self) -> list[SubtableBlocks]:
        """The blocks of each stage: stage ``j``'s retention per sub-table (1, kept as drawn, where it has none)."""
        depth = max(len(stage) for stage in self.stages or [[1.0]])
        return [SubtableBlocks(self.blocks.values, self.blocks.starts,
                               np.array([stage[j] if j < len(stage) else 1.0 for stage in self.stages or []]),
                               self.blocks.m)
                for j in range(depth)]

    @property
    def rederived_subtables(self) -> np.ndarray:
        """Per sub-table, whether a later stage redraws what its first stage drew (a kept plan's lowered retention)."""
        return np.array([len(stage) > 1 for stage in self.stages or []], dtype=bool)

    @property
    def attribute(self) -> str:
        return self.domain.attribute

    @property
    def members(self) -> list[np.ndarray]:
        """Value codes of each sub-table."""
        return [self.blocks.members(s) for s in range(self.blocks.n_subtables)]

    @property
    def record_utility(self) -> float:
        """Expected share of records released unchanged: sum over entries of counts x diagonal."""
        return float(self.entry_counts @ self.blocks.matrix.diagonal()) / float(self.domain.counts.sum())

    def verify(self) -> dict[str, Any]:
        """Every sub-table has rho1_i < rho2 and a matrix within its gamma_i; fail closed. The statement is kept
        for the same plan (the job verifies it, release.json states it: thousands of sub-tables are checked once)."""
        key = (self.rho1, self.rho2, self.blocks.retention.tobytes(), self.blocks.values.tobytes(),
               np.asarray(self.partition.rho1_i).tobytes())
        if self._verified is None or self._verified[0] != key:
            self._verified = (key, self._verify())
        return dict(self._verified[1])

    def _verify(self) -> dict[str, Any]:
        blocks = self.blocks
        counts = self.entry_counts
        protected = self.partition.sa_prime[blocks.values]
        epsilons = []
        for s in range(blocks.n_subtables):
            if not self.partition.rho1_i[s] < self.rho2:  # NaN fails
                raise PrivacyError(f"Sub-table {s} of {self.attribute!r} has rho1_i >= rho2; the partition is invalid.")
            part = slice(blocks.starts[s], blocks.starts[s] + blocks.sizes[s])
            rho1 = np.where(protected[part], self.partition.rho1_i[s], np.nan)
            requirement = SensitivityRequirement(rho1, np.where(protected[part], self.rho2, np.nan), "sub-table")
            values = tuple(self.domain.values[i] for i in blocks.values[part])
            matrix = RetentionMatrix(np.full(blocks.sizes[s], blocks.retention[s]))
            report = privacy.verify(self.attribute, values, matrix, requirement, counts[part] / counts[part].sum())
            epsilons.append(report.epsilon_ldp)
        # a sub-table that keeps every record's value (retention 1, two values or more) has no finite epsilon: JSON
        # cannot hold inf, so release.json states null and says why; a finite one holds within each sub-table only
        unbounded = [str(s) for s in np.flatnonzero(~np.isfinite(epsilons))]
        all_values = self.domain.json_values()
        return {
            "kind": "upward (rho1, rho2)-privacy per sub-table (perturbation partitioning)",
            "rho1": self.rho1,
            "rho2": self.rho2,
            "epsilon_ldp": None if unbounded else float(max(epsilons)),
            **({"no_ldp_bound": subtables_statement(unbounded)} if unbounded else {}),
            **({"epsilon_ldp_scope": EPSILON_SCOPE} if not unbounded and blocks.n_subtables > 1 else {}),
            # the values the one pair does not cover for the data's own frequencies (both reports' tables read it)
            "prior_above_rho1": [label_text(all_values[j]) for j in np.flatnonzero(~self.partition.sa_prime)],
            "not_covered": NOT_COVERED,
            "verified": True,
        }

    def bind(self, frame: pd.DataFrame, randomness: RandomSource) -> np.ndarray:
        """Each record's sub-table: value ``v``'s records, ranked by their keyed sort keys across the whole table,
        are dealt to the sub-tables by the plan's counts. It needs every record's value (the plan's column, which a
        streamed job gathers in pass 1), so it is done once, and :meth:`apply` takes its slice for each chunk."""
        codes = self.domain.encode(frame[self.attribute])
        keyed = keyed_streams(randomness)
        mechanism = None
        if keyed.persistent:  # a patient keeps its rank among its value's records (new records still shift it)
            deal_digests = mechanism_digests(f"{self.attribute}\x00deal", self.domain.values,
                                             np.zeros(self.domain.m), 0)
            mechanism = deal_digests[codes]
        deal = keyed.record_stream(self.attribute, "sub-table", 0, len(codes), mechanism).sort_keys(0, len(codes))
        return assign_records(codes, self.partition.table_counts, keys=deal).astype(np.int32)

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0,
              bound: np.ndarray | None = None) -> Applied:
        """Perturb the records ``start, start+1, ...`` of ``frame`` within their sub-tables; ``bound`` is
        :meth:`bind`'s result for the whole table (None: ``frame`` is the whole table, dealt here)."""
        keyed = keyed_streams(randomness)
        codes = self.domain.encode(frame[self.attribute])
        sub = self.bind(frame, randomness) if bound is None else bound[start:start + len(codes)]
        if len(sub) != len(codes):
            raise ParameterError(f"Records {start}-{start + len(codes) - 1} were not dealt to sub-tables.")
        entries = self.blocks.entries(sub, codes)
        stages = self._stage_blocks()
        mechanism = (stages[0].mechanisms(self.attribute, self.domain.values)[entries] if keyed.persistent
                     else None)
        position = stages[0].redraw(sub, entries, keyed, self.attribute, start=start, mechanism=mechanism)
        for j, stage in enumerate(stages[1:], 2):  # a kept plan's later stages redraw what was drawn (kept.py)
            column = f"{self.attribute}\x00stage {j}"
            again = stage.mechanisms(column, self.domain.values)[entries] if keyed.persistent else None
            position = stage.redraw(sub, position, keyed, column, start=start, mechanism=again)
        released = self.blocks.values[position].astype(codes.dtype)
        return Applied(
            {self.attribute: self.domain.categorical(released), self.subtable_column: sub.astype(np.int32)},
            codes={self.attribute: (codes, released)},
            # the first stage's digest: a later stage only post-processes its draw, which costs nothing more
            mechanisms={} if mechanism is None else {self.attribute: mechanism},
            rederived=self.rederived_subtables[sub] if len(stages) > 1 else None,
        )

    def estimator(self, released: np.ndarray, sub: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        """``estimate(mask)``: the selected records' counts per entry estimated with the block-diagonal matrix
        (each sub-table with its own block), then summed by value."""
        entries = self.blocks.entries(sub, released)
        matrix = self.blocks.matrix
        size = len(self.blocks.values)

        def estimate(mask: np.ndarray) -> np.ndarray:
            return self.blocks.to_values(matrix.solve(np.bincount(entries[mask], minlength=size).astype(float)))

        return estimate

    def release_json(self) -> dict[str, Any]:
        values = self.domain.json_values()
        blocks = self.blocks
        subtables = [
            {
                "id": s,
                "values": [values[i] for i in blocks.members(s)],
                "retention": float(blocks.retention[s]),
                "n_records": int(n),
                "rho1": float(self.partition.rho1_i[s]),
                "gamma": None if not np.isfinite(self.partition.gamma_i[s]) else float(self.partition.gamma_i[s]),
            }
            for s, n in enumerate(np.add.reduceat(self.entry_counts, blocks.starts).astype(np.int64))
        ]
        return {
            "parameters": self._parameters_json(),
            "sensitive": [{"attribute": self.attribute, "values": values, "subtable_column": self.subtable_column,
                           "matrix_form": MATRIX_FORM, "matrix_formula": SUBTABLE_FORMULA,
                           "subtables": subtables, "guarantee": self.verify()}],
        }

    def _parameters_json(self) -> dict[str, Any]:
        kept = {} if self.kept_from_release is None else {"kept_from_release": self.kept_from_release}
        return {"rho1": self.rho1, "rho2": self.rho2, "eps_part": float(self.partition.eps_part),
                "eps_unpartitioned": float(self.partition.eps_unpartitioned), **kept}

    def repeat_state(self) -> dict[str, Any]:
        """What the release ledger keeps for the project's next release: the values, the pair and the layout."""
        return {"method": self.method, "attribute": self.attribute,
                "values": [label_text(v) for v in self.domain.values], "rho1": self.rho1, "rho2": self.rho2,
                "theta": int(self.partition.theta),
                **layout_state(canonical_counts(self.partition.table_counts), self.stages or [])}

    def key_json(self) -> dict[str, Any]:
        return {"parameters": self._parameters_json()}  # not release_json(): that re-verifies every sub-table

    def describe(self) -> list[str]:
        sizes = self.blocks.sizes
        k = len(sizes)
        shown = ", ".join(str(size) for size in sizes[:12]) + ("…" if k > 12 else "")
        return [
            f"sensitive: {self.attribute} ({self.domain.m} values) split into {k} sub-tables of {shown} values",
            f"expected error bound eps(Part) {self.partition.eps_part:.4f} vs {self.partition.eps_unpartitioned:.4f} "
            "for plain uniform perturbation",
        ]  # what is not covered is the guarantee's (release.json's not_covered), which every face prints


#: how a sub-table's matrix is built from its parameters (release.json, format 2)
SUBTABLE_FORMULA = ("within sub-table s of m_s values kept with retention p_s: P[y][x] = p_s [y = x] + (1 - p_s) / m_s "
                    "for x, y among its values")


class PerturbationPartitioning(PerturbationFamily[PartitionPlan]):
    name = "partition"
    needs_one_pair = True
    title = "Perturbation partitioning (small-domain randomization)"
    summary = (
        "Records are split into sub-tables that each hold only a few of the column's values, and each sub-table "
        "is randomized on its own, so far less noise is needed for columns with many values (diagnoses). "
        "Protects each value held by at most rho1 of the records against raising belief above rho2; it does not "
        "cover downward breaches, and a "
        "record's sub-table reveals that its value is one of that sub-table's few values. " + PARTITION_CAVEAT
    )
    plan_type = PartitionPlan

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> PartitionPlan:
        sens = settings.sensitivity
        problem = one_pair_problem(sens)
        if problem is not None or sens.rho1 is None or sens.rho2 is None:
            raise ParameterError(problem or ONE_PAIR, setting="pairs" if sens.own_pairs() else "rho1")
        domain, _ = encode_column(dataset.frame[settings.sensitive], settings.sensitive, dataset.label)
        column = free_name(SUBTABLE_COLUMN, dataset.frame.columns)
        previous = settings.repeat.previous_plan
        if previous and same_column_and_pair(previous, domain, sens.rho1, sens.rho2):
            kept = kept_partition(previous, domain.counts, sens.rho1, sens.rho2)
            if kept is not None:
                partition, stages = kept
                return PartitionPlan(domain, sens.rho1, sens.rho2, partition, subtable_column=column, stages=stages,
                                     kept_from_release=previous.get("ordinal"))
        partition = partition_domain(domain.counts, sens.rho1, sens.rho2)
        return PartitionPlan(domain, sens.rho1, sens.rho2, partition, subtable_column=column)

    def repeat_state(self, plan: Plan) -> dict[str, Any] | None:
        """The values, the pair and the layout (sub-tables' counts and retention stages) for the next release."""
        return self.own_plan(plan).repeat_state()

    def repeat_notes(self, plan: Plan) -> list[str]:
        own = self.own_plan(plan)
        if own.kept_from_release is None:
            return []
        return kept_notes(own.kept_from_release, int(own.rederived_subtables.sum()), own.blocks.n_subtables)

    def precheck(self, settings: AnonymizationSettings) -> list[str]:
        problem = one_pair_problem(settings.sensitivity)
        if problem is not None:
            return [problem]
        return super().precheck(settings)

    def report_part(self, report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken,
                    public: bool = False) -> None:
        from ppdp_desktop.core.methods.partition.report import partition_part

        partition_part(report, result, self.own_plan(result), progress, cancel)

    def utility_summary(self, result: Anonymization) -> UtilitySummary | None:
        from ppdp_desktop.core.methods.partition.report import partition_utility

        return partition_utility(result, self.own_plan(result))

    def verify_release(self, release: LoadedRelease) -> list[str]:
        from ppdp_desktop.core.methods.partition.release import verify_partition_release

        return verify_partition_release(release)

    def reports_from_release(self, original: pd.DataFrame, release_: LoadedRelease, title: str, progress: Progress,
                             workload_seed: int = 0) -> list[MethodReport]:
        from ppdp_desktop.core.methods.partition.release import published_entries
        from ppdp_desktop.core.methods.perturbation.release import reports_from_release

        return reports_from_release(original, release_, title, progress, workload_seed, published=published_entries)

    def readme_text(self, metadata: dict[str, Any]) -> str:
        from ppdp_desktop.core.methods.partition.release import partition_readme

        return partition_readme(metadata)

    def published_entries(self, release: LoadedRelease, entry: dict[str, Any]) -> tuple[Any, Any, Any]:
        """A column with sub-tables: each record's (sub-table, value) entry, the block-diagonal matrix, the value of
        each entry (one without, as the family reads it)."""
        from ppdp_desktop.core.methods.partition.release import published_entries

        return published_entries(release, entry)

    def comparisons(self) -> tuple[Comparison, ...]:
        """``ppdp compare --rho1/--rho2`` (count queries) and ``--target`` (does an analysis survive?)."""
        from ppdp_desktop.core.methods.partition.comparisons import ModelsComparison, WorkloadComparison

        return (WorkloadComparison(), ModelsComparison())

"""The anonymization job: dataset + settings -> verified plan -> released table (in memory).

Used by the CLI and, through the worker, by the GUI. Nothing is written here: writing is
:mod:`ppdp_desktop.core.release`, which only takes what this job verified.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core import sensitivity as sens
from ppdp_desktop.core.dataset import Dataset
from ppdp_desktop.core.domain import CategoricalDomain
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import Applied, Plan, get_method
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.pseudonyms import PSEUDONYM_COLUMN, make_pseudonyms
from ppdp_desktop.core.rng import make_rng
from ppdp_desktop.core.schema import roles_from_lists


@dataclass
class SensitivitySettings:
    """How the (rho1, rho2) pairs are set: one pair, the theta rule, plus optional per-value overrides."""

    rho1: float | None = None
    rho2: float | None = None
    theta: float | None = None
    overrides: dict[str, tuple[float, float]] = field(default_factory=dict)
    overrides_source: str = "the pairs file"

    def requirement(self, domain: CategoricalDomain) -> sens.SensitivityRequirement:
        if (self.rho1 is None) != (self.rho2 is None):
            raise ParameterError("Give both --rho1 and --rho2, or neither.")
        if self.rho1 is not None and self.theta is not None:
            raise ParameterError("Give either --rho1/--rho2 or --theta, not both.")
        if self.rho1 is not None:
            base = sens.constant_pairs(domain, self.rho1, self.rho2)
        elif self.theta is not None:
            base = sens.theta_rule(domain, self.theta)
        else:
            raise ParameterError("Say how sensitive the values are: --rho1 X --rho2 Y, or --theta T.")
        if self.overrides:
            return sens.with_overrides(base, domain, self.overrides, self.overrides_source)
        return base


@dataclass
class RecodingSettings:
    """Personalized recoding (SPEC 4): where choices come from, the taxonomy, graded columns."""

    choice_column: str | None = None
    default_choice: int | None = None
    value_choices: dict[str, int] = field(default_factory=dict)
    taxonomy_path: str | None = None
    taxonomy: Any = None  # a core Taxonomy edited in the wizard; takes precedence over taxonomy_path
    graded: list[str] = field(default_factory=list)
    categories: int = 3
    grading: str = "equal-width"
    bounds: list[tuple[float, float]] | None = None


@dataclass
class RRSettings:
    """Randomized response under a linking-attack bound (SPEC 2.4): ``1/l`` and what to randomize."""

    l: float | None = None
    randomize: str = "both"


@dataclass
class DPSettings:
    """Differential privacy by individual-ranking microaggregation (SPEC 5).

    ``domains`` maps numeric columns to declared ``(lo, hi)`` (absent: taken from the data, which
    discloses min and max); ``taxonomies`` maps categorical columns to a Taxonomy or a file path;
    ``candidates`` is where a categorical cluster's centroid is drawn from ("covering": the smallest
    sub-taxonomy covering the cluster, as in seed 003; "taxonomy": every label).
    """

    attributes: list[str] = field(default_factory=list)
    epsilon: float | None = None
    k: int | None = None
    domains: dict[str, tuple[float, float]] = field(default_factory=dict)
    taxonomies: dict[str, Any] = field(default_factory=dict)
    candidates: str = "covering"


@dataclass
class AnonymizationSettings:
    """Everything the job needs besides the data."""

    sensitive: str
    method: str = "finegrain"
    identifiers: list[str] = field(default_factory=list)
    quasi: list[str] = field(default_factory=list)
    sensitivity: SensitivitySettings = field(default_factory=SensitivitySettings)
    recoding: RecodingSettings = field(default_factory=RecodingSettings)
    rr: RRSettings = field(default_factory=RRSettings)
    dp: DPSettings = field(default_factory=DPSettings)
    seed: int | None = None


@dataclass
class Anonymization:
    """The outcome of a job, in memory: the released table and what produced it.

    ``applied`` is aligned with the *original* row order (for reports); ``table`` is shuffled.
    ``seed``, ``pseudonym_map`` and the plan's key entries are secret: they go only into the key.
    """

    dataset: Dataset
    settings: AnonymizationSettings
    plan: Plan
    guarantee: dict[str, Any]
    table: pd.DataFrame
    applied: Applied
    seed: int
    order: np.ndarray
    pseudonym_map: pd.DataFrame | None = None

    def key_payload(self) -> dict[str, Any]:
        """Everything authorized reverse lookup needs (sealed by :mod:`ppdp_desktop.core.keyfile`)."""
        payload: dict[str, Any] = {
            "method": self.plan.method,
            "seed": str(self.seed),
            "settings": {"sensitive": self.settings.sensitive, "identifiers": self.settings.identifiers},
            **self.plan.key_json(),
        }
        if self.pseudonym_map is not None:
            payload["pseudonyms"] = {
                "column": PSEUDONYM_COLUMN,
                "ids": self.pseudonym_map[PSEUDONYM_COLUMN].tolist(),
                "identifiers": {c: _json_column(self.pseudonym_map[c]) for c in self.pseudonym_map.columns[1:]},
                "records": {a: _json_column(pd.Series(v[self.order])) for a, v in self.applied.record_secrets.items()},
            }
        return payload


def _json_column(column: pd.Series) -> list[object]:
    """A column as JSON scalars (missing as ``None``), vectorized through pandas."""
    return column.astype(object).where(column.notna(), None).tolist()


def anonymize(
    dataset: Dataset,
    settings: AnonymizationSettings,
    progress: Progress = no_progress,
    cancel: CancelToken | None = None,
) -> Anonymization:
    """Prepare a plan from statistics, verify it (fail closed), then apply it to the rows."""
    cancel = cancel or CancelToken()
    frame = dataset.frame
    if settings.method == "dp-microagg" and settings.dp.attributes and not settings.sensitive:
        settings = replace(settings, sensitive=settings.dp.attributes[0])
    if settings.sensitive not in frame.columns:
        raise ParameterError(
            f"Sensitive column {settings.sensitive!r} is not in {dataset.label}; its columns are: {', '.join(frame.columns)}."
        )
    sensitive, quasi = [settings.sensitive], settings.quasi
    if settings.method == "personalized":
        sensitive += [c for c in settings.recoding.graded if c != settings.sensitive]
    elif settings.method == "dp-microagg":  # the protected columns are the sensitive ones, quasi-identifiers or not
        sensitive = list(settings.dp.attributes)
        quasi = [c for c in settings.quasi if c not in sensitive]
    schema = dataset.schema.with_roles(roles_from_lists(sensitive, settings.identifiers, quasi))
    dataset = replace(dataset, schema=schema)
    method = get_method(settings.method)
    progress(0.05, "Planning")
    plan = method.prepare(dataset, settings)
    cancel.check()
    progress(0.2, "Verifying the guarantee")
    guarantee = plan.verify()
    cancel.check()
    rng, seed = make_rng(settings.seed)
    progress(0.3, "Applying the plan")
    applied = plan.apply(frame, rng)
    cancel.check()
    progress(0.6, "Building the release table")
    order = rng.permutation(len(frame))
    keep = [c for c in schema.released_columns if c not in applied.dropped]
    table = frame[keep].take(order).reset_index(drop=True)
    for name, values in applied.columns.items():
        table[name] = values[order]
    pseudonym_map = None
    if schema.identifiers or plan.needs_pseudonyms:
        ids = make_pseudonyms(len(frame))
        table.insert(0, PSEUDONYM_COLUMN, ids.array)
        pseudonym_map = frame[schema.identifiers].take(order).reset_index(drop=True)
        pseudonym_map.insert(0, PSEUDONYM_COLUMN, ids.array)
    cancel.check()
    progress(1.0, "Done")
    return Anonymization(dataset, settings, plan, guarantee, table, applied, seed, order, pseudonym_map)


def load_overrides(path: str | Path | None) -> dict[str, tuple[float, float]]:
    """Read ``--pairs FILE`` if given."""
    return sens.read_pairs_file(Path(path)) if path else {}

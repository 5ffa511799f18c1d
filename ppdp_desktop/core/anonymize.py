"""The anonymization job: dataset + settings -> verified plan -> released table (in memory).

Used by the CLI and, through the worker, by the GUI. Nothing is written here: writing is
:mod:`ppdp_desktop.core.release`, which refuses a release whose guarantee was not verified.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.core import sensitivity as sens
from ppdp_desktop.core.dataset import Dataset
from ppdp_desktop.core.domain import CategoricalDomain, encode_column
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import PerturbationPlan, get_method
from ppdp_desktop.core.privacy import GuaranteeReport
from ppdp_desktop.core.progress import CancelToken, Progress, no_progress
from ppdp_desktop.core.rng import make_rng
from ppdp_desktop.core.schema import Role, roles_from_lists


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
class AnonymizationSettings:
    """Everything the job needs besides the data."""

    sensitive: str
    method: str = "finegrain"
    identifiers: list[str] = field(default_factory=list)
    quasi: list[str] = field(default_factory=list)
    sensitivity: SensitivitySettings = field(default_factory=SensitivitySettings)
    seed: int | None = None


@dataclass
class Anonymization:
    """The outcome of a job, in memory: the released table and what produced it.

    ``true_codes``/``released_codes`` are aligned with the *original* row order (for reports);
    ``table`` is already shuffled. ``seed`` is secret: it never goes into the release.
    """

    dataset: Dataset
    settings: AnonymizationSettings
    plan: PerturbationPlan
    guarantee: GuaranteeReport
    table: pd.DataFrame
    true_codes: np.ndarray
    released_codes: np.ndarray
    seed: int


def anonymize(
    dataset: Dataset,
    settings: AnonymizationSettings,
    progress: Progress = no_progress,
    cancel: CancelToken | None = None,
) -> Anonymization:
    """Plan from statistics, verify (fail closed), then apply to the rows."""
    cancel = cancel or CancelToken()
    frame = dataset.frame
    if settings.sensitive not in frame.columns:
        raise ParameterError(
            f"Sensitive column {settings.sensitive!r} is not in {dataset.label}; its columns are: {', '.join(frame.columns)}."
        )
    roles = roles_from_lists([settings.sensitive], settings.identifiers, settings.quasi)
    schema = dataset.schema.with_roles(roles)
    method = get_method(settings.method)
    progress(0.05, "Counting values")
    domain, codes = encode_column(frame[settings.sensitive], settings.sensitive, dataset.label)
    requirement = settings.sensitivity.requirement(domain)
    cancel.check()
    progress(0.15, "Planning")
    plan = method.plan(domain, requirement)
    plan.parameters.setdefault("rule", requirement.rule)
    progress(0.25, "Verifying the guarantee")
    guarantee = plan.verify()
    cancel.check()
    rng, seed = make_rng(settings.seed)
    progress(0.35, "Perturbing")
    released = plan.apply(codes, rng)
    cancel.check()
    progress(0.6, "Building the release table")
    order = rng.permutation(len(frame))
    columns = {}
    for name in schema.released_columns:
        if name == settings.sensitive:
            columns[name] = domain.decode(released[order])
        else:
            columns[name] = frame[name].to_numpy()[order]
    table = pd.DataFrame(columns, copy=False)
    cancel.check()
    progress(1.0, "Done")
    result_dataset = Dataset(frame, dataset.source, schema, dataset.details)
    return Anonymization(result_dataset, settings, plan, guarantee, table, codes, released, seed)


def load_overrides(path: str | Path | None) -> dict[str, tuple[float, float]]:
    """Read ``--pairs FILE`` if given."""
    return sens.read_pairs_file(Path(path)) if path else {}

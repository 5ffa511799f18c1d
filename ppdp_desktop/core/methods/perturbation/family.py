"""What uniform and fine-grain perturbation share as methods: the report, release and README parts of a
release whose sensitive column was perturbed with one published matrix."""
from __future__ import annotations

from typing import Any

import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.evaluation.report_model import MethodReport
from ppdp_desktop.core.evaluation.utility import UtilitySummary
from ppdp_desktop.core.methods.base import Method, Plan, PlanT
from ppdp_desktop.core.methods.perturbation import release
from ppdp_desktop.core.methods.perturbation.plan import PerturbationPlan, plan_state
from ppdp_desktop.core.methods.perturbation.report import perturbation_part, summarize
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress
from ppdp_desktop.core.settings import NoSettings


class PerturbationFamily(Method[PlanT, NoSettings]):
    """A method that perturbs the sensitive column with one matrix, under step 3's (rho1, rho2) pairs.

    Generic in the member's plan class (``PerturbationPlan`` for uniform and fine-grain perturbation, partitioning's
    own); :meth:`report_part` and :meth:`utility_summary` read a ``PerturbationPlan``, checked at run time."""

    draws_per_record = True

    #: generalized quasi-identifiers + a perturbed sensitive value: the baseline the papers compare against
    generalized_title = "Perturbed Generalization (Tao et al.)"
    bounds_per_value = True

    def repeat_state(self, plan: Plan) -> dict[str, Any] | None:
        """The plan's values, pairs and retentions (all published in release.json), for the project's next release."""
        own = self.own_plan(plan)
        return plan_state(own) if isinstance(own, PerturbationPlan) else None

    def report_part(self, report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken,
                    public: bool = False) -> None:
        perturbation_part(report, result, progress, cancel)

    def reports_from_release(self, original: pd.DataFrame, release_: LoadedRelease, title: str, progress: Progress,
                             workload_seed: int = 0) -> list[MethodReport]:
        return release.reports_from_release(original, release_, title, progress, workload_seed)

    def verify_release(self, release_: LoadedRelease) -> list[str]:
        return release.verify_perturbed_release(release_)

    def readme_text(self, metadata: dict[str, Any]) -> str:
        return release.readme_text(metadata)

    def published_entries(self, release_: LoadedRelease, entry: dict[str, Any]) -> tuple[Any, Any, Any]:
        return release.published_column(release_, entry)

    def utility_summary(self, result: Anonymization) -> UtilitySummary | None:
        return summarize(result)

"""Differential privacy by individual-ranking microaggregation (seed 003, SPEC 5).

Each protected attribute is microaggregated on its own (clusters of ``k`` consecutive records in its
order) and its cluster centroids are randomized once per cluster: discrete Laplace noise on a grid of
step ``h`` (on the cluster's sum in grid units, parameter ``t = ceil(M * units / epsilon)``; about the Laplace
scale ``M * Delta_j / (k * epsilon)`` on its mean; :mod:`~ppdp_desktop.core.methods.dp.numeric`) for numeric
attributes, the exponential mechanism with ``epsilon / M`` over the covering sub-taxonomy for categorical ones. By
sequential composition over the ``M``
attributes each protected column's released values, taken as a multiset, are epsilon-differentially private
(for the numeric part, the seed's sensitivity argument); the rows are not, unless the columns are released
unlinked (:mod:`~ppdp_desktop.core.methods.dp.claim` says what holds and measures where it stops). The categorical
mechanism follows the seed too, but its epsilon accounting does not hold in general (the order depends on the data;
see tests/test_dp_microagg.py): the release says so.

Unlike the per-record methods, the clusters depend on the whole column: the plan holds the domains,
the epsilon split and the scales; ``bind`` clusters the full table and checks the shared-noise
structure before returning (fail closed), and ``apply`` releases a chunk's slice of it (the whole table's:
``bind`` then ``apply`` at once). Every draw comes from the job's keyed streams, addressed by
(attribute, cluster number in rank order) (:mod:`~ppdp_desktop.core.methods.dp.noise`): for a fixed seed
the release does not depend on the chunks the records are processed in, and if the rows arrive in another
order each cluster keeps its values and its draw; only tied records that straddle a cluster border may trade
places (ties are broken by record index), so the (original, released) pairs stay the same.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.blanks import IMPUTE, VALUE, treat_blanks
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.data.source_rows import rows_text
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.base import Method, Plan
from ppdp_desktop.core.methods.dp import settings as dp_settings
from ppdp_desktop.core.methods.dp.blanks import blank_treatments, treatment_of, with_blank_leaf
from ppdp_desktop.core.methods.dp.categorical import CANDIDATES
from ppdp_desktop.core.methods.dp.claim import UNLINKED
from ppdp_desktop.core.methods.dp.grid import Grid, as_fraction, default_step, discrete_t
from ppdp_desktop.core.methods.dp.inputs import (  # noqa: F401 - whole_numbers: the window asks it too
    groups_values,
    numeric_domain,
    taxonomy_of,
    unlinked_refusal,
    unprotected_columns,
    whole_numbers,
)
from ppdp_desktop.core.methods.dp.numeric import NumericDomain, check_grid, cluster_count, laplace_scale
from ppdp_desktop.core.methods.dp.plan import (
    METHOD,
    NOT_COVERED_CATEGORICAL,  # noqa: F401 - tests read it from here
    DPAttribute,
    DPMicroaggPlan,
)
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.outcome import Anonymization
from ppdp_desktop.core.progress import CancelToken, Progress

if TYPE_CHECKING:
    import argparse
    from fractions import Fraction

    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.methods.hooks import Comparison
    from ppdp_desktop.core.settings import AnonymizationSettings


class DPMicroaggregation(Method[DPMicroaggPlan, DPSettings]):
    name = METHOD
    title = "Differential privacy by individual-ranking microaggregation"
    summary = (
        "Each chosen attribute is grouped into clusters of k similar records and every cluster gets one shared "
        "random shift (numbers) or one randomly chosen generalization (categories with a taxonomy), with far less "
        "noise than adding noise to each value. Each protected column's values, taken as a multiset, are "
        "epsilon-differentially private even against someone who knows every other record; the rows are not: a row "
        "that can be singled out by its other columns shows its cluster's value, and the release says how many can. "
        "Release the columns unlinked (every column protected, each shuffled on its own) for a guarantee on the "
        "whole release. Means and distributions survive approximately; small epsilon and small k mean more noise. "
        "It does not hide a domain or list of values taken from the data, and its epsilon statement does not cover "
        "categorical attributes (see the release's notes)."
    )

    settings_type = DPSettings
    plan_type = DPMicroaggPlan
    needs_sensitive = False  # it protects its own list of attributes
    needs_pairs = False
    public_report = True  # inside an epsilon-DP release: nothing computed from the original records
    window_editor = "dp"  # its window editor asks it noise_scale, is_whole_numbers and grid_step

    def release_epsilon(self, plan: Plan, guarantee: dict[str, Any]) -> float:
        """The job's epsilon: its noise is drawn per cluster afresh for every release, so it composes each time."""
        return float(self.own_plan(plan).epsilon)

    def job_settings(self, settings: AnonymizationSettings) -> AnonymizationSettings:
        """Without a sensitive column, the first protected attribute stands for it (its name in the key). An
        unlinked release publishes no quasi-identifier, so k-anonymity or a criterion on them is refused here."""
        dp = self.settings(settings)
        refusal = unlinked_refusal(settings.protection) if dp.layout == UNLINKED else None
        if refusal:
            raise ParameterError(refusal)
        if dp.attributes and not settings.sensitive:
            return replace(settings, sensitive=dp.attributes[0])
        return settings

    def roles(self, settings: AnonymizationSettings) -> tuple[list[str], list[str]]:
        """The protected columns are the sensitive ones, quasi-identifiers or not; an unlinked release keeps no
        quasi-identifier (a column it does not protect is refused or left out)."""
        dp = self.settings(settings)
        sensitive = list(dp.attributes)
        if dp.layout == UNLINKED:
            return sensitive, []
        return sensitive, [c for c in settings.quasi if c not in sensitive]

    def precheck(self, settings: AnonymizationSettings) -> list[str]:
        problems = super().precheck(settings)
        refusal = unlinked_refusal(settings.protection) if self.settings(settings).layout == UNLINKED else None
        if not problems and refusal:
            problems.append(refusal)
        return problems

    def taxonomies(self, settings: AnonymizationSettings) -> dict[str, Any]:
        """The protected columns' taxonomies: step 2's edited trees that group values (not for a column given a
        numeric domain), then the declared ones."""
        dp = self.settings(settings)
        edited = {a: t for a, t in settings.taxonomies.items() if groups_values(t) and a not in dp.domains}
        return {**edited, **dp.taxonomies}

    def job_dataset(self, dataset: Dataset, settings: AnonymizationSettings) -> Dataset:
        """The table with each protected column's blank cells treated as chosen (:mod:`.blanks`): filled, or their
        records left out; a column with blanks and no choice is refused, naming its rows in the file."""
        return treat_blanks(dataset, blank_treatments(dataset, self.settings(settings), self.taxonomies(settings)))

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> DPMicroaggPlan:
        dp = self.settings(settings)
        taxonomies = self.taxonomies(settings)
        frame = dataset.frame
        if not dp.attributes:
            raise ParameterError("Differential privacy needs the attributes to protect: choose them with "
                                 f"{setting_ref('attributes', 'COLS')}.", setting="attributes")
        if dp.epsilon is None or not (dp.epsilon > 0 and np.isfinite(dp.epsilon)):
            raise ParameterError(f"{setting_ref('epsilon')} must be a positive number; got {dp.epsilon!r}.",
                                 setting="epsilon", value=dp.epsilon, allowed="a positive number")
        if dp.k is None or dp.k < 1:
            raise ParameterError(f"{setting_ref('k')} must be a whole number of at least 1; got {dp.k!r}.",
                                 setting="k", value=dp.k, allowed="a whole number of at least 1")
        missing = [c for c in dp.attributes if c not in frame.columns]
        if missing:
            raise ParameterError(f"{', '.join(map(repr, missing))} not in {dataset.label}; "
                                 f"its columns are: {', '.join(frame.columns)}.")
        extra = sorted(set(dp.domains) - set(dp.attributes))
        if extra:
            raise ParameterError(f"{setting_ref('domain')} names {', '.join(map(repr, extra))}, which is not among "
                                 f"{setting_ref('attributes')}.", setting="domain", column=extra[0])
        extra = sorted(set(dp.grids) - set(dp.attributes))
        if extra:
            raise ParameterError(f"{setting_ref('grid')} names {', '.join(map(repr, extra))}, which is not among "
                                 f"{setting_ref('attributes')}.", setting="grid", column=extra[0])
        cluster_count(len(frame), dp.k)
        untreated = blank_treatments(dataset, dp, taxonomies)  # blanks the job did not treat (a direct call)
        if untreated:
            raise ParameterError(f"The blank cells of {untreated[0].column!r} ({untreated[0].choice}) were not treated "
                                 "before planning: run the whole job (anonymize), which treats them first.",
                                 setting="blanks", column=untreated[0].column)
        m = len(dp.attributes)
        share = dp.epsilon / m
        attributes = []
        for name in dp.attributes:
            column = frame[name]
            blanks = treatment_of(dataset, name)
            if dataset.schema.attributes[name].kind is Kind.NUMERIC and name not in taxonomies:
                domain = numeric_domain(column, dp.domains.get(name), dataset.label,
                                        lambda positions: rows_text(dataset, positions))
                scale = laplace_scale(domain.delta, m, dp.k, dp.epsilon)
                step = as_fraction(dp.grids[name]) if name in dp.grids else default_step(scale, domain.delta, domain.integer)
                grid = Grid.for_domain(domain.lo, domain.hi, step, domain.integer, name)
                attributes.append(DPAttribute(name, "numeric", share, domain, scale, grid=grid,
                                              t=discrete_t(grid.units, m, dp.epsilon), blanks=blanks))
                check_grid(name, domain, grid, attributes[-1].t, m, dp.k, dp.epsilon, ParameterError)
            else:
                if name in dp.domains or name in dp.grids:
                    key = "domain" if name in dp.domains else "grid"
                    raise ParameterError(f"{name!r} is categorical: it takes a taxonomy "
                                         f"({setting_ref('taxonomy', f'{name}=FILE')}), not {setting_ref(key)}.",
                                         setting=key, column=name)
                imputed = [blanks.fill] if blanks is not None and blanks.choice == IMPUTE else []
                taxonomy, from_data = taxonomy_of(column, taxonomies.get(name), exclude=imputed)
                if blanks is not None and blanks.choice == VALUE:
                    taxonomy = with_blank_leaf(taxonomy, str(blanks.fill))
                attributes.append(DPAttribute(name, "categorical", share, taxonomy=taxonomy, taxonomy_from_data=from_data,
                                              blanks=blanks))
        if dp.candidates not in CANDIDATES:
            raise ParameterError(f"{setting_ref('candidates')} must be one of {', '.join(CANDIDATES)}; got "
                                 f"{dp.candidates!r}.", setting="candidates", value=dp.candidates,
                                 allowed="one of " + ", ".join(CANDIDATES))
        dropped = unprotected_columns(dataset, dp) if dp.layout == UNLINKED else []
        return DPMicroaggPlan(attributes, float(dp.epsilon), int(dp.k), len(frame), dp.candidates, layout=dp.layout,
                              dropped=dropped)

    def report_part(self, report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken,
                    public: bool = False) -> None:
        from ppdp_desktop.core.methods.dp.report import dp_report_part

        dp_report_part(report, result, progress, cancel, public=public)

    def reports_from_release(self, original: pd.DataFrame, release: LoadedRelease, title: str, progress: Progress,
                             workload_seed: int = 0) -> list[MethodReport]:
        from ppdp_desktop.core.methods.dp.release import dp_reports_from_release

        return dp_reports_from_release(original, release, title)

    def verify_release(self, release: LoadedRelease) -> list[str]:
        from ppdp_desktop.core.methods.dp.release import verify_dp_release

        return verify_dp_release(release)

    def readme_text(self, metadata: dict[str, Any]) -> str:
        from ppdp_desktop.core.methods.dp.release import readme_text

        return readme_text(metadata)

    def demo_settings(self) -> DPSettings:
        """The demo's length of stay and income with their declared ranges, epsilon 1, k 50."""
        from ppdp_desktop.core.data.resources import DEMO_DP_DOMAINS

        return DPSettings(attributes=list(DEMO_DP_DOMAINS), epsilon=1.0, k=50, domains=dict(DEMO_DP_DOMAINS))

    def comparisons(self) -> tuple[Comparison, ...]:
        """``ppdp compare --epsilon``: dp-microagg per k against plain Laplace and plain ranking."""
        from ppdp_desktop.core.methods.dp.comparisons import DPComparison

        return (DPComparison(),)

    # --- what the window's editor of these settings asks (window_editor = "dp") ---------------------
    def noise_scale(self, delta: float, m: int, k: int, epsilon: float) -> float:
        """The Laplace scale ``M * Delta / (k * epsilon)`` of a cluster's mean over a domain ``delta`` wide."""
        return laplace_scale(delta, m, k, epsilon)

    def is_whole_numbers(self, column: pd.Series) -> bool:
        """Whether ``column`` is released as whole numbers (its grid step is then a whole number too)."""
        return whole_numbers(column)

    def grid_step(self, name: str, step: str | None, lo: float, hi: float, integer: bool, m: int, k: int,
                  epsilon: float) -> Fraction:
        """The grid step of numeric column ``name`` over ``[lo, hi]`` (``lo < hi``) with ``M = m``, ``k`` and
        ``epsilon``: ``step`` as typed, or the automatic one when it is None, checked as :meth:`prepare` checks it
        (a ParameterError says why it cannot be used)."""
        scale = laplace_scale(hi - lo, m, k, epsilon)
        chosen = default_step(scale, hi - lo, integer) if step is None else as_fraction(step)
        grid = Grid.for_domain(lo, hi, chosen, integer, name)
        check_grid(name, NumericDomain(name, lo, hi, integer), grid, discrete_t(grid.units, m, epsilon), m, k, epsilon,
                   ParameterError)
        return chosen

    def settings_from_args(self, args: argparse.Namespace) -> DPSettings:
        """The declared settings, and the protected columns' taxonomies from the shared ``--taxonomy``."""
        settings = super().settings_from_args(args)
        assert isinstance(settings, DPSettings)
        settings.taxonomies = dict(dp_settings.taxonomies_from_args(args))
        return settings

"""Differential privacy by individual-ranking microaggregation (seed 003, SPEC 5).

Each protected attribute is microaggregated on its own (clusters of ``k`` consecutive records in its
order) and its cluster centroids are randomized once per cluster: discrete Laplace noise on a grid of
step ``h`` (on the cluster's sum in grid units, parameter ``t = ceil(M * units / epsilon)``; about the Laplace
scale ``M * Delta_j / (k * epsilon)`` on its mean; :mod:`~ppdp_desktop.core.methods.dp.numeric`) for numeric attributes, the exponential mechanism with ``epsilon / M``
over the covering sub-taxonomy for categorical ones. By sequential composition over the ``M``
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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_ref
from ppdp_desktop.core.methods.base import Method
from ppdp_desktop.core.methods.dp import settings as dp_settings
from ppdp_desktop.core.methods.dp.categorical import (
    CANDIDATES,
    check_categorical_structure,
    exponential_centroids,
    rank_categorical,
    released_labels,
)
from ppdp_desktop.core.methods.dp.claim import LINKED, UNLINKED, SingledOut, claim, singled_out_count, unlink
from ppdp_desktop.core.methods.dp.grid import Grid, as_fraction, default_step, discrete_t
from ppdp_desktop.core.methods.dp.inputs import (  # noqa: F401 - whole_numbers: the window asks it too
    UNLINKED_K,
    groups_values,
    numeric_domain,
    taxonomy_of,
    unprotected_columns,
    whole_numbers,
)
from ppdp_desktop.core.methods.dp.numeric import (
    NumericDomain,
    check_grid,
    check_shared_structure,
    cluster_count,
    dp_microaggregate,
    laplace_scale,
)
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy.randomness import RandomSource, keyed_streams
from ppdp_desktop.core.progress import CancelToken, Progress
from ppdp_desktop.core.taxonomy.io import to_dict
from ppdp_desktop.core.taxonomy.tree import Taxonomy

if TYPE_CHECKING:
    import argparse
    from fractions import Fraction

    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.methods.hooks import Comparison
    from ppdp_desktop.core.settings import AnonymizationSettings

METHOD = "dp-microagg"
RELATIVE_TOLERANCE = 1e-12
NOT_COVERED_CATEGORICAL = (
    "For categorical attributes the method's epsilon accounting is not proven: the order "
    "(distance to the most marginal value) is computed from the data, so one changed record can reshuffle several "
    "clusters. An exact check on 5-record data found a privacy loss of 2.1 at epsilon = 1. Treat categorical "
    "attributes as microaggregated with randomized centroids; the epsilon-DP statement covers the numeric ones."
)
NOT_COVERED_COVERING = (
    "Each categorical cluster's centroid is drawn from the smallest sub-taxonomy covering the cluster: "
    "a cluster whose k records share one value releases that value unchanged, and the candidate sets depend on "
    "the data, so the categorical part is protected like k-anonymity rather than strictly epsilon-DP. Choose "
    "candidates 'taxonomy' (every label) to remove this dependence."
)
DOMAIN_FROM_DATA = "The domain of {name!r} was taken from the data: the release discloses its minimum ({lo}) and maximum ({hi})."
TAXONOMY_FROM_DATA = "No taxonomy was given for {name!r}: a flat one was built from the data, so its list of values is disclosed."


@dataclass
class DPAttribute:
    """One protected attribute: its kind, domain or taxonomy, epsilon share and noise scale."""

    attribute: str
    kind: str  # "numeric" or "categorical"
    epsilon: float
    domain: NumericDomain | None = None
    scale: float | None = None  # nominal Laplace scale on a cluster mean, M Delta / (k epsilon) (numeric)
    taxonomy: Taxonomy | None = None
    taxonomy_from_data: bool = False
    grid: Grid | None = None  # the grid the values are released on (numeric)
    t: int | None = None  # the discrete Laplace parameter on the cluster sums, in grid units (numeric)

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"attribute": self.attribute, "kind": self.kind, "epsilon": self.epsilon}
        if self.domain is not None:
            entry.update(domain=self.domain.to_json(), laplace_scale=self.scale,
                         noise=f"discrete Laplace on a grid of step {self.grid.h:g}, one draw per cluster (exact integer "
                               "sampler on the cluster's sum in grid units)",
                         grid=self.grid.to_json(), discrete_laplace_t=self.t, privacy_loss=self.grid.units / self.t)
        else:
            entry.update(mechanism="exponential, one draw per cluster", quality_sensitivity=1.0,
                         taxonomy=to_dict(self.taxonomy), taxonomy_source="data (discloses the values)"
                         if self.taxonomy_from_data else "declared")
        return entry


@dataclass
class DPMicroaggPlan:
    """Parameters, per-attribute epsilon split and scales; after ``apply``, the clusterings."""

    attributes: list[DPAttribute]
    epsilon: float
    k: int
    n_records: int
    candidates: str = "covering"
    method: str = METHOD
    needs_pseudonyms: bool = False
    layout: str = LINKED
    dropped: list[str] = field(default_factory=list)  # unprotected columns an unlinked release leaves out
    singled_out: SingledOut | None = None  # measured on the released table (measure_release)
    clusterings: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def releases_pseudonyms(self) -> bool:
        """An unlinked release has no pseudonym column: its rows are not records, and nothing may link them."""
        return self.layout != UNLINKED

    @property
    def warnings(self) -> list[str]:
        """What the release discloses beyond the guarantee (data-derived domains or taxonomies)."""
        out = []
        for a in self.attributes:
            if a.domain is not None and a.domain.from_data:
                out.append(DOMAIN_FROM_DATA.format(name=a.attribute, lo=a.domain.lo, hi=a.domain.hi))
            if a.taxonomy_from_data:
                out.append(TAXONOMY_FROM_DATA.format(name=a.attribute))
        return out

    def verify(self) -> dict[str, Any]:
        """Recheck the split (sum = epsilon), each scale ``M Delta / (k eps)`` and the cluster sizes."""
        m = len(self.attributes)
        if m == 0:
            raise PrivacyError("No attribute to protect.")
        if not (self.epsilon > 0 and np.isfinite(self.epsilon)):
            raise PrivacyError(f"epsilon must be positive; got {self.epsilon}.")
        cluster_count(self.n_records, self.k)
        if not abs(sum(a.epsilon for a in self.attributes) - self.epsilon) <= RELATIVE_TOLERANCE * self.epsilon:
            raise PrivacyError("The per-attribute epsilons do not add up to epsilon.")
        for a in self.attributes:
            if not abs(a.epsilon - self.epsilon / m) <= RELATIVE_TOLERANCE * self.epsilon:
                raise PrivacyError(f"{a.attribute!r} gets epsilon {a.epsilon}, not epsilon / M = {self.epsilon / m}.")
            if a.domain is not None:
                expected = laplace_scale(a.domain.delta, m, self.k, self.epsilon)
                if a.scale is None or not abs(a.scale - expected) <= RELATIVE_TOLERANCE * expected:
                    raise PrivacyError(f"The Laplace scale of {a.attribute!r} is {a.scale}, not M*Delta/(k*epsilon) = {expected}.")
                check_grid(a.attribute, a.domain, a.grid, a.t, m, self.k, self.epsilon)
        if self.layout not in (LINKED, UNLINKED):
            raise PrivacyError(f"Unknown layout {self.layout!r}: linked or unlinked.")
        categorical = [a.attribute for a in self.attributes if a.domain is None]
        not_covered = [NOT_COVERED_CATEGORICAL] if categorical else []
        if categorical and self.candidates == "covering":
            not_covered.append(NOT_COVERED_COVERING)
        from_data = [a.attribute for a in self.attributes if a.domain is not None and a.domain.from_data]
        words = claim(self.epsilon, [a.attribute for a in self.attributes], self.k, self.n_records, self.layout,
                      categorical, from_data, self.singled_out)
        return {
            "kind": words.pop("kind"),
            "epsilon": self.epsilon, "k": self.k, "composition": "sequential over the attributes: epsilon / M each",
            "split": {a.attribute: a.epsilon for a in self.attributes}, **words,
            "not_covered": not_covered + self.warnings, "verified": True,
        }

    def measure_release(self, read: Callable[[list[str]], Iterable[pd.DataFrame]], columns: list[str],
                        ignore: Iterable[str] = ()) -> None:
        """Count the records the released table's other columns single out (:class:`SingledOut`), which the
        guarantee then states. ``columns`` are the released table's, ``ignore`` the pseudonym column; ``read(cols)``
        gives the released values of ``cols``, whole or in batches. An unlinked release holding any column it
        does not protect fails (fail closed)."""
        protected = {a.attribute for a in self.attributes}
        ignored = set(ignore)
        others = [c for c in columns if c not in protected and c not in ignored]
        if self.layout == UNLINKED and (others or ignored & set(columns)):
            raise PrivacyError(f"An unlinked release may hold protected columns only, but it holds "
                               f"{', '.join(map(repr, others or sorted(ignored & set(columns))))}; nothing was written.")
        records = singled_out_count(read(others)) if others else 0
        self.singled_out = SingledOut(records, self.n_records, tuple(others))

    def bind(self, frame: pd.DataFrame, randomness: RandomSource) -> dict[str, Any]:
        """Every protected column as released, for the whole table (``frame``, in record order): the clusters
        need every record, so they are formed and randomized once, with the job's keyed streams
        (``randomness.keyed``), and :meth:`apply` takes each chunk's slice. Checks the shared-noise structure."""
        if len(frame) != self.n_records:
            raise ParameterError("A microaggregation plan clusters the whole table; it cannot be applied to a part of it.")
        keyed = keyed_streams(randomness)
        columns: dict[str, Any] = {}
        for a in self.attributes:
            if a.domain is not None:
                values = frame[a.attribute].to_numpy(dtype=np.float64)
                released, clusters, _noise = dp_microaggregate(values, a.domain, self.k, a.grid, a.t, keyed)
                check_shared_structure(released, clusters, a.domain, self.k)
                self.clusterings[a.attribute] = clusters
                columns[a.attribute] = released.astype(np.int64) if a.domain.integer else released
            else:
                ranking = rank_categorical(frame[a.attribute], a.taxonomy, self.k, self.candidates)
                chosen = exponential_centroids(ranking, a.epsilon, keyed)
                nodes = chosen[ranking.cluster]
                check_categorical_structure(nodes, ranking, self.k, a.attribute)
                self.clusterings[a.attribute] = ranking
                columns[a.attribute] = released_labels(ranking, nodes)
            if self.layout == UNLINKED:  # after the checks, which read the clusters in record order
                columns[a.attribute] = unlink(columns[a.attribute], keyed, a.attribute)
        return columns

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0,
              bound: dict[str, Any] | None = None) -> Applied:
        """The released columns of records ``start, ..., start + len(frame) - 1``: a slice of ``bound``
        (:meth:`bind`'s result), or of :meth:`bind` of ``frame`` when it is the whole table (``bound=None``)."""
        keyed_streams(randomness)  # the job's keyed source only, even for a slice of what bind drew (fail closed)
        if bound is None:
            if start != 0:
                raise ParameterError("A microaggregation plan clusters the whole table: bind it before releasing a part.")
            bound = self.bind(frame, randomness)
        stop = start + len(frame)
        if stop > self.n_records:
            raise ParameterError(f"Records {start}-{stop - 1} are beyond the {self.n_records} records the plan clustered.")
        return Applied({name: values[start:stop] for name, values in bound.items()}, dropped=list(self.dropped))

    def release_json(self) -> dict[str, Any]:
        return {
            "parameters": {"epsilon": self.epsilon, "k": self.k, "attributes": [a.attribute for a in self.attributes],
                           "candidates": self.candidates, "layout": self.layout, "dropped": list(self.dropped),
                           "grids": {a.attribute: a.grid.to_json()["step"] for a in self.attributes if a.grid is not None}},
            "protected": [a.to_json() for a in self.attributes],
            "guarantee": self.verify(),
            "reconstruction": "Released values are cluster centroids plus noise; analyse them as they are. "
                              "Means and counts are approximately unbiased before clamping to the domain.",
        }

    def key_json(self) -> dict[str, Any]:
        return {"parameters": self.release_json()["parameters"]}

    def describe(self) -> list[str]:
        m = len(self.attributes)
        lines = [f"epsilon = {self.epsilon:g} split over M = {m} attribute(s): {self.epsilon / m:g} each; k = {self.k}"]
        for a in self.attributes:
            if a.domain is not None:
                lines.append(f"{a.attribute}: domain {a.domain.lo:g}:{a.domain.hi:g} (Delta {a.domain.delta:g}), "
                             f"discrete Laplace on a grid of step {a.grid.h:g} (t = {a.t:,} grid units on a cluster's sum; "
                             f"about Laplace scale {a.scale:.4g} on its mean) per cluster")
            else:
                lines.append(f"{a.attribute}: exponential mechanism over {len(a.taxonomy) - 1} taxonomy labels, "
                             f"epsilon {a.epsilon:g} per cluster")
        if self.layout == UNLINKED:
            lines.append("columns unlinked: each protected column shuffled on its own, no pseudonyms (a row is not a "
                         "record)" + (f"; left out of the release: {', '.join(self.dropped)}" if self.dropped else ""))
        return lines + [f"warning: {w}" for w in self.warnings]


class DPMicroaggregation(Method):
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
    needs_sensitive = False  # it protects its own list of attributes
    needs_pairs = False
    public_report = True  # inside an epsilon-DP release: nothing computed from the original records
    window_editor = "dp"  # its window editor asks it noise_scale, is_whole_numbers and grid_step

    def job_settings(self, settings: AnonymizationSettings) -> AnonymizationSettings:
        """Without a sensitive column, the first protected attribute stands for it (its name in the key). An
        unlinked release publishes no quasi-identifier, so k-anonymity of them is refused here."""
        dp = self.settings(settings)
        if dp.layout == UNLINKED and settings.protection.k is not None:
            raise ParameterError(UNLINKED_K)
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
        if not problems and self.settings(settings).layout == UNLINKED and settings.protection.k is not None:
            problems.append(UNLINKED_K)
        return problems

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> DPMicroaggPlan:
        dp = self.settings(settings)
        edited = {a: t for a, t in settings.taxonomies.items() if groups_values(t) and a not in dp.domains}
        taxonomies = {**edited, **dp.taxonomies}
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
            raise ParameterError(f"{', '.join(map(repr, missing))} not in {dataset.label}; its columns are: {', '.join(frame.columns)}.")
        extra = sorted(set(dp.domains) - set(dp.attributes))
        if extra:
            raise ParameterError(f"{setting_ref('domain')} names {', '.join(map(repr, extra))}, which is not among "
                                 f"{setting_ref('attributes')}.", setting="domain", column=extra[0])
        extra = sorted(set(dp.grids) - set(dp.attributes))
        if extra:
            raise ParameterError(f"{setting_ref('grid')} names {', '.join(map(repr, extra))}, which is not among "
                                 f"{setting_ref('attributes')}.", setting="grid", column=extra[0])
        cluster_count(len(frame), dp.k)
        m = len(dp.attributes)
        share = dp.epsilon / m
        attributes = []
        for name in dp.attributes:
            column = frame[name]
            if dataset.schema.attributes[name].kind is Kind.NUMERIC and name not in taxonomies:
                domain = numeric_domain(column, dp.domains.get(name), dataset.label)
                scale = laplace_scale(domain.delta, m, dp.k, dp.epsilon)
                step = as_fraction(dp.grids[name]) if name in dp.grids else default_step(scale, domain.delta, domain.integer)
                grid = Grid.for_domain(domain.lo, domain.hi, step, domain.integer, name)
                attributes.append(DPAttribute(name, "numeric", share, domain, scale, grid=grid,
                                              t=discrete_t(grid.units, m, dp.epsilon)))
                check_grid(name, domain, grid, attributes[-1].t, m, dp.k, dp.epsilon, ParameterError)
            else:
                if name in dp.domains or name in dp.grids:
                    key = "domain" if name in dp.domains else "grid"
                    raise ParameterError(f"{name!r} is categorical: it takes a taxonomy "
                                         f"({setting_ref('taxonomy', f'{name}=FILE')}), not {setting_ref(key)}.",
                                         setting=key, column=name)
                taxonomy, from_data = taxonomy_of(column, taxonomies.get(name))
                attributes.append(DPAttribute(name, "categorical", share, taxonomy=taxonomy, taxonomy_from_data=from_data))
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

"""The plan of a dp-microagg job (:mod:`~ppdp_desktop.core.methods.dp.method`): the protected attributes with their
domains or taxonomies, the epsilon split and the noise scales, checked before use; ``bind`` clusters and randomizes
the whole table and ``apply`` releases a chunk's slice of it. Its own module so that the report and the evaluation
can check a job's plan (:func:`dp_plan`) without importing the method that calls them."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.blanks import DROP, BlankTreatment
from ppdp_desktop.core.errors import ParameterError, PrivacyError
from ppdp_desktop.core.methods.base import Plan
from ppdp_desktop.core.methods.dp.categorical import (
    check_categorical_structure,
    exponential_centroids,
    rank_categorical,
    released_labels,
)
from ppdp_desktop.core.methods.dp.claim import LINKED, UNLINKED, SingledOut, claim, singled_out_count, unlink
from ppdp_desktop.core.methods.dp.grid import Grid
from ppdp_desktop.core.methods.dp.numeric import (
    NumericDomain,
    check_grid,
    check_shared_structure,
    cluster_count,
    dp_microaggregate,
    laplace_scale,
)
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy.randomness import RandomSource, keyed_streams
from ppdp_desktop.core.taxonomy.io import to_dict
from ppdp_desktop.core.taxonomy.tree import Taxonomy

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
BLANKS_LEFT_OUT = ("The {cells:,} record(s) with a blank cell in {name!r} were left out of the release: its number of "
                   "records discloses how many, and someone who knows every other record learns whether a person's "
                   "{name!r} cell was blank. Epsilon covers the records released.")


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
    blanks: BlankTreatment | None = None  # what was done with its blank cells before the job (None: it had none)

    def numeric_grid(self) -> tuple[Grid, int]:
        """``(grid, t)`` of a numeric attribute: the grid its values are released on and the discrete Laplace
        parameter (a PrivacyError if the plan lacks either: fail closed)."""
        if self.grid is None or self.t is None:
            raise PrivacyError(f"The plan of numeric attribute {self.attribute!r} has no grid or no discrete Laplace "
                               "parameter.")
        return self.grid, self.t

    def categorical_taxonomy(self) -> Taxonomy:
        """The taxonomy of a categorical attribute (a PrivacyError if the plan has none: fail closed)."""
        if self.taxonomy is None:
            raise PrivacyError(f"The plan of categorical attribute {self.attribute!r} has no taxonomy.")
        return self.taxonomy

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"attribute": self.attribute, "kind": self.kind, "epsilon": self.epsilon}
        if self.domain is not None:
            grid, t = self.numeric_grid()
            entry.update(domain=self.domain.to_json(), laplace_scale=self.scale,
                         noise=f"discrete Laplace on a grid of step {grid.h:g}, one draw per cluster (exact integer "
                               "sampler on the cluster's sum in grid units)",
                         grid=grid.to_json(), discrete_laplace_t=t, privacy_loss=grid.units / t)
        else:
            entry.update(mechanism="exponential, one draw per cluster", quality_sensitivity=1.0,
                         taxonomy=to_dict(self.categorical_taxonomy()), taxonomy_source="data (discloses the values)"
                         if self.taxonomy_from_data else "declared")
        if self.blanks is not None:
            entry["blanks"] = self.blanks.to_json()
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
            if a.blanks is not None and a.blanks.choice == DROP:
                out.append(BLANKS_LEFT_OUT.format(cells=a.blanks.cells, name=a.attribute))
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
                    raise PrivacyError(f"The Laplace scale of {a.attribute!r} is {a.scale}, "
                                       f"not M*Delta/(k*epsilon) = {expected}.")
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
                grid, t = a.numeric_grid()
                released, clusters, _noise = dp_microaggregate(values, a.domain, self.k, grid, t, keyed)
                check_shared_structure(released, clusters, a.domain, self.k)
                self.clusterings[a.attribute] = clusters
                columns[a.attribute] = released.astype(np.int64) if a.domain.integer else released
            else:
                ranking = rank_categorical(frame[a.attribute], a.categorical_taxonomy(), self.k, self.candidates)
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
        blanks = {a.attribute: a.blanks.choice for a in self.attributes if a.blanks is not None}
        return {
            "parameters": {"epsilon": self.epsilon, "k": self.k, "attributes": [a.attribute for a in self.attributes],
                           "candidates": self.candidates, "layout": self.layout, "dropped": list(self.dropped),
                           **({"blanks": blanks} if blanks else {}),  # what was done with blank cells, if any
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
                grid, t = a.numeric_grid()
                lines.append(f"{a.attribute}: domain {a.domain.lo:g}:{a.domain.hi:g} (Delta {a.domain.delta:g}), "
                             f"discrete Laplace on a grid of step {grid.h:g} (t = {t:,} grid units on a cluster's sum; "
                             f"about Laplace scale {a.scale:.4g} on its mean) per cluster")
            else:
                lines.append(f"{a.attribute}: exponential mechanism over {len(a.categorical_taxonomy()) - 1} taxonomy labels, "
                             f"epsilon {a.epsilon:g} per cluster")
        lines += [f"blank cells: {a.blanks.sentence()}" for a in self.attributes if a.blanks is not None]
        if self.layout == UNLINKED:
            lines.append("columns unlinked: each protected column shuffled on its own, no pseudonyms (a row is not a "
                         "record)" + (f"; left out of the release: {', '.join(self.dropped)}" if self.dropped else ""))
        return lines + [f"warning: {w}" for w in self.warnings]


def dp_plan(result_or_plan: Anonymization | Plan) -> DPMicroaggPlan:
    """The dp-microagg plan of a job's result (or the plan itself), checked to be one: a PrivacyError if it is
    another method's (fail closed), as :meth:`~ppdp_desktop.core.methods.base.Method.own_plan` does."""
    plan = result_or_plan.plan if isinstance(result_or_plan, Anonymization) else result_or_plan
    if not isinstance(plan, DPMicroaggPlan):
        raise PrivacyError(f"Differential privacy by individual-ranking microaggregation ({METHOD!r}) was given a plan "
                           f"of method {getattr(plan, 'method', '?')!r} ({type(plan).__name__}, expected DPMicroaggPlan).")
    return plan

"""What an analyst (or the report) gets from a randomized-response release: contingency tables
estimated axis by axis, and seed 001's evaluation measures against Anatomy and Mondrian (SPEC 2.4).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.evaluation import tensor_metrics as tm
from ppdp_desktop.core.methods.base import Runner
from ppdp_desktop.core.methods.rr.estimate import estimate_tensor, project_to_simplex
from ppdp_desktop.core.methods.rr.limits import MAX_TABLE_CELLS
from ppdp_desktop.core.methods.rr.risk import contingency
from ppdp_desktop.core.progress import CancelToken

#: declared limits of ``estimate --table`` and of the report's estimates (a dense table of every combination is
#: built; an rr job is refused before planning beyond them, rr/limits.py)
MAX_TABLE_COLUMNS = 8

def estimate_release_table(release: LoadedRelease, attributes: list[str], project: bool = False) -> pd.DataFrame:
    """Estimated counts of every combination of ``attributes`` (a group-by; any subset is a CUBE cell).

    Randomized attributes are un-mixed with the inverse of their published matrix along their own
    axis; the others are counted as released.
    """
    randomized = {e["attribute"]: e for e in release.metadata.get("randomized", [])}
    if "randomized" not in release.metadata:
        raise ParameterError(f"{setting_ref('table')} estimates the tables of randomized-response releases; this "
                             f"release was made by {release.metadata.get('method')!r}: estimate its perturbed column "
                             f"with {setting_ref('sensitive', 'COL')}.", setting="table")
    table = release.table
    unknown = [a for a in attributes if a not in table.columns]
    if unknown:
        raise ParameterError(f"Column {unknown[0]!r} is not in the release; its columns are: {', '.join(table.columns)}.")
    # no option named in these two refusals: the report estimates such tables too, where the user typed none
    if len(attributes) > MAX_TABLE_COLUMNS:
        raise ParameterError(f"A table of {len(attributes)} columns ({', '.join(attributes)}) is too many to estimate at "
                             f"once; at most {MAX_TABLE_COLUMNS}: choose fewer columns.", setting="table",
                             value=",".join(attributes))
    labels, codes = [], []
    matrices: list[np.ndarray | None] = []
    for name in attributes:
        if name in randomized:
            values = [label_text(v) for v in randomized[name]["values"]]
            matrices.append(np.asarray(randomized[name]["matrix"], dtype=float))
        else:
            values = sorted(table[name].unique())
            matrices.append(None)
        index = pd.Index(values).get_indexer(table[name])
        if (index < 0).any():
            raise ParameterError(f"{name!r} holds a value outside its published domain.")
        labels.append(values)
        codes.append(index)
        cells = int(np.prod([len(v) for v in labels], dtype=float))
        if cells > MAX_TABLE_CELLS:  # before the table is allocated
            raise ParameterError(
                f"The estimated table of {', '.join(attributes)} would have at least {cells:,} combinations of values; "
                f"at most {MAX_TABLE_CELLS:,} are estimated at once: choose fewer or coarser columns.",
                setting="table", value=",".join(attributes))
    observed = contingency(codes, [len(v) for v in labels])
    estimate = estimate_tensor(observed, matrices)
    if project:
        estimate = project_to_simplex(estimate)
    grid = pd.MultiIndex.from_product(labels, names=attributes).to_frame(index=False)
    grid["observed"] = observed.ravel()
    grid["estimate"] = estimate.ravel()
    return grid


@dataclass(frozen=True)
class TensorEvaluation:
    """Seed 001 section V measures of one method's reconstructed QI x S table."""

    method: str
    kl: float
    chi_square: float
    groupby_error: float
    cube_error: float
    uncertainty_gap: float  # mean |U_original - U_estimated| over attribute pairs
    note: str = ""


def evaluate_tensor(method: str, truth: np.ndarray, estimate: np.ndarray) -> TensorEvaluation:
    estimate = np.clip(estimate, 0.0, None)
    gap = np.abs(tm.uncertainty_table(truth) - tm.uncertainty_table(estimate))
    off = ~np.eye(gap.shape[0], dtype=bool)
    from ppdp_desktop.core.evaluation import metrics

    return TensorEvaluation(
        method, metrics.kl_divergence(truth, estimate), metrics.pearson_chi_square(truth, estimate),
        tm.groupby_relative_error(truth, estimate), tm.cube_relative_error(truth, estimate, max_dims=2),
        float(gap[off].mean()) if off.any() else 0.0,
    )


def anatomy_tensor(qi_codes: list[np.ndarray], dims: list[int], s_codes: np.ndarray, l: int, rng: np.random.Generator,
                   labels: list[str]) -> np.ndarray:
    """Anatomy's estimate of the QI x S table: sum_g c(g, alpha) c(g, s) / |g|."""
    from scipy import sparse

    from ppdp_desktop.core.methods.baselines.anatomy import anatomize

    release = anatomize(s_codes, l, rng, labels=labels)
    cells = int(np.prod(dims))
    alpha = np.ravel_multi_index(qi_codes, dims)
    groups = sparse.coo_matrix((np.ones(len(alpha)), (release.group_of_record, alpha)),
                               shape=(release.n_groups, cells)).tocsr()
    share = sparse.csr_array(release.st.multiply(1.0 / release.group_sizes[:, None]))  # sparse: one entry a record
    return np.asarray((groups.T @ share).toarray()).reshape(*dims, release.st.shape[1])


def mondrian_tensor(qi_codes: list[np.ndarray], dims: list[int], s_codes: np.ndarray, m: int, l: int) -> np.ndarray:
    """An l-diverse Mondrian generalization's estimate: each partition spread uniformly over its QI box."""
    from ppdp_desktop.core.methods.baselines.mondrian import mondrian_l_diverse

    release = mondrian_l_diverse(np.column_stack(qi_codes), s_codes, l, m=m)
    out = np.zeros((*dims, m))
    for p in range(release.n_partitions):
        box = release.sa_counts[p].astype(float)
        slices = []
        for j in range(len(dims)):
            lo, hi = release.ranges[p, j]
            slices.append(slice(int(lo), int(hi) + 1))
            box = box / (hi - lo + 1)
        out[tuple(slices)] += box  # broadcasts over the box's cells
    return out


DEFAULT_METHODS = ("rr", "anatomy", "mondrian")


def compare_linking(dataset, sensitive: str, quasi: list[str], l: float, methods: list[str],
                    seed: int | None = None, *, run: Runner) -> list[TensorEvaluation]:
    """RR against Anatomy and an l-diverse Mondrian generalization at the same ``l`` (seed 001 section V).

    ``run`` is the job (``ppdp_desktop.core.anonymize.anonymize``), passed in so that a method never
    imports the job that runs it.
    """
    from ppdp_desktop.core.data.domain import encode_column

    frame = dataset.frame
    domains, codes = [], []
    for column in [*quasi, sensitive]:
        if column not in frame.columns:
            raise ParameterError(f"Column {column!r} is not in {dataset.label}.")
        domain, c = encode_column(frame[column], column, dataset.label)
        domains.append(domain)
        codes.append(c)
    dims = [d.m for d in domains]
    truth = contingency(codes, dims)
    out = []
    for name in methods:
        try:
            out.append(_evaluate_one(name, dataset, sensitive, quasi, l, seed, domains, codes, dims, truth, run))
        except ParameterError as exc:
            if name == "rr":
                raise
            nan = float("nan")
            out.append(TensorEvaluation(name, nan, nan, nan, nan, nan, f"not possible: {exc}"))
    return out


def _evaluate_one(name, dataset, sensitive, quasi, l, seed, domains, codes, dims, truth, run: Runner) -> TensorEvaluation:
    from ppdp_desktop.core.methods.rr.settings import RRSettings
    from ppdp_desktop.core.privacy.randomness import simulation_generator
    from ppdp_desktop.core.settings import AnonymizationSettings

    if True:
        if name == "rr":
            job = run(dataset, AnonymizationSettings(sensitive, "rr", quasi=list(quasi), options=RRSettings(l=l), seed=seed))
            released = [d.encode(pd.Series(job.applied.columns[d.attribute])) if d.attribute in job.applied.columns else c
                        for d, c in zip(domains, codes)]
            published = {e["attribute"]: np.asarray(e["matrix"]) for e in job.plan.release_json()["randomized"]}
            estimate = estimate_tensor(contingency(released, dims), [published.get(d.attribute) for d in domains])
        elif name == "anatomy":
            estimate = anatomy_tensor(codes[:-1], dims[:-1], codes[-1], max(2, int(round(l))), simulation_generator(seed),
                                      [label_text(v) for v in domains[-1].values])
        elif name == "mondrian":
            estimate = mondrian_tensor(codes[:-1], dims[:-1], codes[-1], dims[-1], max(2, int(round(l))))
        else:
            raise ValueError(f"Cannot compare {name!r} here; choose among rr, anatomy, mondrian.")
    return evaluate_tensor(name, truth, estimate)


def format_linking(rows: list[TensorEvaluation]) -> str:
    """A plain-text table of the seed 001 measures, one row per method (a baseline that cannot run says why),
    then one line saying what each column measures."""
    header = ["method", "KL divergence", "chi-square", "group count error", "sub-table count error", "link change"]
    table = [header] + [
        [r.method] + [f"{v:.4f}" for v in (r.kl, r.chi_square, r.groupby_error, r.cube_error, r.uncertainty_gap)]
        for r in rows if not r.note
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    lines += [f"{r.method.ljust(widths[0])}  {r.note}" for r in rows if r.note]
    return "\n".join(lines + ["", *LINKING_LEGEND])


#: what each column of :func:`format_linking` measures (0 = the estimated table equals the original for each)
LINKING_LEGEND = (
    "KL divergence: Kullback-Leibler divergence of the estimated table from the original (0 = identical, "
    "no upper limit).",
    "chi-square: chi-square distance of the estimated table from the original (0 = identical).",
    "group count error: mean relative error of the count of each combination of all the columns.",
    "sub-table count error: mean relative error of the counts of any one or two columns together.",
    "link change: mean change of how strongly each pair of columns is linked (uncertainty coefficient, 0 to 1).",
)


def evaluate_job(result, cancel: CancelToken | None = None) -> list[TensorEvaluation]:
    """For a finished ``rr`` job: its own reconstruction of the QI x S table and the baselines at its ``l``
    (``cancel`` checked between the three)."""
    cancel = cancel or CancelToken()
    plan = result.plan
    frame = result.dataset.frame
    domains = [*plan.qi, plan.sensitive]
    codes = [d.encode(frame[d.attribute]) for d in domains]
    dims = [d.m for d in domains]
    published = {e["attribute"]: np.asarray(e["matrix"]) for e in plan.release_json()["randomized"]}
    released = [d.encode(pd.Series(result.applied.columns[d.attribute])) if d.attribute in result.applied.columns else c
                for d, c in zip(domains, codes)]
    estimate = estimate_tensor(contingency(released, dims), [published.get(d.attribute) for d in domains])
    rows = [evaluate_tensor("rr", plan.counts, estimate)]
    l = max(2, int(round(plan.parameters.l)))
    for name in ("anatomy", "mondrian"):
        cancel.check()
        try:
            if name == "anatomy":
                other = anatomy_tensor(codes[:-1], dims[:-1], codes[-1], l, np.random.default_rng(0),
                                       [label_text(v) for v in plan.sensitive.values])
            else:
                other = mondrian_tensor(codes[:-1], dims[:-1], codes[-1], dims[-1], l)
            rows.append(evaluate_tensor(name, plan.counts, other))
        except ParameterError as exc:
            nan = float("nan")
            rows.append(TensorEvaluation(name, nan, nan, nan, nan, nan, f"not possible: {exc}"))
    return rows

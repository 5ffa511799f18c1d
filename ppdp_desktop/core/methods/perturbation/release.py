"""The perturbation family's part of a release: re-verifying each perturbed column from its published
matrix and pairs, the recipient's README section, and the report rebuilt from the original table.

The release is shuffled, but counts over a condition need no row alignment, so the count-query
workload is rebuilt condition by condition (:func:`release_query_error`). Drawing the conditions
exactly as :func:`~ppdp_desktop.core.evaluation.workload.count_query_error` does (same seed, same
condition columns, values in the original's order of appearance), the figures match the in-memory
report's.
"""
from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import count_codes, label_text, text_column
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.data.schema import Kind, infer_kind
from ppdp_desktop.core.errors import ParameterError, PrivacyError, ReleaseError
from ppdp_desktop.core.evaluation import metrics
from ppdp_desktop.core.evaluation.figures import distribution_figure, posterior_figure, retention_figure
from ppdp_desktop.core.evaluation.report_model import MISSING_LABEL, MethodReport
from ppdp_desktop.core.evaluation.utility import UtilitySummary
from ppdp_desktop.core.evaluation.workload import SELECTIVITIES, QueryErrors, WorkloadResult, condition_columns, draw_conditions
from ppdp_desktop.core.methods.perturbation.disclosure import check_parameters_statement, parameters_statement
from ppdp_desktop.core.methods.perturbation.ldp import check_no_bound, check_stated_epsilon, epsilon_json, epsilon_sentence  # noqa: F401 (check_stated_epsilon: partitioning's too)
from ppdp_desktop.core.methods.perturbation.plan import MATRIX_FORM, retention_matrix
from ppdp_desktop.core.privacy import amplification as privacy
from ppdp_desktop.core.privacy import reconstruction
from ppdp_desktop.core.privacy.plausibility import check_counts_plausible
from ppdp_desktop.core.privacy.sensitivity import SensitivityRequirement, check_pair
from ppdp_desktop.core.privacy.structured import RetentionMatrix, never_kept_note
from ppdp_desktop.core.progress import Progress, subrange
from ppdp_desktop.core.shell_words import shell_option

README_WIDTH = 100  # where the section's added sentences wrap (as the README's own lines)

PERTURBATION = """\
What was done
  The column {attribute!r} was randomized: each record kept its value with a probability set per
  value (listed as "retention" in release.json) and otherwise received a value drawn uniformly from
  the column's values. What was done to every other column is listed above.

What it guarantees
  Upward (rho1, rho2)-privacy for each value listed with a pair in release.json: whatever released
  value you see, your belief that a record really holds such a value cannot rise above its rho2 if it
  was at most rho1 before.
{epsilon}
  It does not rule out "downward" inferences (belief in a common value falling).
{breaches}{parameters}
How to estimate counts
  The matrix is published through its parameters: with the m values and their retentions p of
  release.json, Pr[value i released as value j] = P[j][i] = p_i [j = i] + (1 - p_i) / m.
  For the records matching any condition on the other columns, count each released value of
  {attribute!r} (vector o) and solve  P @ f = o;  f estimates the original counts without bias.
  With PPDP Desktop:  ppdp estimate THIS_FOLDER {sensitive_option} --where "col=value"
  (95 % intervals included; --mle for estimates that stay non-negative).
"""



def _wrapped(sentence: str) -> str:
    return textwrap.fill(sentence, README_WIDTH, initial_indent="  ", subsequent_indent="  ", break_on_hyphens=False)


def readme_text(metadata: dict[str, Any]) -> str:
    """One README section per perturbed column."""
    text = ""
    for entry in metadata.get("sensitive", []):
        guarantee = entry.get("guarantee", {})
        breaches = guarantee.get("downward_breaches") or []
        note = f"  Downward breaches were reported for: {', '.join(map(str, breaches))}.\n" if breaches else ""
        epsilon = _wrapped(epsilon_sentence(guarantee, "No epsilon-local differential privacy equivalent is stated."))
        # what the parameters reveal: as release.json states it, or (an older release) as this app would
        stated = guarantee.get("not_covered")
        parameters = _wrapped(stated if isinstance(stated, str) else parameters_statement(
            str(metadata.get("method", "")), (metadata.get("parameters") or {}).get("rule"))) + "\n"
        option = shell_option("--sensitive", str(entry["attribute"]))  # a command line to copy: quoted for a shell
        text += PERTURBATION.format(attribute=entry["attribute"], sensitive_option=option, epsilon=epsilon, breaches=note,
                                    parameters=parameters)
        never = never_kept_note([str(v) for v in entry.get("values", [])], np.asarray(entry.get("retention", []), float))
        text += _wrapped(never) + "\n" if never else ""  # values never kept: what P @ f = o can and cannot give
    return text


def verify_perturbed_release(release: LoadedRelease) -> list[str]:
    """Every perturbed column re-verified; a release of this family lists at least one."""
    entries = release.metadata.get("sensitive") or []
    if not entries:
        raise ReleaseError("release.json lists no perturbed attribute and no guarantee statement.")
    return [verify_perturbed(release, entry) for entry in entries]


def _requirement(entry: dict) -> SensitivityRequirement:
    pairs = entry["guarantee"]["pairs"]
    rho1 = np.array([np.nan if p["rho1"] is None else p["rho1"] for p in pairs], dtype=float)
    rho2 = np.array([np.nan if p["rho2"] is None else p["rho2"] for p in pairs], dtype=float)
    given = np.array([p["rho1"] is not None for p in pairs], dtype=bool)
    valid = np.isfinite(rho1) & np.isfinite(rho2) & (0.0 < rho1) & (rho1 < rho2) & (rho2 < 1.0)
    for k in np.flatnonzero(given & ~valid)[:1]:  # the first bad pair, named (checked all at once)
        check_pair(pairs[k]["rho1"], pairs[k]["rho2"], where=f"value {pairs[k]['value']!r}")
    return SensitivityRequirement(rho1, rho2, "as published")


def published_matrix(entry: dict, uniform: bool = False) -> RetentionMatrix:
    """The matrix ``entry`` publishes, from its retentions: "keep value i with its retention, else draw one of
    the m values uniformly" (one retention for every value under uniform perturbation). A release of format 1
    also lists the dense matrix: it must be exactly that one. Anything else is refused (fail closed)."""
    attribute = entry.get("attribute")
    try:
        retention = np.asarray(entry["retention"], dtype=float)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the retention of {attribute!r} is missing or malformed ({exc}).") from None
    values = entry.get("values")
    if (retention.ndim != 1 or not isinstance(values, list) or retention.shape != (len(values),)
            or not np.all((retention >= 0.0) & (retention <= 1.0))):  # NaN fails
        raise PrivacyError(f"release.json: the retention of {attribute!r} is not one probability per value.")
    if "matrix" in entry:  # format 1: the dense matrix, which must be the one the retentions give
        try:
            dense = np.asarray(entry["matrix"], dtype=float)
        except (TypeError, ValueError) as exc:
            raise ReleaseError(f"release.json: the matrix of {attribute!r} is malformed ({exc}).") from None
        privacy.check_operator(dense, str(attribute))
        if dense.shape != (len(retention),) * 2 or not np.allclose(dense, retention_matrix(retention), rtol=0.0, atol=1e-12):
            raise PrivacyError(f"The matrix of {attribute!r} is not 'keep with the published retention, else draw "
                               "uniformly': it is not what this method publishes.")
    elif entry.get("matrix_form") != MATRIX_FORM:
        raise ReleaseError(f"release.json: {attribute!r} names matrix form {entry.get('matrix_form')!r}; this method "
                           f"publishes {MATRIX_FORM!r} (a retention per value).")
    if uniform and not np.allclose(retention, retention[0], rtol=0.0, atol=1e-12):
        raise PrivacyError(f"Uniform perturbation keeps every value of {attribute!r} with one retention; "
                           "release.json lists several.")
    return RetentionMatrix(retention)


def verify_perturbed(release: LoadedRelease, entry: dict) -> str:
    if entry.get("subtables"):
        raise ReleaseError(f"release.json: {entry.get('attribute')!r} has sub-tables, which this method does not publish.")
    try:
        values = entry["values"]
        requirement = _requirement(entry)
        verified = entry["guarantee"].get("verified")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReleaseError(f"release.json: the entry of {entry.get('attribute')!r} is malformed ({exc}).") from exc
    if not verified:
        raise PrivacyError(f"release.json does not mark the guarantee of {entry['attribute']!r} as verified.")
    if not requirement.concern.any():
        raise PrivacyError(f"release.json gives no (rho1, rho2) pair to any value of {entry['attribute']!r}: the "
                           "release protects nothing, which this method never writes.")
    # the matrix is this method's (the published retentions, uniform under uniform perturbation)
    matrix = published_matrix(entry, uniform=release.metadata.get("method") == "uniform")
    codes = release.codes(entry)
    # The data's own prior is unknown to a recipient: the amplification check is prior-free;
    # the posterior check uses the iterative-Bayesian estimate of the prior.
    observed = count_codes(codes, len(values)).astype(float)
    prior = reconstruction.iterative_bayesian(observed, matrix, tol=1e-8) / max(len(codes), 1)
    report = privacy.verify(entry["attribute"], values, matrix, requirement, prior)
    # then what the guarantee alone does not show: the data was drawn with the matrix, and the stated
    # figures are the matrix's
    check_counts_plausible(observed, matrix, values, entry["attribute"])
    check_stated(entry, requirement, report.epsilon_ldp)
    statement = check_no_bound(entry, values, matrix.retention, report.epsilon_ldp)
    parameters = check_parameters_statement(release.metadata, entry)
    holds = (f"epsilon-LDP equivalent {report.epsilon_ldp:.3f})" if statement is None
             else f"no epsilon-LDP bound). {statement}")
    line = (f"{entry['attribute']}: {len(codes):,} records, {int(requirement.concern.sum())} protected values, "
            f"upward (rho1, rho2)-privacy holds ({holds}")
    return line + ("." if line.endswith(")") else "") + f" {parameters}"


def check_stated(entry: dict, requirement: SensitivityRequirement, epsilon: float) -> None:
    """The figures release.json states (the README and the report repeat them) are those the matrix and the
    pairs give: each value's gamma and the epsilon-LDP equivalent."""
    guarantee = entry["guarantee"]
    stated_gamma = guarantee.get("gamma")
    if stated_gamma is not None:
        try:
            gamma = np.array([np.inf if g is None else float(g) for g in stated_gamma], dtype=float)
        except (TypeError, ValueError):
            gamma = np.array([np.nan])
        expected = requirement.gamma
        if gamma.shape != expected.shape or not np.allclose(gamma, expected, rtol=1e-9, atol=0.0):  # NaN fails
            raise PrivacyError(f"release.json states gammas for {entry['attribute']!r} that its (rho1, rho2) pairs "
                               "do not give: the release was altered.")
    check_stated_epsilon(guarantee, entry["attribute"], epsilon, "its matrix gives")


def published_column(release: LoadedRelease, entry: dict) -> tuple[np.ndarray, RetentionMatrix, np.ndarray | None]:
    """``(codes, matrix, None)``: each record's released code and the published matrix. A method with
    sub-tables gives instead each record's (sub-table, value) entry, the block-diagonal matrix over the entries
    and the value of each entry (``groups``)."""
    return release.codes(entry), published_matrix(entry), None


#: how a method's perturbed column is read from a release: ``(codes, matrix, groups)`` (see :func:`published_column`)
Published = Callable[[LoadedRelease, dict], tuple[np.ndarray, RetentionMatrix, np.ndarray | None]]


def reports_from_release(original: pd.DataFrame, release: LoadedRelease, title: str, progress: Progress,
                         workload_seed: int = 0, published: Published = published_column) -> list[MethodReport]:
    """One report per perturbed column of ``release``, rebuilt from the original table (``published``: how the
    method's column and matrix are read, see :func:`published_column`)."""
    meta = release.metadata
    method = str(meta.get("method", ""))
    entries = meta.get("sensitive") or []
    identifiers = [c for c, a in meta.get("attributes", {}).items() if a.get("role") == "identifier"]
    perturbed = [e["attribute"] for e in entries]
    reports = []
    for k, entry in enumerate(entries):
        step = subrange(progress, k / len(entries), (k + 1) / len(entries))
        reports.append(_perturbation_report(original, release, entry, title, method, identifiers + perturbed, step,
                                            workload_seed, published))
    return reports


def _perturbation_report(
    original: pd.DataFrame, release: LoadedRelease, entry: dict, title: str, method: str,
    exclude: list[str], progress: Progress, workload_seed: int, published: Published = published_column,
) -> MethodReport:
    attribute = entry["attribute"]
    if attribute not in original.columns:
        raise ReleaseError(f"The original table has no column {attribute!r}, the release's perturbed attribute.")
    labels = [label_text(v) for v in entry["values"]]
    released_codes, matrix, groups = published(release, entry)
    retention = matrix.retention if groups is None else None  # one a value (a sub-table's is not a value's)
    guarantee = dict(entry.get("guarantee", {}))
    m = len(labels)
    progress(0.05, "Counting the original values")
    true_codes = pd.Index(labels).get_indexer(text_column(original[attribute]))
    if (true_codes < 0).any():
        bad = original[attribute][true_codes < 0].iloc[0]
        raise ReleaseError(f"The original {attribute!r} holds {bad!r}, which is not in the release's domain.")
    counts = np.bincount(true_codes, minlength=m).astype(float)
    report = MethodReport(
        method=method, title=title, n_records=len(released_codes), guarantee=guarantee,
        lines=[f"sensitive: {attribute} ({m} values)", f"released by {release.metadata.get('app', 'an unknown app')} "
               f"on {release.metadata.get('created', 'an unknown date')}"],
        values=[lab if lab else MISSING_LABEL for lab in labels], original=counts, retention=retention,
    )
    pairs = guarantee.get("pairs") or []
    rho1 = np.array([np.nan if p.get("rho1") is None else float(p["rho1"]) for p in pairs], dtype=float)
    rho2 = np.array([np.nan if p.get("rho2") is None else float(p["rho2"]) for p in pairs], dtype=float)
    prior = counts / counts.sum()
    if groups is None:
        report.record_utility = metrics.record_utility(prior, matrix)
    else:  # a sub-table keeps each of its values alike, so its published record count is all it takes
        block_share = np.bincount(released_codes, minlength=matrix.m) / max(len(released_codes), 1)
        report.record_utility = metrics.record_utility(block_share, matrix)
    if groups is not None:  # verified sub-table by sub-table when the release was written and by ppdp verify
        report.epsilon_ldp = guarantee.get("epsilon_ldp")
    elif len(pairs) == m:
        progress(0.1, "Checking the posteriors")
        report.rho2 = rho2
        check = privacy.verify(attribute, labels, matrix, SensitivityRequirement(rho1, rho2, "published pairs"), prior)
        report.max_posterior = check.max_posterior
        report.epsilon_ldp = epsilon_json(check.epsilon_ldp)  # None where none is finite: the statement says why
        report.downward_breaches = [str(b["value"]) or MISSING_LABEL for b in check.downward_breaches]
    else:  # no pairs published: still show the posteriors, without bounds
        report.max_posterior = privacy.retention_posterior_extremes(matrix.retention, prior)[0]
        report.epsilon_ldp = guarantee.get("epsilon_ldp")
    try:
        progress(0.2, "Reconstructing the counts")
        observed = np.bincount(released_codes, minlength=matrix.m)
        progress(0.3, "Bootstrapping the intervals")
        report.reconstructed, report.band_low, report.band_high = reconstruction.estimate_with_interval(
            observed, matrix, groups=groups, n_groups=m)
        progress(0.6, "Running the count-query workload")
        columns = [c for c in condition_columns(original, exclude) if c in release.table.columns]
        workload = (
            release_query_error(original[columns], true_codes, release.table[columns], released_codes, matrix,
                                seed=workload_seed, groups=groups, m=m)
            if columns else None
        )
        in_simplex = reconstruction.iterative_bayesian(observed, matrix)
        unbiased = reconstruction.inverse(observed, matrix)
        if groups is not None:
            in_simplex, unbiased = (reconstruction.sum_by_group(x, groups, m) for x in (in_simplex, unbiased))
        report.utility = UtilitySummary(
            report.record_utility,
            metrics.reconstruction_error(counts, unbiased),  # as the job's summary
            metrics.aggregate_utility(counts, unbiased),
            metrics.kl_divergence(counts, in_simplex),
            metrics.pearson_chi_square(counts, in_simplex),
            metrics.jensen_shannon(counts, in_simplex),
            workload,
        )
    except ParameterError as exc:
        report.lines.append(str(exc))
    progress(0.85, "Drawing the figures")
    if report.reconstructed is not None:
        report.figures["distribution"] = distribution_figure(
            report.values, counts, report.reconstructed, report.band_low, report.band_high
        )
    if retention is not None:
        report.figures["retention"] = retention_figure(report.values, counts, retention, matrix)
    if report.rho2 is not None and report.max_posterior is not None:  # both set when the pairs were checked
        report.figures["posterior"] = posterior_figure(report.values, report.max_posterior, report.rho2, prior)
    return report


def _released_codes(original: pd.Series, uniques: np.ndarray, released: pd.Series) -> np.ndarray:
    """Codes of the released (text) cells into ``uniques`` of the original column (-1 = no match).

    The released column is factorized first, so only its few distinct cells are parsed and matched.
    """
    cells, texts = pd.factorize(released, use_na_sentinel=False)
    texts = pd.Series(np.asarray(texts, dtype=object)).fillna("")
    if infer_kind(original) is Kind.NUMERIC:
        numbers = pd.to_numeric(texts.replace("", np.nan), errors="coerce").to_numpy(dtype=float)
        matched = pd.Index(np.asarray(uniques, dtype=float)).get_indexer(numbers)
    else:
        lookup: dict[str, int] = {}
        for i, u in enumerate(uniques):
            lookup.setdefault(label_text(u), i)
        matched = np.array([lookup.get(str(t), -1) for t in texts], dtype=np.int64)
    return matched[cells]


def _small(codes: np.ndarray) -> np.ndarray:
    """Codes in the narrowest integer type (comparisons over a million rows run faster)."""
    for dtype in (np.int8, np.int16, np.int32):
        if codes.max(initial=0) <= np.iinfo(dtype).max:
            return codes.astype(dtype)
    return codes


def release_query_error(
    original: pd.DataFrame,
    true_codes: np.ndarray,
    released: pd.DataFrame,
    released_codes: np.ndarray,
    matrix: RetentionMatrix,
    seed: int = 0,
    n_conditions: int = 200,
    selectivities: tuple[float, ...] = SELECTIVITIES,
    groups: np.ndarray | None = None,
    m: int | None = None,
) -> WorkloadResult:
    """The count-query workload (SPEC 3) over two unaligned tables with the same condition columns.

    ``original`` / ``true_codes`` are the original rows, ``released`` (cells as text) /
    ``released_codes`` the release's rows in any order. For each seeded condition, the true counts come
    from the original rows matching it and the estimate from the released rows matching it. With sub-tables,
    ``released_codes`` are the records' entries of ``matrix`` and ``groups`` their ``m`` values.
    """
    if original.shape[1] == 0:
        raise ParameterError("The count-query workload needs at least one non-sensitive column with few values.")
    n, m = len(true_codes), (matrix.shape[0] if m is None else m)
    rng = np.random.default_rng(seed)
    encoded = []
    for c in original.columns:
        codes, uniques = pd.factorize(original[c], use_na_sentinel=False)
        rel = _released_codes(original[c], np.asarray(uniques), released[c])
        encoded.append((_small(codes), _small(rel), len(uniques)))
    errors = QueryErrors(n, selectivities, matrix, groups, m)
    for condition in draw_conditions([k for _, _, k in encoded], rng, n_conditions):
        mask_true = np.ones(n, dtype=bool)
        mask_released = np.ones(len(released_codes), dtype=bool)
        for col, value in condition:
            codes, rel, _ = encoded[col]
            mask_true &= codes == value
            mask_released &= rel == value
        errors.add(np.bincount(true_codes[mask_true], minlength=m),
                   np.bincount(released_codes[mask_released], minlength=matrix.shape[0]))
    return errors.result()

"""A written dp-microagg release: re-verification from release.json and the data alone, and the
report rebuilt from the original table (SPEC 5, SPEC 7).

The recipient's check (:func:`verify_dp_release`) recomputes every nominal Laplace scale
``M * Delta / (k * epsilon)``, every grid (its points inside the domain) and discrete Laplace parameter
``t = ceil(M * units / epsilon)`` from the published parameters, checks the epsilon split, and checks that
every released number is a point of its published grid (so inside its domain, integral for integer domains)
and every released label one of the published taxonomy, and that no attribute shows more distinct values
than there are clusters; and that the guarantee's words fit the release (:func:`~.claim.verify_claim`: an unlinked
release holds protected columns only, a linked one states the records its other columns single out).
"""
from __future__ import annotations

import textwrap
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.blanks import BlankTreatment, treat_frame
from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.errors import PPDPError, PrivacyError, ReleaseError
from ppdp_desktop.core.methods.dp.claim import UNLINKED, verify_claim
from ppdp_desktop.core.methods.dp.grid import Grid, as_fraction
from ppdp_desktop.core.methods.dp.numeric import NumericDomain, check_grid, laplace_scale
from ppdp_desktop.core.taxonomy.tree import Taxonomy

TOLERANCE = 1e-9


def _parameters(meta: dict) -> tuple[float, int, list[str], list[dict]]:
    try:
        params = meta["parameters"]
        epsilon, k = float(params["epsilon"]), int(params["k"])
        names, entries = [str(a) for a in params["attributes"]], list(meta["protected"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ReleaseError(f"release.json: the dp-microagg parameters are malformed ({exc}).") from exc
    if not (np.isfinite(epsilon) and epsilon > 0) or k < 1:
        raise PrivacyError(f"release.json: epsilon must be positive and k at least 1; got {epsilon} and {k}.")
    if [e.get("attribute") for e in entries] != names or not names:
        raise ReleaseError("release.json: the protected attributes do not match parameters.attributes.")
    return epsilon, k, names, entries


def entry_domain(entry: dict) -> NumericDomain:
    """The published domain of a numeric entry (``delta`` must equal ``hi - lo``)."""
    try:
        d = entry["domain"]
        domain = NumericDomain(entry["attribute"], float(d["lo"]), float(d["hi"]), bool(d["integer"]))
        delta = float(d["delta"])
    except (KeyError, TypeError, ValueError, PPDPError) as exc:
        raise ReleaseError(f"release.json: the domain of {entry.get('attribute')!r} is malformed ({exc}).") from exc
    if not abs(delta - domain.delta) <= TOLERANCE * max(domain.delta, 1.0):  # NaN fails
        raise PrivacyError(f"{entry['attribute']!r}: published Delta {delta:g} is not hi - lo = {domain.delta:g}.")
    return domain


def entry_grid(entry: dict, domain: NumericDomain, m: int, k: int, epsilon: float) -> tuple[Grid, int]:
    """The published grid and discrete Laplace parameter of a numeric entry, checked against the domain and
    ``t = ceil(M * units / epsilon)``."""
    if "grid" not in entry and "discrete_laplace_t" not in entry:
        raise PrivacyError(f"{entry.get('attribute')!r} was released with floating-point Laplace noise (a release made "
                           "before discrete noise on a grid): the low digits of its values can reveal the cluster "
                           "means (Mironov 2012), so its epsilon does not hold. Make the release again.")
    try:
        g = entry["grid"]
        step = as_fraction(str(g["step_exact"]))
        grid, t = Grid(step, int(g["first"]), int(g["units"])), entry["discrete_laplace_t"]
    except (KeyError, TypeError, ValueError, PPDPError) as exc:
        raise ReleaseError(f"release.json: the grid of {entry.get('attribute')!r} is missing or malformed ({exc}).") from exc
    if not isinstance(t, int) or isinstance(t, bool):
        raise PrivacyError(f"{entry['attribute']!r}: the discrete Laplace parameter {t!r} is not a whole number.")
    try:
        check_grid(entry["attribute"], domain, grid, t, m, k, epsilon)
    except PPDPError as exc:
        raise PrivacyError(str(exc)) from None
    return grid, t


def entry_taxonomy(entry: dict) -> Taxonomy:
    """The published taxonomy of a categorical entry."""
    from ppdp_desktop.core.taxonomy.io import from_dict

    try:
        return from_dict(entry["taxonomy"], entry["attribute"], source=f"release.json ({entry['attribute']!r})")
    except (KeyError, PPDPError) as exc:
        raise ReleaseError(f"release.json: the taxonomy of {entry.get('attribute')!r} is missing or malformed ({exc}).") from exc


def released_numbers(release: LoadedRelease, name: str) -> np.ndarray:
    """A released numeric column as floats; a missing or non-numeric cell is an error."""
    if name not in release.table.columns:
        raise ReleaseError(f"The released data has no column {name!r}, a protected attribute.")
    column = release.table[name]
    if isinstance(column.dtype, pd.CategoricalDtype):  # read back as categories of text: each distinct text parsed once
        codes = column.cat.codes.to_numpy()
        parsed = pd.to_numeric(pd.Series(column.cat.categories.to_numpy(dtype=object), dtype=object),
                               errors="coerce").to_numpy(dtype=np.float64)
        numbers = np.append(parsed, np.nan)[codes]  # a missing cell (code -1) is NaN
    else:
        numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(numbers))
    if len(bad):
        raise ReleaseError(f"{name!r}: released cell {column.iloc[bad[0]]!r} (data row {bad[0] + 1}) is not a number.")
    return numbers


def verify_dp_release(release: LoadedRelease) -> list[str]:
    """Check the epsilon split, each scale, each released value and the cluster count; one line each.

    Raises
    ------
    ReleaseError
        release.json or the data is malformed.
    PrivacyError
        A published scale, share or value contradicts the claimed epsilon-DP.
    """
    meta = release.metadata
    epsilon, k, names, entries = _parameters(meta)
    if not meta.get("guarantee", {}).get("verified"):
        raise PrivacyError("release.json does not mark the differential-privacy guarantee as verified.")
    m, n = len(names), len(release.table)
    shares = [float(e.get("epsilon", np.nan)) for e in entries]
    if not np.allclose(shares, epsilon / m, rtol=TOLERANCE, atol=0) or not abs(sum(shares) - epsilon) <= TOLERANCE * epsilon:
        raise PrivacyError(f"The per-attribute epsilons {shares} do not split epsilon = {epsilon:g} evenly over {m} attributes.")
    lines = [f"epsilon split: {m} x {epsilon / m:g} = {epsilon:g} (sequential composition); k = {k}"]
    clusters = n // k
    for entry in entries:
        name = entry["attribute"]
        if entry.get("kind") == "numeric":
            domain = entry_domain(entry)
            expected = laplace_scale(domain.delta, m, k, epsilon)
            scale = entry.get("laplace_scale")
            if not isinstance(scale, (int, float)) or not abs(scale - expected) <= TOLERANCE * expected:
                raise PrivacyError(f"{name!r}: published Laplace scale {scale!r} is not M*Delta/(k*epsilon) = {expected:.6g}.")
            grid, t = entry_grid(entry, domain, m, k, epsilon)
            declared = meta["parameters"].get("grids", {}).get(name, grid.to_json()["step"])
            if declared != grid.to_json()["step"]:
                raise PrivacyError(f"{name!r}: parameters.grids says step {declared!r}, its entry {grid.h:g}.")
            values = released_numbers(release, name)
            outside = np.flatnonzero((values < domain.lo) | (values > domain.hi))
            if len(outside):
                raise PrivacyError(f"{name!r}: released value {values[outside[0]]:g} lies outside the domain "
                                   f"{domain.lo:g}:{domain.hi:g}.")
            if domain.integer and not np.all(values == np.round(values)):
                raise PrivacyError(f"{name!r}: a released value is not a whole number although the domain is integer.")
            off = np.flatnonzero(~grid.on_grid(values))
            if len(off):
                raise PrivacyError(f"{name!r}: released value {values[off[0]]!r} is not a point of the grid of step "
                                   f"{grid.h:g} (its low digits would not come from the mechanism).")
            distinct = len(np.unique(values))
            what = (f"discrete Laplace on a grid of step {grid.h:g}, t = {t:,} = ceil({m}*{grid.units:,}/{epsilon:g}) "
                    f"(about Laplace scale {scale:.6g} = {m}*{domain.delta:g}/({k}*{epsilon:g}) on a cluster mean); "
                    f"values on the grid in {domain.lo:g}:{domain.hi:g}")
        elif entry.get("kind") == "categorical":
            taxonomy = entry_taxonomy(entry)
            if name not in release.table.columns:
                raise ReleaseError(f"The released data has no column {name!r}, a protected attribute.")
            used = pd.unique(release.table[name])
            unknown = [v for v in used if v not in taxonomy]
            if unknown:
                raise PrivacyError(f"{name!r}: released label {unknown[0]!r} is not in the published taxonomy.")
            distinct = len(used)
            what = f"exponential mechanism, epsilon {epsilon / m:g}; every label in the published taxonomy"
        else:
            raise ReleaseError(f"release.json: {name!r} has kind {entry.get('kind')!r} (numeric or categorical expected).")
        _check_cluster_counts(name, release.table[name], k)
        if distinct > clusters:
            raise PrivacyError(f"{name!r} shows {distinct} distinct values but {n:,} records in clusters of k = {k} "
                               f"allow at most {clusters}: the noise was not shared per cluster.")
        lines.append(f"{name}: {what}; {distinct} distinct released values <= {clusters} clusters")
    return lines + [verify_claim(release, names, entries)]


def _check_cluster_counts(name: str, cells: pd.Series, k: int) -> None:
    """Every cluster's records share one released value, and all clusters hold ``k`` records but the last: so
    each distinct value is released a multiple of ``k`` times, but for at most one (the last cluster's).
    A column published as it was (not microaggregated) fails this almost surely."""
    counts = cells.value_counts(sort=False).to_numpy()
    off = counts[counts % k != 0]
    if len(off) > 1:
        raise PrivacyError(f"{name!r}: {len(off)} released values occur a number of times that is not a multiple of "
                           f"k = {k} (at most one may, the last cluster's): the records of a cluster do not share "
                           "one released value, so the column was not microaggregated as claimed.")


def dp_reports_from_release(original: pd.DataFrame, release: LoadedRelease, title: str) -> list[Any]:
    """The report of a written dp-microagg release, rebuilt from the original table.

    The release is shuffled, so the per-record relative error of the release itself cannot be
    recomputed; its variance variation and JSD (order-free) can, and the baselines are recomputed
    on the original data at the published epsilon and k.
    """
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.methods.dp import evaluation as ev
    from ppdp_desktop.core.methods.dp.report import histogram_figure, row_line
    from ppdp_desktop.core.privacy.keyed import KeyedRandomness

    meta = release.metadata
    epsilon, k, names, entries = _parameters(meta)
    missing = [a for a in names if a not in original.columns]
    if missing:
        raise ReleaseError(f"The original table has no column {missing[0]!r}, a protected attribute of the release.")
    treated = [BlankTreatment.from_json(e["blanks"]) for e in entries if isinstance(e.get("blanks"), dict)]
    if treated:  # the original's blank cells as the job treated them (filled, or their records left out)
        original, keep = treat_frame(original, treated)
        original = original.loc[keep].reset_index(drop=True)
    m = len(names)
    keyed = KeyedRandomness(ev.EVALUATION_SEED)  # the baselines' public key, as in the job's own report
    report = MethodReport("dp-microagg", title, int(meta.get("n_records", len(release.table))),
                          dict(meta.get("guarantee", {})), [f"epsilon = {epsilon:g} split over M = {m}; k = {k}"])
    rows: list[ev.DPRow] = []
    for entry in entries:
        name = entry["attribute"]
        if entry.get("kind") == "numeric":
            domain, taxonomy = entry_domain(entry), None
            x = original[name].to_numpy(dtype=np.float64)
            released: Any = released_numbers(release, name)
            report.lines.append(f"{name}: domain {domain.lo:g}:{domain.hi:g}, discrete Laplace on a grid of step "
                                f"{entry.get('grid', {}).get('step')} (about Laplace scale {entry.get('laplace_scale')} "
                                "on a cluster mean)")
            rows.append(ev.DPRow(ev.METHOD, name, k, float("nan"), ev.variance_variation(x, released),
                                 ev.histogram_jsd(x, released, domain)))
            clustering = None
        else:
            from ppdp_desktop.core.methods.dp.categorical import rank_categorical

            domain, taxonomy, x = None, entry_taxonomy(entry), original[name]
            released = release.table[name]
            clustering = rank_categorical(x, taxonomy, k, str(meta["parameters"].get("candidates", "covering")))
            rows.append(ev.DPRow(ev.METHOD, name, k, float("nan"), None, ev.histogram_jsd(x, released, None)))
        baselines = ev.baseline_releases(x, domain, k, m, epsilon, keyed, clustering)
        rows += [ev.measure(method, name, kk, x, y, domain, taxonomy) for method, kk, y in baselines]
        report.figures[f"histogram: {name}"] = histogram_figure(name, *ev.histogram_counts(x, released, domain))
    report.lines.append("The release's rows are shuffled, so a record's released value cannot be matched with its "
                        "original one: the relative error needs the job that made the release; the variance change "
                        "and the Jensen-Shannon divergence (0 = same distribution, 1 = disjoint) do not.")
    report.lines += [row_line(r) for r in ev._ordered(rows + ev.average_rows(rows))]
    return [report]


DP_MICROAGG = """\
What was done
  Differential privacy by individual-ranking microaggregation (epsilon = {epsilon:g}, k = {k}).
  Each of the columns {names} was handled on its own: the records were sorted by it and cut
  into clusters of {k} neighbouring records (the last cluster up to {k2}); every record of a cluster
  got the cluster's centre plus ONE random shift shared by the whole cluster (numbers: discrete
  Laplace noise on a grid of step h, so every released number is a point of that grid inside the
  published range and its last digits reveal nothing) or ONE randomly chosen label of the column's
  taxonomy (categories).
{layout}{details}
What it guarantees
{statement}
{not_covered}
How to use it
{use}  Check the release (checksums, scales, ranges) with:  ppdp verify THIS_FOLDER
"""
LINKED_LAYOUT = ""
UNLINKED_LAYOUT = ("Then each of these columns was shuffled on its own, with randomness independent of the data, and "
                   "no pseudonym was released: a row is not a person's record, it holds values of different people.")
USE_LINKED = ("Analyse the values as they are: they are noisy cluster centres, so means and distributions hold "
              "approximately over many records, while single records are unreliable by design.")
USE_UNLINKED = ("Analyse each column on its own: its values are noisy cluster centres, so its mean and distribution "
                "hold approximately over many records. Relations between columns (correlations, cross-tables) were "
                "removed on purpose: the rows pair values of different people.")


def _wrap(text: str, first: str = "  ", rest: str = "  ") -> str:
    return textwrap.fill(text, 100, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False) + "\n"


def readme_text(metadata: dict[str, Any]) -> str:
    """The dp-microagg part: what was done, per-column scales, what the guarantee covers (and against whom), what
    it does not, and how to use the values."""
    params = metadata.get("parameters", {})
    epsilon, k = float(params.get("epsilon", float("nan"))), int(params.get("k", 0))
    protected = metadata.get("protected", [])
    guarantee = metadata.get("guarantee", {})
    details = []
    for e in protected:
        d = e.get("domain")
        if d:
            details.append(f"  {e.get('attribute')}: range {d.get('lo')} to {d.get('hi')}, discrete Laplace on a grid of "
                           f"step h = {e.get('grid', {}).get('step')}, about Laplace scale "
                           f"{e.get('laplace_scale', float('nan')):.4g} per cluster (M*Delta/(k*epsilon)).")
        else:
            details.append(f"  {e.get('attribute')}: a label of the taxonomy in release.json, drawn once per cluster.")
        if isinstance(e.get("blanks"), dict):
            details.append(_wrap(f"Blank cells: {BlankTreatment.from_json(e['blanks']).sentence()}.", "    ", "    ")
                           .rstrip("\n"))
    caveats = guarantee.get("not_covered") or []
    not_covered = "".join(textwrap.fill(str(c), 100, initial_indent="  Not covered / warning: ",
                                        subsequent_indent="    ") + "\n" for c in caveats)
    unlinked = params.get("layout") == UNLINKED
    statement = guarantee.get("statement") or (  # a release made before the statement was written out
        "Each protected column's released values, taken as a multiset, are epsilon-differentially private with "
        f"epsilon = {epsilon:g} in all; the rows are not covered: a row that can be singled out by its other "
        "columns shows its cluster's value.")
    attacker = guarantee.get("attacker")
    return DP_MICROAGG.format(
        epsilon=epsilon, k=k, k2=2 * k - 1, names=", ".join(repr(e.get("attribute")) for e in protected),
        layout=_wrap(UNLINKED_LAYOUT) if unlinked else LINKED_LAYOUT,
        details="\n".join(details) + "\n" if details else "",
        statement=_wrap(statement) + (_wrap(f"Against whom: {attacker}.") if attacker else ""),
        not_covered=not_covered, use=_wrap(USE_UNLINKED if unlinked else USE_LINKED),
    )

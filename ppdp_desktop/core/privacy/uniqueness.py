"""Population uniqueness estimated from a sample: the Pitman, Zayatz and SNB models and Dankar et al.'s rule.

A record alone in the *sample* need not be alone in the *population* the sample was drawn from; what an
ethics board asks is how many people in the population are unique on the quasi-identifiers. Given only the
sample's class sizes and the sampling fraction ``pi = n / N``, three models estimate it:

* **Zayatz (1991)**: the share of sample uniques that are population uniques, taking the population's class
  size distribution from the sample's and the chance that a class of size ``j`` shows exactly one record in
  the sample from the hypergeometric distribution; the estimate is ``f1 * that share / pi``.
* **Pitman (Hoshino 2001)**: the class sizes follow Pitman's two-parameter sampling formula; ``theta`` and
  ``alpha`` are fitted by maximum likelihood and the population uniques are ``Gamma(theta + 1) /
  Gamma(theta + alpha) * N**alpha``.
* **SNB (Chen and Keller-McNulty 1998)**: a population class's size is ``1 +`` a negative binomial
  ``NB(alpha, beta)`` over ``K`` non-empty classes (``K`` by Haas et al.'s Shlosser estimator ``Sh3``);
  ``alpha, beta`` are fitted to the sample's uniques and pairs, and the population uniques are ``K *
  beta**alpha``.

**Dankar et al. (2012)**, as ARX applies it: for ``pi <= 10 %`` Pitman, or Zayatz where Pitman gives no
estimate; above 10 % the smaller of Zayatz and SNB, or Zayatz where SNB gives none. Without sample uniques
every estimate is 0. Formulas are our own reading of the papers; every estimator is checked in the tests
against an independent brute force and a Monte-Carlo population.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.privacy.verdict import _pct

PITMAN, ZAYATZ, SNB = "Pitman", "Zayatz", "SNB"
DANKAR_CUT = 0.1  # Dankar et al.: Pitman up to this sampling fraction, Zayatz / SNB above it


def check_sampling_fraction(fraction: float) -> float:
    """``fraction`` as a float in (0, 1], else a :class:`ParameterError` naming the setting."""
    try:
        value = float(fraction)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(fraction, bool) or not 0.0 < value <= 1.0:  # NaN fails too
        raise ParameterError(f"The sampling fraction ({setting_ref('sampling-fraction', 'F')}) must be the share of the "
                             f"population the data holds, in (0, 1], e.g. 0.01 for a 1 % sample; got {fraction!r}.",
                             setting="sampling-fraction", value=fraction, allowed="(0, 1]")
    return value


def _histogram(sizes: Mapping[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Class sizes and how many classes have each size (``f_j``), sizes ascending, zero counts dropped."""
    items = sorted((int(j), int(c)) for j, c in sizes.items() if int(c) > 0)
    return np.array([j for j, _ in items], dtype=float), np.array([c for _, c in items], dtype=float)


def zayatz(sizes: Mapping[int, int], population: float) -> float:
    """Zayatz's estimate of the population uniques from ``sizes`` (class size -> number of classes) of a sample
    of a population of ``population`` people (NaN when it cannot be formed)."""
    from scipy import stats  # imported on first use: the window starts without scipy
    j, f = _histogram(sizes)
    n = int(round(float((j * f).sum())))
    big_n = int(round(population))
    if n == 0 or 1.0 not in j or big_n < n:
        return math.nan
    one = stats.hypergeom.pmf(1, big_n, j.astype(int), n)  # a class of size j shows exactly one record
    share = f[0] * one[0] / float((f * one).sum())
    return float(f[0] * share * big_n / n)


def _pitman_nll(params: np.ndarray, j: np.ndarray, f: np.ndarray, n: float, u: float) -> tuple[float, np.ndarray]:
    """Minus the Pitman log-likelihood of the partition and its gradient, over ``theta = e**s - alpha`` and
    ``alpha = expit(a)`` (so ``0 < alpha < 1`` and ``theta > -alpha`` hold everywhere)."""
    from scipy import special  # imported on first use: the window starts without scipy
    s, a = params
    alpha = float(special.expit(a))
    theta = math.exp(s) - alpha
    r = theta / alpha
    big = j > 1
    ll = ((u - 1) * math.log(alpha) + special.gammaln(r + u) - special.gammaln(r + 1)
          - special.gammaln(theta + n) + special.gammaln(theta + 1)
          + float((f[big] * (special.gammaln(j[big] - alpha) - special.gammaln(1 - alpha))).sum()))
    s1 = (special.digamma(r + u) - special.digamma(r + 1)) / alpha  # sum_{i<u} 1 / (theta + i alpha)
    d_theta = s1 - (special.digamma(theta + n) - special.digamma(theta + 1))
    d_alpha = ((u - 1) - theta * s1) / alpha - float(
        (f[big] * (special.digamma(j[big] - alpha) - special.digamma(1 - alpha))).sum())
    # chain rule: theta = e^s - alpha, alpha = expit(a)
    da = alpha * (1 - alpha)
    grad_s = d_theta * math.exp(s)
    grad_a = (d_alpha - d_theta) * da
    return -ll, -np.array([grad_s, grad_a])


def pitman_fit(sizes: Mapping[int, int]) -> tuple[float, float] | None:
    """The maximum-likelihood ``(theta, alpha)`` of Pitman's sampling formula for the partition ``sizes``, or
    None where it has no interior maximum (every record unique, a single class, or no convergence)."""
    from scipy import optimize, special  # imported on first use: the window starts without scipy
    j, f = _histogram(sizes)
    n, u = float((j * f).sum()), float(f.sum())
    if u < 2 or n <= u:
        return None
    start = np.array([math.log(max(u, 1.0)), 0.0])
    fit = optimize.minimize(_pitman_nll, start, args=(j, f, n, u), jac=True, method="L-BFGS-B",
                            options={"maxiter": 500, "gtol": 1e-10, "ftol": 1e-15})
    s, a = fit.x
    alpha = float(special.expit(a))
    theta = math.exp(s) - alpha
    if not (np.isfinite(theta) and 1e-6 < alpha < 1 - 1e-6):
        return None
    _, grad = _pitman_nll(fit.x, j, f, n, u)
    if not np.all(np.isfinite(grad)) or float(np.abs(grad).max()) > 1e-3 * max(1.0, u):
        return None
    return theta, alpha


def pitman(sizes: Mapping[int, int], population: float) -> float:
    """Pitman's estimate of the population uniques (NaN where the fit fails or the estimate exceeds the population)."""
    from scipy import special  # imported on first use: the window starts without scipy
    fitted = pitman_fit(sizes)
    if fitted is None:
        return math.nan
    theta, alpha = fitted
    value = math.exp(special.gammaln(theta + 1) - special.gammaln(theta + alpha) + alpha * math.log(population))
    return value if 0.0 <= value <= population else math.nan


def shlosser_classes(sizes: Mapping[int, int], fraction: float) -> float:
    """Haas et al.'s ``Sh3`` estimate of the number of non-empty population classes from the sample's."""
    j, f = _histogram(sizes)
    q = fraction
    u, f1 = float(f.sum()), float(f[j == 1].sum())
    if f1 == 0:
        return u
    top = float((j * q * q * (1 - q * q) ** (j - 1) * f).sum())
    bottom = float((((1 - q * q) ** j - (1 - q) ** j) * f).sum())  # (1-q)^j ((1+q)^j - 1), no overflow
    ratio = float(((1 - q) ** j * f).sum()) / float((j * q * (1 - q) ** (j - 1) * f).sum())
    return u + f1 * top / bottom * ratio * ratio if bottom > 0 else u


def snb_expected(classes: float, fraction: float, alpha: float, beta: float) -> tuple[float, float]:
    """The expected numbers of sample classes of size 1 and 2 under the SNB model (closed forms of the
    probability generating function of a binomially thinned ``1 + NB(alpha, beta)``)."""
    d = (1 - fraction) * (1 - beta)
    lead = classes * beta ** alpha / (1 - d) ** alpha
    one = lead * fraction * (1 + alpha * d / (1 - d))
    two = lead * alpha * fraction ** 2 * (1 - beta) * (2 - (1 - alpha) * d) / (2 * (1 - d) ** 2)
    return one, two


def snb_fit(classes: float, fraction: float, f1: float, f2: float) -> tuple[float, float] | None:
    """``(alpha, beta)`` of the SNB model whose expected sample uniques and pairs equal ``f1`` and ``f2``."""
    from scipy import optimize, special  # imported on first use: the window starts without scipy
    if f1 <= 0 or f2 <= 0 or classes <= 0:
        return None

    def residual(x: np.ndarray) -> np.ndarray:
        alpha, beta = math.exp(x[0]), float(special.expit(x[1]))
        one, two = snb_expected(classes, fraction, alpha, beta)
        return np.array([one / f1 - 1.0, two / f2 - 1.0])

    best = None
    for a0 in (-2.0, 0.0, 2.0):
        for b0 in (-4.0, 0.0, 4.0):
            fit = optimize.least_squares(residual, np.array([a0, b0]), xtol=1e-14, ftol=1e-14, gtol=1e-14)
            if best is None or fit.cost < best.cost:
                best = fit
    if best is None or not np.all(np.isfinite(best.x)) or float(np.abs(best.fun).max()) > 1e-6:
        return None
    return math.exp(best.x[0]), float(special.expit(best.x[1]))


def snb(sizes: Mapping[int, int], population: float) -> float:
    """The SNB estimate of the population uniques (NaN where the model cannot be fitted)."""
    j, f = _histogram(sizes)
    n = float((j * f).sum())
    if n == 0:
        return math.nan
    fraction = n / population
    classes = shlosser_classes(sizes, fraction)
    fitted = snb_fit(classes, fraction, float(f[j == 1].sum()), float(f[j == 2].sum()))
    if fitted is None:
        return math.nan
    alpha, beta = fitted
    value = classes * beta ** alpha
    return value if 0.0 <= value <= population else math.nan


def _valid(value: float) -> bool:
    return math.isfinite(value) and value != 0.0


@dataclass(frozen=True)
class Uniqueness:
    """Estimated population uniques: each model's estimate (None where it gives none) and the one
    Dankar et al.'s rule chooses (``model``; ``"none"`` when the sample has no uniques)."""

    sampling_fraction: float
    population: float
    sample_uniques: int
    estimates: dict[str, float | None]
    model: str
    uniques: float

    @property
    def share(self) -> float:
        """The chosen estimate as a share of the population."""
        return self.uniques / self.population if self.population else 0.0


    def to_json(self) -> dict[str, object]:
        """Plain JSON values: the chosen model and estimate, and each model's (None where it gives none)."""
        return {"sampling_fraction": self.sampling_fraction, "population_size": self.population,
                "sample_uniques": self.sample_uniques, "model": self.model, "population_uniques": self.uniques,
                "share_population_uniques": self.share, "in_data": self.in_data,
                "estimates": dict(self.estimates), "rule": "Dankar et al. (2012), as ARX applies it"}

    @property
    def in_data(self) -> float:
        """How many of the data's records are expected to be population uniques (each population unique is in a
        random sample with probability ``sampling_fraction``)."""
        return self.uniques * self.sampling_fraction

    def lines(self) -> list[str]:
        """The estimate as sentences for a clinician, naming the model and why it was chosen."""
        sample = f"the data is {_pct(self.sampling_fraction)} of a population of about {round(self.population):,} people"
        if self.model == "none":
            return [f"Population uniqueness ({sample}): no record is alone in the data, so none is the only one with "
                    "its quasi-identifiers in the population either."]
        why = ("Pitman's model, as Dankar et al.'s rule chooses for a sampling fraction of at most 10 %"
               if self.model == PITMAN else
               "the smaller of the Zayatz and SNB estimates, as Dankar et al.'s rule chooses above 10 %"
               if self.sampling_fraction > DANKAR_CUT else
               "Zayatz's model, as Dankar et al.'s rule chooses where Pitman's model cannot be fitted")
        return [f"Population uniqueness ({sample}): about {round(self.uniques):,} people ({_pct(self.share)}) are "
                f"estimated to be the only one with their quasi-identifiers in the population, about "
                f"{round(self.in_data):,} of them in the data ({why})."]


def estimate_uniqueness(sizes: Mapping[int, int], fraction: float) -> Uniqueness:
    """Every model's estimate of the population uniques for a sample with class sizes ``sizes`` (class size ->
    number of classes) drawn with sampling fraction ``fraction``, and Dankar et al.'s choice among them."""
    fraction = check_sampling_fraction(fraction)
    j, f = _histogram(sizes)
    n = float((j * f).sum())
    population = n / fraction
    f1 = int(f[j == 1].sum())
    if f1 == 0:
        return Uniqueness(fraction, population, 0, {PITMAN: 0.0, ZAYATZ: 0.0, SNB: 0.0}, "none", 0.0)
    raw = {ZAYATZ: zayatz(sizes, population), PITMAN: pitman(sizes, population), SNB: snb(sizes, population)}
    if fraction <= DANKAR_CUT:
        model = PITMAN if _valid(raw[PITMAN]) else ZAYATZ
    elif _valid(raw[SNB]) and not raw[ZAYATZ] < raw[SNB]:  # as ARX: SNB unless Zayatz is smaller
        model = SNB
    else:
        model = ZAYATZ
    chosen = raw[model] if _valid(raw[model]) else 0.0
    return Uniqueness(fraction, population, f1, {m: (v if _valid(v) else None) for m, v in raw.items()}, model, chosen)

"""Does my analysis survive? Models trained on the original and on the release, tested on held-out original
records (Qt-free; scikit-learn).

Two models an analyst would fit: a decision tree (scikit-learn's CART, the well-kept relative of the C4.5
tree the personalized-recoding paper evaluates with) and a logistic regression. Each is trained once on
the original records and once on the same records as released, and both are tested on original records
neither saw. For the logistic model the odds ratios of "target = its most frequent class" are shown side
by side, each with its 95 % Wald interval from the inverse observed information.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ppdp_desktop.core.data.sentences import full_stop
from ppdp_desktop.core.evaluation.model_data import ModelData, model_data

if TYPE_CHECKING:
    from ppdp_desktop.core.outcome import Anonymization

MAX_ROWS = 200_000  # records sampled for the models, for speed
TREE_DEPTH = 8  # deep enough for interactions, shallow enough not to memorize the noise of a release
TREE_LEAF = 20  # no leaf rests on fewer records than this
MAX_TERMS = 30  # odds ratios shown
UNSTABLE_WIDTH = 1e4  # an odds ratio whose 95 % interval spans more than this factor has no usable estimate


@dataclass(frozen=True)
class OddsRatio:
    term: str
    original: float
    original_interval: tuple[float, float]
    release: float | None  # None: the release has no such term (e.g. a generalized level)
    release_interval: tuple[float, float] | None

    @property
    def unstable(self) -> bool:
        """No usable estimate: an infinite or absurdly wide interval (nearly every record with this level has the
        same outcome, "separation"), on either side."""
        return any(_unusable(pair) for pair in (self.original_interval, self.release_interval) if pair is not None)


def _unusable(pair: tuple[float, float]) -> bool:
    low, high = pair
    return not (np.isfinite(low) and np.isfinite(high) and low > 0 and high / low < UNSTABLE_WIDTH)


@dataclass
class ModelComparison:
    """Accuracies of both models on held-out original records, and the logistic model's odds ratios."""

    target: str
    positive: str  # the class the odds ratios are about
    n_train: int
    n_test: int
    sampled: bool
    baseline: float  # accuracy of always guessing the most common class
    tree: tuple[float, float]  # (trained on the original, trained on the release)
    logistic: tuple[float, float]
    odds: list[OddsRatio] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    COEFFICIENT_HEADER = ("Term", "Odds ratio, original", "95 % interval", "Odds ratio, release", "95 % interval")

    def lines(self) -> list[str]:
        """The comparison in sentences a clinician can read."""
        pct = lambda x: f"{x * 100:.0f} %"  # noqa: E731
        out = [
            f"A decision tree predicting {self.target} is right for {pct(self.tree[0])} of held-out records when "
            f"trained on the original and {pct(self.tree[1])} when trained on the release (guessing the most common "
            f"value: {pct(self.baseline)}).",
            f"A logistic regression predicting whether {self.target} is {self.positive!r} is right for "
            f"{pct(self.logistic[0])} of them when trained on the original and {pct(self.logistic[1])} when trained on "
            "the release.",
        ]
        shared = [(o.original, o.release, o.release_interval) for o in self.odds
                  if o.release is not None and o.release_interval is not None and not o.unstable]
        if shared:
            same = sum(np.sign(np.log(original)) == np.sign(np.log(release)) for original, release, _ in shared)
            inside = sum(low <= original <= high for original, _, (low, high) in shared)
            out.append(f"Odds ratios of {self.target} = {self.positive!r}: {same} of {len(shared)} agree in direction; "
                       f"for {inside} of {len(shared)} the release's interval contains the original estimate.")
        unstable = [o.term for o in self.odds if o.unstable]
        if unstable:
            out.append(f"No usable odds ratio for {', '.join(unstable)}: nearly every record with it has the same "
                       "outcome, so its interval is unbounded (marked 'unstable' in the table; left out above).")
        out.append(f"Trained on {self.n_train:,} and tested on {self.n_test:,} records"
                   + (" (a random sample of the data)." if self.sampled else "."))
        return out + self.notes

    def coefficient_rows(self) -> list[list[str]]:
        def interval(pair: tuple[float, float] | None) -> str:
            return "-" if pair is None else f"{pair[0]:.3g} to {pair[1]:.3g}"

        return [[o.term + (" (unstable)" if o.unstable else ""), f"{o.original:.3g}", interval(o.original_interval),
                 "-" if o.release is None else f"{o.release:.3g}", interval(o.release_interval)] for o in self.odds]


def compare_models(result: Anonymization, target: str | None = None, *, seed: int = 0, max_rows: int = MAX_ROWS,
                   test_share: float = 0.3) -> ModelComparison:
    """Train both models on the original and on the release of ``result``; test them on held-out original
    records. ``target``: the column predicted (default: the sensitive one). Same seed, same figures."""
    data = model_data(result, target, seed, max_rows, test_share)
    classes, counts = np.unique(data.y_test, return_counts=True)
    baseline = float(counts.max() / counts.sum())
    tree = (_tree_accuracy(data.x_original, data.y_original, data.x_test, data.y_test, seed),
            _tree_accuracy(data.x_release, data.y_release, data.x_test_release, data.y_test, seed))
    values, freq = np.unique(data.y_original, return_counts=True)
    positive = str(values[np.argmax(freq)])
    truth = data.y_test == positive
    original = _logit(data.x_original, data.y_original == positive, data.x_test)
    release = _logit(data.x_release, data.y_release == positive, data.x_test_release)
    logistic = (_accuracy(original, truth), _accuracy(release, truth))
    notes = [n for n in (data.note, _sample_note(result)) if n]
    if len(values) > 2:
        notes.append(f"{data.target} has {len(values)} values: the logistic regression predicts {positive!r} against "
                     f"all others (guessing 'not {positive}' is right for {np.mean(~truth) * 100:.0f} %).")
    if data.left_out:
        notes.append(full_stop("Left out of the models: " + ", ".join(data.left_out)))
    odds = _odds_ratios(data, original, release)
    return ModelComparison(data.target, positive, len(data.y_original), len(data.y_test), data.sampled, baseline,
                           tree, logistic, odds, notes)


def _accuracy(fit: _Fit | None, truth: np.ndarray) -> float:
    """The share of held-out records a logistic fit predicts right (without one: always "not positive")."""
    return float(np.mean(fit.predicted == truth)) if fit is not None else float(np.mean(~truth))


def _sample_note(result: Anonymization) -> str:
    """What a streamed release's models were trained on: its report's random sample of the file's records ("" when
    the outcome holds every record)."""
    released = getattr(result, "n_released", None)  # a streamed job's outcome holds a random sample of its records
    held = len(result.dataset.frame)
    if released is None or int(released) <= held:
        return ""
    return (f"The release was streamed (the file is never held whole): both models were trained and tested on a "
            f"random sample of {held:,} of the file's {int(released):,} records (the report's sample, original and "
            "released values of the same records), not on every record.")


def _tree_accuracy(x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray, seed: int) -> float:
    from sklearn.tree import DecisionTreeClassifier

    model = DecisionTreeClassifier(max_depth=TREE_DEPTH, min_samples_leaf=TREE_LEAF, random_state=seed)
    return float(np.mean(model.fit(x, y).predict(x_test) == y_test))


def _scale(x: np.ndarray) -> np.ndarray:
    """Per-column scale for the solver (0/1 columns stay as they are)."""
    spread = np.abs(x).max(axis=0) if len(x) else np.ones(x.shape[1])
    return np.where(spread > 0, spread, 1.0)


@dataclass(frozen=True)
class _Fit:
    """A binary logistic regression: odds ratios with their 95 % Wald intervals, and its test predictions."""

    odds: np.ndarray
    low: np.ndarray
    high: np.ndarray
    predicted: np.ndarray


def _odds_ratios(data: ModelData, original: _Fit | None, release: _Fit | None) -> list[OddsRatio]:
    if original is None:
        return []
    by_term = ({t: (o, lo, hi) for t, o, lo, hi in zip(data.terms_release, release.odds, release.low, release.high)}
               if release is not None else {})
    rows = []
    for term, est, low, high in zip(data.terms, original.odds, original.low, original.high):
        match = by_term.get(term)
        rows.append(OddsRatio(term, float(est), (float(low), float(high)), None if match is None else float(match[0]),
                              None if match is None else (float(match[1]), float(match[2]))))
    rows.sort(key=lambda o: (o.unstable, -abs(np.log(o.original)) if 0 < o.original < np.inf else 0.0))
    return rows[:MAX_TERMS]


def _logit(x: np.ndarray, y: np.ndarray, x_test: np.ndarray) -> _Fit | None:
    """An (essentially) unpenalized binary logistic regression of ``y`` on ``x``: odds ratios with 95 % Wald
    intervals from the inverse observed information, and its predictions for ``x_test``; None when ``y``
    has one class only."""
    from sklearn.linear_model import LogisticRegression

    if y.all() or not y.any():
        return None
    scale = _scale(x)
    model = LogisticRegression(C=1e6, max_iter=500).fit(x / scale, y)  # C large: no shrinkage of the odds ratios
    beta = model.coef_[0] / scale
    design = np.hstack([np.ones((len(x), 1)), x])
    p = model.predict_proba(x / scale)[:, 1]
    info = (design * (p * (1.0 - p))[:, None]).T @ design
    info[np.diag_indices_from(info)] += 1e-9 * max(float(np.trace(info)), 1.0) / len(info)  # singular designs
    try:
        se = np.sqrt(np.clip(np.diag(np.linalg.inv(info))[1:], 0.0, None))
    except np.linalg.LinAlgError:
        se = np.full(len(beta), np.inf)
    with np.errstate(over="ignore"):
        return _Fit(np.exp(beta), np.exp(beta - 1.96 * se), np.exp(beta + 1.96 * se),
                    model.predict(x_test / scale).astype(bool))

"""The data of the "does my analysis survive?" comparison: the original and the released records aligned,
sampled, split, and encoded for scikit-learn (Qt-free).

Both models see the same records: the original model their original values, the release model their
released values; both are tested on held-out *original* records. A quasi-identifier the release
generalized is shown to the release model's test the way the release encodes it (the generalization is a
function of the value), every other column as the original value (the same domain as the released one).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.data.domain import label_text
from ppdp_desktop.core.data.sentences import full_stop
from ppdp_desktop.core.errors import ParameterError, setting_ref

if TYPE_CHECKING:
    from ppdp_desktop.core.outcome import Anonymization

MAX_LEVELS = 30  # one-hot columns per categorical predictor: its most frequent levels, the rest as "other"
OTHER = "(other)"


@dataclass
class ModelData:
    """Design matrices and labels of one comparison (rows: train / test split of the sampled records)."""

    target: str
    note: str  # how the target was turned into classes, if it was
    x_original: np.ndarray  # train rows, original values
    x_release: np.ndarray  # train rows, released values
    x_test: np.ndarray  # test rows, original values (for the original model)
    x_test_release: np.ndarray  # the same rows for the release model (generalized columns as released)
    y_original: np.ndarray
    y_release: np.ndarray
    y_test: np.ndarray
    terms: list[str]  # the design's column names (one-hot: "column = level")
    terms_release: list[str]
    sampled: bool
    left_out: list[str]


def model_data(result: Anonymization, target: str | None, seed: int, max_rows: int, test_share: float) -> ModelData:
    """Align, sample and split the records of ``result`` and encode them for both models."""
    frame = result.dataset.frame
    schema = result.dataset.schema
    target = target or result.settings.sensitive
    if not target:
        raise ParameterError(f"Name the column the models predict ({setting_ref('target', 'COL')}): this job has no "
                             "sensitive column.", setting="target")
    if target not in frame.columns:
        raise ParameterError(full_stop(f"The target column {target!r} is not in the data; choose one of: "
                                       f"{', '.join(map(str, frame.columns))}"))
    if target not in result.table.columns:
        raise ParameterError(f"The target column {target!r} is not in the release (it was removed), so no model can "
                             "be trained on it; choose another column.")
    n = len(frame)
    inverse = np.empty(n, dtype=np.int64)
    inverse[np.asarray(result.order)] = np.arange(n)  # released row of each original record
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(n, size=max_rows, replace=False)) if n > max_rows else np.arange(n)
    rows = rng.permutation(rows)
    cut = int(round(len(rows) * (1.0 - test_share)))
    train, test = rows[:cut], rows[cut:]
    if len(train) < 20 or len(test) < 10:
        raise ParameterError(f"The data has {n} records: too few to train and test a model (at least 30 are needed).")
    sample = np.concatenate([train, test])  # only the sampled records are encoded: a 1M-row file costs no more
    frame = frame.take(sample).reset_index(drop=True)
    released = result.table.take(inverse[sample]).reset_index(drop=True)  # the same records as released
    train, test = np.arange(len(train)), np.arange(len(train), len(sample))
    generalization = result.reidentification.generalization if result.reidentification is not None else None
    generalized = {c for c, level in (generalization.levels if generalization is not None else {}).items() if level}
    skip = {target, *schema.identifiers, result.pseudonym_column}
    predictors, left_out = [], []
    for name in frame.columns:
        if name in skip:
            continue
        if name not in released.columns:
            left_out.append(f"{name} (not in the release)")
        elif schema.attributes[name].kind.value == "text":
            left_out.append(f"{name} (a code or identifier: no model learns from it)")
        else:
            predictors.append(name)
    if not predictors:
        raise ParameterError(f"No column is left to predict {target!r} from; the models need at least one predictor.")
    y_orig, y_rel, note = _labels(frame[target], released[target])
    parts_o, parts_r, parts_t, parts_tr, terms, terms_r = [], [], [], [], [], []
    for name in predictors:
        release_test = released[name] if name in generalized else frame[name]
        a, b, c, d, t, tr = _encode(frame[name], released[name], release_test, train, test, name)
        parts_o.append(a)
        parts_r.append(b)
        parts_t.append(c)
        parts_tr.append(d)
        terms += t
        terms_r += tr
    return ModelData(
        target=target, note=note,
        x_original=np.hstack(parts_o), x_release=np.hstack(parts_r), x_test=np.hstack(parts_t),
        x_test_release=np.hstack(parts_tr),
        y_original=y_orig[train], y_release=y_rel[train], y_test=y_orig[test],
        terms=terms, terms_release=terms_r, sampled=n > max_rows, left_out=left_out,
    )


def _text(series: pd.Series) -> np.ndarray:
    """Each value as the text the release shows (one conversion per distinct value)."""
    codes, uniques = pd.factorize(series, use_na_sentinel=False)
    labels = np.array([label_text(u) for u in uniques], dtype=object)
    return labels[codes] if len(uniques) else np.array([], dtype=object)


def _is_text(values: pd.Series | pd.Index) -> bool:
    """Whether ``values`` hold text: pandas' string dtype, or (pandas 2 reads text as objects) an object column of
    strings."""
    if isinstance(values.dtype, pd.StringDtype):
        return True
    return values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) == "string"


def _numeric(series: pd.Series) -> np.ndarray | None:
    """The column as numbers (missing as NaN), or None if it is not a numeric column (text that is not all
    numbers, e.g. generalized ranges "30-39"). Text is cast by pyarrow, which stops at the first non-number."""
    if isinstance(series.dtype, pd.CategoricalDtype):  # a randomized column: its categories carry the type
        categories = series.cat.categories
        if pd.api.types.is_numeric_dtype(categories.dtype) and not pd.api.types.is_bool_dtype(categories.dtype):
            return _numeric(pd.Series(np.asarray(series.astype(float))))
        return _numeric(series.astype("str")) if _is_text(categories) else None
    if pd.api.types.is_bool_dtype(series.dtype):
        return None
    if pd.api.types.is_numeric_dtype(series.dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
    elif _is_text(series):
        try:
            values = pc.cast(pa.array(series, from_pandas=True), pa.float64()).to_numpy(zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            return None
        values = np.asarray(values, dtype=float)
    else:
        return None
    present = ~np.isnan(values)
    return values if present.mean() > 0.95 and np.isfinite(values[present]).all() else None


def _labels(original: pd.Series, released: pd.Series) -> tuple[np.ndarray, np.ndarray, str]:
    """Class labels of the target; a numeric target with many values is split at the original median."""
    a, b = _numeric(original), _numeric(released)
    if a is not None and b is not None and len(np.unique(a[~np.isnan(a)])) > 10:
        median = float(np.nanmedian(a))
        note = (f"{original.name} is numeric, so the models predict whether it is above its original median "
                f"({median:g}).")
        return (np.where(a > median, "above median", "at or below median"),
                np.where(b > median, "above median", "at or below median"), note)
    y = _text(original)
    if len(np.unique(y)) < 2:
        raise ParameterError(f"The target column {original.name!r} holds one value only; a model needs two or more.")
    return y, _text(released), ""


def _encode(original: pd.Series, released: pd.Series, release_test: pd.Series, train: np.ndarray, test: np.ndarray,
            name: str):
    """One predictor: (original train, released train, test for the original model, test for the release
    model, terms, release terms). ``release_test``: the values the release model is tested on. Each side is
    encoded on its own: a numeric column the release generalized into ranges is numeric for the original
    model and categorical for the release model. A number is measured in standard deviations of the original
    training values, on both sides, so its odds ratio reads "per SD" and the two sides compare."""
    x = _numeric(original)
    unit = None
    if x is not None:
        spread = float(np.nanstd(x[train]))
        unit = spread if spread > 0 else 1.0
    a, c, terms = _side(original, original, train, test, name, unit)
    b, d, terms_release = _side(released, release_test, train, test, name, unit)
    return a, b, c, d, terms, terms_release


def _side(values: pd.Series, test_values: pd.Series, train: np.ndarray, test: np.ndarray, name: str,
          unit: float | None):
    """(train design, test design, terms) of one predictor: a number, or one-hot levels of the training rows."""
    x, x_test = _numeric(values), _numeric(test_values)
    if x is not None and x_test is not None and unit is not None:
        fill = float(np.nanmedian(x[train]))
        term = f"{name} (per {unit:.3g})"
        return (np.nan_to_num(x[train], nan=fill)[:, None] / unit, np.nan_to_num(x_test[test], nan=fill)[:, None] / unit,
                [term])
    text, text_test = _text(values), _text(test_values)
    levels = _levels(text[train])
    return _one_hot(text[train], levels), _one_hot(text_test[test], levels), [f"{name} = {v}" for v in levels[1:]]


def _levels(values: np.ndarray) -> list[str]:
    """The most frequent levels (the first is the reference, left out of the design), then "other"."""
    counts = pd.Series(values).value_counts(sort=True)
    top = [str(v) for v in counts.index[:MAX_LEVELS]]
    return top + ([OTHER] if len(counts) > MAX_LEVELS else [])


def _one_hot(values: np.ndarray, levels: list[str]) -> np.ndarray:
    """0/1 columns for ``levels[1:]`` (the first level is the reference); unknown values count as "other"."""
    index = pd.Index(levels)
    codes = index.get_indexer(values.astype(str))
    if OTHER in levels:
        codes = np.where(codes < 0, len(levels) - 1, codes)
    out = np.zeros((len(values), max(len(levels) - 1, 0)))
    hit = codes > 0
    out[np.flatnonzero(hit), codes[hit] - 1] = 1.0
    return out

"""Issue 34: the count-query workload's condition codes (workload_codes.factorized) and cell counts
(workload_cells.cell_counts, ColumnMarginals), read a chunk of records at a time, give pandas' codes and the
records' own counts exactly, whatever the chunk size, the path (a table of keys, hashed keys, sparse counts) and the
type the counts are held in."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.evaluation import workload_cells, workload_codes
from ppdp_desktop.core.evaluation.workload_cells import ColumnMarginals, cell_counts
from ppdp_desktop.core.evaluation.workload_codes import factorized


def _columns(n: int, rng: np.random.Generator) -> dict[str, pd.Series]:
    late = np.zeros(n, dtype=np.int64)
    late[-3:] = [7, -4, 7][-n:]  # values first seen in the last chunk
    return {
        "categorical": pd.Series(pd.Categorical(rng.choice(["a", "b", None], n), categories=["unused", "b", "a"])),
        "late categorical": pd.Series(pd.Categorical(np.where(np.arange(n) < n - 2, "x", "y"))),
        "negative": pd.Series(rng.integers(-7, 3, n)),
        "late": pd.Series(late),
        "uint16": pd.Series(rng.integers(0, 300, n).astype(np.uint16)),
        "int8 extremes": pd.Series(rng.choice(np.array([-128, 127, 0], dtype=np.int8), n)),
        "bool": pd.Series(rng.random(n) < 0.3),
        "wide span": pd.Series(rng.choice([0, 10**9, -(10**12)], n)),  # more than MAX_SPAN: pandas
        "uint64": pd.Series(rng.integers(0, 2**63, n, dtype=np.uint64) | np.uint64(2**63)),
        "floats": pd.Series(np.where(rng.random(n) < 0.2, np.nan, rng.integers(0, 4, n))),
        "text": pd.Series(rng.choice(["p", "q", None], n), dtype=object),
        "nullable": pd.Series(pd.array(np.where(rng.random(n) < 0.2, None, rng.integers(0, 4, n)), dtype="Int64")),
    }


@pytest.mark.parametrize("chunk", [5, 64, workload_codes.CHUNK])
@pytest.mark.parametrize("n", [1, 2, 333])
def test_factorized_gives_pandas_codes_and_values(monkeypatch, chunk, n):
    monkeypatch.setattr(workload_codes, "CHUNK", chunk)
    for name, column in _columns(n, np.random.default_rng(n)).items():
        codes, uniques = factorized(column)
        expected, expected_uniques = pd.factorize(column, use_na_sentinel=False)
        np.testing.assert_array_equal(codes, expected, err_msg=name)
        assert [str(u) for u in uniques] == [str(u) for u in expected_uniques], name


def test_factorized_codes_are_small():
    """One byte a record where a column has at most 128 possible values: the point of renumbering it here."""
    rng = np.random.default_rng(3)
    columns = _columns(1000, rng)
    assert factorized(columns["categorical"])[0].dtype == np.int8
    assert factorized(columns["negative"])[0].dtype == np.int8
    assert factorized(columns["bool"])[0].dtype == np.int8
    assert factorized(columns["uint16"])[0].dtype == np.int16  # a span of 300 possible values
    assert factorized(pd.Series(np.arange(200)))[0].dtype == np.int16


def _brute_counts(codes, true, released, m, index_codes):
    """True and released counts of the records whose condition codes are ``index_codes`` (one cell)."""
    chosen = np.logical_and.reduce([c == v for c, v in zip(codes, index_codes)])
    return np.bincount(true[chosen], minlength=m), np.bincount(released[chosen], minlength=m)


@pytest.mark.parametrize("chunk", [7, workload_cells.CHUNK])
@pytest.mark.parametrize("path", ["table", "hashed", "sparse", "crowded"])
def test_cell_counts_are_the_records_counts(monkeypatch, chunk, path):
    monkeypatch.setattr(workload_cells, "CHUNK", chunk)
    rng = np.random.default_rng(len(path))
    n, m = 3000, 5
    codes = [rng.integers(0, 3, n), rng.integers(0, 4, n).astype(np.int8)]
    if path == "hashed":  # far more possible keys than records: numbered by hashing
        codes += [rng.integers(0, 2, n) * 40_000, np.zeros(n, dtype=np.int64)]
        codes[-1][:2] = 1
    if path == "sparse":  # counts held sparse (a large domain)
        monkeypatch.setattr(workload_cells, "MAX_CELL_COUNTS", 10)
    true = rng.integers(0, m, n)
    if path == "crowded":  # one cell of 600 records with one value: its count does not fit one byte
        codes = [np.zeros(n, dtype=np.int64), np.where(np.arange(n) < 600, 0, rng.integers(1, 4, n))]
        true[:600] = 2
    released = rng.integers(0, m, n).astype(np.int32)
    cells = cell_counts(codes, true, released, m)
    assert cells is not None and cells.n_cells == len({tuple(c) for c in np.stack(codes, axis=1)})
    for cell in range(cells.n_cells):
        got = cells.counts_of(np.array([cell]))
        expected = _brute_counts(codes, true, released, m, [c[cell] for c in cells.codes])
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
    total = cells.counts_of(np.arange(cells.n_cells))
    np.testing.assert_array_equal(total[0], np.bincount(true, minlength=m))
    np.testing.assert_array_equal(total[1], np.bincount(released, minlength=m))


def test_cell_counts_gives_up_when_cells_are_about_as_many_as_records():
    n = 1000
    assert cell_counts([np.arange(n) % 600, np.zeros(n, dtype=np.int8)], np.zeros(n, dtype=np.int64),
                       np.zeros(n, dtype=np.int64), 2) is None
    assert cell_counts([np.arange(n) * 1000, np.arange(n) % 7], np.zeros(n, dtype=np.int64),
                       np.zeros(n, dtype=np.int64), 2) is None  # hashed


@pytest.mark.parametrize("chunk", [3, workload_cells.CHUNK])
def test_column_marginals_are_the_records_counts(monkeypatch, chunk):
    monkeypatch.setattr(workload_cells, "CHUNK", chunk)
    rng = np.random.default_rng(8)
    n, m = 500, 4
    codes = [rng.integers(0, 5, n).astype(np.int8), rng.integers(0, 2, n)]
    true, released = rng.integers(0, m, n).astype(np.int32), rng.integers(0, m, n)
    marginals = ColumnMarginals(codes, true, released, m)
    for column, width in ((0, 5), (1, 2)):
        for value in range(width):
            got_true, got_released = marginals.counts(column, value)
            chosen = codes[column] == value
            np.testing.assert_array_equal(got_true, np.bincount(true[chosen], minlength=m))
            np.testing.assert_array_equal(got_released, np.bincount(released[chosen], minlength=m))

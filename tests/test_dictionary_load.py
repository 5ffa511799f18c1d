"""The loaded table's repeating text as dictionary codes (issue 34): parsed block by block into dictionary chunks,
then made a categorical over the sorted distinct texts; the values, their order and missing cells exactly those
of the same column read as text."""
from __future__ import annotations

import random

import pandas as pd
import pyarrow as pa
import pytest

from ppdp_desktop.core.data import text_table
from ppdp_desktop.core.data.dictionary import decoded, text_mostly_distinct, text_series
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.schema import Kind


def _as_text(series: pd.Series) -> list:
    return [None if pd.isna(v) else v for v in series.astype(object)]


def _chunks(seed: int) -> pa.ChunkedArray:
    rng = random.Random(seed)
    words = ["b", "a", "é", "Z", "a b", "", "10", "9"]
    return pa.chunked_array([pa.array([rng.choice([*words, None]) for _ in range(rng.randrange(0, 300))],
                                      pa.large_string()) for _ in range(rng.randrange(1, 5))], pa.large_string())


@pytest.mark.parametrize("seed", range(12))
def test_codes_of_dictionary_chunks_are_those_of_the_text(seed: int) -> None:
    text = _chunks(seed)
    coded = pa.chunked_array([c.dictionary_encode() for c in text.chunks], pa.dictionary(pa.int32(), pa.large_string()))
    want = pd.Series(pd.Categorical(text.to_pandas()), name="x")
    for got in (text_series(text, "x"), text_series(coded, "x")):
        assert isinstance(got.dtype, pd.CategoricalDtype)
        assert list(got.cat.categories) == list(want.cat.categories)  # sorted, only the values held
        assert got.cat.codes.tolist() == want.cat.codes.tolist()
        assert _as_text(got) == _as_text(text.to_pandas())


def test_a_sliced_dictionary_keeps_only_the_values_held() -> None:
    coded = pa.chunked_array([pa.array(["c", "a", "b", "a"] * 20, pa.large_string()).dictionary_encode()]).slice(0, 2)
    got = text_series(coded, "x")
    assert list(got.cat.categories) == ["a", "c"] and got.tolist() == ["c", "a"]


def test_mostly_distinct_text_stays_text_coded_or_not() -> None:
    ids = pa.chunked_array([pa.array([f"P{i:05d}" for i in range(500)], pa.large_string())])
    assert text_mostly_distinct(ids) and text_mostly_distinct(pa.chunked_array([ids.chunk(0).dictionary_encode()]))
    for column in (ids, pa.chunked_array([ids.chunk(0).dictionary_encode()])):
        got = text_series(column, "id")
        assert not isinstance(got.dtype, pd.CategoricalDtype) and got.tolist() == ids.to_pylist()
    assert decoded(ids) is ids


def test_parse_in_blocks_codes_repeating_columns_keeps_identifiers(tmp_path) -> None:
    rows = [f"P{i:06d},{'FM'[i % 2]},{i % 7 if i % 11 else ''},{['x', 'y', 'z'][i % 3]}" for i in range(20_000)]
    data = ("\n".join(rows) + "\n").encode()
    table = text_table._parse_csv(pa.BufferReader(data), ",", 4, 0, 1 << 14)  # many blocks
    assert table.column(0).num_chunks > 10
    assert pa.types.is_large_string(table.column(0).type)  # an identifier: text
    assert all(pa.types.is_dictionary(table.column(i).type) for i in (1, 2, 3))
    plain = [r.split(",") for r in rows]
    for i in range(4):
        assert decoded(table.column(i)).to_pylist() == [r[i] or None for r in plain]


def test_a_loaded_file_is_the_same_as_its_text(tmp_path) -> None:
    path = tmp_path / "t.csv"
    lines = ["id,sex,zip,day,n"] + [f"R{i:05d},{'FMX'[i % 3] if i % 5 else ''},0{i % 40:03d},2024-01-{i % 28 + 1:02d},{i % 9}"
                                     for i in range(3000)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    frame = load_table(path).frame
    assert not isinstance(frame["id"].dtype, pd.CategoricalDtype)
    assert all(isinstance(frame[c].dtype, pd.CategoricalDtype) for c in ("sex", "zip", "day"))
    cells = [line.split(",") for line in lines[1:]]
    for j, column in enumerate(("id", "sex", "zip", "day")):
        assert _as_text(frame[column]) == [c[j] or None for c in cells]
    assert frame["n"].tolist() == [int(c[4]) for c in cells]


def test_marginality_of_a_coded_column_is_that_of_its_text() -> None:
    """A categorical's counts are taken as its text's (ties in order of appearance, which fixes the sum's order; no
    count for a category no record holds, here one the taxonomy does not know)."""
    from ppdp_desktop.core.taxonomy.semantic import marginality
    from ppdp_desktop.core.taxonomy.tree import Taxonomy

    t = Taxonomy("d", "Any")
    for group, leaves in {"g1": ["a", "b", "c"], "g2": ["d", "e"]}.items():
        t.add("Any", group)
        for leaf in leaves:
            t.add(group, leaf)
    text = pd.Series(["e", "a", "b", "a", "d", "c", "b", "e", "unknown"], dtype="str").iloc[:8]
    coded = pd.Series(pd.Categorical(pd.Series(["e", "a", "b", "a", "d", "c", "b", "e", "unknown"], dtype="str"))).iloc[:8]
    assert marginality(t, coded) == marginality(t, text)


@pytest.mark.parametrize("cells", [
    [str(i % 90) for i in range(5000)],  # numbers
    [f"0{i % 90}" for i in range(5000)],  # a code (leading zeros)
    [f"2024-01-{i % 28 + 1:02d}" for i in range(5000)],  # dates
    [["flu", "cold", "cancer"][i % 3] for i in range(5000)],  # words
    [f"2024-01-{i % 28 + 1:02d}" for i in range(4000)] + ["soon"] * 1000,  # dates but for the last values
    [f"{i % 70 / 4}" for i in range(5000)],  # fractions
    [f"{10000 + i % 90}" for i in range(5000)],  # five digits of one width, repeating: numbers
    [f" {i % 50} " for i in range(5000)],  # numbers with spaces around
    [str(i % 90) for i in range(4000)] + ["n/a"] * 1000,  # numbers but for the last values
    [str(i % 90) for i in range(4000)] + ["1e400"] * 1000,  # numbers but an infinite one
])
def test_a_coded_column_is_guessed_and_typed_as_its_text(cells: list[str]) -> None:
    from ppdp_desktop.core.data.kind_guess import classify
    from ppdp_desktop.core.data.kinds import convert

    text = pa.chunked_array([pa.array(cells[:2500], pa.large_string()), pa.array(cells[2500:], pa.large_string())])
    coded = pa.chunked_array([c.dictionary_encode() for c in text.chunks])
    kind = classify(text, "x", ".").kind
    assert classify(coded, "x", ".").kind is kind
    got, want = convert(coded, kind, "x", "f.csv"), convert(text, kind, "x", "f.csv")
    assert _as_text(got.astype(object)) == _as_text(want.astype(object))


def test_a_long_cell_is_refused_in_dictionary_codes_too() -> None:
    from ppdp_desktop.core.data.cell_limit import MAX_CELL_CHARS
    from ppdp_desktop.core.data.kinds import convert
    from ppdp_desktop.core.errors import InputError

    long = "x" * (MAX_CELL_CHARS + 1)
    coded = pa.chunked_array([pa.array(["a", long, "a"], pa.large_string()).dictionary_encode()])
    with pytest.raises(InputError, match="x"):
        convert(coded, Kind.CATEGORICAL, "x", "f.csv")


def test_numbers_of_a_sliced_dictionary_ignore_the_cells_cut_off() -> None:
    from ppdp_desktop.core.data.kind_guess import classify

    cells = [str(i % 90) for i in range(3000)] + ["word"]
    coded = pa.chunked_array([pa.array(cells, pa.large_string()).dictionary_encode()]).slice(0, 3000)
    guess = classify(coded, "x", ".")
    assert guess.kind is Kind.NUMERIC and guess.numbers.to_pylist() == [i % 90 for i in range(3000)]

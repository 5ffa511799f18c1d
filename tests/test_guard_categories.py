"""The formula guard on a column of dictionary codes (a categorical: the release table's text columns, issue 34)
writes the same bytes as on the same column of text: the categories are guarded, each cell keeps its code."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_desktop.core.data.formats import FORMULA_GUARD, guard_formulas, write_csv_release

_texts = st.sampled_from(["=SUM(A1)", "+1", "-x", "@a", "\\tTab", FORMULA_GUARD + "=x", FORMULA_GUARD + "a", "plain",
                          "Ärzte", "", "=", FORMULA_GUARD + FORMULA_GUARD])


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.none(), _texts), min_size=1, max_size=30))
def test_a_categorical_is_guarded_as_its_text_is(tmp_path_factory, cells):
    text = pd.DataFrame({"note": pd.Series(cells, dtype="str"), "n": range(len(cells))})
    codes = text.assign(note=pd.Categorical(text["note"]))
    guarded_text, changed_text = guard_formulas(text)
    guarded_codes, changed_codes = guard_formulas(codes)
    assert changed_codes == changed_text
    assert guarded_codes["note"].astype(object).where(guarded_codes["note"].notna(), None).tolist() == \
        guarded_text["note"].astype(object).where(guarded_text["note"].notna(), None).tolist()
    folder = tmp_path_factory.mktemp("w")
    first = write_csv_release(text, Path(folder) / "a.csv", ",", bom=True)
    second = write_csv_release(codes, Path(folder) / "b.csv", ",", bom=True)
    assert (Path(folder) / "a.csv").read_bytes() == (Path(folder) / "b.csv").read_bytes()
    assert first[0] == second[0] and first[1][2] == second[1][2]

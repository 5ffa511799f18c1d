"""The released quasi-identifiers of a method that leaves them as they are keep their column's array (issue 34: no
Python string per cell for Arrow text), and the risk measured on them is the one measured on Python strings."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_desktop.core.privacy.risk import analyse_risk
from ppdp_desktop.core.protection import released_quasi


def test_quasi_left_as_they_are_keep_their_array_and_their_risk():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"sex": pd.array(rng.choice(["F", "M", None], 500), dtype="string[pyarrow]"),
                          "ward": rng.choice(["a", "b", "c"], 500).astype(object), "age": rng.integers(0, 90, 500)})
    randomized = {"ward": rng.choice(["a", "b", "c"], 500).astype(object)}
    out = released_quasi(frame, ["sex", "ward", "age"], None, randomized)
    assert out["sex"].dtype == frame["sex"].dtype and out["age"].dtype == frame["age"].dtype
    assert out["ward"].tolist() == randomized["ward"].tolist()
    as_objects = pd.DataFrame({c: out[c].to_numpy(dtype=object) for c in out.columns}, index=out.index)
    quasi = ["sex", "ward", "age"]
    assert analyse_risk(out, quasi, 0.2, None) == analyse_risk(as_objects, quasi, 0.2, None)

"""README.txt never calls a column randomized that was released unchanged (issue 17, point 5)."""
from __future__ import annotations

from ppdp_desktop.core.methods.rr.release import readme_text


def _meta(p_sex: float, p_occupation: float) -> dict:
    return {
        "guarantee": {"l": 3, "max_risk": 0.3},
        "randomized": [{"attribute": "sex", "p": p_sex}, {"attribute": "occupation", "p": p_occupation}],
        "attributes": {"sex": {"role": "quasi-identifier"}, "occupation": {"role": "sensitive"},
                       "age": {"role": "insensitive"}, "name": {"role": "identifier"}},
    }


def test_a_p_one_column_is_listed_as_unchanged() -> None:
    text = readme_text(_meta(1.0, 0.7))
    done = text.split("What it guarantees")[0]
    assert "'occupation' was randomized" in done and "'sex' was" not in done and "'sex' were" not in done
    assert "Released unchanged: 'sex', 'age'." in done and "name" not in done


def test_nothing_randomized_is_said_plainly() -> None:
    text = readme_text(_meta(1.0, 1.0))
    assert "Nothing was randomized" in text and "were randomized" not in text


def test_both_randomized() -> None:
    assert "'sex', 'occupation' were randomized" in readme_text(_meta(0.8, 0.7))

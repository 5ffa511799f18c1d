"""Does my analysis survive? Models trained on the original and on the release (issue 17, point 3)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.demo import demo_settings
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.evaluation.model_data import model_data
from ppdp_desktop.core.evaluation.model_utility import TREE_DEPTH, TREE_LEAF, compare_models
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.settings import ProtectionSettings, SensitivitySettings

PASSPHRASE = "correct horse battery staple"


@pytest.fixture(scope="module")
def demo(demo_data):
    return demo_data


@pytest.fixture(scope="module")
def uniform(demo):
    return anonymize(demo, demo_settings(demo, "uniform", seed=5))


def test_the_original_side_equals_a_direct_scikit_learn_fit(uniform):
    comparison = compare_models(uniform, seed=3)
    data = model_data(uniform, None, 3, 200_000, 0.3)
    direct = DecisionTreeClassifier(max_depth=TREE_DEPTH, min_samples_leaf=TREE_LEAF, random_state=3)
    accuracy = np.mean(direct.fit(data.x_original, data.y_original).predict(data.x_test) == data.y_test)
    assert comparison.tree[0] == pytest.approx(accuracy)
    assert comparison.n_train + comparison.n_test == len(uniform.dataset.frame)
    values, counts = np.unique(data.y_test, return_counts=True)
    assert comparison.baseline == pytest.approx(counts.max() / counts.sum())
    assert compare_models(uniform, seed=3) == comparison  # same seed, same figures


def test_a_release_equal_to_the_original_gives_equal_models(uniform):
    frame = uniform.dataset.frame
    same = replace(uniform, table=frame.take(uniform.order).reset_index(drop=True))
    comparison = compare_models(same, seed=1)
    assert comparison.tree[0] == comparison.tree[1] and comparison.logistic[0] == comparison.logistic[1]
    assert comparison.odds and all(o.release == pytest.approx(o.original) for o in comparison.odds)
    assert all(o.release_interval[0] <= o.original <= o.release_interval[1] for o in comparison.odds)


def test_a_heavily_perturbed_target_loses_what_the_original_model_learns(demo):
    settings = replace(demo_settings(demo, "uniform", seed=2), sensitivity=SensitivitySettings(rho1=0.2, rho2=0.3))
    result = anonymize(demo, settings)
    comparison = compare_models(result, seed=0)
    assert comparison.tree[0] > comparison.baseline  # the original carries signal
    assert comparison.tree[1] < comparison.tree[0]
    assert any("agree in direction" in line for line in comparison.lines())


def test_a_numeric_target_is_split_at_its_original_median(demo):
    result = anonymize(demo, demo_settings(demo, "dp-microagg", seed=4))
    comparison = compare_models(result, "income", seed=0)
    median = float(np.median(demo.frame["income"]))
    assert any(f"original median ({median:g})" in n for n in comparison.notes)
    assert comparison.positive in ("above median", "at or below median")


def test_generalized_quasi_identifiers_reach_the_release_model_as_released(demo):
    protection = ProtectionSettings(k=5, intervals={"age": [10, 20]})
    settings = replace(demo_settings(demo, "finegrain", seed=3), protection=protection)
    result = anonymize(demo, settings)
    data = model_data(result, None, 0, 200_000, 0.3)
    age_terms = [t for t in data.terms_release if t.startswith("age")]
    assert any(t.startswith("age (per ") for t in data.terms)  # a number for the original model
    assert age_terms and all(" = " in t for t in age_terms)  # ranges, not years, for the release model
    comparison = compare_models(result, seed=0)
    assert 0.0 <= comparison.tree[1] <= 1.0


def test_bad_targets_are_named(uniform):
    with pytest.raises(ParameterError, match="'nope' is not in the data"):
        compare_models(uniform, "nope")
    with pytest.raises(ParameterError, match="'patient_id' is not in the release"):
        compare_models(uniform, "patient_id")


def test_compare_target_on_the_command_line(tmp_path, capsys):
    data = str(resource_path(DEMO_DATA))
    code = main(["compare", data, "--target", "sex", "--sensitive", "diagnosis", "--rho1", "0.1", "--rho2", "0.5",
                 "--identifier", "patient_id,name", "--methods", "uniform", "--seed", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "A decision tree predicting sex is right for" in out and "Odds ratio, original" in out
    assert main(["compare", data, "--target", "nope", "--sensitive", "diagnosis", "--rho1", "0.1",
                 "--rho2", "0.5"]) == 2
    assert "'nope' is not a column" in capsys.readouterr().err


def test_the_section_is_in_the_custodians_report_only(uniform, tmp_path):
    folder = write_release(uniform, tmp_path / "rel", key_path=tmp_path / "rel.ppdpkey", passphrase=PASSPHRASE,
                           model_target="diagnosis")
    custodian = (tmp_path / "rel.custodian-report.html").read_text(encoding="utf-8")
    assert "Does my analysis survive?" in custodian and "A decision tree predicting diagnosis" in custodian
    assert "Does my analysis survive?" not in (folder / "report.html").read_text(encoding="utf-8")


def test_model_target_alone_predicts_the_sensitive_column(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    out = tmp_path / "rel"
    assert main(["demo", "--out", str(out), "--model-target", "--quiet"]) == 0
    custodian = (tmp_path / "rel.custodian-report.html").read_text(encoding="utf-8")
    assert "A decision tree predicting diagnosis is right for" in custodian
    assert main(["demo", "--out", str(tmp_path / "other"), "--model-target", "--no-report", "--quiet"]) == 2
    assert "--no-report" in capsys.readouterr().err


def test_a_randomized_numeric_column_stays_a_number_for_the_release_model(demo):
    result = anonymize(demo, demo_settings(demo, "rr", seed=1))  # age is randomized: a Categorical of numbers
    comparison = compare_models(result, seed=0)
    age = next(o for o in comparison.odds if o.term.startswith("age (per "))
    assert age.release is not None and age.release_interval is not None


def test_a_target_with_one_value_is_named(uniform):
    one = replace(uniform, dataset=replace(uniform.dataset, frame=uniform.dataset.frame.assign(sex="F")),
                  table=uniform.table.assign(sex="F"))
    with pytest.raises(ParameterError, match="'sex' holds one value only"):
        compare_models(one, "sex")


def test_no_predictor_left_is_named(uniform):
    keep = ["patient_id", "diagnosis"]
    bare = replace(uniform, dataset=replace(uniform.dataset, frame=uniform.dataset.frame[keep]),
                   table=uniform.table[[c for c in uniform.table.columns if c in keep or c == uniform.pseudonym_column]])
    with pytest.raises(ParameterError, match="No column is left to predict 'diagnosis'"):
        compare_models(bare, "diagnosis")


def test_separation_is_marked_not_counted(uniform):
    frame = uniform.dataset.frame.copy()
    frame["flag"] = np.where(frame["sex"] == "F", "yes", "no")  # sex decides flag: perfect separation
    table = uniform.table.copy()
    table["flag"] = frame["flag"].to_numpy()[uniform.order]
    from ppdp_desktop.core.data.schema import Attribute, Kind, Role, Schema

    schema = Schema({**uniform.dataset.schema.attributes,
                     "flag": Attribute("flag", Role.INSENSITIVE, Kind.CATEGORICAL)})
    separated = replace(uniform, dataset=replace(uniform.dataset, frame=frame, schema=schema), table=table)
    comparison = compare_models(separated, "flag", seed=0)
    sex = next(o for o in comparison.odds if o.term.startswith("sex = "))
    assert sex.unstable and any("No usable odds ratio for sex = " in line for line in comparison.lines())
    assert any(row[0].endswith("(unstable)") for row in comparison.coefficient_rows())


def test_numbers_held_as_text_are_numbers_whatever_pandas_keeps_text_in():
    """pandas 2 reads text as object columns, pandas 3 as its string dtype: numbers held as text are numbers in both,
    and so are a randomized column's text categories; generalized ranges are not."""
    import pandas as pd

    from ppdp_desktop.core.evaluation.model_data import _numeric

    for dtype in (object, "string"):
        values = pd.Series(["30", "41.5", "52"] * 30 + [None], dtype=dtype)  # 1% missing
        assert np.allclose(_numeric(values)[:2], [30.0, 41.5])
        categories = pd.Series(pd.Categorical(values.astype(object),
                                              categories=pd.Index(["30", "41.5", "52"], dtype=dtype)))
        assert np.allclose(_numeric(categories)[:2], [30.0, 41.5])
        assert _numeric(pd.Series(["30-39", "40-49"] * 20, dtype=dtype)) is None

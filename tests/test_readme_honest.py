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


def test_a_real_rr_job_never_calls_an_unchanged_column_randomized(tmp_path) -> None:
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
    from ppdp_desktop.core.demo import demo_settings
    from ppdp_desktop.core.release.package import write_release

    demo = load_table(resource_path(DEMO_DATA))
    result = anonymize(demo, demo_settings(demo, "rr", seed=1))  # the optimizer keeps sex and diagnosis as they are
    kept = [a for a, p in zip([d.attribute for d in result.plan.qi], result.plan.parameters.p_qi) if p == 1.0]
    assert "sex" in kept
    folder = write_release(result, tmp_path / "rel", key_path=tmp_path / "rel.ppdpkey",
                           passphrase="correct horse battery staple")
    readme = (folder / "README.txt").read_text(encoding="utf-8").split("What it guarantees")[0]
    assert "'sex'" not in readme.split("Released unchanged")[0]
    assert (folder / "release.csv").read_text(encoding="utf-8-sig").count("\n") == len(demo.frame) + 1
    assert all(e["p"] < 1.0 for e in __import__("json").loads((folder / "release.json").read_text())["randomized"])

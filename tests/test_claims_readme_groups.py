"""README.txt's "What a group reveals": the figures it prints are release.json's group_disclosure (which
``ppdp verify`` recomputes from the release), in the words of the attacker they hold against."""
from __future__ import annotations

import re

from tests.claims_helpers import adult_frame, adult_slice, anonymize_faces, flat, number


def _paragraph(readme: str) -> str:
    found = re.search(r"What a group reveals\n(.*?)\n\n", readme, re.S)
    assert found, readme
    return flat(found.group(1))


def test_readme_states_release_json_group_figures(tmp_path):
    data = adult_slice(tmp_path, 2000)
    faces = anonymize_faces(data, tmp_path / "rel", [
        "--method", "uniform", "--sensitive", "workclass", "--quasi", "education,sex,race", "--rho1", "0.2",
        "--rho2", "0.6", "--seed", "7"])
    text = _paragraph(faces.readme)
    entry = faces.meta["group_disclosure"]
    assert entry["estimated"]
    if entry["groups_above"]:
        found = re.search(r"holding more than (\d+) % of a group in ([\d,]+) of ([\d,]+) groups \(about ([\d,]+) "
                          r"records; at least (\d+) % in one of them\)", text)
        assert found, text
        bound, above, groups, records, supported = (number(x) for x in found.groups())
        assert abs(records - entry["records_above"]) <= 0.5
        assert abs(supported / 100 - entry["largest_supported"]) <= 0.005
    else:
        found = re.search(r"shows no workclass value holding more than (\d+) % of any of its ([\d,]+) groups", text)
        assert found, text
        bound, groups = (number(x) for x in found.groups())
        above = 0
    assert (above, groups) == (entry["groups_above"], entry["groups"]) and bound / 100 == entry["bound"]
    assert "with 95 % confidence for every group at once" in text
    noisy = re.search(r"Its estimates put ([\d,]+) groups above it \(up to (\d+) %\)", text)
    if entry["groups_estimated_above"] > entry["groups_above"]:
        assert noisy and number(noisy.group(1)) == entry["groups_estimated_above"]
        assert abs(number(noisy.group(2)) / 100 - entry["largest_share"]) <= 0.005
    else:
        assert noisy is None
    right = re.search(r"is right for about (\d+) % of the people whose own record the guess does not use \(give or "
                      r"take (\d+) points", text)
    assert right, text
    assert abs(number(right.group(1)) / 100 - entry["guess_right"]) <= 0.005
    assert abs(number(right.group(2)) / 100 - entry["guess_right_margin"]) <= 0.005
    assert "people who are not in the data" in text and "someone known to be in the data" in text


def test_readme_verdict_names_the_values_its_bound_does_not_cover(tmp_path):
    """README.txt's "Sensitive values: guarantee verified" names the values held by more than their rho1 of the
    records (where the (rho1, rho2) bound says nothing), counted here with pandas on the input."""
    data = adult_slice(tmp_path, 2000)
    faces = anonymize_faces(data, tmp_path / "rel", [
        "--method", "uniform", "--sensitive", "workclass", "--rho1", "0.2", "--rho2", "0.6", "--seed", "5"])
    shares = adult_frame().head(2000)["workclass"].value_counts(normalize=True)
    above = sorted(shares.index[shares > 0.2])
    assert above, "the slice must hold a value above rho1 for this test to mean anything"
    verdict = flat(re.search(r"Sensitive values: (.*?)\n  Re-identification", faces.readme, re.S).group(1))
    named = sorted(re.findall(r"'([^']+)'", verdict.split("not covered:")[1] if "not covered:" in verdict
                              else verdict.split("covered by its bound:")[1]))
    assert named == above
    guarantee = faces.meta.get("guarantee") or faces.meta["sensitive"][0]["guarantee"]
    assert sorted(guarantee["prior_above_rho1"]) == above

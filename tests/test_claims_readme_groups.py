"""README.txt's "What a group reveals": the figures it prints are release.json's group_disclosure (which
``ppdp verify`` recomputes from the release)."""
from __future__ import annotations

import re

from tests.claims_helpers import adult_slice, anonymize_faces, flat, number


def _paragraph(readme: str) -> str:
    found = re.search(r"What a group reveals\n(.*?)\n\n", readme, re.S)
    assert found, readme
    return flat(found.group(1))


def _figures(text: str) -> tuple[float, int, int, float, float]:
    found = re.search(r"holds up to (\d+) % of a group; ([\d,]+) of ([\d,]+) groups \(about ([\d,]+) records\) are "
                      r"above (\d+) %\. Guessing each group's most frequent value is right for about (\d+) %", text)
    assert found, text
    share, above, groups, records, bound, right = found.groups()
    return number(share) / 100, int(number(above)), int(number(groups)), number(records), number(right) / 100


def test_readme_states_release_json_group_figures(tmp_path):
    data = adult_slice(tmp_path, 2000)
    faces = anonymize_faces(data, tmp_path / "rel", [
        "--method", "uniform", "--sensitive", "workclass", "--quasi", "education,sex,race", "--rho1", "0.2",
        "--rho2", "0.6", "--seed", "7"])
    text = _paragraph(faces.readme)
    entry = faces.meta["group_disclosure"]
    share, above, groups, records, right = _figures(text)
    assert (above, groups) == (entry["groups_above"], entry["groups"])
    assert abs(share - entry["largest_share"]) <= 0.005 and abs(right - entry["guess_right"]) <= 0.005
    assert abs(records - entry["records_above"]) <= 0.5
    assert "estimated from the release" in text and "people who are not in the data" in text

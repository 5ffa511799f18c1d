"""A malformed project file is refused in one line naming the file and the field (issue 16, point 8):
every field's JSON type and shape after migration, each method's settings, re-identification, the load
options and the taxonomies, so that nothing wrong reaches the window or ``ppdp run``."""
from __future__ import annotations

import json

import pytest

from ppdp_desktop.core.errors import InputError
from ppdp_desktop.core.project import Project


def _write(tmp_path, **fields):
    path = tmp_path / "p.ppdp"
    path.write_text(json.dumps({**Project().to_json(), **fields}), encoding="utf-8")
    return path


@pytest.mark.parametrize("fields, field, says", [
    ({"roles": "age=sensitive"}, "roles", "an object of column -> one of"),
    ({"roles": {"age": ["sensitive"]}}, "roles", "one of identifier"),
    ({"theta": "abc"}, "theta", "must be a number, got 'abc'"),
    ({"rho1": 0.1}, "rho2", "must be a number when 'rho1' is given, got None"),
    ({"rho2": 0.3, "theta": None}, "rho1", "must be a number when 'rho2' is given"),
    ({"pairs": "x"}, "pairs", "an object of value -> [rho1, rho2], got 'x'"),
    ({"pairs": {"Asthma": [2, 0.1]}}, "pairs", "0 < rho1 < rho2 < 1"),
    ({"method": None}, "method", "must be one of"),
    ({"method": ["rr"]}, "method", "must be one of"),
    ({"compare": [["rr"]]}, "compare", "a list of method names"),
    ({"default_choice": 7}, "default_choice", "1, 2 or 3"),
    ({"release_folder": 5}, "release_folder", "must be text, got 5"),
    ({"load_options": {"sep": 5}}, "load_options.sep", "must be text or null, got 5"),
    ({"load_options": {"delimiter": ";"}}, "load_options", "unknown option 'delimiter'"),
    ({"load_options": {"kinds": "x"}}, "load_options.kinds", "an object"),
    ({"taxonomies": {"diagnosis": "flat"}}, "taxonomies.diagnosis", "expected a JSON object"),
    ({"taxonomies": {"diagnosis": {}}}, "taxonomies.diagnosis", "'root' must be an object"),
    ({"taxonomies": {"diagnosis": {"root": {"label": "*", "children": "x"}}}}, "taxonomies.diagnosis",
     "'children' of '*' must be a list"),
    ({"protection": {"k": "ten"}}, "protection.k", "a whole number or null, got 'ten'"),
    ({"protection": {"threshold": "x"}}, "protection.threshold", "must be a number, got 'x'"),
    ({"protection": {"threshold": 2}}, "protection.threshold", "a number from 0 to 1"),
    ({"protection": {"intervals": "x"}}, "protection.intervals", "an object of name -> a list of numbers"),
    ({"protection": {"cuts": {"age": [[18, "x"]]}}}, "protection.cuts", "a list of lists of numbers"),
    ({"options": {"personalized": {"categories": "many"}}}, "options.personalized.categories",
     "must be a whole number, got 'many'"),
    ({"options": {"personalized": {"categories": 0}}}, "options.personalized.categories", "from 1 to 1,000"),
    ({"options": {"personalized": {"graded": "income"}}}, "options.personalized.graded", "a list of text"),
    ({"options": {"rr": {"l": "abc"}}}, "options.rr.l", "a number or null, got 'abc'"),
    ({"options": {"rr": []}}, "options.rr", "must be an object"),
    ({"options": {"dp-microagg": {"attributes": 5}}}, "options.dp-microagg.attributes", "a list of text, got 5"),
    ({"options": {"dp-microagg": {"domains": "x"}}}, "options.dp-microagg.domains",
     "an object of name -> a list of 2 numbers"),
    ({"options": {"magic": {}}}, "options.magic", "the settings of one of"),
])
def test_a_malformed_field_is_refused_by_name(tmp_path, fields, field, says):
    with pytest.raises(InputError) as refused:
        Project.load(_write(tmp_path, **fields))
    message = str(refused.value)
    assert message.startswith(f"p.ppdp: field {field!r}") and says in message, message


def test_a_project_with_every_field_set_still_loads(tmp_path):
    from tests.test_project import full_project

    path = tmp_path / "full.ppdp"
    full_project().save(path)
    assert Project.load(path) == full_project()


@pytest.mark.parametrize("fields, field", [
    ({"version": 2, "options": "x"}, "options"),
    ({"version": 2, "options": [1]}, "options"),
    ({"version": 2, "options": {"rr": "x"}, "rr_l": 2.0}, "options.rr"),
    ({"version": 2, "rr_l": "abc"}, "options.rr.l"),  # a version-2 flat field, checked where it moved
])
def test_an_older_malformed_file_is_refused_by_name_after_its_migration(tmp_path, fields, field):
    data = {**Project().to_json(), **fields}
    del data["protection"]  # version 4 added it
    path = tmp_path / "p.ppdp"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match=f"^p.ppdp: field {field!r} must be"):
        Project.load(path)


def test_a_true_version_is_not_version_1(tmp_path):
    with pytest.raises(InputError, match="no valid project version"):
        Project.load(_write(tmp_path, version=True))

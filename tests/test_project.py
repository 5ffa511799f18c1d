"""The project file: round trip, atomic save, versions and migrations, and the job settings."""
from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from ppdp_desktop.core import project as project_module
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.resources import DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.errors import InputError, ParameterError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.project import PROJECT_VERSION, Project, migrate
from ppdp_desktop.core.settings import AnonymizationSettings
from ppdp_desktop.core.taxonomy.io import load_taxonomy, to_dict
from ppdp_desktop.core.taxonomy.tree import Taxonomy

ROLES = {
    "patient_id": "identifier", "name": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier",
    "postcode": "quasi-identifier", "diagnosis": "sensitive", "income": "insensitive",
}


def full_project() -> Project:
    """A project with every field away from its default."""
    project = Project(
        data_path="/data/patients.csv",
        load_options={"sep": ";", "encoding": "utf-8"},
        roles=dict(ROLES),
        method="personalized",
        compare=["uniform", "finegrain"],
        theta=None,
        rho1=0.2,
        rho2=0.5,
        pairs={"Stroke": [0.1, 0.3]},
        choice_column="consent",
        default_choice=3,
        value_choices={"Asthma": 1, "Stroke": 3},
        options={
            "personalized": {"graded": ["income"], "categories": 5, "grading": "quantile"},
            "rr": {"l": 2.5, "randomize": "qi"},
            "dp-microagg": {"attributes": ["income", "sex"], "epsilon": 0.5, "k": 7, "domains": {"income": [0.0, 250000.0]}},
        },
        protection={"threshold": 0.3, "k": 5, "suppression": 0.01, "intervals": {"age": [5, 10, 20]}},
        release_folder="/out/release",
        key_path="/keys/release.ppdpkey",
    )
    project.set_taxonomy(load_taxonomy(resource_path(DEMO_TAXONOMY), "diagnosis"))
    project.set_taxonomy(Taxonomy.flat("sex", ["F", "M"]))
    return project


def test_round_trip_keeps_every_field(tmp_path):
    project = full_project()
    path = tmp_path / "study.ppdp"
    project.save(path)
    loaded = Project.load(path)
    assert loaded == project
    for name in Project.__dataclass_fields__:
        assert getattr(loaded, name) == getattr(project, name), name
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "ppdp-project" and data["version"] == PROJECT_VERSION
    assert "passphrase" not in path.read_text(encoding="utf-8")


def test_taxonomies_round_trip(tmp_path):
    demo = load_taxonomy(resource_path(DEMO_TAXONOMY), "diagnosis")
    project = full_project()
    project.save(tmp_path / "p.json")
    loaded = Project.load(tmp_path / "p.json")
    again = loaded.taxonomy("diagnosis")
    assert isinstance(again, Taxonomy)
    assert to_dict(again) == to_dict(demo)
    assert [leaf.label for leaf in again.leaves()] == [leaf.label for leaf in demo.leaves()]
    assert [leaf.label for leaf in loaded.taxonomy("sex").leaves()] == ["F", "M"]
    assert loaded.taxonomy("age") is None


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "p.json"
    Project(method="uniform").save(path)
    before = path.read_text(encoding="utf-8")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(project_module.os, "replace", broken_replace)
    with pytest.raises(InputError, match="Cannot save the project"):
        full_project().save(path)
    assert path.read_text(encoding="utf-8") == before  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"]  # no partial file left behind


def test_save_into_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match="Cannot save the project"):
        Project().save(tmp_path / "missing" / "p.json")


def test_future_version_refused(tmp_path):
    path = tmp_path / "new.json"
    data = full_project().to_json()
    data["version"] = PROJECT_VERSION + 1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="newer PPDP Desktop") as info:
        Project.load(path)
    assert "new.json" in str(info.value)


@pytest.mark.parametrize("content", [json.dumps({"name": "something else"}), json.dumps([1, 2]), "{not json", ""])
def test_non_project_refused(tmp_path, content):
    path = tmp_path / "other.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match="other.json"):
        Project.load(path)


def test_missing_file_refused(tmp_path):
    with pytest.raises(InputError, match="absent.json"):
        Project.load(tmp_path / "absent.json")


@pytest.mark.parametrize("version", [None, 0, "1"])
def test_invalid_version_refused(version):
    with pytest.raises(InputError, match="no valid project version"):
        migrate({"format": "ppdp-project", "version": version}, "p.json")


def version_2_file() -> dict:
    """``full_project`` as version 2 wrote it: every method's settings as flat fields."""
    old = full_project().to_json()
    options = old.pop("options")
    del old["protection"]  # version 4 added the re-identification settings
    old.update(graded=["income"], categories=5, grading="quantile", rr_l=2.5, rr_randomize="qi",
               dp_attributes=["income", "sex"], dp_epsilon=0.5, dp_k=7, dp_domains={"income": [0.0, 250000.0]})
    assert options["rr"] == {"l": 2.5, "randomize": "qi"}
    old["version"] = 2
    return old


def test_version_2_files_keep_each_methods_settings(tmp_path):
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(version_2_file()), encoding="utf-8")
    loaded = Project.load(path)
    expected = full_project()
    expected.protection = {"threshold": 0.2, "k": None, "suppression": 0.05, "intervals": {}}  # the defaults
    assert loaded == expected
    assert loaded.method_settings("rr").l == 2.5 and loaded.method_settings("personalized").categories == 5
    assert loaded.protection_settings().k is None and full_project().protection_settings().k == 5


def test_version_1_files_get_the_dp_defaults(tmp_path):
    old = version_2_file()
    old["version"] = 1
    for name in ("dp_attributes", "dp_epsilon", "dp_k", "dp_domains"):
        del old[name]  # version 1 had no differential privacy
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    loaded = Project.load(path)
    dp = loaded.method_settings("dp-microagg")
    assert (dp.attributes, dp.epsilon, dp.k, dp.domains) == ([], 1.0, 10, {})
    assert loaded.method == "personalized" and loaded.taxonomies == full_project().taxonomies
    loaded.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == PROJECT_VERSION


def test_dp_settings_round_trip_and_reach_the_job(tmp_path):
    project = full_project()
    project.method = "dp-microagg"
    project.roles = {c: r for c, r in ROLES.items() if r != "sensitive"}  # differential privacy needs no sensitive column
    project.set_taxonomy(Taxonomy.flat("sex", ["F", "M"]))
    project.save(tmp_path / "dp.json")
    loaded = Project.load(tmp_path / "dp.json")
    assert loaded == project and loaded.options["dp-microagg"]["domains"] == {"income": [0.0, 250000.0]}
    settings = loaded.settings(seed=3)
    assert settings.method == "dp-microagg" and settings.sensitive == ""
    assert settings.quasi == ["age", "postcode"]  # sex is protected, so it is no longer kept as a quasi-identifier
    assert settings.options == DPSettings(["income", "sex"], 0.5, 7, {"income": (0.0, 250000.0)}, {})
    assert get_method("dp-microagg").prepare(Dataset(pd.DataFrame({"income": [1.0] * 8, "sex": ["F", "M"] * 4})),
                                             settings).attributes[1].taxonomy_from_data  # flat: from the data
    grouped = load_taxonomy(resource_path(DEMO_TAXONOMY), "diagnosis")
    loaded.options["dp-microagg"]["attributes"] = ["diagnosis"]
    loaded.set_taxonomy(grouped)
    with pytest.raises(ParameterError, match="sensitive"):  # the other methods still need one
        loaded.settings(method="finegrain")
    loaded.roles["diagnosis"] = "sensitive"
    assert loaded.settings().sensitive == "diagnosis"  # protected: it stays the sensitive column
    settings = loaded.settings()
    assert settings.options.domains == {} and to_dict(settings.taxonomies["diagnosis"]) == to_dict(grouped)  # edited


def test_migration_hook_upgrades_old_files(tmp_path, monkeypatch):
    old = full_project().to_json()
    old["version"] = PROJECT_VERSION
    old["folder"] = old.pop("release_folder")  # the current version (as pretended here) called it "folder"
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")

    def rename_folder(data: dict) -> dict:
        data = dict(data)
        data["release_folder"] = data.pop("folder")
        return data

    monkeypatch.setattr(project_module, "PROJECT_VERSION", PROJECT_VERSION + 1)
    monkeypatch.setitem(project_module.MIGRATIONS, PROJECT_VERSION, rename_folder)
    loaded = Project.load(path)
    assert loaded.release_folder == "/out/release"
    assert loaded == full_project()
    # saving writes the current version
    loaded.save(path)
    assert json.loads(path.read_text(encoding="utf-8"))["version"] == PROJECT_VERSION + 1


def test_unknown_fields_are_refused_by_name(tmp_path):
    """Issue 32, point 14: a field or setting the app does not know would be dropped silently (a misspelt
    "protection.thresold" would release with the default threshold): refused, naming it."""
    data = Project(method="uniform").to_json()
    data["a_field_from_a_plugin"] = 1
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="p.json: unknown field 'a_field_from_a_plugin'"):
        Project.load(path)
    data = Project(method="rr").to_json()
    data["protection"] = {"thresold": 0.1}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="field 'protection' has an unknown setting 'thresold'"):
        Project.load(path)
    data["protection"], data["options"] = {}, {"rr": {"l": 2, "ell": 3}}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="field 'options.rr' has an unknown setting 'ell'"):
        Project.load(path)


def test_a_second_sensitive_column_is_refused_by_name(tmp_path):
    """Issue 32, point 14: the second sensitive column was released unchanged, relabelled insensitive."""
    data = Project(method="uniform", roles={"diagnosis": "sensitive", "ward": "sensitive"}).to_json()
    path = tmp_path / "two.ppdp"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError, match="two.ppdp: field 'roles' marks 'ward' sensitive besides 'diagnosis'"):
        Project.load(path)


def test_a_project_file_with_a_byte_order_mark_is_read(tmp_path):
    """Issue 32, point 15: Notepad saves UTF-8 with a byte-order mark; the passphrase file accepted one, the project
    file did not."""
    path = tmp_path / "bom.ppdp"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(Project(method="uniform").to_json()).encode("utf-8"))
    assert Project.load(path).method == "uniform"


def test_settings_carry_roles_and_sensitivity():
    project = full_project()
    settings = project.settings(seed=7)
    assert isinstance(settings, AnonymizationSettings)
    assert settings.sensitive == "diagnosis"
    assert settings.method == "personalized"
    assert settings.identifiers == ["patient_id", "name"]
    assert settings.quasi == ["age", "sex", "postcode"]
    assert settings.seed == 7
    sensitivity = settings.sensitivity
    assert (sensitivity.rho1, sensitivity.rho2, sensitivity.theta) == (0.2, 0.5, None)
    assert sensitivity.overrides == {"Stroke": (0.1, 0.3)}
    choices, recoding = settings.choices, settings.options
    assert choices.choice_column == "consent" and choices.default_choice == 3
    assert choices.value_choices == {"Asthma": 1, "Stroke": 3}
    assert recoding.graded == ["income"] and recoding.categories == 5 and recoding.grading == "quantile"
    assert to_dict(settings.taxonomies["diagnosis"]) == to_dict(project.taxonomy("diagnosis"))


def test_settings_theta_and_overrides():
    project = Project(roles=dict(ROLES), theta=4.0)
    settings = project.settings(method="uniform")
    assert settings.method == "uniform"
    assert (settings.sensitivity.rho1, settings.sensitivity.theta) == (None, 4.0)
    flat = Taxonomy.flat("diagnosis", ["a", "b"])
    assert project.settings(taxonomies={"diagnosis": flat}).taxonomies["diagnosis"] is flat


def test_settings_need_a_sensitive_column():
    project = Project(roles={"age": "quasi-identifier"})
    with pytest.raises(ParameterError, match="sensitive"):
        project.settings()


def test_no_temporary_files_after_save(tmp_path):
    full_project().save(tmp_path / "p.json")
    assert os.listdir(tmp_path) == ["p.json"]

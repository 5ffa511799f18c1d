"""A method is a plug-in: one module registered at test time appears in the CLI, the project file and
the job without any other module knowing it; ``ppdp run`` replays a saved project and refuses data that
no longer matches it."""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.demo import DEMO_ROLES
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import REGISTRY, declared_setting, register, unregister
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.settings import Interval
from ppdp_desktop.core.taxonomy.io import load_taxonomy
from tests.toy_method import TOY, ToyMethod, ToySettings

PASSPHRASE = "correct horse battery staple 42"


@pytest.fixture
def toy():
    method = register(ToyMethod())
    yield method
    unregister(TOY)


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_registered_method_is_offered_by_the_cli_and_runs_end_to_end(toy, tmp_path, capsys):
    assert main(["anonymize", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert TOY in help_text and "--toy-strength" in help_text and toy.title in help_text
    out = tmp_path / "release"
    code, stdout, err = run(["anonymize", resource_path(DEMO_DATA), "--out", out, "--sensitive", "diagnosis",
                             "--identifier", "patient_id,name", "--method", TOY, "--toy-strength", "0.25",
                             "--no-report"], capsys)
    assert code == 0, err
    assert f"method: {TOY}" in stdout and "toy strength 0.25" in stdout
    meta = json.loads((out / "release.json").read_text())
    assert meta["method"] == TOY and meta["toy"] == {"strength": 0.25}
    assert "Nothing: a toy method for tests." in (out / "README.txt").read_text()
    code, stdout, err = run(["verify", out], capsys)
    assert code == 0 and "toy release, strength 0.25" in stdout


def test_a_registered_methods_parameter_limits_are_checked_by_name(toy, tmp_path, capsys):
    out = tmp_path / "release"
    code, _, err = run(["anonymize", resource_path(DEMO_DATA), "--out", out, "--sensitive", "diagnosis",
                        "--method", TOY, "--toy-strength", "2"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "--toy-strength must be a number from 0 to 1; got 2.0." in err
    assert not out.exists()


def test_a_registered_methods_option_and_help_come_from_its_declaration(toy, capsys, monkeypatch):
    """The toy declares its parameter once (tests/toy_method.py): its option, type, default and help line follow."""
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["anonymize", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert (f"{toy.title} (--method {TOY}): --toy-strength TOY_STRENGTH how strongly the toy acts, from 0 to 1 "
            "(default 0.5)") in help_text
    code, _, err = run(["anonymize", resource_path(DEMO_DATA), "--out", "unused", "--sensitive", "diagnosis",
                        "--method", TOY, "--toy-strength", "strong"], capsys)
    assert code == 2 and "'strong' is not a number" in err  # the type follows from the declared interval
    assert ToySettings.constraints == {"strength": Interval(0.0, 1.0)}  # derived, for the project file's check
    assert ToySettings.flags == {"strength": "--toy-strength"}


def test_a_registered_methods_error_names_the_setting_for_each_face(toy):
    with pytest.raises(ParameterError) as caught:
        ToySettings(1.5).check()
    error = caught.value
    assert (error.setting, error.value, error.allowed) == ("toy-strength", 1.5, "a number from 0 to 1")
    assert str(error) == "--toy-strength must be a number from 0 to 1; got 1.5."
    declaration = declared_setting(error.setting)  # what a face names the setting by: the declaration's label
    assert declaration is not None and declaration.label == "Toy strength"
    assert error.phrase(lambda key, metavar: declared_setting(key).label) == (
        "Toy strength must be a number from 0 to 1; got 1.5.")


def test_unregistered_the_method_is_gone(tmp_path, capsys):
    assert declared_setting("toy-strength") is None
    assert TOY not in REGISTRY
    code, _, err = run(["anonymize", resource_path(DEMO_DATA), "--out", tmp_path / "r", "--sensitive", "diagnosis",
                        "--method", TOY], capsys)
    assert code == 2 and f"Unknown method {TOY!r}" in err


def test_a_registered_methods_settings_round_trip_through_the_project_file(toy, tmp_path):
    project = Project(roles={"diagnosis": "sensitive"}, method=TOY)
    assert project.method_settings() == ToySettings()  # its defaults until edited
    project.set_method_settings(ToySettings(0.75))
    project.save(tmp_path / "p.ppdp")
    loaded = Project.load(tmp_path / "p.ppdp")
    assert loaded.options[TOY] == {"strength": 0.75}
    settings = loaded.settings(seed=1)
    assert settings.method == TOY and settings.options == ToySettings(0.75)


# --- ppdp run -------------------------------------------------------------------------------------

def saved_project(tmp_path, data=None) -> Project:
    """What the window saves for the demo data: roles, the theta rule, the demo taxonomy, fine-grain."""
    path = tmp_path / "patients.csv"
    if data is None:
        shutil.copy(resource_path(DEMO_DATA), path)
    else:
        data.to_csv(path, index=False)
    project = Project(data_path=str(path), roles={c: r.value for c, r in DEMO_ROLES.items()}, theta=3.0)
    project.set_taxonomy(load_taxonomy(resource_path(DEMO_TAXONOMY), "diagnosis"))
    project.save(tmp_path / "study.ppdp")
    return project


def test_run_replays_a_project_like_the_anonymize_command(tmp_path, capsys):
    saved_project(tmp_path)
    code, stdout, err = run(["run", tmp_path / "study.ppdp", "--out", tmp_path / "a", "--seed", "5"], capsys)
    assert code == 0, err
    assert "guarantee verified" in stdout
    code, _, err = run(["anonymize", tmp_path / "patients.csv", "--out", tmp_path / "b", "--seed", "5",
                        "--sensitive", "diagnosis", "--identifier", "patient_id,name", "--quasi", "age,sex,postcode",
                        "--theta", "3"], capsys)
    assert code == 0, err
    assert (tmp_path / "a" / "release.csv").read_bytes() == (tmp_path / "b" / "release.csv").read_bytes()
    code, stdout, _ = run(["verify", tmp_path / "a"], capsys)
    assert code == 0


def test_run_seals_the_key_the_project_names(tmp_path, capsys, monkeypatch):
    project = saved_project(tmp_path)
    project.release_folder, project.key_path = str(tmp_path / "rel"), str(tmp_path / "rel.ppdpkey")
    project.save(tmp_path / "study.ppdp")
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    code, stdout, err = run(["run", tmp_path / "study.ppdp"], capsys)
    assert code == 0, err
    assert (tmp_path / "rel" / "release.csv").is_file() and (tmp_path / "rel.ppdpkey").is_file()
    assert "sealed key" in stdout


def test_run_refuses_data_that_lost_a_column(tmp_path, capsys):
    original = pd.read_csv(resource_path(DEMO_DATA), dtype=str, keep_default_na=False)
    saved_project(tmp_path, original.drop(columns=["sex"]))
    before = (tmp_path / "patients.csv").read_bytes()
    code, stdout, err = run(["run", tmp_path / "study.ppdp", "--out", tmp_path / "out"], capsys)
    assert code == 3 and err.count("\n") == 1
    assert "no longer has column 'sex'" in err
    assert not (tmp_path / "out").exists() and (tmp_path / "patients.csv").read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_run_refuses_values_the_taxonomy_does_not_hold(tmp_path, capsys):
    original = pd.read_csv(resource_path(DEMO_DATA), dtype=str, keep_default_na=False)
    original.loc[3, "diagnosis"] = "Dragon pox"
    saved_project(tmp_path, original)
    code, _, err = run(["run", tmp_path / "study.ppdp", "--out", tmp_path / "out"], capsys)
    assert code == 3 and err.count("\n") == 1
    assert "'diagnosis'" in err and "'Dragon pox'" in err and "taxonomy" in err
    assert not (tmp_path / "out").exists()


def test_run_needs_a_release_folder(tmp_path, capsys):
    saved_project(tmp_path)
    code, _, err = run(["run", tmp_path / "study.ppdp"], capsys)
    assert code == 2 and "--out" in err

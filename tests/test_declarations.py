"""One declaration per parameter: the command line's options, defaults and help of every registered method (and of
re-identification) are made from the settings' declarations, and read back into the same settings."""
from __future__ import annotations

import argparse
import dataclasses

import pytest

from ppdp_desktop.cli.parser import build_parser
from ppdp_desktop.core.declarations import FACTORY, declared
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import REGISTRY, declared_setting
from ppdp_desktop.core.settings import ProtectionSettings


def _anonymize() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["anonymize"]


def _declared_options():
    for settings_type in (ProtectionSettings, *(m.settings_type for m in REGISTRY.values())):
        for name, declaration in declared(settings_type).items():
            if declaration.flag is not None:
                yield settings_type, name, declaration


def test_every_declared_option_is_on_the_command_line_with_its_declared_default_and_help():
    options = _anonymize()._option_string_actions
    seen = 0
    for _settings_type, _name, declaration in _declared_options():
        action = options[declaration.flag]
        assert action.dest == declaration.dest
        expected = [] if declaration.repeat else (None if declaration.default is FACTORY else declaration.default)
        assert action.default == expected
        assert action.help == declaration.cli_help() and declaration.help.split("\x1f")[0] in action.help
        assert "\x1f" not in action.help  # a reference to another setting is phrased for the command line
        seen += 1
    assert seen >= 20  # rr, personalized, dp-microagg and re-identification declare theirs
    assert options["--l"].help.endswith("needs --quasi")  # setting_ref("quasi") as the command line says it
    assert "see --hierarchy / --intervals" in options["--k-anonymity"].help


def test_the_command_lines_defaults_are_the_settings_defaults():
    args = _anonymize().parse_args(["data.csv", "--out", "r"])
    for method in REGISTRY.values():
        if method.settings_type is not ProtectionSettings:
            assert method.settings_from_args(args) == method.settings_type(), method.name


def test_an_option_reads_back_into_its_field():
    args = _anonymize().parse_args(["data.csv", "--out", "r", "--l", "4", "--randomize", "qi", "--attributes", "a, b",
                                    "--domain", "a=0:10", "--domain", "b=1:2", "--k", "7", "--graded", "x",
                                    "--categories", "5", "--bounds", "1-2,3-4", "--taxonomy", "a=t.json"])
    rr, dp, recoding = (REGISTRY[n].settings_from_args(args) for n in ("rr", "dp-microagg", "personalized"))
    assert (rr.l, rr.randomize) == (4.0, "qi")
    assert (dp.attributes, dp.domains, dp.k, dp.taxonomies) == (["a", "b"], {"a": (0.0, 10.0), "b": (1.0, 2.0)}, 7,
                                                                 {"a": "t.json"})
    assert (recoding.graded, recoding.categories, recoding.bounds) == (["x"], 5, [(1.0, 2.0), (3.0, 4.0)])


@pytest.mark.parametrize("settings_type", [ProtectionSettings, *{m.settings_type for m in REGISTRY.values()}],
                         ids=lambda t: t.__name__)
def test_each_declared_limit_is_checked_under_the_settings_key(settings_type):
    for name, constraint in settings_type.constraints.items():
        bad = "no such choice" if hasattr(constraint, "options") else -1e12
        settings = dataclasses.replace(settings_type(), **{name: bad})
        with pytest.raises(ParameterError) as caught:
            settings.check()
        key = settings_type.setting_key(name)
        assert (caught.value.setting, caught.value.value, caught.value.allowed) == (key, bad, constraint.describe())
        assert str(caught.value).startswith(f"--{key} must be ")
        assert declared_setting(key) is not None and declared_setting(key).name == name

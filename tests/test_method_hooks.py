"""A method is only a plug-in (issue 29.3): what the generic code used to import from a method family comes through
the Method hooks, so a plug-in registered at test time gets it too and a method without the hook refuses clearly.

* ``ppdp compare`` iterates the registry's comparisons: a toy comparison's option appears in ``--help``, runs when
  asked for (with the job as its runner) and gives the ``--json`` document; asking for none lists every comparison;
* ``ppdp estimate --table`` asks the release's method (a method publishing no matrices refuses, naming it);
* the demo presets, the window's editor choice and step 3's retention columns are the methods' own.
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.cli.parser import build_parser
from ppdp_desktop.core.errors import KeyFileError, ParameterError, ReleaseError
from ppdp_desktop.core.methods import REGISTRY, Compared, Comparison, comparisons, get_method, register, unregister
from ppdp_desktop.core.methods.base import Method
from tests.toy_method import ToyMethod

TOY_COMPARISON = "toy-count"


class CountComparison(Comparison):
    """Counts the records of each method's release of the sensitive column (through the job it is handed)."""

    name = TOY_COMPARISON
    order = 5
    usage = "--toy-count"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--toy-count", action="store_true", help="count the released records of each method")

    def requested(self, args: argparse.Namespace) -> bool:
        return bool(args.toy_count)

    def run(self, dataset, args, run) -> Compared:
        from ppdp_desktop.core.settings import AnonymizationSettings

        result = run(dataset, AnonymizationSettings(args.sensitive, ToyComparing.name, seed=args.seed))
        n = len(result.applied.columns[args.sensitive])
        return Compared(self.name, f"{ToyComparing.name}: {n} records", {"sensitive": args.sensitive},
                        [{"method": ToyComparing.name, "records": n}])


class ToyComparing(ToyMethod):
    name = "toy-comparing"

    def comparisons(self) -> tuple[Comparison, ...]:
        return (CountComparison(),)


@pytest.fixture
def toy():
    method = register(ToyComparing())
    yield method
    unregister(method.name)


@pytest.fixture
def small_csv(tmp_path):
    path = tmp_path / "small.csv"
    rng = np.random.default_rng(3)
    pd.DataFrame({"age": rng.integers(20, 80, 60), "dx": rng.choice(["a", "b", "c"], 60)}).to_csv(path, index=False)
    return str(path)


def test_compare_runs_a_plugins_comparison(toy, small_csv, capsys):
    help_text = build_parser()._subparsers._group_actions[0].choices["compare"].format_help()
    assert "--toy-count" in help_text and f"one of: {TOY_COMPARISON}, models" in " ".join(help_text.split())
    assert [c.name for c in comparisons()][0] == TOY_COMPARISON  # the smallest order first
    assert main(["compare", small_csv, "--sensitive", "dx", "--toy-count", "--seed", "1", "--json"]) == 0
    out = capsys.readouterr()
    document = json.loads(out.out)
    assert document["mode"] == TOY_COMPARISON and document["rows"] == [{"method": toy.name, "records": 60}]
    assert f"{toy.name}: 60 records" in out.err  # the text goes to stderr with --json


def test_compare_without_a_requested_comparison_lists_every_one(toy, small_csv, capsys):
    assert main(["compare", small_csv]) != 0
    err = capsys.readouterr().err
    assert "compare needs one of: --toy-count;" in err
    for way in comparisons():
        assert way.usage in err
    assert {"models", "dp", "linking", "workload"} <= {c.name for c in comparisons()}


def test_no_comparison_without_its_plugin(small_csv, capsys):
    assert TOY_COMPARISON not in [c.name for c in comparisons()]
    assert main(["compare", small_csv, "--toy-count"]) != 0
    assert "unrecognized arguments: --toy-count" in capsys.readouterr().err


def test_default_hooks_refuse_naming_the_method():
    plain = Method.__new__(ToyMethod)
    with pytest.raises(ParameterError, match="this release was made by 'toy-plugin'"):
        plain.estimate_table(None, ["a"])
    with pytest.raises(ReleaseError, match="publishes no perturbed column"):
        plain.published_entries(None, {})
    with pytest.raises(KeyFileError, match="publishes no grades"):
        plain.key_grading("income", {})
    assert plain.comparisons() == () and plain.window_editor is None and plain.retention_header is None
    assert plain.demo_settings() == ToyMethod.settings_type()  # the declared defaults


def test_registered_methods_keep_their_presets_and_editors():
    """The hooks carry what the generic code used to hard-code: the demo presets, the window's editors and step 3's
    retention columns (one per method declaring one)."""
    editors = {m.window_editor for m in REGISTRY.values()} - {None}
    assert editors == {"recoding", "linking", "dp"}
    dp = next(m for m in REGISTRY.values() if m.window_editor == "dp")
    assert dp.demo_settings().k == 50 and dp.demo_settings().epsilon == 1.0
    assert dp.grid_step("x", None, 0.0, 100.0, True, 1, 10, 1.0) >= 1
    with pytest.raises(ParameterError):
        dp.grid_step("x", "0.5", 0.0, 100.0, True, 1, 10, 1.0)  # whole numbers need a whole step
    recoding = next(m for m in REGISTRY.values() if m.window_editor == "recoding")
    assert recoding.demo_settings().graded == ["income"]
    keepers = [m for m in REGISTRY.values() if m.retention_header]
    assert len(keepers) == 2
    prior, gamma = np.array([0.5, 0.3, 0.2]), np.array([np.inf, 9.0, 4.0])
    for method in keepers:
        p = method.planned_retention(prior, gamma)
        assert p.shape == (3,) and np.all((p > 0) & (p <= 1))
    assert get_method(keepers[0].name) is keepers[0]

"""The comparison of methods states each epsilon-LDP as the guarantee does (issue 28).

Perturbation partitioning's epsilon holds within each sub-table only (each record's sub-table is published, so for
the column as a whole no epsilon bounds it), and a release that never replaces some value has no finite epsilon.
The comparison table (the window's compare view and the report's, both from ``comparison_rows``) printed the bare
number for the first and an en dash, or "inf" in the report, for the second; ``ppdp compare``'s privacy column gave
partitioning's pair without saying where it holds. Checked on a slice of the real Adult data: the cells are
"X within each sub-table" with X the largest epsilon over the sub-tables, computed here from their published
retentions, and "none (not finite)" where release.json says no bound holds.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.claims_helpers import adult_slice, cli_job, run_cli

N_RECORDS = 2000
PARTITION = ["--method", "partition", "--sensitive", "native-country", "--rho1", "0.02", "--rho2", "0.1", "--seed", "5"]
UNIFORM = ["--method", "uniform", "--sensitive", "native-country", "--rho1", "0.02", "--rho2", "0.1", "--seed", "5"]
NEVER_REPLACED = ["--method", "finegrain", "--sensitive", "sex", "--theta", "5", "--pairs", "{pairs}", "--seed", "7"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare-epsilon")
    (folder / "pairs.csv").write_text("Male,0.1,0.3\n", encoding="utf-8")
    return adult_slice(folder, N_RECORDS)


def _report(data, args):
    from ppdp_desktop.core.anonymize import anonymize
    from ppdp_desktop.core.report.build import build_report

    dataset, settings = cli_job(data, [a.format(pairs=data.parent / "pairs.csv") for a in args])
    result = anonymize(dataset, settings)
    return result, build_report(result)


@pytest.fixture(scope="module")
def reports(data):
    """Partitioning, uniform perturbation and a release with a value never replaced, each with its report."""
    return {name: _report(data, args) for name, args in
            (("partition", PARTITION), ("uniform", UNIFORM), ("never", NEVER_REPLACED))}


def _exact_partition_epsilon(guarantee_entry: dict) -> float:
    """The largest epsilon-LDP over the sub-tables, from their published retentions: within sub-table s of m_s
    values, ln((p_s + (1 - p_s)/m_s) / ((1 - p_s)/m_s))."""
    return max(np.log((s["retention"] + (1 - s["retention"]) / len(s["values"])) / ((1 - s["retention"]) / len(s["values"])))
               for s in guarantee_entry["subtables"])


def test_partitionings_epsilon_is_qualified_and_a_missing_one_says_none(reports):
    """``comparison_rows`` and the report's comparison table: partitioning's cell is "X within each sub-table" (X the
    exact largest over its sub-tables, which are several here), uniform perturbation's a plain number, and the
    release whose fine-grain matrix never replaces Female (retention 1, release.json's no_ldp_bound) "none (not
    finite)"; no cell says inf or nan."""
    from ppdp_desktop.core.report.build import comparison_rows
    from ppdp_desktop.core.report.document import comparison_table

    partition, uniform, never = (reports[n] for n in ("partition", "uniform", "never"))
    entry = partition[0].plan.release_json()["sensitive"][0]
    assert len(entry["subtables"]) > 1 and entry["guarantee"]["epsilon_ldp_scope"].startswith("within each sub-table")
    assert never[0].guarantee["epsilon_ldp"] is None and never[0].guarantee["no_ldp_bound"]
    chosen = [partition[1], uniform[1], never[1]]
    rows = comparison_rows(chosen)
    cell = re.fullmatch(r"([\d.]+) within each sub-table", rows[0]["epsilon_ldp"])
    assert cell and float(cell[1]) == pytest.approx(_exact_partition_epsilon(entry), abs=5e-5)
    assert isinstance(rows[1]["epsilon_ldp"], float)
    assert rows[1]["epsilon_ldp"] == pytest.approx(uniform[0].guarantee["epsilon_ldp"], rel=1e-12)
    assert rows[2]["epsilon_ldp"] == "none (not finite)"
    header, body = comparison_table(chosen)
    column = header.index("epsilon-LDP")
    assert [row[column] for row in body] == [rows[0]["epsilon_ldp"], f"{rows[1]['epsilon_ldp']:.4f}", "none (not finite)"]
    assert not any(re.search(r"\b(?:inf|nan)\b", cell, re.I) for row in body for cell in row)


def test_an_infinite_epsilon_from_an_older_report_says_none(reports):
    """A report object holding an infinite or NaN epsilon (as an earlier version's did) is "none (not finite)",
    never "inf"; a method that states no epsilon gets no cell (None)."""
    import dataclasses

    from ppdp_desktop.core.report.build import comparison_rows

    report = reports["uniform"][1]
    older = [dataclasses.replace(report, epsilon_ldp=value) for value in (float("inf"), float("nan"))]
    none = dataclasses.replace(report, epsilon_ldp=None, guarantee={**report.guarantee})
    none.guarantee.pop("no_ldp_bound", None)
    assert [row["epsilon_ldp"] for row in comparison_rows([*older, none])] == ["none (not finite)"] * 2 + [None]


def test_the_windows_compare_view_shows_the_qualified_cells(window, reports):
    """The window's compare view (step 6, methods compared) shows the same cells as the report's table."""
    from ppdp_desktop.core.report.build import COMPARISON_COLUMNS

    page = window.pages[5]
    page._fill_comparison([reports[n][1] for n in ("partition", "uniform", "never")])
    table = page.comparison_table
    column = [heading for _, heading in COMPARISON_COLUMNS].index("epsilon-LDP")
    shown = [table.item(row, column).text() for row in range(table.rowCount())]
    assert re.fullmatch(r"[\d.]+ within each sub-table", shown[0]) and re.fullmatch(r"[\d.]+", shown[1])
    assert shown[2] == "none (not finite)"


def test_ppdp_compare_says_where_partitionings_pair_holds(data):
    """``ppdp compare --rho1 --rho2``: partitioning's privacy cell is "rho = (0.02, 0.1) within each sub-table" in
    the table and in ``--json``; uniform perturbation's pair is the column's."""
    args = ["compare", data, "--sensitive", "native-country", "--methods", "uniform,partition", "--rho1", "0.02",
            "--rho2", "0.1", "--seed", "5"]
    code, out, err = run_cli(args)
    assert code == 0, err
    lines = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert "rho = (0.02, 0.1) within each sub-table" in lines["partition"]
    assert "rho = (0.02, 0.1)" in lines["uniform"] and "sub-table" not in lines["uniform"]
    code, out, err = run_cli([*args, "--json"])
    assert code == 0, err
    privacy = {row["method"]: row["privacy"] for row in json.loads(out)["rows"]}
    assert privacy == {"uniform": "rho = (0.02, 0.1)", "partition": "rho = (0.02, 0.1) within each sub-table"}

"""Claim: a reverse lookup never passes a released value off as the patient's (issue 28, point 6).

The attacker here is not malicious: a clinician who follows a patient up from ``ppdp lookup --pseudonym`` (or
the window's Reverse lookup, or a decoded results file) and trusts every value that is not marked as the
release's. For each method, on a slice of the demo patients (and a slice of Adult), every record of the
release is looked up and compared with the input file:

* every value marked as the patient's own (``is_original``) equals the input's value for that patient —
  the number of trusted values that differ from the truth must be 0;
* every value of a randomized, noised or generalized column is marked as not the patient's, and such values
  do differ from the truth for some records (so the marks are needed, and the test would fail without them).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.resources import DEMO_DATA, DEMO_TAXONOMY, resource_path
from ppdp_desktop.core.release.lookup import KeyRing
from ppdp_desktop.core.release.lookup_marks import STATUSES
from tests.conftest import shared_adult

PASSPHRASE = "correct horse battery staple lookup"
ROWS = 3000
DEMO_ARGS = ["--identifier", "patient_id,name", "--quasi", "age,sex,postcode"]
#: method -> (its arguments, the columns it changes and how they must be marked)
METHODS = {
    "uniform": (["--sensitive", "diagnosis", "--theta", "3"], {"diagnosis": "randomized"}),
    "finegrain": (["--sensitive", "diagnosis", "--theta", "3"], {"diagnosis": "randomized"}),
    "partition": (["--sensitive", "diagnosis", "--rho1", "0.1", "--rho2", "0.5"], {"diagnosis": "randomized"}),
    "rr": (["--sensitive", "diagnosis", "--l", "3", "--randomize", "both"], {"age": "randomized",
                                                                            "postcode": "randomized"}),
    "personalized": (["--sensitive", "diagnosis", "--choice-column", "privacy_choice", "--taxonomy",
                      str(resource_path(DEMO_TAXONOMY)), "--graded", "income", "--categories", "4"],
                     {"diagnosis": "decoded", "income": "decoded"}),
    "dp-microagg": (["--attributes", "length_of_stay,income", "--epsilon", "1", "--k", "20", "--domain",
                     "length_of_stay=0:365", "--domain", "income=0:500000"],
                    {"length_of_stay": "dp-noised", "income": "dp-noised"}),
}


def _text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell as the text a reader compares (missing -> "")."""
    return frame.astype(object).where(frame.notna(), "").astype(str)


@pytest.fixture(scope="module")
def demo_slice(tmp_path_factory) -> tuple:
    folder = tmp_path_factory.mktemp("claims-lookup")
    frame = pd.read_csv(resource_path(DEMO_DATA), dtype=str, keep_default_na=False).head(ROWS)
    frame["privacy_choice"] = np.random.default_rng(0).choice(["1", "2", "3"], len(frame))
    data = folder / "patients.csv"
    frame.to_csv(data, index=False)
    (folder / "pass.txt").write_text(PASSPHRASE)
    return folder, data, frame


def _release(demo_slice, name: str, args: list[str]) -> KeyRing:
    folder, data, _ = demo_slice
    out, key = folder / name, folder / f"{name}.ppdpkey"
    if not out.exists():
        code = main(["anonymize", str(data), "--out", str(out), *DEMO_ARGS, *args, "--key", str(key),
                     "--passphrase-file", str(folder / "pass.txt"), "--no-report", "--seed", "11", "-q"])
        assert code == 0
    return KeyRing.open(out, key, PASSPHRASE)


def _trusted_but_wrong(ring: KeyRing, truth: pd.DataFrame, ident: str) -> tuple[int, int, pd.DataFrame, pd.DataFrame]:
    """Look up every record of the release: (values trusted that differ from the input, values marked as the
    release's that differ from it, the status of every cell, whether every cell equals the input)."""
    decoded = ring.decode_marked(ring.release.table)
    status = decoded.status_frame()
    shown = _text(decoded.table).set_index(ident, drop=False)
    status.index = shown.index
    columns = [c for c in shown.columns if c in truth.columns]
    expected = _text(truth).set_index(ident, drop=False).loc[shown.index, columns]
    same = shown[columns] == expected
    original = status[columns].isin([s for s in STATUSES if s in ("original", "decoded", "unchanged")])
    return int((original & ~same).to_numpy().sum()), int((~original & ~same).to_numpy().sum()), status, same


@pytest.mark.parametrize("method", list(METHODS))
def test_a_reader_who_trusts_unmarked_values_is_never_wrong(demo_slice, method):
    args, changed = METHODS[method]
    ring = _release(demo_slice, method, ["--method", method, *args])
    truth = demo_slice[2]
    wrong, released_differ, status, same = _trusted_but_wrong(ring, truth, "patient_id")
    assert wrong == 0, f"{wrong} values shown as the patient's differ from the input ({method})"
    if method == "rr":  # which quasi-identifiers need randomizing depends on the data: release.json lists them
        changed = {e["attribute"]: "randomized" for e in ring.release.metadata["randomized"]}
        assert {"age", "postcode"} <= set(changed)
    for column, expected in changed.items():  # every value of a changed column has the column's mark
        assert (status[column] == expected).all(), (column, status[column].value_counts().to_dict())
    noisy = [c for c, s in changed.items() if s != "decoded"]
    if noisy:  # the marks are needed: some of the marked values are not the patient's
        assert released_differ > 0 and not same[noisy].all().all()
    else:  # personalized: everything decodes back to the input
        assert released_differ == 0 and same.all().all()
    for column in truth.columns:  # the rest is the input's, and says so
        if column not in changed and column in status and column not in ("patient_id", "name"):
            assert (status[column] == "unchanged").all(), column
    assert (status["patient_id"] == "original").all() and (status["pseudonym"] == "pseudonym").all()


@pytest.mark.parametrize("method", ["uniform", "dp-microagg"])
def test_the_pseudonym_lookup_marks_what_the_table_marks(demo_slice, method, capsys):
    ring = _release(demo_slice, method, ["--method", method, *METHODS[method][0]])
    table = ring.release.table
    decoded = ring.decode_marked(table)
    status = decoded.status_frame()
    for position in np.random.default_rng(1).choice(len(table), 15, replace=False):
        row = ring.lookup_pseudonym(table["pseudonym"].iloc[position])
        assert {n: m.status for n, m in row.marks.items()} == status.iloc[position].to_dict()
        assert row.not_original() == list(METHODS[method][1])
    # The command line says the same, as text and as JSON.
    folder = demo_slice[0]
    pseudonym = table["pseudonym"].iloc[0]
    base = ["lookup", str(folder / method), str(folder / f"{method}.ppdpkey"), "--pseudonym", pseudonym,
            "--passphrase-file", str(folder / "pass.txt")]
    assert main(base) == 0
    text = capsys.readouterr().out
    for column, expected in METHODS[method][1].items():
        line = next(line for line in text.splitlines() if line.startswith(f"{column}: "))
        assert "not the patient's value" in line and expected.upper() in line
    assert "check the patient's file before acting on them" in text
    assert main([*base, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["not_original"] == list(METHODS[method][1])
    for column, entry in document["columns"].items():
        assert entry["is_original"] == (column not in METHODS[method][1] and column != "pseudonym"), column
        assert entry["status"] == METHODS[method][1].get(column, entry["status"])


def test_a_decoded_file_says_in_each_header_what_the_column_is(demo_slice, capsys):
    folder = demo_slice[0]
    ring = _release(demo_slice, "uniform", ["--method", "uniform", *METHODS["uniform"][0]])
    results, out = folder / "results.csv", folder / "decoded.csv"
    ring.release.table.head(40).to_csv(results, index=False)
    assert main(["lookup", str(folder / "uniform"), str(folder / "uniform.ppdpkey"), "--file", str(results),
                 "--out", str(out), "--overwrite", "--passphrase-file", str(folder / "pass.txt"), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    header = pd.read_csv(out, nrows=0).columns.tolist()
    assert "diagnosis [RANDOMIZED, not the patient's value]" in header
    assert "patient_id [original, from the key]" in header and "age [original, released unchanged]" in header
    assert document["columns"]["diagnosis"]["status"] == "randomized"
    assert document["columns"]["diagnosis"]["is_original"] is False and document["rows"] == 40


def test_generalized_and_suppressed_quasi_identifiers_are_not_passed_off(demo_slice):
    ring = _release(demo_slice, "kanon", ["--method", "uniform", "--sensitive", "diagnosis", "--theta", "3",
                                          "--k-anonymity", "3", "--intervals", "age=5,10,20",
                                          "--suppression", "0.2"])
    truth = demo_slice[2]
    wrong, _, status, _ = _trusted_but_wrong(ring, truth, "patient_id")
    assert wrong == 0
    levels = ring.release.metadata["reidentification"]["generalization"]["levels"]
    assert levels["age"] > 0 and (status["age"].isin(["generalized", "suppressed"])).all()
    suppressed = (ring.release.table["sex"] == "*").to_numpy()
    assert suppressed.any() and (status.loc[suppressed, "sex"].to_numpy() == "suppressed").all()
    assert (status.loc[~suppressed, "sex"].to_numpy() == "unchanged").all()


def test_adult_slice_with_randomized_response(tmp_path):
    """On real data (Adult): rr randomizes quasi-identifiers and the sensitive column; a record id is added as
    the identifier so that records can be looked up."""
    frame = pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False).head(2000)
    frame.insert(0, "record_id", [f"A{i:05d}" for i in range(len(frame))])
    data = tmp_path / "adult.csv"
    frame.to_csv(data, index=False)
    (tmp_path / "pass.txt").write_text(PASSPHRASE)
    out, key = tmp_path / "rr", tmp_path / "rr.ppdpkey"
    assert main(["anonymize", str(data), "--out", str(out), "--method", "rr", "--identifier", "record_id",
                 "--quasi", "education,marital-status,sex,race", "--sensitive", "workclass", "--l", "3",
                 "--randomize", "both", "--key", str(key), "--passphrase-file", str(tmp_path / "pass.txt"),
                 "--no-report", "--seed", "3", "-q"]) == 0
    ring = KeyRing.open(out, key, PASSPHRASE)
    wrong, released_differ, status, _ = _trusted_but_wrong(ring, frame, "record_id")
    randomized = [e["attribute"] for e in ring.release.metadata["randomized"]]
    assert wrong == 0 and randomized and released_differ > 0
    assert all((status[c] == "randomized").all() for c in randomized)


@pytest.mark.parametrize("method", list(METHODS))
def test_the_windows_lookup_shows_the_mark(qtbot, demo_slice, method):
    """Tools -> Reverse lookup -> Pseudonym, driven by keys and clicks: every row says what its value is, and a
    value that is the release's is coloured, says so in bold words and in its tooltip, and is named below."""
    pytest.importorskip("PySide6")
    from PySide6.QtCore import Qt

    from ppdp_desktop.gui.lookup_dialog import PSEUDONYM_COLUMNS, LookupDialog
    from ppdp_desktop.gui.marked_row import NOT_ORIGINAL_BACKGROUND

    folder = demo_slice[0]
    ring = _release(demo_slice, method, ["--method", method, *METHODS[method][0]])
    changed = METHODS[method][1] if method != "rr" else {
        e["attribute"]: "randomized" for e in ring.release.metadata["randomized"]}
    dialog = LookupDialog(None, str(folder / method), str(folder / f"{method}.ppdpkey"))
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.keyClicks(dialog.passphrase_edit, PASSPHRASE)
    qtbot.keyClick(dialog.passphrase_edit, Qt.Key.Key_Return)
    assert dialog.ring is not None, dialog.message.text()
    dialog.tabs.setCurrentIndex(1)
    table = dialog.pseudonym_table
    qtbot.keyClicks(dialog.pseudonym_edit, ring.release.table["pseudonym"].iloc[3])
    qtbot.keyClick(dialog.pseudonym_edit, Qt.Key.Key_Return)
    assert [table.horizontalHeaderItem(j).text() for j in range(3)] == PSEUDONYM_COLUMNS
    rows = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    for column, status in changed.items():
        what, value = table.item(rows[column], 2), table.item(rows[column], 1)
        if status == "decoded":
            assert what.text() == "original, decoded with the key"
            assert value.background().color() != NOT_ORIGINAL_BACKGROUND
        else:
            assert "not the patient's value" in what.text() and status.upper() in what.text()
            assert value.background().color() == NOT_ORIGINAL_BACKGROUND and what.font().bold()
            assert "not the patient's value" in value.toolTip()
            assert column in dialog.pseudonym_note.text()
    assert table.item(rows["patient_id"], 2).text() == "original, from the key"
    released = [c for c, s in changed.items() if s != "decoded"]
    assert dialog.pseudonym_note.isVisible() == bool(released)
    if released:
        assert "Check the patient's file before acting on them" in dialog.pseudonym_note.text()


def test_aliases_the_key_cannot_resolve_and_unknown_pseudonyms_are_marked(demo_slice):
    """Without the pseudonyms, a shared alias (alias1) stands for several values: those cells are "one of",
    never "decoded"; a pseudonym that is not the release's finds nobody, and says so."""
    ring = _release(demo_slice, "personalized", ["--method", "personalized", *METHODS["personalized"][0]])
    table = ring.release.table
    without = ring.decode_marked(table.drop(columns=["pseudonym"]))
    status = without.status_frame()["diagnosis"]
    several = without.table["diagnosis"].str.contains(" | ", regex=False)
    assert several.any() and (status[several] == "one of").all() and (status[~several] == "decoded").all()
    truth = _text(demo_slice[2]).set_index("patient_id")["diagnosis"]
    exact = ring.decode_marked(table)  # with the pseudonyms: the key resolves every alias
    shown = exact.table.set_index("patient_id")["diagnosis"]
    assert (shown == truth.loc[shown.index]).all() and (exact.status_frame()["diagnosis"] == "decoded").all()
    strangers = table.head(3).assign(pseudonym=["Rnobody", "R" + "0" * 32, ""])
    found = ring.decode_marked(strangers)
    assert (found.status_frame()["patient_id"] == "not found").all() and found.table["patient_id"].isna().all()


def test_a_release_that_does_not_describe_its_columns_is_never_called_unchanged():
    """Fail closed: a method this app does not know, or a generalization entry that cannot be read, leaves the
    columns it may have changed "unknown" — never "unchanged"."""
    from ppdp_desktop.core.methods import REGISTRY, register, unregister
    from ppdp_desktop.core.release.lookup_marks import column_marks, describes_its_columns
    from tests.toy_method import TOY, ToyMethod

    attributes = {"id": {"role": "identifier"}, "age": {"role": "quasi-identifier"},
                  "diag": {"role": "sensitive"}, "note": {"role": "insensitive"}}
    assert all(describes_its_columns(name) for name in REGISTRY)
    register(ToyMethod())  # a plug-in: registered, but not one whose release.json lists what it changed
    try:
        assert not describes_its_columns(TOY)
        plugin = column_marks({"method": TOY, "attributes": attributes}, ["age", "diag", "note", "count"])
    finally:
        unregister(TOY)
    assert {n: m.status for n, m in plugin.items()} == {"age": "unknown", "diag": "unknown", "note": "unknown"}
    broken = {"method": "uniform", "attributes": attributes, "sensitive": [{"attribute": "diag"}],
              "reidentification": {"generalization": {"levels": "age"}}}
    marks = column_marks(broken, ["id", "age", "diag", "note"])
    assert {n: m.status for n, m in marks.items()} == {"id": "unknown", "age": "unknown", "diag": "randomized",
                                                        "note": "unchanged"}
    assert not any(m.is_original for n, m in marks.items() if n != "note")


def test_value_lookup_json_and_refusals(demo_slice, capsys):
    """--value decodes an alias, not a record: its JSON says what it stands for and whether exactly; --json
    cannot share stdout with a decoded table."""
    folder = demo_slice[0]
    ring = _release(demo_slice, "personalized", ["--method", "personalized", *METHODS["personalized"][0]])
    base = ["lookup", str(folder / "personalized"), str(folder / "personalized.ppdpkey"),
            "--passphrase-file", str(folder / "pass.txt")]
    alias1 = ring.payload["aliases"]["diagnosis"]["alias1"]
    shared = next(a for a, values in alias1.items() if len(values) > 1)
    assert main([*base, "--value", shared, "--attribute", "diagnosis", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["stands_for"] == alias1[shared] and document["exact"] is False
    assert main([*base, "--file", str(folder / "patients.csv"), "--out", "-", "--json"]) == 2
    assert "cannot go with --out -" in capsys.readouterr().err

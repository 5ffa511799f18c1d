"""Step 4 takes a hierarchy file for a numeric, date or text quasi-identifier (issue 31, point 2), refuses one that
does not fit in words naming the file, the values and what to do, and describes each column's built-in levels
truly (point 11): driven with clicks, keys and the file dialog answered."""
from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from clinical_data import write_clinical_xlsx  # noqa: E402
from conftest import shared_adult  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from test_gui_kind_change import adult_subset, answer_question, choose, load  # noqa: E402

from ppdp_desktop.core.data.schema import Role  # noqa: E402
from ppdp_desktop.core.taxonomy.io import load_taxonomy  # noqa: E402
from ppdp_desktop.gui import hierarchy_rows  # noqa: E402
from ppdp_desktop.gui.hierarchy_rows import FILE  # noqa: E402

ROLES_STEP, SENSITIVITY_STEP, METHOD_STEP, RUN_STEP = 1, 2, 3, 4


def to_step_four(window, sensitive: str, quasi: list[str]):
    """Roles on step 2, step 3 as it comes, step 4 with the protection ticked; the protection section."""
    window.go_to(ROLES_STEP)
    roles = window.pages[ROLES_STEP]
    roles.set_role(sensitive, Role.SENSITIVE)
    for column in quasi:
        roles.set_role(column, Role.QUASI_IDENTIFIER)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    assert window.stack.currentIndex() == METHOD_STEP
    page = window.pages[METHOD_STEP]
    section = page.protection
    page.scroll.ensureWidgetVisible(section.enabled)
    if not section.enabled.isChecked():
        section.enabled.click()
    return section


def click_import(qtbot, monkeypatch, section, column: str, path: Path) -> None:
    """Click the column's Import hierarchy… and choose ``path`` in the file dialog."""
    monkeypatch.setattr(hierarchy_rows.QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    button = section.rows[column].import_button
    assert button.isVisible()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_a_numeric_quasi_identifier_takes_an_arx_hierarchy(window, qtbot, monkeypatch, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 600))
    section = to_step_four(window, "occupation", ["age", "sex"])
    page = window.pages[METHOD_STEP]
    row = section.rows["age"]
    assert not row.import_button.isVisible()  # interval widths first, as before
    choose(qtbot, section.modes["age"], "hierarchy")
    assert row.import_button.isVisible() and not row.edit.isVisible()
    assert "Import a hierarchy file for age" in section.message.text() and not page.is_complete()
    # a file made for another column: refused, naming the file, the values missing and what to do
    seen: list[str] = []
    answer_question(qtbot, "OK", seen)
    click_import(qtbot, monkeypatch, section, "age", shared_adult("adult_hierarchy_education.csv"))
    assert len(seen) == 1 and seen[0].startswith("adult_hierarchy_education.csv does not fit column 'age'")
    assert "values of the column are not in it" in seen[0] and "'39'" in seen[0] and "add them to the file" in seen[0]
    assert "age" not in window.state.taxonomies
    # ARX's own age hierarchy fits
    click_import(qtbot, monkeypatch, section, "age", shared_adult("adult_hierarchy_age.csv"))
    assert window.state.taxonomies["age"].depth == 4
    assert "the hierarchy from adult_hierarchy_age.csv (4 levels)" in section.rows["age"].note.text()
    assert page.is_complete() and section.message.text() == ""
    assert window.state.project.protection["intervals"] == {} and window.state.project.protection["cuts"] == {}
    window.go_to(RUN_STEP)
    qtbot.waitUntil(lambda: window.state.outcome is not None, timeout=120_000)
    generalization = window.state.outcome.main.reidentification.generalization
    assert generalization.heights["age"] == 4  # ARX's levels: 0-4, 0-9, 0-19, *
    labels = {label for level in range(5) for label in generalization.hierarchies["age"].labels(level)}
    assert set(window.state.outcome.main.table["age"].astype(str)) <= labels | {"*", ""}
    # saved with the project, and shown again as that hierarchy
    project = tmp_path / "adult.ppdp.json"
    assert window.save_project(project)
    assert window.open_project(project)
    qtbot.waitUntil(lambda: window.state.dataset is not None and not window.state.worker.is_running(), timeout=30_000)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    again = window.pages[METHOD_STEP].protection
    assert again.modes["age"].currentText() == FILE and window.pages[METHOD_STEP].is_complete()
    assert "its hierarchy (4 levels), kept with the project" in again.rows["age"].note.text()


def test_text_and_date_quasi_identifiers_are_described_truly_and_take_a_file(window, qtbot, monkeypatch, tmp_path):
    path = write_clinical_xlsx(tmp_path / "faelle.xlsx", 400)
    window.load_data(path, {"header_row": 2})
    qtbot.waitUntil(lambda: window.state.dataset is not None and not window.state.worker.is_running(), timeout=60_000)
    section = to_step_four(window, "Hauptdiagnose (ICD-10)", ["Geschlecht", "Geburtsdatum", "PLZ"])
    notes = {name: row.note.text() for name, row in section.rows.items()}
    assert "each value is either kept or suppressed to *" in notes["Geschlecht"]
    assert "digit" not in notes["Geschlecht"] and "digit" not in notes["Geburtsdatum"]
    assert "each date is generalized to its month, year and decade" in notes["Geburtsdatum"]
    date = notes["Geburtsdatum"].split("e.g. ")[1].split(" → ")
    assert len(date[0]) == 10 and date[1] == date[0][:7] and date[2] == date[0][:4] and date[-1].startswith("*")
    assert "its codes of digits lose one digit from the right per level" in notes["PLZ"]
    plz = notes["PLZ"].split("e.g. ")[1].split(" → ")
    assert plz[0] in set(window.state.dataset.frame["PLZ"]) and plz[1] == plz[0][:4] + "*" and plz[4] == plz[0][0] + "****"
    # a regional hierarchy for the postcodes, as an ARX file
    regions = {"0": "Sachsen / Sachsen-Anhalt / Thüringen", "1": "Berlin", "2": "Hamburg", "8": "Bayern", "9": "Thüringen"}
    postcodes = sorted(set(window.state.dataset.frame["PLZ"]))
    arx = tmp_path / "plz_hierarchy.csv"
    arx.write_text("".join(f"{p};{p[:2]}xxx;{regions[p[0]]};*\n" for p in postcodes), encoding="utf-8")
    click_import(qtbot, monkeypatch, section, "PLZ", arx)
    assert "the hierarchy from plz_hierarchy.csv (3 levels)" in section.rows["PLZ"].note.text()
    assert window.state.taxonomies["PLZ"].depth == 3
    # step 2 shows the imported tree for editing
    window.go_to(ROLES_STEP)
    roles = window.pages[ROLES_STEP]
    roles.table.setCurrentCell(list(window.state.dataset.frame.columns).index("PLZ"), 0)
    assert roles.editor.taxonomy() is window.state.taxonomies["PLZ"] and roles.editor.problems() == []
    assert "Berlin" in roles.editor.taxonomy()


def test_dp_lists_postcodes_and_dates_by_their_kind(window, qtbot, tmp_path):
    path = write_clinical_xlsx(tmp_path / "faelle.xlsx", 300)
    window.load_data(path, {"header_row": 2})
    qtbot.waitUntil(lambda: window.state.dataset is not None and not window.state.worker.is_running(), timeout=60_000)
    window.go_to(ROLES_STEP)
    window.pages[ROLES_STEP].set_role("Hauptdiagnose (ICD-10)", Role.SENSITIVE)
    window.go_to(SENSITIVITY_STEP)
    window.go_to(METHOD_STEP)
    dp = window.pages[METHOD_STEP].editors["dp-microagg"].parameters
    items = {dp.attributes.item(i).text() for i in range(dp.attributes.count())}
    kind = window.state.dataset.schema.attributes["PLZ"].kind.label  # the kind's word on step 2
    assert f"PLZ ({kind}, as categories)" in items and "Geburtsdatum (date, as categories)" in items
    assert "Größe (cm) (numeric)" in items and "Geschlecht (categorical)" in items


def test_a_hierarchy_file_replaces_a_taxonomy_made_in_the_window_only_when_asked(window, qtbot, monkeypatch, tmp_path):
    load(qtbot, window, adult_subset(tmp_path, 400))
    window.go_to(ROLES_STEP)
    roles = window.pages[ROLES_STEP]
    roles.set_role("education", Role.QUASI_IDENTIFIER)
    roles.table.setCurrentCell(list(window.state.dataset.frame.columns).index("education"), 0)
    roles.editor.add_child(roles.editor.model.index_for("*"), "Some group")  # a taxonomy made in the window
    roles.editor.move(roles.editor.model.index_for("Bachelors"), roles.editor.model.index_for("Some group"))
    made = window.state.taxonomies["education"]
    section = to_step_four(window, "occupation", ["education"])
    assert "its taxonomy from step 2 (2 levels)" in section.rows["education"].note.text()
    seen: list[str] = []
    answer_question(qtbot, "No", seen)
    click_import(qtbot, monkeypatch, section, "education", shared_adult("adult_hierarchy_education.csv"))
    assert len(seen) == 1 and "Replace it by adult_hierarchy_education.csv?" in seen[0]
    assert window.state.taxonomies["education"] is made
    answer_question(qtbot, "Yes", seen)
    click_import(qtbot, monkeypatch, section, "education", shared_adult("adult_hierarchy_education.csv"))
    tree = window.state.taxonomies["education"]
    assert tree.parents() == load_taxonomy(shared_adult("adult_hierarchy_education.csv"), "education").parents()

"""Steps 3 and 4 read no taxonomy on a click (issue 31 point 10), checked by structure, never by time: the job
settings read a stored tree only when a method uses it, once per stored form. ``benchmarks/bench_gui_stalls.py
steps`` measures the stalls themselves."""
from __future__ import annotations

import pytest

from ppdp_desktop.core import project as project_module
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.taxonomy.tree import Taxonomy


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The attributes of every stored taxonomy read (``from_dict`` in the project module)."""
    seen: list[str] = []
    original = project_module.from_dict

    def spy(data, attribute=None, source=""):
        seen.append(attribute)
        return original(data, attribute, source)

    monkeypatch.setattr(project_module, "from_dict", spy)
    return seen


def stored_project() -> Project:
    project = Project(roles={"dx": "sensitive", "born": "quasi-identifier"})
    project.set_taxonomy(Taxonomy.flat("born", [f"19{y:02d}-01-01" for y in range(100)]))
    tree = Taxonomy("dx")
    tree.add(tree.root, "Heart")
    tree.add("Heart", "I21.0")
    project.set_taxonomy(tree)
    return project


def test_the_job_settings_read_a_stored_tree_only_when_used_and_once(reads):
    project = stored_project()
    for _ in range(20):  # a click's checks: each method's precheck, the step list's completeness
        settings = project.settings()
        assert sorted(settings.taxonomies) == ["born", "dx"]
    assert reads == []
    assert settings.taxonomies["dx"].find("I21.0").parent.label == "Heart"
    assert project.settings().taxonomies["dx"] is settings.taxonomies["dx"]
    assert reads == ["dx"]
    edited = Taxonomy("dx")
    edited.add(edited.root, "I21.0")
    project.set_taxonomy(edited)  # another tree stored: read again, once
    tree = project.settings().taxonomies["dx"]
    assert tree.find("I21.0").parent is tree.root and project.settings().taxonomies["dx"] is tree
    assert reads == ["dx", "dx"]


def test_the_trees_being_edited_take_the_place_of_the_stored_ones(reads):
    project = stored_project()
    live = Taxonomy.flat("dx", ["I21.0"])
    settings = project.settings(taxonomies={"dx": live})
    assert settings.taxonomies["dx"] is live and dict(settings.taxonomies)["dx"] is live
    assert reads == ["born"]  # dict() asked for every tree: only the stored one not being edited was read


def test_storing_an_unchanged_tree_keeps_the_tree_read(reads):
    project = stored_project()
    first = project.settings().taxonomies["born"]
    project.set_taxonomy(Taxonomy.flat("born", [f"19{y:02d}-01-01" for y in range(100)]))  # a save: the same tree
    assert project.settings().taxonomies["born"] is first and reads == ["born"]


def test_clicks_on_step_four_read_no_taxonomy(window, qtbot, reads):
    window.load_demo()  # its diagnosis taxonomy is stored in the project
    qtbot.waitUntil(lambda: window.state.dataset is not None, timeout=30_000)
    assert window.state.project.taxonomies
    window.go_to(2)
    window.go_to(3)
    page = window.pages[3]
    reads.clear()
    page.protection.enabled.click()
    for k in (6, 7, 8):
        page.protection.k.setValue(k)
    page.choose("uniform")
    page.choose("finegrain")
    window.go_to(2)
    window.go_to(3)
    assert reads == []

"""The window streams a file larger than a third of the free memory, and says so (issue 19, point 2): the load
page shows the file's first records and the reason, Run plans from every record and reports on a sample, Export
streams the whole file into a release that verifies."""
from __future__ import annotations

import pandas as pd

from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import read_release
from ppdp_desktop.core.streaming.sample import SampledAnonymization
from ppdp_desktop.gui.screenshots import drive_demo


def test_the_wizard_streams_a_file_too_large_for_memory(window, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_AVAILABLE_MEMORY", "1000")  # as if the demo file took more than a third of it
    drive_demo(window, tmp_path / "shots", tmp_path)
    load_page = window.pages[0]
    assert "larger than a third of the free memory" in load_page.message.text()
    assert "Run and Export read the whole file in batches" in load_page.message.text()
    state = window.state
    assert isinstance(state.outcome.main, SampledAnonymization)
    assert [name for name, _why in state.outcome.skipped] == ["uniform"]  # the compared method is not re-read
    n = len(load_table(resource_path(DEMO_DATA)).frame)
    with read_release(tmp_path / "release") as release:
        assert any("checksums" in line for line in verify_release(release))
        assert release.metadata["n_records"] == n and len(release.table) == n
    released = pd.read_csv(tmp_path / "release" / "release.csv")
    assert released["pseudonym"].is_unique and (tmp_path / "release.ppdpkey").is_file()

"""Step 1's words about a read: the columns' summary, what was loaded (and whether settings started afresh), and
why a read stopped. Kept apart from the page so that each sentence is easy to find, test and keep true."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from ppdp_desktop.core.data.column_stats import ColumnStats
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.gui.state import same_file

#: said once another file has replaced the data in use (a new, untitled project; see WizardState.set_dataset)
AFRESH = ("Settings start afresh for this file (a new, untitled project): the method, k, the sensitivity rule, the "
          "export format and every other choice are at their defaults; only the signing key of step 7 is kept. "
          "File > Open project… brings back saved settings.")

DEMO_PRESET = " (the demo data's own roles and diagnosis taxonomy are set again)"


def afresh_text(path: Path) -> str:
    """:data:`AFRESH`, saying that the demo data comes with its preset roles and taxonomy."""
    if same_file(path, resource_path(DEMO_DATA)):
        return AFRESH.replace(" are at their defaults;", " are at their defaults" + DEMO_PRESET + ";")
    return AFRESH


def column_summary(dataset: Dataset, stats: ColumnStats) -> pd.DataFrame:
    """One row per column: kind, missing cells, distinct values (``stats`` come from the worker)."""
    columns = list(dataset.frame.columns)
    return pd.DataFrame(
        {
            "column": columns,
            "kind": [dataset.schema.attributes[c].kind.label for c in columns],
            "missing": [stats.missing[c] for c in columns],
            "distinct values": [stats.distinct[c] for c in columns],
        }
    )


def loaded_text(path: Path, dataset: Dataset, summary: pd.DataFrame, project_path: str | None, afresh: bool) -> str:
    """What was read, with which project's settings (``project_path``), or that settings start afresh."""
    missing = int(summary["missing"].sum())
    streamed = dataset.details.get("streamed")
    return ((f"{streamed} " if streamed else f"{path.name}: {dataset.n_records:,} records, ")
            + f"{dataset.frame.shape[1]} columns, {missing:,} missing cells"
            + (" in the records shown" if streamed else "")
            + (f", with the settings of the project {Path(project_path).name}" if project_path else "")
            + ". " + (afresh_text(path) + " " if afresh else "")
            + "Next: tell which columns identify people and which are sensitive.")


def stopped_text(path: Path, in_use: str | None, by_user: bool) -> str:
    """A read that stopped before it finished (Cancel, or a run started meanwhile); ``in_use``: the data that stays."""
    stays = f"the data in use ({in_use}) stays as it was" if in_use else ""
    if by_user:
        return f"Cancelled: {path.name} was not loaded" + (f"; {stays}." if stays else ".")
    return (f"Reading {path.name} was stopped before it finished" + (f", so {stays}" if stays else "")
            + "; open it again to load it.")

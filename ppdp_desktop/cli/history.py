"""``ppdp history [PROJECT]``: the release ledger's published releases, one line each, or one JSON document.

Each line: the release's ordinal in its project, its date (UTC), the project, the method, the number of records,
whether its randomness was persistent, its cumulative guarantee (the largest cumulative epsilon of a record and how
many records' values changed since the earlier releases), its signer and where it was published.
"""
from __future__ import annotations

import argparse
import math
from typing import Any

from ppdp_desktop.cli.output import emit_json, wants_json
from ppdp_desktop.core.repeat.appdata import ledger_path
from ppdp_desktop.core.repeat.ledger import Ledger, LedgerRelease

JSON_HISTORY = ("one object: ledger (the ledger file), releases (oldest first; per release: id, created, project_id, "
                "method, parameters, ordinal, folder, manifest, signer, persistent, stable_pseudonyms, cumulative, "
                "budget, override_reason, node, n_records)")


def add_arguments(hist: argparse.ArgumentParser) -> None:
    """``ppdp history``'s arguments."""
    hist.add_argument("project", nargs="?", metavar="PROJECT", help="only this project's releases (its project id: "
                      "the project file's name, or anonymize's --project)")
    hist.add_argument("--json", action="store_true", help="print one JSON document on stdout instead of sentences "
                      f"(sentences go to stderr): {JSON_HISTORY}")


def run_history(args: argparse.Namespace) -> int:
    """``ppdp history [PROJECT] [--json]``: exit 0, or 3 when the ledger cannot be read."""
    path = ledger_path()
    releases: list[LedgerRelease] = []
    if path.exists():  # listing makes no ledger
        with Ledger(path) as ledger:
            releases = ledger.releases(args.project)
    of = f" of project {args.project!r}" if args.project is not None else ""
    if not releases:
        print(f"The release ledger {path} holds no release{of}.")
    else:
        print(f"The release ledger {path} holds {len(releases)} release{'s' if len(releases) != 1 else ''}{of}:")
        for release in releases:
            print(history_line(release))
    if wants_json(args):
        emit_json(args, {"ledger": str(path), "releases": [release.to_json() for release in releases]})
    return 0


def history_line(release: LedgerRelease) -> str:
    """One release as one line."""
    date = release.created.replace("T", " ").replace("+00:00", " UTC")
    signer = f"signed by {release.signer}" if release.signer else "unsigned"
    return (f"  #{release.ordinal} {date}  project {release.project_id!r}  {release.method}  "
            f"{release.n_records:,} record{'s' if release.n_records != 1 else ''}  "
            f"persistent: {'yes' if release.persistent else 'no'}  {_cumulative(release.cumulative)}  {signer}  "
            f"{release.folder}")


def _cumulative(cumulative: dict[str, Any]) -> str:
    """The cumulative guarantee in a few words: the largest cumulative epsilon of a record, the records changed."""
    largest, changed = cumulative.get("epsilon_cumulative_max"), cumulative.get("changed")
    if largest is None and changed is None:
        return "cumulative epsilon: -"
    words = []
    if isinstance(largest, (int, float)):
        words.append("unbounded" if math.isinf(largest) else f"{largest:.4g}")
    if isinstance(changed, int):
        words.append(f"{changed:,} changed")
    return "cumulative epsilon: " + (", ".join(words) or "-")

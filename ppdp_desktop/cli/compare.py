"""``ppdp compare``: methods side by side at matched privacy, as a table or, with ``--json``, one document.

The ways of comparing (count queries, linking attacks, differential privacy, "does my analysis survive?") are the
registered methods' own (``Method.comparisons``); this command adds their options, runs the first one the
arguments ask for, prints what it found and, with ``--json``, emits ``{data, mode, parameters, rows}``."""
from __future__ import annotations

import argparse

from ppdp_desktop.cli.commands import _stdin_data
from ppdp_desktop.cli.output import emit_json, wants_json
from ppdp_desktop.cli.reading import load_data
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import Comparison, comparisons


def run_compare(args: argparse.Namespace) -> int:
    """``ppdp compare DATA``: DATA may be ``-`` (stdin)."""
    return _stdin_data(args, _compare)


def requested(args: argparse.Namespace, ways: list[Comparison] | None = None) -> Comparison:
    """The comparison the arguments ask for (the first in order); a ParameterError listing how to ask for each
    when they ask for none."""
    ways = comparisons() if ways is None else ways
    for way in ways:
        if way.requested(args):
            return way
    raise ParameterError("compare needs one of: " + "; ".join(w.usage for w in ways if w.usage) + ".")


def _compare(args: argparse.Namespace) -> int:
    from ppdp_desktop.core.anonymize import anonymize

    dataset = load_data(args)
    compared = requested(args).run(dataset, args, anonymize)
    print(compared.text)
    if wants_json(args):
        emit_json(args, {"data": dataset.label, "mode": compared.mode, "parameters": compared.parameters,
                         "rows": compared.rows})
    return 0

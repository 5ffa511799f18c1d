"""Local recoding: release the records a global node would suppress, at coarser levels or with one cell suppressed.

ARX's way, greedy: after the global node is chosen, the lattice is searched again on the records it suppresses
alone (with the same criteria, suppression share, metric and level bounds; t-closeness still against the whole
table), and those of them that form classes meeting every criterion at that round's node are released there. Rounds
repeat on what is left until a round releases nobody. Then, optionally, single quasi-identifier cells of the still
suppressed records are set to ``"*"`` where that puts them in a class meeting every criterion
(:class:`~.recoding.Recoder` says how a record joins a class, on the released text).

The bound, stated honestly: this is greedy and not proven optimal, but it never suppresses more whole records than the
global node, since only records the global node suppresses are ever recoded. The release is then judged on its text
alone by the verifier's own checks (:func:`~.verify.check_k_anonymity`, :func:`~.check_criteria.check_criteria`);
if it failed them the global solution would be kept.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.generalization.check_criteria import check_criteria
from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.lattice import search_lattice
from ppdp_desktop.core.generalization.metrics import Utility
from ppdp_desktop.core.generalization.recoding import LocalRecoding, Recoder
from ppdp_desktop.core.generalization.result import Generalization
from ppdp_desktop.core.generalization.table import aggregate_records
from ppdp_desktop.core.generalization.verify import check_k_anonymity
from ppdp_desktop.core.progress import CancelToken

MAX_ROUNDS = 32  # each round's node is coarser in practice; a bound in case it is not


def recode_locally(frame: pd.DataFrame, generalization: Generalization, *, utility: Utility | None = None,
                   search: str = "auto", cells: bool = True, cancel: CancelToken | None = None) -> Generalization:
    """``generalization`` with local recoding instead of whole-record suppression, where it keeps records.

    Parameters
    ----------
    frame : pandas.DataFrame
        The records the generalization was found on (its quasi-identifiers, and the sensitive column when a
        criterion reads it).
    generalization : Generalization
        The global solution (:func:`~.lattice.optimal_generalization`).
    utility, search
        As for the global search; each round's node is chosen by them.
    cells : bool, default True
        Then also suppress single quasi-identifier cells of the records still suppressed.

    Returns
    -------
    Generalization
        With ``local`` set (its plan and figures) and ``suppressed`` the records still suppressed whole; the global
        solution unchanged if the released text failed the verifier's check.
    """
    g = generalization
    criteria = g.criteria if g.criteria is not None else Criteria(k=g.k)
    carried = g.sensitive if criteria.needs_sensitive else None
    recoder = Recoder(frame, g.hierarchies, tuple(g.levels.values()), criteria, carried)
    if recoder.suppressed != g.suppressed:  # the search and the text disagree on what the node suppresses: keep it
        return g
    hierarchies = list(g.hierarchies.values())
    columns = {**g.hierarchies, **({carried.attribute: carried} if carried is not None else {})}
    rounds: list[tuple[int, ...]] = []
    recoded: list[int] = []
    while len(rounds) < MAX_ROUNDS and recoder.suppressed >= criteria.min_size:
        base = aggregate_records(frame[recoder.outlier], columns)
        try:
            found = search_lattice(base, hierarchies, g.k, g.suppression_limit, utility=utility, search=search,
                                   cancel=cancel, criteria=g.criteria, carried=carried, totals=recoder.totals)
        except ParameterError:  # no node meets the criteria on the outliers alone
            break
        node = tuple(found.levels.values())
        released = recoder.offer(node)
        if not released:
            break
        rounds.append(node)
        recoded.append(released)
    if cells:
        recoder.offer_cells(rounds)
    plan = LocalRecoding(tuple(rounds), tuple(recoded), tuple(int(c) for c in recoder.cells), cells, g.suppressed,
                         recoder.suppressed, recoder.precision())
    result = replace(g, local=plan, suppressed=recoder.suppressed)
    return result if passes(result, frame) else g


def passes(result: Generalization, frame: pd.DataFrame) -> bool:
    """Whether ``result``'s released text, rebuilt from its plan, passes the verifier's own checks and suppresses
    what it says (the judge of local recoding)."""
    text = result.apply(frame)
    ok, suppressed = check_k_anonymity(text, result.k, result.suppression_limit)
    if result.criteria is not None:
        sensitive = result.sensitive.attribute if result.sensitive is not None else None
        table = text.assign(**{sensitive: frame[sensitive].to_numpy()}) if sensitive is not None else text
        chains = None
        if result.sensitive is not None and result.criteria.hierarchical_t:
            chains = {v: result.sensitive.chain(v) for v in result.sensitive.values}
        met, suppressed_c, _ = check_criteria(table, list(text.columns), sensitive, result.criteria,
                                              result.suppression_limit, chains)
        ok = ok and met and suppressed_c == suppressed
    local = result.local
    return bool(ok and local is not None and suppressed == result.suppressed <= local.global_suppressed
                and int(np.sum(text.eq("*").all(axis=1))) == suppressed)

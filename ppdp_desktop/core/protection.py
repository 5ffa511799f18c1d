"""Protecting the quasi-identifiers of a release, and measuring what re-identification risk is left.

Every method protects the sensitive value; this step looks at the other side: who can be singled out
by their quasi-identifiers. It measures the prosecutor risk on the original and on the table about to
be written, and, when the user asks for k, generalizes the quasi-identifiers with their hierarchies to
the optimal k-anonymous lattice node (full-domain recoding with record suppression), in front of any
method that leaves the quasi-identifiers as they are. The k-anonymity of the written table is
re-checked independently before anything is written (fail closed).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.data.schema import Kind, Schema
from ppdp_desktop.core.errors import ParameterError, PrivacyError, TaxonomyError, setting_ref
from ppdp_desktop.core.evaluation.group_disclosure import counted_cells, summarize
from ppdp_desktop.core.evaluation.reidentification import SUPPRESSED, Reidentification
from ppdp_desktop.core.generalization import (
    Criteria,
    Generalization,
    Hierarchy,
    check_criteria,
    check_k_anonymity,
    node_generalization,
    optimal_generalization,
)
from ppdp_desktop.core.generalization.local_recoding import recode_locally
from ppdp_desktop.core.generalization.metrics import Utility
from ppdp_desktop.core.privacy.population import population_risk
from ppdp_desktop.core.privacy.risk import analyse_risk, naive_linkage
from ppdp_desktop.core.settings import ProtectionSettings
from ppdp_desktop.core.taxonomy.io import load_taxonomy
from ppdp_desktop.core.taxonomy.tree import Taxonomy, data_labels, list_values


def hierarchies_for(frame: pd.DataFrame, quasi: list[str], schema: Schema, protection: ProtectionSettings,
                    taxonomies: Mapping[str, Any]) -> dict[str, Hierarchy]:
    """One hierarchy per quasi-identifier: a declared file, interval widths (numeric), the tree edited in step 2,
    or, for a date, month/year/decade; a numeric quasi-identifier with none of them is an error naming it and
    what to give, any other gets :func:`default_hierarchy`."""
    out = {}
    for name in quasi:
        values = frame[name]
        given = protection.hierarchies.get(name)
        if given is None and name in protection.intervals:
            given = Hierarchy.from_intervals(name, values, list(protection.intervals[name]))
        if given is None and name in protection.cuts:
            given = Hierarchy.from_cuts(name, values, [list(level) for level in protection.cuts[name]])
        if given is None:
            given = taxonomies.get(name)
        if isinstance(given, Taxonomy) and given.depth <= 1:
            given = None  # a flat tree (as step 2 starts one) says no more than suppression: the built-in levels
        kind = schema.attributes[name].kind if name in schema.attributes else None
        if given is None and kind is Kind.NUMERIC:
            raise ParameterError(
                f"Quasi-identifier {name!r} is numeric and has no generalization hierarchy: give interval widths "
                f"({setting_ref('intervals', f'{name}=5,10,20')}), cut points ({setting_ref('cuts', f'{name}=18,40,65/40')}) "
                f"or a hierarchy ({setting_ref('hierarchy', f'{name}=FILE')}), or build intervals in the taxonomy "
                "editor (step 2).", setting="hierarchy", column=name
            )
        out[name] = _hierarchy(name, values, given) if given is not None else builtin_hierarchy(name, values, kind)
    return out


def builtin_hierarchy(name: str, values: pd.Series, kind: Kind | None) -> Hierarchy:
    """The levels of a quasi-identifier that has no hierarchy of its own (nor a taxonomy of more than one level):
    a date's month, year and decade, else :func:`default_hierarchy`. Step 4 shows an example of them."""
    return Hierarchy.from_dates(name, values) if kind is Kind.DATE else default_hierarchy(name, values)


def read_hierarchy(path: str | Path, column: str, values: pd.Series) -> Taxonomy:
    """A hierarchy file (an ARX hierarchy .csv or our .json) for ``column``, checked against its ``values``
    (:func:`hierarchy_problem`); a :class:`TaxonomyError` names the file, what does not fit and what to do."""
    path = Path(path)
    tree = load_taxonomy(path, column)
    problem = hierarchy_problem(tree, values)
    if problem:
        raise TaxonomyError(f"{path.name} does not fit column {column!r}: {problem}", file=str(path), column=column)
    return tree


def hierarchy_problem(tree: Taxonomy, values: pd.Series) -> str | None:
    """Why ``tree`` cannot generalize ``values`` (a value that is not one of its leaves, a single level), or None."""
    leaves = set(tree.leaf_labels())
    absent = [v for v in data_labels(values) if v not in leaves]
    if absent:
        groups = [v for v in absent if v in tree]
        if groups:
            return (list_values(groups, "values of the column are groups in it, not values") + "; put each under a "
                    "group of its own in the file, or choose the hierarchy made for this column.")
        return (list_values(absent, "values of the column are not in it") + "; add them to the file, or choose the "
                "hierarchy made for this column.")
    try:
        Hierarchy.from_taxonomy(tree, values)
    except TaxonomyError as exc:
        return exc.message
    if tree.depth <= 1:
        return ("it has a single level (each value, then *), so it generalizes nothing. A hierarchy gives each value "
                "its broader groups, one per column: 39;35-39;30-39;* in an ARX hierarchy.")
    return None


def default_hierarchy(name: str, values: pd.Series) -> Hierarchy:
    """For a categorical quasi-identifier without a hierarchy: codes of digits of one length (postcodes,
    ZIP codes) lose one digit from the right per level ("02134", "0213*", "021**" ...); anything else is
    either kept or suppressed to ``*`` (one level)."""
    texts = pd.unique(text_column(values.dropna()))
    width = len(texts[0]) if len(texts) else 0
    if width > 1 and all(len(v) == width and v.isdigit() for v in texts):
        rows = [[v] + [v[: width - h] + "*" * h for h in range(1, width)] for v in texts]
    else:
        rows = [[v] for v in texts]
    return Hierarchy.from_rows(name, rows)


def _hierarchy(name: str, values: pd.Series, given: Any) -> Hierarchy:
    if isinstance(given, Hierarchy):
        return given
    if isinstance(given, Taxonomy):
        return Hierarchy.from_taxonomy(given, values)
    path = Path(given)
    if path.suffix.lower() == ".json":
        return Hierarchy.from_taxonomy(load_taxonomy(path, name), values)
    return Hierarchy.from_arx_csv(path, name, values)


def criteria_of(protection: ProtectionSettings) -> Criteria | None:
    """The criteria beyond k the custodian asked for (None: k alone, or nothing); their ``k`` is the one asked, or 1."""
    if not protection.criteria_given:
        return None
    c, l = protection.recursive if protection.recursive is not None else (None, None)
    return Criteria(k=int(protection.k or 1), distinct_l=protection.l_diversity,
                    entropy_l=None if protection.entropy_l is None else float(protection.entropy_l),
                    recursive_c=None if c is None else float(c), recursive_l=None if l is None else int(l),
                    t=None if protection.t_closeness is None else float(protection.t_closeness),
                    hierarchical_t=protection.t_distance == "hierarchical", average_risk=protection.average_risk,
                    highest_risk=protection.highest_risk)


def sensitive_hierarchy(frame: pd.DataFrame, sensitive: str, protection: ProtectionSettings,
                        taxonomies: Mapping[str, Any], tree_needed: bool = False) -> Hierarchy:
    """The sensitive column's hierarchy for l-diversity and t-closeness: its hierarchy file or taxonomy when the
    custodian gave one, else a flat one (each value, then ``*``). ``tree_needed`` (hierarchical t-closeness): a
    flat one is an error saying what to give."""
    values = frame[sensitive]
    given = protection.hierarchies.get(sensitive, taxonomies.get(sensitive))
    if isinstance(given, Taxonomy) and given.depth <= 1:
        given = None
    hierarchy = _hierarchy(sensitive, values, given) if given is not None else Hierarchy.from_rows(
        sensitive, [[v] for v in pd.unique(text_column(values.dropna()))])
    if tree_needed and hierarchy.height <= 1:
        raise ParameterError(
            f"Hierarchical t-closeness measures distances over the taxonomy of {sensitive!r}, which has a single level: "
            f"give a hierarchy with groups ({setting_ref('hierarchy', f'{sensitive}=FILE')}, or build a taxonomy in step 2), "
            "or use "
            f"{setting_ref('t-distance', 'equal')}.", setting="t-distance", column=sensitive)
    return hierarchy


def protect(frame: pd.DataFrame, quasi: list[str], schema: Schema, protection: ProtectionSettings,
            taxonomies: Mapping[str, Any], node: Sequence[int] | None = None,
            sensitive: str | None = None) -> Generalization | None:
    """The optimal generalization of ``quasi`` meeting k and the criteria asked (None when none was asked).

    Criteria without k imply k = 1; l-diversity and t-closeness read ``sensitive`` (the job's sensitive column, with
    its hierarchy: :func:`sensitive_hierarchy`). ``node``: levels of ``quasi`` to keep (a project's previous release's,
    issue 30), used when they are still k-anonymous within the suppression limit on ``frame`` and no criterion beyond
    k is asked; otherwise the optimal node is searched afresh (the caller tells the two apart by the levels it gets)."""
    protection.check()
    criteria = criteria_of(protection)
    k = protection.k if protection.k is not None else (1 if criteria is not None else None)
    if k is None or not quasi:
        if k is not None:
            asked = "k-anonymity needs" if criteria is None else "k-anonymity and the privacy criteria need"
            raise ParameterError(f"{asked} the quasi-identifier columns: give them {setting_ref('quasi', 'COLS')}.",
                                 setting="quasi")
        return None
    hierarchies = hierarchies_for(frame, quasi, schema, protection, taxonomies)
    carried = None
    if criteria is not None and criteria.needs_sensitive:
        if not sensitive or sensitive not in frame.columns:
            raise ParameterError("l-diversity and t-closeness are measured on the sensitive column: name it with "
                                 f"{setting_ref('sensitive', 'COL')}.", setting="sensitive")
        carried = sensitive_hierarchy(frame, sensitive, protection, taxonomies,
                                      tree_needed=criteria.t is not None and criteria.hierarchical_t)
    if node is not None and criteria is None:
        kept = node_generalization(frame[quasi], hierarchies, int(k), float(protection.suppression), node)
        if kept is not None:
            return locally_recoded(frame, quasi, protection, kept)
    utility = Utility(protection.metric, dict(protection.weights), dict(protection.min_levels), dict(protection.max_levels))
    columns = [*quasi, *([carried.attribute] if carried is not None else [])]
    found = optimal_generalization(frame[columns], hierarchies, int(k), float(protection.suppression),
                                   utility=utility, search=protection.search, criteria=criteria, sensitive=carried)
    return locally_recoded(frame, quasi, protection, found, utility)


def locally_recoded(frame: pd.DataFrame, quasi: list[str], protection: ProtectionSettings, found: Generalization,
                    utility: Utility | None = None) -> Generalization:
    """``found`` with local recoding when the custodian asked for it (``--local-recoding``), else as it is."""
    if not protection.local_recoding:
        return found
    columns = [*quasi, *([found.sensitive.attribute] if found.sensitive is not None else [])]
    return recode_locally(frame[columns], found, utility=utility, search=protection.search)


def released_quasi(frame: pd.DataFrame, quasi: list[str], generalization: Generalization | None,
                   columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """The quasi-identifiers as they will be released, in the original row order: generalized (and
    suppressed) when a generalization was chosen, else as the method leaves them."""
    if generalization is not None:
        return generalization.apply(frame[generalization.columns])
    # a column the method leaves as it is keeps its array (Arrow text stays Arrow text: no Python string per cell)
    return pd.DataFrame({c: columns[c] if c in columns else frame[c].array for c in quasi}, index=frame.index)


def measure(frame: pd.DataFrame, released: pd.DataFrame, written: pd.DataFrame, quasi: list[str],
            protection: ProtectionSettings, generalization: Generalization | None, randomized: bool,
            sensitive_as_is: bool = True) -> Reidentification:
    """Risk on the original and on the release (``released``: aligned with ``frame``); the table about to be
    ``written`` is re-checked against the generalization's promise (fail closed): k, and the criteria
    (:func:`check_release_criteria`; ``sensitive_as_is``: the written sensitive column is the original one)."""
    k = None if generalization is None else generalization.k
    before = analyse_risk(frame[quasi], quasi, protection.threshold, k)
    # Suppressed records (every quasi-identifier "*") cannot be linked by their quasi-identifiers: as in ARX,
    # they are left out of the release's risk (their number is stated with the generalization).
    kept = ~released[quasi].eq(SUPPRESSED).all(axis=1) if generalization is not None else slice(None)
    after = analyse_risk(released.loc[kept, quasi], quasi, protection.threshold, k)
    if generalization is not None:
        ok, suppressed = check_k_anonymity(written[quasi], generalization.k, generalization.suppression_limit)
        if not ok or suppressed != generalization.suppressed:
            raise PrivacyError(
                f"The table about to be written is not {generalization.k}-anonymous within the suppression limit "
                f"({suppressed:,} records suppressed); nothing was written."
            )
        check_release_criteria(frame, released, written, quasi, generalization, sensitive_as_is)
    linkage = naive_linkage(frame[quasi], released[quasi], quasi) if randomized and quasi else None
    population = None
    if quasi and (protection.sampling_fraction is not None or protection.population):  # issue 33: stated by the custodian
        population = population_risk(released.loc[kept, quasi], quasi, len(frame), protection.threshold,
                                     protection.sampling_fraction, protection.population or None, generalization)
    return Reidentification(list(quasi), before, after, generalization, linkage, population=population,
                            sensitive_as_is=sensitive_as_is)


def check_release_criteria(frame: pd.DataFrame, released: pd.DataFrame, written: pd.DataFrame, quasi: list[str],
                           generalization: Generalization, sensitive_as_is: bool) -> None:
    """The criteria beyond k, checked by the independent :func:`check_criteria` on the quasi-identifiers about to be
    written and the sensitive values: the written ones when the method releases them unchanged, else the original
    ones (a randomization method's groups meet the criteria on the true values). Raises :class:`PrivacyError`
    naming what fails; nothing is written then."""
    criteria = generalization.criteria
    if criteria is None:
        return
    hierarchy = generalization.sensitive
    sensitive = hierarchy.attribute if hierarchy is not None else None
    if sensitive is None:
        table = written[quasi]
    elif sensitive_as_is and sensitive in written.columns:
        table = written[[*quasi, sensitive]]
    else:
        table = released[quasi].assign(**{sensitive: frame[sensitive].to_numpy()})
    chains = sensitive_chains(hierarchy) if hierarchy is not None and criteria.hierarchical_t else None
    ok, suppressed, problems = check_criteria(table, quasi, sensitive, criteria, generalization.suppression_limit, chains)
    if not ok or suppressed != generalization.suppressed:
        found = " ".join(problems) or f"{suppressed:,} records are suppressed, not the {generalization.suppressed:,} planned."
        raise PrivacyError(f"The table about to be written does not meet the privacy criteria: {found} Nothing was "
                           "written.")


def sensitive_chains(hierarchy: Hierarchy) -> dict[str, list[str]]:
    """Each value of the sensitive column with its labels from level 0 up to ``*`` (hierarchical t-closeness)."""
    return {value: hierarchy.chain(value) for value in hierarchy.values if value != ""}


def check_group_bound(frame: pd.DataFrame, quasi: list[str], sensitive: str, generalization: Generalization | None,
                      bound: float, source: str, randomizes_quasi: bool = False) -> None:
    """The stronger bound the custodian may ask for (``ProtectionSettings.require_group_bound``): in every group of
    records sharing their quasi-identifiers as released (generalized when k was asked; suppressed records left
    out), no sensitive value may hold more than ``bound`` of the records. Checked exactly on the original records:
    the share each group's estimate from the release converges to, whatever the noise. Raises
    :class:`PrivacyError` naming the worst groups and what would make it pass (fail closed)."""
    if not quasi:
        raise ParameterError("The group bound needs the quasi-identifier columns: give them "
                             f"{setting_ref('quasi', 'COLS')}.", setting="quasi")
    groups = generalization.apply(frame[generalization.columns]) if generalization is not None else frame[quasi]
    table = groups.assign(**{sensitive: frame[sensitive].to_numpy()}) if sensitive not in quasi else groups
    found = summarize(counted_cells(table, quasi, sensitive, "counted on the original records"), bound, source, shown=3)
    if found.groups_above == 0:
        return
    examples = "; ".join(
        ", ".join(f"{c} {v}" for c, v in zip(quasi, g.labels)) + f": {g.share:.0%} {g.value!r} of {g.records:,.0f}"
        for g in found.worst)
    need = math.ceil(1.0 / bound - 1e-9)
    remedy = ("coarser or fewer quasi-identifiers" + (" (or a smaller l)" if source == "1/l" else "") if randomizes_quasi else
              f"a larger k (at least {need}), coarser hierarchies for {', '.join(quasi)}, or fewer quasi-identifiers")
    raise PrivacyError(
        f"The group bound does not hold: in {found.groups_above:,} of {found.n_groups:,} groups of records sharing "
        f"{', '.join(quasi)} ({found.records_above:,.0f} records), one {sensitive} value holds more than {source} = "
        f"{bound:.0%} of the group, so anyone who knows a person's {', '.join(quasi)} could guess their {sensitive} "
        f"from the release's statistics more often than that. Largest groups above it: {examples}. Nothing was "
        f"written. Every group needs at least {need} records and no value above {bound:.0%}: ask for {remedy}, "
        "or a larger group bound."
    )

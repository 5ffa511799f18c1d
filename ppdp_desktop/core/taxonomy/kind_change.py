"""A column read as another kind (step 2 of the window, or its import options): what its settings keep.

Reading a column as another kind can change the text of its values: ``"02134"`` read as a number is ``2134``,
and read as text again it is ``"02134"`` (the cell's text). Everything made for the column's values follows
them, matched through the records that hold them before and after (:func:`relabelling`): a leaf of its
taxonomy is renamed to the value as now read (its group and aliases stay), and a per-value pair or privacy
choice moves to the new text. What cannot follow is said in words before anything changes
(:attr:`KindChange.lost`): two values that become one but sat in different groups or had different pairs,
a value whose new text is already a group's label, and interval widths or cut points, which only numbers
have.

Labels of categorical, text and date columns are the exact text read, so only a change to or from numeric
renames anything. The loops here run over distinct values, never over records.
"""
from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ppdp_desktop.core.data.domain import text_column
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import TaxonomyError
from ppdp_desktop.core.taxonomy.io import from_dict, to_dict
from ppdp_desktop.core.taxonomy.tree import Taxonomy, TaxonomyNode

#: the protection settings (``project.protection``) that only a numeric column can have
NUMERIC_ONLY = {"intervals": "interval widths", "cuts": "cut points"}
_SHOWN = 3  # renamed values named as examples


@dataclass
class KindChange:
    """What a column keeps when it is read as ``new`` instead of ``old``.

    Attributes
    ----------
    taxonomy : Taxonomy or None
        The column's taxonomy as carried over: the very tree given when no label changes, else a relabelled
        copy (the tree being edited is left alone until the change is made); None if it had none.
    renamed : dict
        Old value -> its text as now read, for the values whose text changes.
    protection, pairs, value_choices : dict or None
        The project's settings with what no longer applies removed or relabelled; None: unchanged.
    kept, lost : list of str
        Sentences (without the column's name) for the user: what is kept, and what cannot be kept.
    """

    column: str
    old: Kind
    new: Kind
    taxonomy: Taxonomy | None = None
    renamed: dict[str, str] = field(default_factory=dict)
    protection: dict[str, Any] | None = None
    pairs: dict[str, Any] | None = None
    value_choices: dict[str, int] | None = None
    kept: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)


def relabelling(old: pd.Series, new: pd.Series) -> dict[str, list[str]]:
    """Each distinct non-missing text of ``old`` with the text(s) the same records hold in ``new``, first
    seen first (an empty list: those records are empty now). Empty when the records do not line up."""
    if len(old) != len(new):
        return {}
    pairs = pd.DataFrame({"old": text_column(old).to_numpy(), "new": text_column(new).to_numpy()}).drop_duplicates()
    out: dict[str, list[str]] = {}
    for before, after in zip(pairs["old"].tolist(), pairs["new"].tolist()):
        if before:
            targets = out.setdefault(before, [])
            if after:
                targets.append(after)
    return out


def review_kind_change(column: str, old: Kind, new: Kind, old_values: pd.Series, new_values: pd.Series,
                       taxonomy: Taxonomy | None, protection: Mapping[str, Any], role: str | None = None,
                       pairs: Mapping[str, Any] | None = None,
                       value_choices: Mapping[str, int] | None = None) -> KindChange:
    """What ``column`` keeps when read as ``new`` (``old_values``/``new_values``: the column before and after,
    record for record); ``pairs`` and ``value_choices`` are given for the sensitive column only."""
    change = KindChange(column, old, new)
    mapping = {k: v for k, v in relabelling(old_values, new_values).items() if v != [k]}
    if taxonomy is not None:
        change.taxonomy, change.renamed, lost = carry_taxonomy(taxonomy, mapping)
        change.lost += lost
        if has_edits(taxonomy):
            change.kept.append(_kept_tree(change, role))
    elif mapping:
        change.renamed = {k: v[0] for k, v in mapping.items() if v}
    _drop_numeric_settings(change, protection)
    if pairs and mapping:
        change.pairs = _relabel_values(pairs, mapping, "sensitivity pair", change.lost)
    if value_choices and mapping:
        change.value_choices = _relabel_values(value_choices, mapping, "privacy choice", change.lost)
    return change


def carry_taxonomy(taxonomy: Taxonomy, mapping: Mapping[str, list[str]]) -> tuple[Taxonomy, dict[str, str], list[str]]:
    """``taxonomy`` with each leaf renamed as ``mapping`` says (old text -> new texts, only those that change):
    the tree itself when no leaf changes, else a copy. Returns the tree, the renames made and what was lost."""
    moving = {label: targets for label, targets in mapping.items()
              if (node := taxonomy.find(label)) is not None and node.is_leaf}
    if not moving:
        return taxonomy, {}, []
    tree = from_dict(to_dict(taxonomy), taxonomy.attribute)
    held: dict[str, TaxonomyNode] = {}
    for label in moving:  # out of the way first, so that two values may swap their texts
        held[label] = tree.rename(label, _placeholder(tree, label))
    renamed: dict[str, str] = {}
    lost: list[str] = []
    for label, targets in moving.items():
        node = held[label]
        if not targets:
            _remove(tree, node, label)
            lost.append(f"{label!r} is empty when read this way, so it leaves the taxonomy")
            continue
        first, *more = targets
        there = tree.find(first)
        if there is not None and not there.is_leaf:
            _remove(tree, node, label)
            lost.append(f"{label!r} is read as {first!r}, which is a group of the taxonomy: the value leaves it "
                        "(put it under a group on step 2)")
            continue
        group = node.parent.label if node.parent is not None else ""
        if there is not None:  # two values become one
            aliased = node.alias1_is_set or node.alias2_is_set
            if there.parent is not node.parent or aliased:
                where = f"under {there.parent.label!r}" if there.parent is not None else "in the taxonomy"
                lost.append(f"{label!r} is read as {first!r} like another value: it stays {where}"
                            + (f", no longer also under {group!r}" if there.parent is not node.parent else "")
                            + (f" (the aliases of {label!r} go)" if aliased else ""))
            _remove(tree, node, label)
            renamed[label] = first
            continue
        try:
            tree.rename(node, first)
        except TaxonomyError as exc:
            _remove(tree, node, label)
            lost.append(f"{label!r} cannot become {first!r} in the taxonomy ({exc.message}), so it leaves it")
            continue
        renamed[label] = first
        for extra in more:  # one number written in several ways ("02134" and "2134"): a value each
            if extra in tree:
                continue
            try:
                tree.add(group, extra, node.row() + 1)
            except TaxonomyError as exc:
                lost.append(f"{extra!r} (written like {first!r} before) has no place in the taxonomy ({exc.message})")
    return tree, renamed, lost


def _remove(tree: Taxonomy, node: TaxonomyNode, label: str) -> None:
    """Delete a held leaf; where its group would become a value that clashes, keep it under its old text."""
    try:
        tree.delete(node)
    except TaxonomyError:
        tree.rename(node, label if label not in tree else _placeholder(tree, label))


def _placeholder(tree: Taxonomy, label: str) -> str:
    candidate = f"{label} (moving {secrets.token_hex(6)})"
    while candidate in tree:
        candidate = f"{label} (moving {secrets.token_hex(6)})"
    return candidate


def has_edits(taxonomy: Taxonomy) -> bool:
    """Whether the tree holds work: groups, or an alias set by hand (a flat tree of the data is rebuilt in a moment)."""
    return taxonomy.depth > 1 or any(leaf.alias1_is_set or leaf.alias2_is_set for leaf in taxonomy.leaves())


def _kept_tree(change: KindChange, role: str | None) -> str:
    tree = change.taxonomy
    levels = f"{tree.depth} level{'s' if tree.depth != 1 else ''}" if tree is not None else ""
    text = f"its taxonomy ({levels}) is kept"
    if change.renamed:
        shown = ", ".join(f"{a!r} is now {b!r}" for a, b in list(change.renamed.items())[:_SHOWN])
        more = len(change.renamed) - _SHOWN
        text += f", its values renamed as now read ({shown}{f' and {more:,} more' if more > 0 else ''})"
    if change.new is Kind.NUMERIC:
        text += ("; step 4 uses it as the column's hierarchy" if role == "quasi-identifier"
                 else "; it is used again when the column is a quasi-identifier (step 4) or read as text")
    return text


def _drop_numeric_settings(change: KindChange, protection: Mapping[str, Any]) -> None:
    """Interval widths and cut points belong to numbers: a column read as anything else loses them."""
    if change.new is Kind.NUMERIC:
        return
    kept = dict(protection)
    for key, words in NUMERIC_ONLY.items():
        table = dict(kept.get(key) or {})
        if change.column in table:
            given = table.pop(change.column)
            kept[key] = table
            shown = "/".join(",".join(f"{x:g}" for x in level) for level in given) if key == "cuts" else \
                ",".join(f"{x:g}" for x in given)
            change.lost.append(f"its {words} {shown} (step 4): only a numeric column has them; a {change.new.label} "
                               "column is generalized by its taxonomy (step 2)")
    if kept != dict(protection):
        change.protection = kept


def _relabel_values(settings: Mapping[str, Any], mapping: Mapping[str, list[str]], what: str,
                    lost: list[str]) -> dict[str, Any]:
    """Per-value settings keyed by the values' new texts; two values that become one keep the first's."""
    out: dict[str, Any] = {}
    source: dict[str, str] = {}
    for label, value in settings.items():
        targets = mapping.get(label, [label])
        if not targets:
            lost.append(f"the {what} of {label!r} ({value}): the value is empty when read this way")
        for target in targets:
            if target in out and out[target] != value:
                lost.append(f"the {what} of {label!r} ({value}): {label!r} is read as {target!r} like "
                            f"{source[target]!r}, whose {what} ({out[target]}) it keeps")
                continue
            out.setdefault(target, value)
            source.setdefault(target, label)
    return out

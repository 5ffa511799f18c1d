"""What dp-microagg reads from its inputs before planning: each numeric column's domain (declared, or the
data's min and max, disclosed), whether it holds whole numbers, each categorical column's taxonomy, and the
columns an unlinked release leaves out (or refuses)."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.dp.numeric import NumericDomain
from ppdp_desktop.core.taxonomy.io import load_taxonomy
from ppdp_desktop.core.taxonomy.node import data_labels
from ppdp_desktop.core.taxonomy.tree import Taxonomy

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.dp.settings import DPSettings


UNLINKED_K = (f"An unlinked release ({setting_ref('layout', 'unlinked')}) publishes no quasi-identifier, so "
              f"k-anonymity of them ({setting_ref('k-anonymity')}) does not apply: remove one of the two.")
#: the generalization criteria's settings, by ProtectionSettings attribute: each reads groups of quasi-identifiers
_CRITERIA_FLAGS = {"k": "k-anonymity", "l_diversity": "l-diversity", "entropy_l": "entropy-l", "recursive": "recursive",
                   "t_closeness": "t-closeness", "average_risk": "average-risk", "highest_risk": "highest-risk"}


def unlinked_refusal(protection: object) -> str | None:
    """Why an unlinked release cannot take ``protection``'s generalization: k or any criterion on groups of
    quasi-identifiers asked (it publishes none, so they do not apply); None when none is asked."""
    given = [flag for name, flag in _CRITERIA_FLAGS.items() if getattr(protection, name, None) is not None]
    if not given:
        return None
    if given == ["k-anonymity"]:
        return UNLINKED_K
    named = ", ".join(setting_ref(flag) for flag in given)
    return (f"An unlinked release ({setting_ref('layout', 'unlinked')}) publishes no quasi-identifier, so criteria "
            f"on groups of them ({named}) do not apply: it has no groups to hold them. Remove "
            f"{'it' if len(given) == 1 else 'them'} or release the columns linked.")


def unprotected_columns(dataset: Dataset, dp: DPSettings) -> list[str]:
    """The columns an unlinked release leaves out (``--unprotected drop``): every released column it does not
    protect. With ``--unprotected refuse`` (the default) any such column stops the job, named."""
    others = [c for c in dataset.schema.released_columns if c not in dp.attributes]
    if others and dp.unprotected != "drop":
        raise ParameterError(
            f"An unlinked release ({setting_ref('layout', 'unlinked')}) publishes protected columns only, but "
            f"{', '.join(map(repr, others))} {'is' if len(others) == 1 else 'are'} neither protected nor an identifier. "
            f"Protect them ({setting_ref('attributes')}), tag them as identifiers (removed), or leave them out of the "
            f"release with {setting_ref('unprotected', 'drop')}.", setting="unprotected", value=dp.unprotected)
    return others


def whole_numbers(column: pd.Series) -> bool:
    """Whether ``column`` is treated as whole numbers (an integer type, or every value whole; missing cells are
    skipped): its grid step is then a whole number too. The window asks the same before a job is run."""
    if pd.api.types.is_integer_dtype(column):
        return True
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[~np.isnan(values)]
    return bool(np.all(values == np.round(values)))


def data_rows(positions: np.ndarray) -> str:
    """Records named by their number, counting the data rows from 1 (a table without its file's rows)."""
    return f"data rows {', '.join(str(r + 1) for r in positions[:5])}{'…' if len(positions) > 5 else ''}"


def numeric_domain(column: pd.Series, declared: tuple[float, float] | None, source: str,
                   where: Callable[[np.ndarray], str] = data_rows) -> NumericDomain:
    """The declared domain (refusing data outside it), or the data's min:max marked as disclosed. ``where`` names
    records (0-based positions) as the file shows them (:func:`~ppdp_desktop.core.data.source_rows.rows_text`)."""
    name = str(column.name)
    values = column.to_numpy(dtype=np.float64)
    missing = np.flatnonzero(np.isnan(values))
    if len(missing):
        raise ParameterError(f"Column {name!r} of {source} has {len(missing)} blank cells ({where(missing)}); "
                             f"choose what to do with them ({setting_ref('blanks', f'{name}=CHOICE')}).",
                             setting="blanks", column=name)
    integer = whole_numbers(column)
    if declared is None:
        return NumericDomain(name, float(values.min()), float(values.max()), integer, from_data=True)
    domain = NumericDomain(name, float(declared[0]), float(declared[1]), integer)
    outside = np.flatnonzero((values < domain.lo) | (values > domain.hi))
    if len(outside):
        row = outside[0]
        more = f" (and {len(outside) - 1:,} more: {where(outside)})" if len(outside) > 1 else ""
        raise ParameterError(f"Column {name!r} of {source}: value {column.iloc[row]:g} in {where(outside[:1])}{more} "
                             f"lies outside the declared domain {domain.lo:g}:{domain.hi:g}; widen its declared domain "
                             f"({setting_ref('domain', f'{name}=LO:HI')}).", setting="domain", column=name)
    return domain



def taxonomy_of(column: pd.Series, given: Any, exclude: Any = ()) -> tuple[Taxonomy, bool]:
    """The column's taxonomy (``given``: a Taxonomy or a file), else a flat one of its values (``True``: taken from
    the data), leaving out ``exclude`` (an imputed blank's label: the root itself)."""
    name = str(column.name)
    if given is None:  # labels in sorted order: the taxonomy (and so the release) is the same whatever the row order
        return Taxonomy.flat(name, sorted(set(data_labels(column)) - set(exclude))), True
    if isinstance(given, Taxonomy):
        return given, False
    return load_taxonomy(given, name), False


def groups_values(taxonomy: Any) -> bool:
    """An edited taxonomy says more than the data's own values only if it groups them (depth > 1); a flat
    one is built from the data instead, and the release says so."""
    return isinstance(taxonomy, Taxonomy) and taxonomy.depth > 1

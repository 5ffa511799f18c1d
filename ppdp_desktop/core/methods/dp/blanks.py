"""What dp-microagg does with a protected column's blank cells, as the user chose (``--blanks COL=CHOICE``, the window's
"Blank cells"): the choice is required for a column with blanks, and each is what keeps the guarantee:

- ``value``: a categorical column's blank is a value of its own, "(blank)", a leaf under its taxonomy's root (a
  number column has no such value: refused);
- ``drop``: the records with a blank there are left out of the release; whether a record is kept depends on that
  record alone, so epsilon holds as before over the records kept, but the release's number of records discloses how
  many were left out (someone who knows every other record learns whether a person's cell was blank: the release's
  notes say so);
- ``impute``: a value chosen without looking at the records is put in: a numeric column's middle of its declared
  range (of its range in the data when none is declared, which the release discloses anyway), a categorical column's
  most general label (its taxonomy's root, "*": any value). A value computed from the other records (their mean,
  their most common value) would make each imputed record depend on every other one, which the epsilon
  accounting does not allow.

:func:`blank_treatments` decides (refusing a column whose blanks have no choice, naming the rows in the file);
:func:`~ppdp_desktop.core.data.blanks.treat_blanks` applies the decision before the job, and the release states it.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ppdp_desktop.core.data.blanks import IMPUTE, VALUE, BlankTreatment, blank_mask, free_label
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.data.source_rows import rows_text
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.methods.dp.inputs import taxonomy_of, whole_numbers
from ppdp_desktop.core.taxonomy.io import from_dict, to_dict
from ppdp_desktop.core.taxonomy.node import data_labels
from ppdp_desktop.core.taxonomy.tree import Taxonomy

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.dp.settings import DPSettings

#: the choices of a categorical column and of a numeric one, in words (the message naming a column without one)
CATEGORICAL_CHOICES = ("value (a value of their own, '(blank)'), drop (leave those records out of the release) or "
                       "impute (the most general label of its taxonomy: any value)")
NUMERIC_CHOICES = "drop (leave those records out of the release) or impute (the middle of its range)"


def is_numeric(dataset: Dataset, name: str, taxonomies: dict[str, Any]) -> bool:
    """Whether dp-microagg treats ``name`` as numbers: a numeric column without a taxonomy of its own."""
    return dataset.schema.attributes[name].kind is Kind.NUMERIC and name not in taxonomies


def blank_treatments(dataset: Dataset, dp: DPSettings, taxonomies: dict[str, Any]) -> list[BlankTreatment]:
    """What is done with the blank cells of each protected column that has some, as ``dp.blanks`` chose.

    Raises
    ------
    ParameterError
        For a column with blank cells and no choice (naming how many, their rows in the file and the choices), or a
        numeric column whose blanks were to be a value of their own.
    """
    out = []
    for name in dp.attributes:
        if name not in dataset.frame.columns:
            continue  # the plan names it
        column = dataset.frame[name]
        blank = blank_mask(column)
        cells = int(blank.sum())
        if not cells:
            continue
        numeric = is_numeric(dataset, name, taxonomies)
        choice = dp.blanks.get(name)
        if choice is None or (numeric and choice == VALUE):
            where = rows_text(dataset, np.flatnonzero(blank))
            ways = NUMERIC_CHOICES if numeric else CATEGORICAL_CHOICES
            flag = setting_ref("blanks", f"{name}=CHOICE")
            first = (f"Column {name!r} of {dataset.label} holds numbers, so its {cells:,} blank cell(s) ({where}) cannot "
                     "be a value of their own" if choice == VALUE else
                     f"Column {name!r} of {dataset.label} has {cells:,} blank cell(s) ({where})")
            raise ParameterError(f"{first}; choose what to do with them in {flag}: {ways}.", setting="blanks",
                                 column=name, row=int(dataset.source_rows.file_rows(np.flatnonzero(blank)[:1])[0])
                                 if dataset.source_rows is not None else int(np.flatnonzero(blank)[0]) + 1)
        fill: Any = None
        why = ""
        if choice == VALUE:
            given = taxonomies.get(name)
            taken = set(data_labels(column)) | (set(_taxonomy(column, given).parents()) if given is not None else set())
            fill = free_label(taken)
        elif choice == IMPUTE and numeric:
            fill, why = _middle(column, blank, dp.domains.get(name))
        elif choice == IMPUTE:
            fill = _taxonomy(column, taxonomies.get(name)).root.label
            why = "the most general label of its taxonomy: any value, chosen without looking at the records"
        out.append(BlankTreatment(name, choice, cells, fill, why))
    return out


def _taxonomy(column: Any, given: Any) -> Taxonomy:
    return taxonomy_of(column, given)[0] if given is not None else Taxonomy.flat(str(column.name), [])


def _middle(column: Any, blank: np.ndarray, declared: tuple[float, float] | None) -> tuple[float, str]:
    """The middle of the declared range (else of the data's, disclosed anyway), a whole number for a whole column."""
    values = column.to_numpy(dtype=np.float64)[~blank]
    if declared is not None:
        lo, hi, source = float(declared[0]), float(declared[1]), "declared range"
    elif len(values):
        lo, hi, source = float(values.min()), float(values.max()), "range in the data"
    else:
        raise ParameterError(f"Column {column.name!r} has no value at all, so nothing can be imputed for its blank "
                             "cells; leave it unprotected.", setting="blanks", column=str(column.name))
    middle = (lo + hi) / 2
    if whole_numbers(column):
        middle = float(math.floor(middle))
    return middle, f"the middle of its {source}, {lo:g} to {hi:g}: a fixed value, chosen without looking at the records"


def with_blank_leaf(taxonomy: Taxonomy, label: str) -> Taxonomy:
    """``taxonomy`` with ``label`` (blank cells as a value of their own) as a leaf under its root, if not in it yet."""
    if taxonomy.find(label) is not None:
        return taxonomy
    copy = from_dict(to_dict(taxonomy), taxonomy.attribute, "the taxonomy with the blank cells' value")
    copy.add(copy.root, label)
    return copy


def treatment_of(dataset: Dataset, name: str) -> BlankTreatment | None:
    """What was done with ``name``'s blank cells before the job (None: nothing, it had none)."""
    return next((t for t in dataset.blank_cells if t.column == name), None)

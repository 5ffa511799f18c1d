"""The schema: each column's role in the release and its kind.

Roles come from the papers: an *identifier* is removed (and later replaced by a pseudonym), a
*quasi-identifier* could link a record to a person, a *sensitive* attribute is what must not be
learned, an *insensitive* one is released as it is.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from ppdp_desktop.core.errors import ParameterError, setting_ref

if TYPE_CHECKING:  # pandas is imported where a column's kind is inferred: the window's first page needs none
    import pandas as pd


class Role(str, Enum):
    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"


class Kind(str, Enum):
    """How a column's values are read and treated.

    * categorical: values are categories, released as the exact text read;
    * numeric: numbers (perturbed, microaggregated or put into intervals as numbers);
    * date: calendar dates, kept as the exact text read and generalized by month and year;
    * text: codes and identifiers (postcodes, record numbers, "02134"): text even when every value is
      made of digits, so leading zeros survive; generalized by masking trailing characters.
    """

    CATEGORICAL = "categorical"
    NUMERIC = "numeric"
    DATE = "date"
    TEXT = "text"

    @property
    def label(self) -> str:
        """The word the window shows."""
        return KIND_LABELS[self]


KIND_LABELS = {Kind.CATEGORICAL: "categorical", Kind.NUMERIC: "numeric", Kind.DATE: "date",
               Kind.TEXT: "code / free text"}  # not "identifier": that is a role (step 2), not a kind
_KIND_WORDS = {"categorical": Kind.CATEGORICAL, "category": Kind.CATEGORICAL, "numeric": Kind.NUMERIC,
               "number": Kind.NUMERIC, "date": Kind.DATE, "text": Kind.TEXT, "text-identifier": Kind.TEXT,
               "identifier": Kind.TEXT, "code": Kind.TEXT, "free text": Kind.TEXT,
               "code / free text": Kind.TEXT}


def parse_kind(word: str, column: str = "") -> Kind:
    """The kind meant by ``word`` (``categorical``, ``numeric``, ``date``, ``text`` / ``text-identifier``).

    Raises
    ------
    ParameterError
        Naming the column and the words allowed.
    """
    kind = _KIND_WORDS.get(str(word).strip().lower())
    if kind is None:
        where = f" of column {column!r}" if column else ""
        raise ParameterError(
            f"Unknown kind {word!r}{where}; use categorical, numeric, date or text (text-identifier)."
        )
    return kind


def parse_kind_assignments(items: Iterable[str] | None) -> dict[str, str]:
    """``["zip=text", "age=numeric"]`` (the CLI's ``--kind``) as ``{"zip": "text", "age": "numeric"}``."""
    kinds: dict[str, str] = {}
    for item in items or ():
        column, sep, word = str(item).rpartition("=")
        if not sep or not column.strip():
            raise ParameterError(f"{setting_ref('kind')} {item!r} is not COLUMN=KIND; for example "
                                 f"{setting_ref('kind', 'ZIPCode=text')}.", setting="kind", value=item,
                                 allowed="COLUMN=KIND")
        kinds[column.strip()] = parse_kind(word, column.strip()).value
    return kinds


def infer_kind(column: pd.Series) -> Kind:
    """Numeric for numeric dtypes (booleans excluded), categorical for everything else."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(column):
        return Kind.CATEGORICAL
    if pd.api.types.is_numeric_dtype(column):
        return Kind.NUMERIC
    return Kind.CATEGORICAL


@dataclass(frozen=True)
class Attribute:
    """One column of the table: its name, role and kind."""

    name: str
    role: Role = Role.INSENSITIVE
    kind: Kind = Kind.CATEGORICAL

    def to_json(self) -> dict[str, str]:
        return {"role": self.role.value, "kind": self.kind.value}


@dataclass
class Schema:
    """The ordered attributes of a table. Columns not tagged otherwise are insensitive."""

    attributes: dict[str, Attribute] = field(default_factory=dict)

    @classmethod
    def infer(cls, frame: pd.DataFrame) -> Schema:
        """Every column insensitive, with its kind inferred from the dtype."""
        return cls({str(c): Attribute(str(c), Role.INSENSITIVE, infer_kind(frame[c])) for c in frame.columns})

    def with_roles(self, roles: Mapping[str, Role | str]) -> Schema:
        """A copy with the given columns' roles set; unknown column names are an error."""
        unknown = [name for name in roles if name not in self.attributes]
        if unknown:
            raise ParameterError(
                f"Column {unknown[0]!r} is not in the data; the columns are: {', '.join(self.attributes)}."
            )
        updated = dict(self.attributes)
        for name, role in roles.items():
            updated[name] = Attribute(name, Role(role), updated[name].kind)
        return Schema(updated)

    def names(self, role: Role) -> list[str]:
        return [a.name for a in self.attributes.values() if a.role is role]

    @property
    def sensitive(self) -> list[str]:
        return self.names(Role.SENSITIVE)

    @property
    def identifiers(self) -> list[str]:
        return self.names(Role.IDENTIFIER)

    @property
    def released_columns(self) -> list[str]:
        """Every column except identifiers, in table order."""
        return [a.name for a in self.attributes.values() if a.role is not Role.IDENTIFIER]

    def to_json(self) -> dict[str, dict[str, str]]:
        return {name: a.to_json() for name, a in self.attributes.items()}

    @classmethod
    def from_json(cls, data: Mapping[str, Mapping[str, str]]) -> Schema:
        return cls({name: Attribute(name, Role(v["role"]), Kind(v["kind"])) for name, v in data.items()})


def free_name(base: str, taken: Iterable[str]) -> str:
    """``base``, or ``base_2``, ``base_3`` … : the first name that is not among ``taken`` (compared ignoring
    case, as SPSS and Excel users would). A column the release adds (pseudonyms, sub-table ids) never
    replaces a data column of the same name."""
    used = {str(t).casefold() for t in taken}
    name, n = base, 1
    while name.casefold() in used:
        n += 1
        name = f"{base}_{n}"
    return name


def parse_column_list(text: str | None) -> list[str]:
    """Split a comma-separated list of column names from the command line."""
    if not text:
        return []
    return [part.strip() for part in text.split(",") if part.strip()]


def roles_from_lists(
    sensitive: Iterable[str] = (), identifiers: Iterable[str] = (), quasi: Iterable[str] = ()
) -> dict[str, Role]:
    """Collect role assignments, refusing a column given two roles."""
    roles: dict[str, Role] = {}
    for role, names in ((Role.SENSITIVE, sensitive), (Role.IDENTIFIER, identifiers), (Role.QUASI_IDENTIFIER, quasi)):
        for name in names:
            if name in roles and roles[name] is not role:
                raise ParameterError(
                    f"Column {name!r} is given two roles ({roles[name].value} and {role.value}); give it one."
                )
            roles[name] = role
    return roles

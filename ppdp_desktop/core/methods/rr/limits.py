"""How large a randomized-response job may be, checked from the columns' numbers of values before any work.

Everything rr computes is dense over the table of every combination of the quasi-identifiers' and the sensitive
column's values: the optimizer's risk (hundreds of times), the custodian's and the recipient's checks, the report's
estimates. One evaluation of the risk passes every quasi-identifier group through each quasi-identifier's matrix and
every group's sensitive values through the sensitive column's (:func:`risk_steps`); a job whose evaluation exceeds
:data:`MAX_RISK_STEPS`, or whose table exceeds :data:`MAX_TABLE_CELLS`, is refused at once, naming the columns, their
numbers of values and the one to coarsen (issue 31: a birth date with 4,562 values ran for minutes before failing).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import ParameterError, setting_ref

#: the table of every combination is built at most this large (the report's and ``estimate --table``'s estimates)
MAX_TABLE_CELLS = 5_000_000
#: the multiplications of one evaluation of the risk (0.1-0.3 s on a laptop core; the optimizer needs 100-500)
MAX_RISK_STEPS = 100_000_000

#: how a column of each kind can be coarsened (said in the refusal)
COARSER = {
    Kind.DATE: "e.g. the month or year instead of the day",
    Kind.NUMERIC: "e.g. bands of 5 or 10 instead of single numbers",
    Kind.TEXT: "e.g. the first digits or characters of each code",
    Kind.CATEGORICAL: "e.g. broader groups of values",
}


def risk_steps(dims: Sequence[int]) -> int:
    """Multiplications of one evaluation of the risk over the dense table ``dims`` (quasi-identifiers, then the
    sensitive column): ``prod(qi) * (sum(qi) + d_s ** 2)``."""
    qi = [int(d) for d in dims[:-1]]
    return math.prod(qi) * (sum(qi) + int(dims[-1]) ** 2)


def within_limits(dims: Sequence[int]) -> bool:
    """Whether a table of ``dims`` is small enough to plan and check (:data:`MAX_TABLE_CELLS`,
    :data:`MAX_RISK_STEPS`)."""
    return math.prod(int(d) for d in dims) <= MAX_TABLE_CELLS and risk_steps(dims) <= MAX_RISK_STEPS


def most_values(dims: Sequence[int], axis: int) -> int:
    """The most values column ``axis`` may have with the others as they are (0: even 1 is too many)."""
    def fits(d: int) -> bool:
        return within_limits([d if i == axis else x for i, x in enumerate(dims)])

    low, high = 0, int(dims[axis])
    while low < high:  # the largest d in [0, dims[axis]] that fits (fits is monotone in d)
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def check_table_size(names: Sequence[str], dims: Sequence[int], kinds: Sequence[Kind | None]) -> None:
    """Refuse a job over :func:`within_limits` before anything is computed.

    Parameters
    ----------
    names, dims, kinds
        The quasi-identifiers then the sensitive column: names, numbers of values and kinds (None: unknown).

    Raises
    ------
    ParameterError
        Naming every column with its number of values, the combinations and steps against the limits, and the
        column with the most values: to coarsen (to at most how many values, with an example for its kind) or to
        remove from the quasi-identifiers.
    """
    if within_limits(dims):
        return
    columns = [f"{n} ({d:,} values)" for n, d in zip(names, dims)]
    quasi = columns[:-1]
    listed = (f"quasi-identifier {quasi[0]}" if len(quasi) == 1 else
              "quasi-identifiers " + ", ".join(quasi[:-1]) + " and " + quasi[-1])
    cells, steps = math.prod(int(d) for d in dims), risk_steps(dims)
    axis = max(range(len(dims)), key=lambda i: int(dims[i]))
    name, kind = names[axis], kinds[axis]
    keep = _round_down(most_values(dims, axis))
    example = f" ({COARSER[kind]})" if kind in COARSER else ""
    if keep >= 2:
        coarsen = f"{name} has the most values: coarsen it in the data file to at most about {keep:,}{example} and load it again"
    else:
        coarsen = f"even 2 values of {name} would be too many with the other columns: coarsen several of them in the data file"
    remove = ("" if axis == len(dims) - 1 else
              f", or remove it from the quasi-identifiers ({setting_ref('quasi', 'COLS')}; it is then released as it is)")
    over = []
    if cells > MAX_TABLE_CELLS:
        over.append(f"at most {MAX_TABLE_CELLS:,} combinations")
    if steps > MAX_RISK_STEPS:
        over.append(f"at most {_millions(MAX_RISK_STEPS)} steps")
    raise ParameterError(
        f"Randomized response cannot plan on these columns in reasonable time: the {listed} with the "
        f"sensitive column {columns[-1]} make {cells:,} combinations, and computing the risk over them once takes "
        f"{_millions(steps)} steps ({' and '.join(over)}; the plan computes it hundreds of times). {coarsen}{remove}.",
        setting="quasi", value=",".join(names[:-1]),
        allowed=f"at most {MAX_TABLE_CELLS:,} combinations and {MAX_RISK_STEPS:,} steps per computation of the risk")


def _round_down(n: int) -> int:
    """``n`` rounded down to two significant digits (1,748 -> 1,700): a figure to aim below, not a promise."""
    if n < 100:
        return n
    unit = 10 ** (len(str(n)) - 2)
    return n // unit * unit


def _millions(n: int) -> str:
    return f"{n / 1e6:,.0f} million" if n >= 1_000_000 else f"{n:,}"

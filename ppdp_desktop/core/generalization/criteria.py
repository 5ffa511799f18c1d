"""The privacy criteria a generalized release must meet, combinable (issue 33).

Per equivalence class (records sharing their generalized quasi-identifiers), with ``n_c`` records and the
counts of the sensitive values in it:

* k-anonymity: ``n_c >= k``;
* highest prosecutor risk ``<= r``: ``1 / n_c <= r``, i.e. ``n_c >= ceil(1 / r)``;
* distinct l-diversity: at least ``l`` distinct sensitive values;
* entropy l-diversity: ``-sum p log p >= log l`` over the class's value shares ``p``;
* recursive (c, l)-diversity: with the counts sorted ``r_1 >= r_2 >= ... >= r_m``,
  ``r_1 < c * (r_l + ... + r_m)`` (a class with fewer than ``l`` values fails);
* t-closeness: the earth mover's distance between the class's distribution and the whole table's is at most
  ``t``; the equal ground distance gives half the L1 distance, the hierarchical one Li et al.'s cost over the
  sensitive column's hierarchy (moving mass between values whose lowest common label is at level ``h`` of
  ``H`` costs ``h / H``).

Records of a class that fails are suppressed (all quasi-identifiers ``"*"``). The table-wide criterion,
average prosecutor risk ``<= r`` (classes / records released), is then met by suppressing the smallest
remaining classes first, which suppresses the fewest records. A missing sensitive value counts as a value of its
own. The whole table's distribution for t-closeness is over every record, suppressed ones included (as ARX).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

from ppdp_desktop.core.errors import ParameterError


@dataclass(frozen=True)
class Criteria:
    """The criteria of one release (None: not asked). See the module docstring for each definition."""

    k: int = 1
    distinct_l: int | None = None
    entropy_l: float | None = None
    recursive_c: float | None = None
    recursive_l: int | None = None
    t: float | None = None
    hierarchical_t: bool = False
    average_risk: float | None = None
    highest_risk: float | None = None

    def __post_init__(self) -> None:
        _whole("k", self.k, 1)
        if self.distinct_l is not None:
            _whole("distinct_l", self.distinct_l, 1)
        if self.entropy_l is not None:
            _real("entropy_l", self.entropy_l, 1.0, math.inf, "a number >= 1")
        if (self.recursive_c is None) != (self.recursive_l is None):
            raise ParameterError("Recursive (c,l)-diversity needs both c and l.")
        if self.recursive_l is not None:
            _whole("recursive_l", self.recursive_l, 2)
            _real("recursive_c", self.recursive_c, 0.0, math.inf, "a number > 0", open_low=True)
        if self.t is not None:
            _real("t", self.t, 0.0, 1.0, "a number from 0 to 1")
        if not isinstance(self.hierarchical_t, bool):
            raise ParameterError(f"hierarchical_t must be true or false; got {self.hierarchical_t!r}.")
        for name in ("average_risk", "highest_risk"):
            value = getattr(self, name)
            if value is not None:
                _real(name, value, 0.0, 1.0, "a risk above 0 and at most 1", open_low=True)

    @property
    def min_size(self) -> int:
        """The smallest class size allowed: ``k``, raised by the highest-risk threshold (``ceil(1 / r)``)."""
        if self.highest_risk is None:
            return self.k
        return max(self.k, math.ceil(1 / Fraction(repr(float(self.highest_risk)))))

    @property
    def group_size(self) -> int:
        """The fewest records a released group can hold under these criteria: :attr:`min_size`, or the number of
        different sensitive values distinct, entropy (``H <= log m``) or recursive l-diversity need, if larger."""
        needed = [self.min_size, self.distinct_l or 1, self.recursive_l or 1]
        if self.entropy_l is not None:
            needed.append(math.ceil(self.entropy_l - 1e-12))
        return max(needed)

    @property
    def needs_sensitive(self) -> bool:
        """Whether a criterion reads the sensitive column (l-diversity or t-closeness)."""
        return any(v is not None for v in (self.distinct_l, self.entropy_l, self.recursive_l, self.t))

    def monotone(self, limit: int) -> bool:
        """Whether feasibility only grows with generalization, so that the search may tag the lattice.

        With no suppression every criterion here is monotone; with suppression, entropy and recursive
        l-diversity, t-closeness and the average risk are not (a failing class merged into a passing one can make
        the union fail), while k, the highest risk and distinct l-diversity are.
        """
        if limit == 0:
            return True
        return self.entropy_l is None and self.recursive_l is None and self.t is None and self.average_risk is None

    def to_json(self) -> dict[str, object]:
        """The criteria asked, for ``release.json`` (only those set)."""
        out: dict[str, object] = {"k": self.k}
        for name in ("distinct_l", "entropy_l", "recursive_c", "recursive_l", "t", "average_risk", "highest_risk"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.t is not None:
            out["t_distance"] = "hierarchical" if self.hierarchical_t else "equal"
        return out

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Criteria:
        """The inverse of :meth:`to_json` (raises :class:`ParameterError` for a bad entry)."""
        known = {"k", "distinct_l", "entropy_l", "recursive_c", "recursive_l", "t", "average_risk", "highest_risk"}
        unknown = sorted(set(data) - known - {"t_distance"})
        if unknown:
            raise ParameterError(f"Unknown privacy criteria: {', '.join(unknown)}.")
        distance = data.get("t_distance", "equal")
        if distance not in ("equal", "hierarchical"):
            raise ParameterError(f"t_distance must be 'equal' or 'hierarchical'; got {distance!r}.")
        return cls(**{name: data[name] for name in known if name in data},  # type: ignore[arg-type]
                   hierarchical_t=distance == "hierarchical")

    def short(self) -> str:
        """The criteria in a few words for a title, e.g. ``k = 5, distinct 3-diversity`` (k only when asked)."""
        parts = [f"k = {self.k}"] if self.k > 1 else []
        if self.distinct_l is not None:
            parts.append(f"distinct {self.distinct_l}-diversity")
        if self.entropy_l is not None:
            parts.append(f"entropy {self.entropy_l:g}-diversity")
        if self.recursive_l is not None:
            parts.append(f"recursive ({self.recursive_c:g},{self.recursive_l})-diversity")
        if self.t is not None:
            parts.append(f"{self.t:g}-closeness")
        if self.average_risk is not None:
            parts.append(f"average risk <= {self.average_risk:g}")
        if self.highest_risk is not None:
            parts.append(f"highest risk <= {self.highest_risk:g}")
        return ", ".join(parts) or "k = 1"

    def lines(self, sensitive: str | None = None) -> list[str]:
        """The criteria in plain words, one line each."""
        of = f" of {sensitive}" if sensitive else ""
        if self.k > 1:
            out = [f"k-anonymity: every released group has at least {self.k} records."]
        else:  # k = 1 promises no group size: say what the other criteria make of it
            size = self.group_size
            out = ["k-anonymity: not asked (k = 1); " + (
                f"the criteria below make every released group at least {size} records." if size > 1 else
                "a released group may be a single record, and the criteria below are what every group meets.")]
        if self.highest_risk is not None:
            out.append(f"Highest prosecutor risk at most {self.highest_risk:g}: every released group has at least "
                       f"{self.min_size} records.")
        if self.average_risk is not None:
            out.append(f"Average prosecutor risk at most {self.average_risk:g}: released groups / released records.")
        if self.distinct_l is not None:
            out.append(f"Distinct {self.distinct_l}-diversity: every released group has at least {self.distinct_l} "
                       f"different values{of}.")
        if self.entropy_l is not None:
            out.append(f"Entropy {self.entropy_l:g}-diversity: the entropy of the values{of} in every released group is "
                       f"at least log({self.entropy_l:g}).")
        if self.recursive_l is not None:
            out.append(f"Recursive ({self.recursive_c:g},{self.recursive_l})-diversity{of}: in every released group the "
                       f"most frequent value is rarer than {self.recursive_c:g} times the values from the "
                       f"{self.recursive_l}th most frequent on.")
        if self.t is not None:
            distance = "hierarchical" if self.hierarchical_t else "equal"
            out.append(f"{self.t:g}-closeness ({distance} ground distance): the distribution{of} in every released group "
                       f"is within {self.t:g} of the whole table's (earth mover's distance).")
        return out


def _whole(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ParameterError(f"The {name!r} criterion must be a whole number >= {low}. Got {value!r} instead.")


def _real(name: str, value: object, low: float, high: float, what: str, open_low: bool = False) -> None:
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))
    if ok:
        v = float(value)  # type: ignore[arg-type]
        ok = (v > low if open_low else v >= low) and v <= high
    if not ok:
        raise ParameterError(f"The {name!r} criterion must be {what}. Got {value!r} instead.")

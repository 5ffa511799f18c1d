"""Per-value privacy requirements: the (rho1_i, rho2_i) pairs of a sensitive attribute (SPEC 1.1-1.2).

A value whose pair is absent carries no privacy concern (the "less frequent is more sensitive"
rule leaves frequent values unconstrained). ``gamma_i`` is the largest amplification the pair
tolerates: ``gamma = rho2 (1 - rho1) / (rho1 (1 - rho2))`` (thesis Eq. 6).
"""
from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ppdp_desktop.core.data.domain import CategoricalDomain, label_text
from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.errors import InputError, ParameterError

#: the largest amplification bound used (10^6 is no protection to speak of, yet keeps the matrix entries
#: well inside float precision): a pair with rho2 within float rounding of 1 would otherwise ask
#: for a bound of ~1e17, which the solvers meet with a retention of exactly 1 (a zero off the diagonal,
#: an infinite amplification the verifier rightly refuses); capping it is stricter than the pair asks
MAX_GAMMA = 1e6


def gamma_of(rho1: np.ndarray | float, rho2: np.ndarray | float) -> np.ndarray:
    """Amplification bound of (rho1, rho2)-privacy (at most :data:`MAX_GAMMA`); ``inf`` where ``rho1`` is
    NaN (no concern)."""
    rho1 = np.asarray(rho1, dtype=float)
    rho2 = np.asarray(rho2, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        gamma = rho2 * (1.0 - rho1) / (rho1 * (1.0 - rho2))
    return np.where(np.isnan(rho1), np.inf, np.minimum(gamma, MAX_GAMMA))


def check_pair(rho1: float, rho2: float, where: str = "") -> None:
    """Refuse a pair outside ``0 < rho1 < rho2 < 1`` with a message naming it."""
    suffix = f" for {where}" if where else ""
    if not (np.isfinite(rho1) and np.isfinite(rho2) and 0.0 < rho1 < rho2 < 1.0):
        raise ParameterError(
            f"The privacy pair{suffix} must satisfy 0 < rho1 < rho2 < 1; got rho1={rho1:g}, rho2={rho2:g}."
        )


@dataclass(frozen=True)
class SensitivityRequirement:
    """The (rho1_i, rho2_i) pairs over a domain; NaN marks a value with no privacy concern.

    ``rule`` records how the pairs were set (for the release and the report).
    """

    rho1: np.ndarray
    rho2: np.ndarray
    rule: str

    def __post_init__(self) -> None:
        if self.rho1.shape != self.rho2.shape:
            raise ParameterError("rho1 and rho2 must have one entry per value.")

    @property
    def concern(self) -> np.ndarray:
        """Boolean mask of the values that carry a privacy requirement."""
        return ~np.isnan(self.rho1)

    @property
    def gamma(self) -> np.ndarray:
        return gamma_of(self.rho1, self.rho2)

    @property
    def min_gamma(self) -> float:
        """The strictest amplification bound; ``inf`` if no value needs protection."""
        return float(np.min(self.gamma))

    def pairs_json(self, values: Sequence[object]) -> list[dict[str, object]]:
        """The pairs as JSON rows ``{value, rho1, rho2}`` (null where no concern)."""
        concern = self.concern.tolist()
        return [{"value": value, "rho1": r1 if c else None, "rho2": r2 if c else None}
                for value, r1, r2, c in zip(values, self.rho1.tolist(), self.rho2.tolist(), concern)]


def constant_pairs(domain: CategoricalDomain, rho1: float, rho2: float) -> SensitivityRequirement:
    """One pair for every value of the domain."""
    check_pair(rho1, rho2)
    m = domain.m
    return SensitivityRequirement(np.full(m, rho1), np.full(m, rho2), f"rho1={rho1:g}, rho2={rho2:g} for every value")


def theta_rule(domain: CategoricalDomain, theta: float) -> SensitivityRequirement:
    """"Less frequent is more sensitive" (SPEC 1.2): ``rho1_i = f_i/n``, ``rho2_i = theta rho1_i``.

    A value with ``rho1_i >= 1/theta`` carries no privacy concern.
    """
    if not np.isfinite(theta) or theta <= 1.0:
        raise ParameterError(f"The tolerance theta must be greater than 1; got {theta:g}.")
    rho1 = domain.counts / domain.counts.sum()
    concern = rho1 < 1.0 / theta
    return SensitivityRequirement(
        np.where(concern, rho1, np.nan),
        np.where(concern, theta * rho1, np.nan),
        f"theta={theta:g} (rho1 = relative frequency, rho2 = theta * rho1)",
    )


def read_pairs_file(path: Path) -> dict[str, tuple[float, float]]:
    """Read a CSV ``value,rho1,rho2`` (header optional) into ``{value text: (rho1, rho2)}``."""
    check_regular(path, "pairs file (CSV value,rho1,rho2)")
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"Cannot read the pairs file {Path(path).name}: {exc}.") from exc
    pairs: dict[str, tuple[float, float]] = {}
    for line_no, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or all(not cell.strip() for cell in row):
            continue
        if len(row) != 3:
            raise InputError(f"{Path(path).name}, line {line_no}: expected 3 fields value,rho1,rho2; found {len(row)}.")
        value, r1, r2 = (cell.strip() for cell in row)
        try:
            pair = (float(r1), float(r2))
        except ValueError:
            if line_no == 1:
                continue  # a header row
            raise InputError(
                f"{Path(path).name}, line {line_no}: rho1 and rho2 must be numbers; got {r1!r}, {r2!r}."
            ) from None
        check_pair(*pair, where=f"value {value!r} ({Path(path).name}, line {line_no})")
        if value in pairs:
            raise InputError(f"{Path(path).name}, line {line_no}: value {value!r} is given twice.")
        pairs[value] = pair
    return pairs


def with_overrides(
    requirement: SensitivityRequirement, domain: CategoricalDomain, overrides: dict[str, tuple[float, float]], source: str
) -> SensitivityRequirement:
    """Replace the pairs of chosen values; a value not in the domain is an error naming it."""
    index = {label_text(v): i for i, v in enumerate(domain.values)}
    unknown = [v for v in overrides if v not in index]
    if unknown:
        raise ParameterError(
            f"{source}: value {unknown[0]!r} does not occur in column {domain.attribute!r}; "
            f"check its spelling (values are matched exactly)."
        )
    rho1, rho2 = requirement.rho1.copy(), requirement.rho2.copy()
    for value, (r1, r2) in overrides.items():
        rho1[index[value]], rho2[index[value]] = r1, r2
    return SensitivityRequirement(rho1, rho2, f"{requirement.rule}; {len(overrides)} pair(s) from {source}")

"""The job's settings: the choices every method shares, and the chosen method's own settings object.

Steps 2 and 3 of the wizard (roles, taxonomies, per-value sensitivity and per-record choices) and the
seed are common to every method: :class:`AnonymizationSettings` carries them. What a method alone needs
(``l`` for randomized response, ``epsilon`` and ``k`` for differential privacy ...) lives in that
method's own :class:`MethodSettings` subclass, declared in its package with its parameters' limits
(scikit-learn style: declared once, checked by one function that names the parameter, the bad value
and what is allowed). The methods import this module; it never imports them.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ppdp_desktop.core.data.domain import CategoricalDomain
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.privacy import sensitivity as sens


# --- declared parameter limits ---------------------------------------------------------------------

@dataclass(frozen=True)
class Interval:
    """A number in ``[low, high]`` (``open_low``: strictly above ``low``); ``whole``: an integer."""

    low: float | None = None
    high: float | None = None
    open_low: bool = False
    whole: bool = False
    optional: bool = False  # ``None`` is allowed (the method then says what it needs)

    def allows(self, value: Any) -> bool:
        if value is None:
            return self.optional
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if not math.isfinite(value) or (self.whole and value != int(value)):
            return False
        if self.low is not None and (value <= self.low if self.open_low else value < self.low):
            return False
        return self.high is None or value <= self.high

    def describe(self) -> str:
        what = "a whole number" if self.whole else "a number"
        if self.low is not None and self.high is not None:
            return f"{what} from {_number(self.low)} to {_number(self.high)}"
        if self.low is not None:
            return f"{what} {'greater than' if self.open_low else 'of at least'} {_number(self.low)}"
        return what


def _number(x: float) -> str:
    """A limit as a user reads it: 1,000,000 rather than 1e+06."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def finite_float(text: str) -> float:
    """An argparse ``type``: a finite number; "nan", "inf" and words are refused by name."""
    import argparse

    try:
        value = float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; give a number such as 0.5")
    return value


#: declared limits of the size-like parameters, checked before anything is allocated
MAX_K = 1_000_000  # k of k-anonymity and of microaggregation: a group larger than any table we expect
MAX_LEVELS = 20  # generalization levels of one column (interval widths, cut-point levels)
MAX_CUTS = 10_000  # cut points of one level


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of strings."""

    options: tuple[str, ...]

    def allows(self, value: Any) -> bool:
        return value in self.options

    def describe(self) -> str:
        return "one of " + ", ".join(self.options)


class MethodSettings:
    """Base of every method's own settings (a dataclass in the method's package).

    Subclasses declare ``constraints`` (parameter name -> :class:`Interval` / :class:`OneOf`),
    ``flags`` (parameter name -> the command-line option that sets it, used in messages) and
    ``suggested`` (values a new project starts with in the window, where the dataclass default is
    "not given").
    """

    constraints: ClassVar[dict[str, Interval | OneOf]] = {}
    flags: ClassVar[dict[str, str]] = {}
    suggested: ClassVar[dict[str, Any]] = {}
    #: old flat project-file field -> parameter name (read by the project file's migration)
    legacy: ClassVar[dict[str, str]] = {}

    def check(self) -> None:
        """Raise :class:`ParameterError` naming the first parameter outside its declared limits."""
        for name, constraint in self.constraints.items():
            value = getattr(self, name)
            if not constraint.allows(value):
                flag = self.flags.get(name, name)
                raise ParameterError(f"{flag} must be {constraint.describe()}; got {value!r}.")

    # --- JSON (the project file) -------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The settings as JSON; fields that hold objects (a Taxonomy) are left to their owners."""
        out = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.metadata.get("json", True):
                out[f.name] = _jsonable(getattr(self, f.name))
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, where: str = "the project file") -> "MethodSettings":
        """Settings from JSON (unknown keys ignored; the window's suggested values fill gaps)."""
        if data is not None and not isinstance(data, dict):
            raise ParameterError(f"{where}: the settings of {cls.__name__} must be a JSON object.")
        data = {**cls.suggested, **(data or {})}
        names = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        kwargs = {}
        for key, value in data.items():
            if key in names and names[key].metadata.get("json", True):
                convert = names[key].metadata.get("from_json")
                kwargs[key] = convert(value) if convert else value
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise ParameterError(f"{where}: {exc}.") from exc


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


@dataclass
class NoSettings(MethodSettings):
    """A method with no parameters of its own (its inputs are the common settings)."""


# --- common settings ------------------------------------------------------------------------------

@dataclass
class SensitivitySettings:
    """How the (rho1, rho2) pairs are set: one pair, the theta rule, plus optional per-value overrides."""

    rho1: float | None = None
    rho2: float | None = None
    theta: float | None = None
    overrides: dict[str, tuple[float, float]] = field(default_factory=dict)
    overrides_source: str = "the pairs file"

    def requirement(self, domain: CategoricalDomain) -> sens.SensitivityRequirement:
        if (self.rho1 is None) != (self.rho2 is None):
            raise ParameterError("Give both --rho1 and --rho2, or neither.")
        if self.rho1 is not None and self.theta is not None:
            raise ParameterError("Give either --rho1/--rho2 or --theta, not both.")
        if self.rho1 is not None:
            base = sens.constant_pairs(domain, self.rho1, self.rho2)
        elif self.theta is not None:
            base = sens.theta_rule(domain, self.theta)
        else:
            raise ParameterError("Say how sensitive the values are: --rho1 X --rho2 Y, or --theta T.")
        if self.overrides:
            return sens.with_overrides(base, domain, self.overrides, self.overrides_source)
        return base


@dataclass
class ChoiceSettings:
    """Per-record privacy choices (1 value, 2 alias1, 3 alias2): from a column, per value, or one default."""

    choice_column: str | None = None
    default_choice: int | None = None
    value_choices: dict[str, int] = field(default_factory=dict)


@dataclass
class ProtectionSettings(MethodSettings):
    """Re-identification: the risk threshold for the report and, optionally, k-anonymity of the
    quasi-identifiers by generalization with their hierarchies and a record-suppression limit.

    ``hierarchies`` maps a quasi-identifier to a Taxonomy or a hierarchy file (ARX CSV or our JSON);
    ``intervals`` maps a numeric quasi-identifier to interval widths (e.g. ``[5, 10, 20]``) and ``cuts``
    to cut points per level, finest first (e.g. ``[[18, 40, 65], [40]]``). A quasi-identifier with none
    of them uses the tree edited in step 2.
    """

    k: int | None = None
    suppression: float = 0.05
    threshold: float = 0.2
    hierarchies: dict[str, Any] = field(default_factory=dict, metadata={"json": False})
    intervals: dict[str, list[float]] = field(default_factory=dict)
    cuts: dict[str, list[list[float]]] = field(default_factory=dict)
    #: refuse a release in which a released group's most frequent sensitive value has a share above the group
    #: bound (checked exactly on the original data before anything is written)
    require_group_bound: bool = False
    #: that bound (None: 1/l for a method with l, else ``threshold``); also what the report compares groups with
    group_bound: float | None = None

    constraints: ClassVar = {
        "k": Interval(low=1, high=MAX_K, whole=True, optional=True),
        "suppression": Interval(low=0.0, high=0.99),
        "threshold": Interval(low=0.0, high=1.0, open_low=True),
        "group_bound": Interval(low=0.0, high=1.0, open_low=True, optional=True),
    }
    flags: ClassVar = {"k": "--k-anonymity", "suppression": "--suppression", "threshold": "--threshold",
                       "group_bound": "--group-bound"}

    def check(self) -> None:
        """The declared limits, and at most :data:`MAX_LEVELS` levels of at most :data:`MAX_CUTS` finite
        numbers per column (checked before any hierarchy is built)."""
        super().check()
        if not isinstance(self.require_group_bound, bool):
            raise ParameterError(f"require_group_bound must be true or false; got {self.require_group_bound!r}.")
        widths = {column: [[w] for w in ws] for column, ws in self.intervals.items()}  # one level per width
        for flag, table in (("--intervals", widths), ("--cuts", self.cuts)):
            for column, levels in table.items():
                flat = [x for level in levels for x in level]
                if len(levels) > MAX_LEVELS or any(len(level) > MAX_CUTS for level in levels):
                    raise ParameterError(f"{flag} {column}: at most {MAX_LEVELS} levels of at most {MAX_CUTS:,} numbers; "
                                         f"got {len(flat):,} numbers in {len(levels)} level(s).")
                if not all(isinstance(x, (int, float)) and math.isfinite(x) for x in flat):
                    raise ParameterError(f"{flag} {column}: every width or cut point must be a finite number.")


@dataclass
class AnonymizationSettings:
    """Everything the job needs besides the data: the common choices and the method's own settings.

    ``taxonomies`` are the trees edited in step 2 (attribute -> Taxonomy), which a method may use for
    its columns; ``options`` is the chosen method's settings object (see :class:`MethodSettings`);
    ``protection`` says how the quasi-identifiers are protected and the risk judged.
    """

    sensitive: str
    method: str = ""  # empty: the registry's default method
    identifiers: list[str] = field(default_factory=list)
    quasi: list[str] = field(default_factory=list)
    sensitivity: SensitivitySettings = field(default_factory=SensitivitySettings)
    choices: ChoiceSettings = field(default_factory=ChoiceSettings)
    options: MethodSettings = field(default_factory=NoSettings)
    taxonomies: dict[str, Any] = field(default_factory=dict)
    protection: ProtectionSettings = field(default_factory=ProtectionSettings)
    seed: int | None = None


def load_overrides(path: str | Path | None) -> dict[str, tuple[float, float]]:
    """Read ``--pairs FILE`` if given."""
    return sens.read_pairs_file(Path(path)) if path else {}

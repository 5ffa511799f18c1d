"""One declaration per parameter: its limits, its command-line option, its label in the window and its help.

A method's settings dataclass declares each parameter once, with :func:`setting`::

    l: float | None = setting(None, Interval(low=1.0, open_low=True, optional=True), flag="--l",
                              label="l (risk at most 1/l)", help="bound the attribute-disclosure risk by 1/l")

and every face reads that one declaration: :func:`add_arguments` / :func:`from_args` make and read the option of
``ppdp anonymize`` (its type, choices, default and help, phrased for the command line), the window's generic
editor makes a control from it (the label, the help as tooltip, the limits as the control's range), and
:meth:`~ppdp_desktop.core.settings.MethodSettings.check` names the parameter by its key in an error that each face
phrases (:func:`~ppdp_desktop.core.errors.setting_ref`). A help text may refer to another setting with
``setting_ref(key, metavar)``.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ppdp_desktop.core.errors import cli_name, phrase

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


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of strings."""

    options: tuple[str, ...]

    def allows(self, value: Any) -> bool:
        return value in self.options

    def describe(self) -> str:
        return "one of " + ", ".join(self.options)


Constraint = Interval | OneOf


def _number(x: float) -> str:
    """A limit as a user reads it: 1,000,000 rather than 1e+06."""
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def finite_float(text: str) -> float:
    """An argparse ``type``: a finite number; "nan", "inf" and words are refused by name."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number; give a number such as 0.5")
    return value


# --- the declaration ----------------------------------------------------------------------------------

class _Factory:
    """The default of a field whose default is made by a factory (a list, a dict)."""

    def __repr__(self) -> str:
        return "FACTORY"


#: :attr:`Setting.default` of a field whose default is made by a factory
FACTORY: Any = _Factory()


@dataclass(frozen=True)
class Setting:
    """One parameter, declared once (see :func:`setting`); ``name`` is its field's name."""

    name: str = ""
    constraint: Constraint | None = None
    #: its option of ``ppdp anonymize`` (``--l``); None: not set on the command line
    flag: str | None = None
    #: its control's label in the window
    label: str = ""
    #: what it does, for ``--help`` and the window's tooltip (may hold ``setting_ref``)
    help: str = ""
    metavar: str | None = None
    #: argparse ``type`` of one word (default: from the constraint: int, a finite number, or text)
    parse: Callable[[str], Any] | None = None
    #: the option may be repeated (``action="append"``)
    repeat: bool = False
    #: the parsed option -> the field's value (e.g. ``"a,b"`` -> ``["a", "b"]``); None: as parsed
    convert: Callable[[Any], Any] | None = None
    #: argparse ``nargs`` / ``const`` of an option whose value may be left out (``--group-bound [SHARE]``)
    nargs: str | None = None
    const: Any = None
    #: the field's default (what ``--help`` shows); :data:`FACTORY` when it is made by a factory
    default: Any = FACTORY

    @property
    def key(self) -> str:
        """How messages refer to it (:func:`~ppdp_desktop.core.errors.setting_ref`): its option without dashes."""
        return self.flag.lstrip("-") if self.flag else self.name

    @property
    def dest(self) -> str:
        """Its attribute in the parsed command line."""
        return self.key.replace("-", "_")

    @property
    def title(self) -> str:
        """Its label in the window (its name in words when none is declared)."""
        return self.label or self.name.replace("_", " ")

    def cli_help(self) -> str:
        """The help of its option: the help text phrased for the command line, with the default when one is
        shown and the text does not already say it."""
        text = phrase(self.help, cli_name)
        default = self.default
        if (default is not FACTORY and default is not None and not isinstance(default, bool)
                and "default" not in text):
            text += f" (default {default})"
        return text.replace("%", "%%")


def setting(default: Any = dataclasses.MISSING, constraint: Constraint | None = None, *,
            default_factory: Callable[[], Any] | Any = dataclasses.MISSING, flag: str | None = None, label: str = "",
            help: str = "", metavar: str | None = None, parse: Callable[[str], Any] | None = None,
            repeat: bool = False, convert: Callable[[Any], Any] | None = None, nargs: str | None = None,
            const: Any = None, json: bool = True, from_json: Callable[[Any], Any] | None = None) -> Any:
    """A dataclass field that declares a parameter once: its default, limits, option, label and help.

    ``json=False``: the field is not stored in the project file; ``from_json`` converts its stored value.
    """
    declaration = Setting(constraint=constraint, flag=flag, label=label, help=help, metavar=metavar, parse=parse,
                          repeat=repeat, convert=convert, nargs=nargs, const=const,
                          default=FACTORY if default is dataclasses.MISSING else default)
    metadata: dict[str, Any] = {"setting": declaration, "json": json}
    if from_json is not None:
        metadata["from_json"] = from_json
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


_DECLARED: dict[type, dict[str, Setting]] = {}


def declared(settings_type: type) -> dict[str, Setting]:
    """The declared parameters of a settings dataclass, by field name, in field order."""
    if settings_type not in _DECLARED:
        out = {}
        for f in dataclasses.fields(settings_type):
            declaration = f.metadata.get("setting")
            if isinstance(declaration, Setting):
                out[f.name] = dataclasses.replace(declaration, name=f.name)
        _DECLARED[settings_type] = out
    return _DECLARED[settings_type]


# --- the command line --------------------------------------------------------------------------------

def add_arguments(group: argparse._ArgumentGroup, settings_type: type, only: Iterable[str] | None = None) -> None:
    """Add an option for each declared parameter of ``settings_type`` that has a flag (``only``: these field
    names, in this order). An option already on the parser (one the CLI shares among methods) is not added twice."""
    declarations = declared(settings_type)
    names = list(declarations) if only is None else list(only)
    for name in names:
        d = declarations[name]
        if d.flag is None or d.flag in group._option_string_actions:
            continue
        kwargs: dict[str, Any] = {"dest": d.dest, "help": d.cli_help()}
        if d.default is False and d.constraint is None:  # a switch: the option alone turns it on
            group.add_argument(d.flag, action="store_true", **kwargs)
            continue
        if d.metavar is not None:
            kwargs["metavar"] = d.metavar
        if isinstance(d.constraint, OneOf) and d.parse is None:
            kwargs["choices"] = d.constraint.options
        else:
            kwargs["type"] = d.parse or _parser(d.constraint)
        if d.repeat:
            kwargs.update(action="append", default=[])
        else:
            kwargs["default"] = None if d.default is FACTORY else d.default
        if d.nargs is not None:
            kwargs.update(nargs=d.nargs, const=d.const)
        group.add_argument(d.flag, **kwargs)


def _parser(constraint: Constraint | None) -> Callable[[str], Any]:
    if isinstance(constraint, Interval):
        return int if constraint.whole else finite_float
    return str


def from_args(settings_type: type, args: argparse.Namespace) -> dict[str, Any]:
    """The declared parameters of ``settings_type`` from parsed arguments, as keyword arguments of the settings
    class (a parameter whose option this command does not have keeps its default)."""
    values = {}
    for name, d in declared(settings_type).items():
        if d.flag is None or not hasattr(args, d.dest):
            continue
        value = getattr(args, d.dest)
        if d.convert is not None:
            value = d.convert(value)
        if value is None and d.default is FACTORY:
            continue  # not given: the field's factory makes its default
        values[name] = value
    return values

"""The types a method's hooks hand to the generic code (:class:`~ppdp_desktop.core.methods.base.Method`).

``ppdp compare`` asks every registered method for its :class:`Comparison` objects (``Method.comparisons``): each
adds its own options to the command, says whether the arguments ask for it, and runs on the data through the job
it is given (:data:`~ppdp_desktop.core.methods.base.Runner`), returning what it found as text and as the rows of
the ``--json`` document (:class:`Compared`). ``ppdp lookup`` decodes a graded column with the
:class:`GradeDecoder` the release's method builds from the key (``Method.key_grading``).

Nothing here belongs to one method family; a family's modules subclass or implement these.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.methods.base import Runner


@dataclass(frozen=True)
class Compared:
    """What a comparison found: ``text`` as printed (a heading and a table), and the ``--json`` document's
    ``mode`` (the comparison's name), ``parameters`` and one row object per method."""

    mode: str
    text: str
    parameters: dict[str, Any] = field(default_factory=dict)
    rows: list[Any] = field(default_factory=list)


class Comparison:
    """One way of ``ppdp compare``: methods side by side at matched privacy, declared by the family that owns it.

    ``order``: when the arguments ask for several comparisons, the one with the smallest order runs.
    ``default_methods`` and ``when`` describe the default of ``--methods`` in the command's help (empty: not
    shown); ``usage`` says how to ask for it. The command line adds the options every comparison shares (the
    data, ``--sensitive``, ``--methods``, ``--identifier``, ``--seed``); :meth:`add_arguments` adds the
    comparison's own.
    """

    name: ClassVar[str]
    order: ClassVar[int] = 100
    default_methods: ClassVar[tuple[str, ...]] = ()
    when: ClassVar[str] = ""
    #: how to ask for it, for the message when the arguments ask for no comparison
    usage: ClassVar[str] = ""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add this comparison's own options (with :func:`add_once` for an option another comparison shares)."""

    def requested(self, args: argparse.Namespace) -> bool:
        """Whether the parsed arguments ask for this comparison."""
        raise NotImplementedError

    def run(self, dataset: Dataset, args: argparse.Namespace, run: Runner) -> Compared:
        """Compare on ``dataset``; ``run`` is the job (so that a method never imports the job that runs it).
        Bad arguments are a :class:`~ppdp_desktop.core.errors.ParameterError` naming the option."""
        raise NotImplementedError


def add_once(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *flags: str, **kwargs: Any) -> None:
    """``parser.add_argument(*flags, **kwargs)`` unless one of ``flags`` is already an option of the parser (an
    option two comparisons share, e.g. ``--rho1``, is added by the first)."""
    if not any(flag in parser._option_string_actions for flag in flags):
        parser.add_argument(*flags, **kwargs)


def comparisons(methods: Any) -> list[Comparison]:
    """The comparisons of ``methods`` (the registry's values), in their order; a comparison two methods share (the
    same name) once."""
    found: dict[str, Comparison] = {}
    for method in methods:
        for comparison in method.comparisons():
            found.setdefault(comparison.name, comparison)
    return sorted(found.values(), key=lambda c: c.order)


class GradeDecoder(Protocol):
    """A graded column's way back from published grades to values (authorized reverse lookup)."""

    @property
    def integer(self) -> bool:
        """Whether the values are whole numbers."""
        ...

    def ungrade(self, grades: np.ndarray) -> np.ndarray:
        """The original values of ``grades``."""
        ...

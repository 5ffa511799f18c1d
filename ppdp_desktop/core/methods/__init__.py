"""The registry of privacy methods: adding a method is one package and one entry here.

Everything outside :mod:`ppdp_desktop.core.methods` reaches a method through :func:`get_method` and
:data:`REGISTRY` only, and what a method offers through its :class:`Method` hooks: no module outside imports a
method family's package (the import-linter contract "methods-only-through-the-registry" in pyproject.toml), and
``tests/test_architecture.py`` checks that no other module names one.
"""
from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.declarations import Setting, declared
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.protection_settings import ProtectionSettings

if TYPE_CHECKING:
    from ppdp_desktop.core.methods.base import Method, Plan
    from ppdp_desktop.core.methods.hooks import Compared, Comparison, GradeDecoder
    from ppdp_desktop.core.outcome import Applied

#: names this package offers from its modules, imported on first use (:func:`__getattr__`): the base classes bring
#: pandas and numpy, which an empty project (the window's first page) does not need (issue 34)
_LAZY = {"Method": "ppdp_desktop.core.methods.base", "Plan": "ppdp_desktop.core.methods.base",
         "Compared": "ppdp_desktop.core.methods.hooks", "Comparison": "ppdp_desktop.core.methods.hooks",
         "GradeDecoder": "ppdp_desktop.core.methods.hooks", "Applied": "ppdp_desktop.core.outcome"}


def __getattr__(name: str) -> Any:
    """``Method``, ``Plan``, ``Applied`` and the comparison hooks, from their modules on first use."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _built_in() -> list[Method[Any, Any]]:
    """The built-in methods, in the registry's order; their families (scipy, pandas and more) are imported here,
    on the registry's first use, not when the package is imported (the window shows its first page first)."""
    from ppdp_desktop.core.methods.dp.method import DPMicroaggregation
    from ppdp_desktop.core.methods.generalization.method import GeneralizationOnly
    from ppdp_desktop.core.methods.partition.method import PerturbationPartitioning
    from ppdp_desktop.core.methods.personalized.method import PersonalizedRecoding
    from ppdp_desktop.core.methods.perturbation.finegrain import FineGrainPerturbation
    from ppdp_desktop.core.methods.perturbation.uniform import UniformPerturbation
    from ppdp_desktop.core.methods.rr.method import RandomizedResponse

    return [UniformPerturbation(), FineGrainPerturbation(), PerturbationPartitioning(), RandomizedResponse(),
            PersonalizedRecoding(), DPMicroaggregation(), GeneralizationOnly()]


class _Registry(MutableMapping[str, "Method[Any, Any]"]):
    """Name -> method, filled with the built-in methods on first use (any read, write or iteration).

    A mapping like the dict it replaces (``REGISTRY[name]``, ``in``, ``items()``, ``register``), in the same
    order. Filling is guarded by a lock: the worker thread and the window may be the first to ask at once.
    """

    def __init__(self) -> None:
        self._methods: dict[str, Method[Any, Any]] = {}
        self._filled = False
        self._lock = threading.RLock()

    def _all(self) -> dict[str, Method[Any, Any]]:
        if not self._filled:
            with self._lock:
                if not self._filled:
                    self._methods = {m.name: m for m in _built_in()}
                    self._filled = True
        return self._methods

    def __getitem__(self, name: str) -> Method[Any, Any]:
        return self._all()[name]

    def __setitem__(self, name: str, method: Method[Any, Any]) -> None:
        self._all()[name] = method

    def __delitem__(self, name: str) -> None:
        del self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __repr__(self) -> str:
        return f"REGISTRY({list(self) if self._filled else 'not yet filled'})"


REGISTRY: MutableMapping[str, Method[Any, Any]] = _Registry()
#: The method a new project or a command without ``--method`` uses (fine-grain perturbation's name).
DEFAULT_METHOD = "finegrain"


def get_method(name: str | None) -> Method[Any, Any]:
    """The registered method called ``name`` (empty: the default); an unknown name lists the known ones."""
    try:
        return REGISTRY[name or DEFAULT_METHOD]
    except KeyError:
        raise ParameterError(f"Unknown method {name!r}; choose one of: {', '.join(REGISTRY)}.") from None


def declared_setting(key: str) -> Setting | None:
    """The declaration of the setting a message refers to by ``key`` (its option without the dashes, as in
    :func:`~ppdp_desktop.core.errors.setting_ref`): a registered method's parameter or re-identification's; None
    for a setting no settings class declares (the common ones, such as ``rho1`` or ``quasi``)."""
    settings_types: tuple[type, ...] = (ProtectionSettings, *(m.settings_type for m in REGISTRY.values()))
    for settings_type in settings_types:
        for declaration in declared(settings_type).values():
            if declaration.key == key:
                return declaration
    return None


def comparisons() -> list[Comparison]:
    """The ways ``ppdp compare`` compares methods, from every registered method (``Method.comparisons``), in order."""
    from ppdp_desktop.core.methods.hooks import comparisons as _comparisons

    return _comparisons(REGISTRY.values())


def register(method: Method[Any, Any]) -> Method[Any, Any]:
    """Add ``method`` to the registry (a plug-in; also how tests add a toy method) and return it."""
    if not getattr(method, "name", ""):
        raise ParameterError("A method needs a name.")
    REGISTRY[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove a method added with :func:`register` (tests)."""
    REGISTRY.pop(name, None)


__all__ = ["DEFAULT_METHOD", "REGISTRY", "Applied", "Compared", "Comparison", "GradeDecoder", "Method", "Plan",
           "comparisons", "Setting", "declared_setting", "get_method", "register",
           "unregister"]

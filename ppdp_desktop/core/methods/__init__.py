"""The registry of privacy methods: adding a method is one package and one entry here.

Everything outside :mod:`ppdp_desktop.core.methods` reaches a method through :func:`get_method` and
:data:`REGISTRY` only, and what a method offers through its :class:`Method` hooks: no module outside imports a
method family's package (the import-linter contract "methods-only-through-the-registry" in pyproject.toml), and
``tests/test_architecture.py`` checks that no other module names one.
"""
from __future__ import annotations

from typing import Any

from ppdp_desktop.core.declarations import Setting, declared
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.base import Method, Plan
from ppdp_desktop.core.methods.dp.method import DPMicroaggregation
from ppdp_desktop.core.methods.generalization.method import GeneralizationOnly
from ppdp_desktop.core.methods.hooks import Compared, Comparison, GradeDecoder
from ppdp_desktop.core.methods.hooks import comparisons as _comparisons
from ppdp_desktop.core.methods.partition.method import PerturbationPartitioning
from ppdp_desktop.core.methods.personalized.method import PersonalizedRecoding
from ppdp_desktop.core.methods.perturbation.finegrain import FineGrainPerturbation
from ppdp_desktop.core.methods.perturbation.uniform import UniformPerturbation
from ppdp_desktop.core.methods.rr.method import RandomizedResponse
from ppdp_desktop.core.outcome import Applied
from ppdp_desktop.core.settings import ProtectionSettings

REGISTRY: dict[str, Method[Any, Any]] = {
    m.name: m
    for m in (UniformPerturbation(), FineGrainPerturbation(), PerturbationPartitioning(), RandomizedResponse(),
              PersonalizedRecoding(), DPMicroaggregation(), GeneralizationOnly())
}
#: The method a new project or a command without ``--method`` uses.
DEFAULT_METHOD = FineGrainPerturbation.name


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

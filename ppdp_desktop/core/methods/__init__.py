"""The registry of privacy methods: adding a method is one package and one entry here.

Everything outside :mod:`ppdp_desktop.core.methods` reaches a method through :func:`get_method` and
:data:`REGISTRY` only (``tests/test_architecture.py`` checks that no other module names one).
"""
from __future__ import annotations

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.base import Method, Plan
from ppdp_desktop.core.methods.dp.method import DPMicroaggregation
from ppdp_desktop.core.methods.partition.method import PerturbationPartitioning
from ppdp_desktop.core.methods.personalized.method import PersonalizedRecoding
from ppdp_desktop.core.methods.perturbation.finegrain import FineGrainPerturbation
from ppdp_desktop.core.methods.perturbation.uniform import UniformPerturbation
from ppdp_desktop.core.methods.rr.method import RandomizedResponse
from ppdp_desktop.core.outcome import Applied

REGISTRY: dict[str, Method] = {
    m.name: m
    for m in (UniformPerturbation(), FineGrainPerturbation(), PerturbationPartitioning(), RandomizedResponse(),
              PersonalizedRecoding(), DPMicroaggregation())
}
#: The method a new project or a command without ``--method`` uses.
DEFAULT_METHOD = FineGrainPerturbation.name


def get_method(name: str | None) -> Method:
    """The registered method called ``name`` (empty: the default); an unknown name lists the known ones."""
    try:
        return REGISTRY[name or DEFAULT_METHOD]
    except KeyError:
        raise ParameterError(f"Unknown method {name!r}; choose one of: {', '.join(REGISTRY)}.") from None


def register(method: Method) -> Method:
    """Add ``method`` to the registry (a plug-in; also how tests add a toy method) and return it."""
    if not getattr(method, "name", ""):
        raise ParameterError("A method needs a name.")
    REGISTRY[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove a method added with :func:`register` (tests)."""
    REGISTRY.pop(name, None)


__all__ = ["DEFAULT_METHOD", "REGISTRY", "Applied", "Method", "Plan", "get_method", "register", "unregister"]

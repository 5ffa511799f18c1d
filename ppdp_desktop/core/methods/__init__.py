"""The registry of privacy methods: adding a method is one module and one entry here."""
from __future__ import annotations

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods.base import Applied, Method, Plan
from ppdp_desktop.core.methods.dp_microagg import DPMicroaggregation
from ppdp_desktop.core.methods.perturbation import PerturbationPlan
from ppdp_desktop.core.methods.partition import PerturbationPartitioning
from ppdp_desktop.core.methods.personalized import PersonalizedRecoding
from ppdp_desktop.core.methods.rr import RandomizedResponse
from ppdp_desktop.core.methods.finegrain import FineGrainPerturbation
from ppdp_desktop.core.methods.uniform import UniformPerturbation

REGISTRY: dict[str, Method] = {m.name: m for m in (UniformPerturbation(), FineGrainPerturbation(), PerturbationPartitioning(), RandomizedResponse(), PersonalizedRecoding(),
                                                DPMicroaggregation())}


def get_method(name: str) -> Method:
    """The registered method called ``name``; an unknown name is an error listing the known ones."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ParameterError(f"Unknown method {name!r}; choose one of: {', '.join(REGISTRY)}.") from None


__all__ = ["REGISTRY", "Applied", "Method", "Plan", "PerturbationPlan", "get_method"]

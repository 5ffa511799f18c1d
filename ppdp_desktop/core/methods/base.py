"""The shape every method shares: prepare a plan from statistics, verify it, apply it to rows.

A plan holds global statistics only (domains, counts, matrices, categories, alias maps): it is
small, serializable and verified before use. ``apply`` then transforms each record
independently, so the same plan can be applied to a file chunk by chunk. Adding a method is one
module with a :class:`Method` and its plan, and one entry in the registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ppdp_desktop.core.anonymize import AnonymizationSettings
    from ppdp_desktop.core.dataset import Dataset


@dataclass
class Applied:
    """What applying a plan produced, in the original row order.

    ``columns`` replace the released columns of the same name; ``dropped`` are removed from the
    release; ``codes`` keeps ``(true, released)`` codes of perturbed attributes for the utility
    report; ``record_secrets`` are per-record values only the sealed key may hold.
    """

    columns: dict[str, np.ndarray]
    dropped: list[str] = field(default_factory=list)
    codes: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    record_secrets: dict[str, np.ndarray] = field(default_factory=dict)


class Plan(Protocol):
    """A method's plan: verified before use, applied per row."""

    method: str
    needs_pseudonyms: bool

    def verify(self) -> dict[str, Any]:
        """Check the claimed guarantee; return it as JSON; raise ``PrivacyError`` if it fails."""

    def apply(self, frame: pd.DataFrame, rng: np.random.Generator) -> Applied: ...

    def release_json(self) -> dict[str, Any]:
        """Public entries merged into ``release.json`` (never anything secret)."""

    def key_json(self) -> dict[str, Any]:
        """Secrets for the sealed key file (alias meanings, bounds, parameters)."""

    def describe(self) -> list[str]:
        """A few plain-language lines for the CLI and the report."""


class Method(Protocol):
    """A privacy method of the registry."""

    name: str
    title: str
    summary: str

    def prepare(self, dataset: "Dataset", settings: "AnonymizationSettings") -> Plan: ...

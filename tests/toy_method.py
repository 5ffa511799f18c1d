"""A toy method for the plug-in tests: one module, registered at test time, touching nothing else.

It releases the sensitive column unchanged (it protects nothing and says so) and has one parameter of
its own, declared once (limits, option, label, help), so the tests can see the CLI (its option, its ``--help``
line, its error), the project file and the window (its control, label, tooltip and range) pick it up from the
registry and that declaration alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.methods.base import Method
from ppdp_desktop.core.outcome import Applied
from ppdp_desktop.core.privacy.randomness import RandomSource
from ppdp_desktop.core.settings import Interval, MethodSettings, setting

TOY = "toy-plugin"


@dataclass
class ToySettings(MethodSettings):
    """The toy's one parameter."""

    strength: float = setting(0.5, Interval(0.0, 1.0), flag="--toy-strength", label="Toy strength",
                              help="how strongly the toy acts, from 0 to 1")


@dataclass
class ToyPlan:
    attribute: str
    strength: float
    method: str = TOY
    needs_pseudonyms: bool = False

    def verify(self) -> dict[str, Any]:
        return {"kind": "none", "statement": "A toy for tests: it protects nothing."}

    def apply(self, frame: pd.DataFrame, randomness: RandomSource) -> Applied:
        return Applied({self.attribute: frame[self.attribute].to_numpy(copy=True)})

    def release_json(self) -> dict[str, Any]:
        return {"guarantee": self.verify(), "toy": {"strength": self.strength}}

    def key_json(self) -> dict[str, Any]:
        return {}

    def describe(self) -> list[str]:
        return [f"toy strength {self.strength:g}"]


class ToyMethod(Method):
    name = TOY
    title = "Toy method (plug-in test)"
    summary = "Releases the sensitive column as it is; it protects nothing."
    settings_type = ToySettings
    needs_pairs = False

    def prepare(self, dataset, settings) -> ToyPlan:
        options = self.settings(settings)
        options.check()
        return ToyPlan(settings.sensitive, float(options.strength))

    def verify_release(self, release: LoadedRelease) -> list[str]:
        return [f"toy release, strength {release.metadata['toy']['strength']:g}"]

    def readme_text(self, metadata: dict[str, Any]) -> str:
        return "What was done\n  Nothing: a toy method for tests.\n"

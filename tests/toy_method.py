"""A toy method for the plug-in tests: one module, registered at test time, touching nothing else.

It releases the sensitive column unchanged (it protects nothing and says so) and has one parameter of
its own, so the tests can see the CLI, the project file and the window pick it up from the registry.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.released import LoadedRelease
from ppdp_desktop.core.methods.base import Method
from ppdp_desktop.core.outcome import Applied
from ppdp_desktop.core.privacy.randomness import RandomSource
from ppdp_desktop.core.settings import Interval, MethodSettings

TOY = "toy-plugin"


@dataclass
class ToySettings(MethodSettings):
    """The toy's one parameter."""

    strength: float = 0.5

    constraints: ClassVar = {"strength": Interval(0.0, 1.0)}
    flags: ClassVar = {"strength": "--toy-strength"}


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

    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        group.add_argument("--toy-strength", type=float, default=0.5, help="the toy's strength (0 to 1)")

    def settings_from_args(self, args: argparse.Namespace) -> ToySettings:
        return ToySettings(args.toy_strength)

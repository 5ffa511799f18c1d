"""Randomized response's own settings: the bound ``1/l`` and what to randomize."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import ClassVar

from ppdp_desktop.core.settings import Interval, MethodSettings, OneOf, finite_float

RANDOMIZE = ("qi", "s", "both")


@dataclass
class RRSettings(MethodSettings):
    """Randomized response under a linking-attack bound (SPEC 2.4): ``1/l`` and what to randomize."""

    l: float | None = None
    randomize: str = "both"

    constraints: ClassVar = {"l": Interval(low=1.0, open_low=True, optional=True), "randomize": OneOf(RANDOMIZE)}
    #: project files before version 3 kept these as flat fields
    legacy: ClassVar = {"rr_l": "l", "rr_randomize": "randomize"}
    flags: ClassVar = {"l": "--l", "randomize": "--randomize"}
    suggested: ClassVar = {"l": 3.0}


def add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--l", type=finite_float, help="bound the attribute-disclosure risk by 1/l (l > 1); needs --quasi")
    group.add_argument("--randomize", choices=RANDOMIZE, default="both", help="what to randomize (default both)")


def from_args(args: argparse.Namespace) -> RRSettings:
    return RRSettings(args.l, args.randomize)

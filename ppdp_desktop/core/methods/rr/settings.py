"""Randomized response's own settings: the bound ``1/l`` and what to randomize, each declared once (its limits,
option, label and help: :func:`~ppdp_desktop.core.declarations.setting`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ppdp_desktop.core.errors import setting_ref
from ppdp_desktop.core.settings import Interval, MethodSettings, OneOf, setting

RANDOMIZE = ("qi", "s", "both")


@dataclass
class RRSettings(MethodSettings):
    """Randomized response under a linking-attack bound (SPEC 2.4): ``1/l`` and what to randomize."""

    l: float | None = setting(
        None, Interval(low=1.0, open_low=True, optional=True), flag="--l", label="l (risk at most 1/l)",
        help=f"bound the attribute-disclosure risk by 1/l (l > 1); needs {setting_ref('quasi')}")
    randomize: str = setting("both", OneOf(RANDOMIZE), flag="--randomize", label="Randomize",
                             help="what to randomize")

    #: project files before version 3 kept these as flat fields
    legacy: ClassVar = {"rr_l": "l", "rr_randomize": "randomize"}
    suggested: ClassVar = {"l": 3.0}

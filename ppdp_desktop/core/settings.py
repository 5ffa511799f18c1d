"""The job's settings: the choices every method shares, and the chosen method's own settings object.

Steps 2 and 3 of the wizard (roles, taxonomies, per-value sensitivity and per-record choices) and the
seed are common to every method: :class:`AnonymizationSettings` carries them. What a method alone needs
(``l`` for randomized response, ``epsilon`` and ``k`` for differential privacy ...) lives in that
method's own :class:`MethodSettings` subclass, declared in its package with its parameters' limits
(scikit-learn style: declared once, checked by one function that names the parameter, the bad value
and what is allowed). The methods import this module; it never imports them.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppdp_desktop.core.data.domain import CategoricalDomain
from ppdp_desktop.core.declarations import Interval as Interval  # re-exported: the methods declare their limits
from ppdp_desktop.core.declarations import OneOf as OneOf  # with these
from ppdp_desktop.core.declarations import finite_float as finite_float  # re-exported: the CLI's number type
from ppdp_desktop.core.declarations import setting as setting
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.method_settings import MAX_K as MAX_K
from ppdp_desktop.core.method_settings import MethodSettings as MethodSettings
from ppdp_desktop.core.method_settings import NoSettings as NoSettings
from ppdp_desktop.core.privacy import sensitivity as sens
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.protection_settings import MAX_CUTS as MAX_CUTS
from ppdp_desktop.core.protection_settings import MAX_LEVELS as MAX_LEVELS
from ppdp_desktop.core.protection_settings import ProtectionSettings as ProtectionSettings
from ppdp_desktop.core.protection_settings import recursive_pair as recursive_pair


@dataclass
class SensitivitySettings:
    """How the (rho1, rho2) pairs are set: one pair, the theta rule, plus optional per-value overrides."""

    rho1: float | None = None
    rho2: float | None = None
    theta: float | None = None
    overrides: dict[str, tuple[float, float]] = field(default_factory=dict)
    overrides_source: str = "the pairs file"

    def one_pair(self) -> tuple[float, float] | None:
        """The one (rho1, rho2) pair every value has, or None: ``rho1`` and ``rho2`` with no theta rule, and no
        per-value pair that differs from them. The condition is the pairs themselves, not whether any were given: a
        table whose rows were all set back to the common pair is one pair."""
        if self.rho1 is None or self.rho2 is None or self.theta is not None:
            return None
        return (self.rho1, self.rho2) if not self.own_pairs() else None

    def own_pairs(self) -> list[str]:
        """The values whose per-value pair differs from the common ``rho1, rho2`` (every one under the theta rule)."""
        common = (self.rho1, self.rho2)
        return [v for v, pair in self.overrides.items() if (float(pair[0]), float(pair[1])) != common]

    def requirement(self, domain: CategoricalDomain) -> sens.SensitivityRequirement:
        if (self.rho1 is None) != (self.rho2 is None):
            raise ParameterError(f"Give both {setting_ref('rho1')} and {setting_ref('rho2')}, or neither.",
                                 setting="rho2" if self.rho2 is None else "rho1")
        if self.rho1 is not None and self.theta is not None:
            raise ParameterError(f"Give either {setting_ref('rho1')} and {setting_ref('rho2')}, or "
                                 f"{setting_ref('theta')}, not both.", setting="theta", value=self.theta)
        if self.rho1 is not None and self.rho2 is not None:  # both or neither (checked above)
            base = sens.constant_pairs(domain, self.rho1, self.rho2)
        elif self.theta is not None:
            base = sens.theta_rule(domain, self.theta)
        else:
            raise ParameterError(f"Say how sensitive the values are: set {setting_ref('rho1', 'X')} and "
                                 f"{setting_ref('rho2', 'Y')}, or {setting_ref('theta', 'T')}.", setting="rho1")
        if self.overrides:
            return sens.with_overrides(base, domain, self.overrides, self.overrides_source)
        return base


@dataclass
class ChoiceSettings:
    """Per-record privacy choices (1 value, 2 alias1, 3 alias2): from a column, per value, or one default."""

    choice_column: str | None = None
    default_choice: int | None = None
    value_choices: dict[str, int] = field(default_factory=dict)


@dataclass
class RepeatSettings:
    """How this release relates to its project's earlier releases (issue 30).

    ``keys``: the project's custodian secret, opened (None: this release's draws are fresh and every record that
    was released before composes); ``budget``: the largest cumulative epsilon a record may reach in this project
    (None: no budget); ``override_reason``: why this release may go past the budget (kept in the ledger);
    ``ledger``: False only for a job that is never published (a preview, a comparison).
    """

    project_id: str = ""
    keys: PersistentKeys | None = None
    budget: float | None = None
    override_reason: str | None = None
    stable_pseudonyms: bool = False
    ledger: bool = True
    #: what the face that opened the secret has to tell the user (a secret made, none at hand), said after the work
    notes: list[str] = field(default_factory=list)
    #: the plan of the project's last release by the same method (its ``Method.repeat_state``, from the ledger), which
    #: the method keeps when it still fits, so that an unchanged patient's mechanism and draws stay the same
    previous_plan: dict[str, Any] | None = None

    @property
    def active(self) -> bool:
        """Whether the job accounts for the project's earlier releases (it has a project)."""
        return bool(self.project_id) and self.ledger


@dataclass
class AnonymizationSettings:
    """Everything the job needs besides the data: the common choices and the method's own settings.

    ``taxonomies`` are the trees edited in step 2 (attribute -> Taxonomy), which a method may use for
    its columns; ``options`` is the chosen method's settings object (see :class:`MethodSettings`);
    ``protection`` says how the quasi-identifiers are protected and the risk judged.
    """

    sensitive: str
    method: str = ""  # empty: the registry's default method
    identifiers: list[str] = field(default_factory=list)
    quasi: list[str] = field(default_factory=list)
    sensitivity: SensitivitySettings = field(default_factory=SensitivitySettings)
    choices: ChoiceSettings = field(default_factory=ChoiceSettings)
    options: MethodSettings = field(default_factory=NoSettings)
    taxonomies: Mapping[str, Any] = field(default_factory=dict)
    protection: ProtectionSettings = field(default_factory=ProtectionSettings)
    seed: int | None = None
    repeat: RepeatSettings = field(default_factory=RepeatSettings)


def load_overrides(path: str | Path | None) -> dict[str, tuple[float, float]]:
    """Read ``--pairs FILE`` if given."""
    return sens.read_pairs_file(Path(path)) if path else {}

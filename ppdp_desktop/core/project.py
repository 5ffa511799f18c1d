"""The project file: every choice of the wizard's steps 1-4, so next month's release is the same.

JSON, versioned; :func:`migrate` upgrades older versions step by step (Orange3's settings
migration). Qt-free: the GUI edits a :class:`Project` and the CLI could run one.
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ppdp_desktop.core.anonymize import (
    AnonymizationSettings,
    DPSettings,
    RecodingSettings,
    RRSettings,
    SensitivitySettings,
)
from ppdp_desktop.core.errors import InputError, ParameterError
from ppdp_desktop.core.schema import Role
from ppdp_desktop.core.taxonomy import Taxonomy
from ppdp_desktop.core.taxonomy_io import from_dict, to_dict

PROJECT_VERSION = 2
DP_METHOD = "dp-microagg"  # protects its own list of attributes: needs no sensitive column or pairs
DP_DEFAULTS: dict[str, Any] = {"dp_attributes": [], "dp_epsilon": 1.0, "dp_k": 10, "dp_domains": {}}


@dataclass
class Project:
    """Every choice of the wizard (no data, no results, no passphrase)."""

    data_path: str | None = None
    load_options: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    method: str = "finegrain"
    compare: list[str] = field(default_factory=list)
    theta: float | None = 3.0
    rho1: float | None = None
    rho2: float | None = None
    pairs: dict[str, list[float]] = field(default_factory=dict)
    choice_column: str | None = None
    default_choice: int = 2
    value_choices: dict[str, int] = field(default_factory=dict)
    graded: list[str] = field(default_factory=list)
    categories: int = 3
    grading: str = "equal-width"
    rr_l: float = 3.0
    rr_randomize: str = "both"
    dp_attributes: list[str] = field(default_factory=list)  # differential privacy: the columns to protect
    dp_epsilon: float = 1.0
    dp_k: int = 10
    dp_domains: dict[str, list[float]] = field(default_factory=dict)  # declared [lo, hi]; absent: from the data
    taxonomies: dict[str, dict[str, Any]] = field(default_factory=dict)
    release_folder: str | None = None
    key_path: str | None = None

    # --- roles -----------------------------------------------------------------------------
    def columns_with(self, role: Role) -> list[str]:
        return [c for c, r in self.roles.items() if r == role.value]

    @property
    def sensitive(self) -> str | None:
        names = self.columns_with(Role.SENSITIVE)
        return names[0] if names else None

    # --- taxonomies ------------------------------------------------------------------------
    def taxonomy(self, attribute: str) -> Taxonomy | None:
        data = self.taxonomies.get(attribute)
        return from_dict(data, attribute, f"the project's taxonomy of {attribute!r}") if data else None

    def set_taxonomy(self, taxonomy: Taxonomy) -> None:
        self.taxonomies[taxonomy.attribute] = to_dict(taxonomy)

    # --- to the job ------------------------------------------------------------------------
    def settings(self, method: str | None = None, taxonomy: Taxonomy | None = None, seed: int | None = None) -> AnonymizationSettings:
        """The job settings for ``method`` (default: the project's); ``taxonomy`` overrides the stored one."""
        method = method or self.method
        sensitive = self.sensitive
        quasi = self.columns_with(Role.QUASI_IDENTIFIER)
        if method == DP_METHOD:
            # It protects its own columns (a quasi-identifier among them is protected, not kept as it is);
            # a sensitive column it does not protect is released unchanged, so it is not named as sensitive.
            quasi = [c for c in quasi if c not in self.dp_attributes]
            if sensitive not in self.dp_attributes:
                sensitive = None
        elif sensitive is None:
            raise ParameterError("Mark one column as sensitive (step 2) before choosing a method.")
        return AnonymizationSettings(
            sensitive=sensitive or "",
            method=method,
            identifiers=self.columns_with(Role.IDENTIFIER),
            quasi=quasi,
            sensitivity=SensitivitySettings(
                self.rho1, self.rho2, None if self.rho1 is not None else self.theta,
                {k: (float(v[0]), float(v[1])) for k, v in self.pairs.items()}, "the sensitivity table",
            ),
            recoding=RecodingSettings(
                choice_column=self.choice_column,
                default_choice=self.default_choice,
                value_choices=dict(self.value_choices),
                taxonomy=taxonomy if taxonomy is not None else (self.taxonomy(sensitive) if sensitive else None),
                graded=list(self.graded),
                categories=self.categories,
                grading=self.grading,
            ),
            rr=RRSettings(self.rr_l, self.rr_randomize),
            dp=self.dp_settings(),
            seed=seed,
        )

    def dp_settings(self) -> DPSettings:
        """Differential privacy's settings: declared domains, and the edited taxonomies of the categorical
        attributes. A flat taxonomy (the one the wizard builds from the data's values until the user groups
        them) is left out, so the job builds it from the data itself and the release says so."""
        taxonomies = {}
        for name in self.dp_attributes:
            taxonomy = self.taxonomy(name) if name not in self.dp_domains else None
            if taxonomy is not None and taxonomy.depth > 1:
                taxonomies[name] = taxonomy
        return DPSettings(
            attributes=list(self.dp_attributes),
            epsilon=float(self.dp_epsilon),
            k=int(self.dp_k),
            domains={c: (float(v[0]), float(v[1])) for c, v in self.dp_domains.items() if c in self.dp_attributes},
            taxonomies=taxonomies,
        )

    # --- file ------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"format": "ppdp-project", "version": PROJECT_VERSION, **asdict(self)}

    def save(self, path: str | Path) -> None:
        """Write atomically (temporary file, then rename)."""
        path = Path(path)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.partial")
        try:
            tmp.write_text(json.dumps(self.to_json(), indent=2), encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise InputError(f"Cannot save the project to {path}: {exc.strerror or exc}.") from exc

    @classmethod
    def load(cls, path: str | Path) -> "Project":
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{path.name} is not a readable project file: {exc}.") from exc
        if not isinstance(data, dict) or data.get("format") != "ppdp-project":
            raise InputError(f"{path.name} is not a PPDP Desktop project file.")
        data = migrate(data, path.name)
        known = {f for f in cls.__dataclass_fields__}
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError as exc:
            raise InputError(f"{path.name}: {exc}.") from exc


def _add_dp_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2: differential privacy's settings (attributes, epsilon, k, domains) appear."""
    data = dict(data)
    for name, default in DP_DEFAULTS.items():
        data.setdefault(name, json.loads(json.dumps(default)))
    return data


MIGRATIONS: dict[int, Any] = {1: _add_dp_defaults}  # version -> function(data) -> data of version + 1


def migrate(data: dict[str, Any], name: str) -> dict[str, Any]:
    """Upgrade a project from its version to :data:`PROJECT_VERSION` one step at a time."""
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise InputError(f"{name} has no valid project version.")
    if version > PROJECT_VERSION:
        raise InputError(f"{name} was saved by a newer PPDP Desktop (project version {version}); update the app.")
    while version < PROJECT_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
        data["version"] = version
    return data

"""The project file: every choice of the wizard's steps 1-4, so next month's release is the same.

JSON, versioned; :func:`migrate` upgrades older versions step by step (Orange3's settings
migration). Qt-free: the window edits a :class:`Project` and ``ppdp run`` runs one; both read it with
:meth:`Project.load`.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.data.bounded_json import read_json
from ppdp_desktop.core.data.input_files import check_regular
from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.errors import InputError, ParameterError, PPDPError, setting_ref
from ppdp_desktop.core.methods import DEFAULT_METHOD, REGISTRY, get_method
from ppdp_desktop.core.protection_settings import ProtectionSettings
from ppdp_desktop.core.taxonomy.io import from_dict, to_dict
from ppdp_desktop.core.taxonomy.node import data_labels
from ppdp_desktop.core.taxonomy.tree import Taxonomy

# The job's settings, the project checks and the taxonomy files (numpy, pandas, pyarrow through them) are imported
# where they are used: an empty project is made before the window's first page is shown (issue 34).
if TYPE_CHECKING:
    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.loading import LoadOptions
    from ppdp_desktop.core.settings import AnonymizationSettings, MethodSettings

PROJECT_VERSION = 5
#: the largest project file read (its taxonomies take most of it)
MAX_PROJECT_BYTES = 64 * 1024 ** 2
DP_DEFAULTS: dict[str, Any] = {"dp_attributes": [], "dp_epsilon": 1.0, "dp_k": 10, "dp_domains": {}}


def _no_options() -> LoadOptions:
    """An empty :class:`~ppdp_desktop.core.data.loading.LoadOptions` (the reader's module is not imported for it)."""
    return {}


@dataclass
class Project:
    """Every choice of the wizard (no data, no results, no passphrase).

    Steps 1-3 (data, roles, taxonomies, sensitivity, choices) are common; each method's own settings
    are kept in ``options`` under the method's name, as that method's settings object writes them.
    """

    data_path: str | None = None
    load_options: LoadOptions = field(default_factory=_no_options)
    roles: dict[str, str] = field(default_factory=dict)
    method: str = DEFAULT_METHOD
    compare: list[str] = field(default_factory=list)
    theta: float | None = 3.0
    rho1: float | None = None
    rho2: float | None = None
    pairs: dict[str, list[float]] = field(default_factory=dict)
    choice_column: str | None = None
    default_choice: int = 2
    value_choices: dict[str, int] = field(default_factory=dict)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)  # method name -> its settings (JSON)
    protection: dict[str, Any] = field(default_factory=dict)  # re-identification: threshold, k, suppression, intervals
    taxonomies: dict[str, dict[str, Any]] = field(default_factory=dict)
    release_folder: str | None = None
    key_path: str | None = None
    #: repeated releases (issue 30): the project's name in the release ledger (None: the project file's name), the
    #: largest cumulative epsilon a patient may reach over its releases (None: no budget)
    project_id: str | None = None
    budget: float | None = None
    #: the custodian's rule that every release of this project is signed: an unsigned export is refused, in the
    #: window and by ``ppdp run`` (:func:`check_signing`)
    require_signing: bool = False

    def repeat_project_id(self, path: str | Path | None) -> str:
        """The project's name in the release ledger: :attr:`project_id`, else the project file's name."""
        if self.project_id:
            return self.project_id
        return Path(path).stem if path else (Path(self.data_path).stem if self.data_path else "project")

    # --- roles -----------------------------------------------------------------------------
    def columns_with(self, role: Role) -> list[str]:
        return [c for c, r in self.roles.items() if r == role.value]

    @property
    def sensitive(self) -> str | None:
        names = self.columns_with(Role.SENSITIVE)
        return names[0] if names else None

    # --- taxonomies ------------------------------------------------------------------------
    def taxonomy(self, attribute: str) -> Taxonomy | None:
        """A new tree read from the stored one (the caller may edit it), or None."""
        data = self.taxonomies.get(attribute)
        return from_dict(data, attribute, f"the project's taxonomy of {attribute!r}") if data else None

    def set_taxonomy(self, taxonomy: Taxonomy) -> None:
        """Store ``taxonomy``; an unchanged tree keeps its stored form (and the tree read from it, see
        :meth:`stored_taxonomies`)."""
        data = to_dict(taxonomy)
        if self.taxonomies.get(taxonomy.attribute) != data:
            self.taxonomies[taxonomy.attribute] = data

    def stored_taxonomy(self, attribute: str, data: object = None) -> Taxonomy | None:
        """The tree stored for ``attribute`` (or ``data``, a form stored for it), read once per stored form and
        shared: never edit it.

        The window asks for the job's settings on every click of steps 3 and 4, and reading a tree of thousands
        of values (a date column's) takes a tenth of a second or more; a tree is read again only when another one
        is stored in its place (:meth:`set_taxonomy`)."""
        data = self.taxonomies.get(attribute) if data is None else data
        if not data:
            return None
        cache: dict[str, tuple[object, Taxonomy]] = self.__dict__.setdefault("_read_trees", {})
        hit = cache.get(attribute)
        if hit is not None and hit[0] is data:
            return hit[1]
        tree = from_dict(data, attribute, f"the project's taxonomy of {attribute!r}")
        cache[attribute] = (data, tree)
        return tree

    # --- each method's own settings ----------------------------------------------------------
    def method_settings(self, method: str | None = None) -> MethodSettings:
        """The settings object of ``method`` (default: the project's) as stored, or its suggested values."""
        name = method or self.method
        return get_method(name).settings_type.from_json(self.options.get(name), f"the project's settings of {name!r}")

    def set_method_settings(self, settings: MethodSettings, method: str | None = None) -> None:
        self.options[method or self.method] = settings.to_json()

    def protection_settings(self) -> ProtectionSettings:
        """Re-identification: the risk threshold and, if asked, k-anonymity (hierarchies are the trees of
        step 2, or interval widths for numeric quasi-identifiers)."""
        return ProtectionSettings.from_json(self.protection, "the project's re-identification settings")

    # --- to the job ------------------------------------------------------------------------
    def settings(self, method: str | None = None, taxonomies: dict[str, Taxonomy] | None = None,
                 seed: int | None = None) -> AnonymizationSettings:
        """The job settings for ``method`` (default: the project's); ``taxonomies`` (the trees being edited in
        the window) take the place of the stored ones."""
        from ppdp_desktop.core.settings import AnonymizationSettings, ChoiceSettings, SensitivitySettings

        name = method or self.method
        chosen = get_method(name)
        sensitive = self.sensitive
        if chosen.needs_sensitive and sensitive is None:
            raise ParameterError("Mark one column as sensitive (step 2) before choosing a method.")
        trees = StoredTrees(self, taxonomies or {})
        settings = AnonymizationSettings(
            sensitive=sensitive or "",
            method=name,
            identifiers=self.columns_with(Role.IDENTIFIER),
            quasi=self.columns_with(Role.QUASI_IDENTIFIER),
            sensitivity=SensitivitySettings(
                self.rho1, self.rho2, None if self.rho1 is not None else self.theta,
                {k: (float(v[0]), float(v[1])) for k, v in self.pairs.items()}, "the sensitivity table",
            ),
            choices=ChoiceSettings(self.choice_column, self.default_choice, dict(self.value_choices)),
            options=self.method_settings(name),
            taxonomies=trees,
            protection=self.protection_settings(),
            seed=seed,
        )
        # A column the method protects is not also kept as a quasi-identifier; a sensitive column that a
        # method without a sensitive column does not protect is released unchanged, so it is not named.
        protected, _ = chosen.roles(settings)
        quasi = [c for c in settings.quasi if c not in protected]
        if not chosen.needs_sensitive and sensitive not in protected:
            sensitive = None
        return replace(settings, sensitive=sensitive or "", quasi=quasi)

    # --- the custodian's rules -------------------------------------------------------------------
    def check_signing(self, signer: object | None) -> None:
        """Refuse an unsigned export (``signer`` None) of a project that requires signing (:attr:`require_signing`),
        before any work: an unsigned release can be altered together with its checksums by anyone."""
        if self.require_signing and signer is None:
            raise ParameterError("This project requires every release to be signed (its file sets require_signing), "
                                 "so an unsigned export is refused: sign it with "
                                 f"{setting_ref('sign', 'KEYFILE')} (a key made once with ppdp signing-key).",
                                 setting="sign")

    # --- against the data ------------------------------------------------------------------------
    def check_data(self, dataset: Dataset) -> None:
        """Refuse, in one line naming what changed, data that no longer matches the project: a column the
        project gives a role or a taxonomy that the file lacks, or values a taxonomy does not hold."""
        columns = set(map(str, dataset.frame.columns))
        missing = [c for c in list(self.roles) + list(self.taxonomies) if c not in columns]
        if missing:
            raise InputError(f"{dataset.label} no longer has column {missing[0]!r}, which the project uses; "
                             f"its columns are: {', '.join(map(str, dataset.frame.columns))}.")
        for attribute in self.taxonomies:
            taxonomy = self.taxonomy(attribute)
            if taxonomy is None:
                continue
            known = set(taxonomy.leaf_labels())
            values = data_labels(dataset.frame[attribute].dropna().unique())
            new = [v for v in values if v not in known]
            if new:
                shown = ", ".join(repr(v) for v in new[:5]) + (f" and {len(new) - 5} more" if len(new) > 5 else "")
                raise InputError(f"{dataset.label}: column {attribute!r} holds values the project's taxonomy does not "
                                 f"have: {shown}; add them to the taxonomy in the window (step 2) and save the project.")

    # --- file ------------------------------------------------------------------------------
    def is_saved_in(self, path: str | Path | None) -> bool:
        """Whether the project file at ``path`` holds these very choices (the release folder and key path aside):
        then a release made with them records the file's SHA-256 (its provenance)."""
        if not path:
            return False
        try:
            return Project.load(path)._choices() == self._choices()
        except PPDPError:
            return False

    def _choices(self) -> dict[str, Any]:
        """What decides a release: every field but the release paths and the compared methods, the chosen
        method's settings and the re-identification settings in their full form, roles without the default."""
        data = self.to_json()
        for name in ("release_folder", "key_path", "compare"):
            data.pop(name, None)
        data["roles"] = {c: r for c, r in self.roles.items() if r != Role.INSENSITIVE.value}  # the default
        data["options"] = self.method_settings().to_json()
        data["protection"] = self.protection_settings().to_json()
        return json.loads(json.dumps(data))  # tuples as lists, as read back

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
    def load(cls, path: str | Path) -> Project:
        path = check_regular(path, "project file (.ppdp)")  # /dev/zero or a FIFO would never end or hang
        data = read_json(path, error=InputError, max_bytes=MAX_PROJECT_BYTES,
                         hint=" Open the right project file, or save the project again from the window.")
        if not isinstance(data, dict) or data.get("format") != "ppdp-project":
            raise InputError(f"{path.name} is not a PPDP Desktop project file.")
        data = migrate(data, path.name)
        known = list(cls.__dataclass_fields__)
        from ppdp_desktop.core.project_check import check_project_data  # the data's loader among its imports

        check_project_data(data, path.name, known)
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


def _options_per_method(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 -> 3: each method's settings move from flat fields (``rr_l``, ``dp_epsilon`` ...) into
    ``options`` under the method's name; each settings type names its own former fields (``legacy``)."""
    data = dict(data)
    if not isinstance(data.get("options") or {}, dict):
        return data  # refused after the migration, by name (field 'options')
    options = dict(data.get("options") or {})
    for name, method in REGISTRY.items():
        legacy = getattr(method.settings_type, "legacy", {})
        found = {new: data.pop(old) for old, new in legacy.items() if old in data}
        if found and isinstance(options.get(name, {}), dict):  # else refused by name (field 'options.<method>')
            options[name] = {**options.get(name, {}), **found}
    data["options"] = options
    return data


def _add_protection(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 -> 4: re-identification settings appear (threshold 0.2, no k: quasi-identifiers as they are)."""
    data = dict(data)
    data.setdefault("protection", {"threshold": 0.2, "k": None, "suppression": 0.05, "intervals": {}})
    return data


def _add_repeat(data: dict[str, Any]) -> dict[str, Any]:
    """Version 4 -> 5: the project's name in the release ledger and its budget appear (none: as before)."""
    data = dict(data)
    data.setdefault("project_id", None)
    data.setdefault("budget", None)
    return data


#: version -> function(data) -> version + 1
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _add_dp_defaults, 2: _options_per_method, 3: _add_protection, 4: _add_repeat}


def migrate(data: dict[str, Any], name: str) -> dict[str, Any]:
    """Upgrade a project from its version to :data:`PROJECT_VERSION` one step at a time."""
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"{name} has no valid project version.")
    if version > PROJECT_VERSION:
        raise InputError(f"{name} was saved by a newer PPDP Desktop (project version {version}); update the app.")
    while version < PROJECT_VERSION:
        data = MIGRATIONS[version](data)
        version += 1
        data["version"] = version
    return data


class StoredTrees(Mapping[str, Taxonomy]):
    """The job's taxonomies: ``given`` (the trees being edited in the window), else the project's stored ones,
    each read only when a method asks for it (:meth:`Project.stored_taxonomy`). Checking the settings on a click
    (a method's precheck) reads no tree; the job reads those it uses, in the worker."""

    def __init__(self, project: Project, given: Mapping[str, Taxonomy]) -> None:
        self._project, self._given = project, dict(given)
        # the stored forms as they are now: the settings are a snapshot, whatever the window stores meanwhile
        self._stored = {a: d for a, d in project.taxonomies.items() if d and a not in self._given}

    def __getitem__(self, attribute: str) -> Taxonomy:
        if attribute in self._given:
            return self._given[attribute]
        tree = self._project.stored_taxonomy(attribute, self._stored[attribute]) if attribute in self._stored else None
        if tree is None:
            raise KeyError(attribute)
        return tree

    def __iter__(self) -> Iterator[str]:
        return iter([*self._given, *self._stored])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"StoredTrees({list(self)!r})"

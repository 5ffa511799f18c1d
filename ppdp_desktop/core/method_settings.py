"""The base of every method's settings object, declared once (scikit-learn style) and read by the CLI, the
project file and the window (:mod:`ppdp_desktop.core.declarations`); :mod:`ppdp_desktop.core.settings` re-exports it."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from ppdp_desktop.core.declarations import Setting, declared
from ppdp_desktop.core.errors import ParameterError, setting_ref

#: declared limits of the size-like parameters, checked before anything is allocated
MAX_K = 1_000_000  # k of k-anonymity and of microaggregation: a group larger than any table we expect


class _FromDeclarations:
    """A class attribute derived from the declarations (:func:`~ppdp_desktop.core.declarations.setting`):
    ``{field name: part}`` for each declared parameter whose ``part`` is not None."""

    def __init__(self, part: Callable[[Setting], Any]) -> None:
        self.part = part

    def __get__(self, instance: object, owner: type) -> dict[str, Any]:
        return {name: value for name, d in declared(owner).items() if (value := self.part(d)) is not None}


class MethodSettings:
    """Base of every method's own settings (a dataclass in the method's package).

    Subclasses declare each parameter once, with :func:`~ppdp_desktop.core.declarations.setting` (its
    default, limits, command-line option, window label and help); ``constraints`` (parameter name ->
    :class:`Interval` / :class:`OneOf`) and ``flags`` (parameter name -> its option) are derived from those
    declarations (a subclass may still set them by hand). ``suggested`` holds the values a new project starts
    with in the window, where the dataclass default is "not given".
    """

    constraints: ClassVar[Any] = _FromDeclarations(lambda d: d.constraint)
    flags: ClassVar[Any] = _FromDeclarations(lambda d: d.flag)
    suggested: ClassVar[dict[str, Any]] = {}
    #: old flat project-file field -> parameter name (read by the project file's migration)
    legacy: ClassVar[dict[str, str]] = {}

    @classmethod
    def declarations(cls) -> dict[str, Setting]:
        """The declared parameters, by field name."""
        return declared(cls)

    @classmethod
    def setting_key(cls, name: str) -> str:
        """How messages refer to parameter ``name``: its option without the dashes (its name if it has none)."""
        return str(cls.flags.get(name, name)).lstrip("-")

    def check(self) -> None:
        """Raise :class:`ParameterError` naming the first parameter outside its declared limits."""
        for name, constraint in self.constraints.items():
            value = getattr(self, name)
            if not constraint.allows(value):
                key, allowed = self.setting_key(name), constraint.describe()
                raise ParameterError(f"{setting_ref(key)} must be {allowed}; got {value!r}.", setting=key,
                                     value=value, allowed=allowed)

    # --- JSON (the project file) -------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The settings as JSON; fields that hold objects (a Taxonomy) are left to their owners."""
        out = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            if f.metadata.get("json", True):
                out[f.name] = _jsonable(getattr(self, f.name))
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None, where: str = "the project file") -> Self:
        """Settings from JSON (unknown keys ignored; the window's suggested values fill gaps)."""
        if data is not None and not isinstance(data, dict):
            raise ParameterError(f"{where}: the settings of {cls.__name__} must be a JSON object.")
        data = {**cls.suggested, **(data or {})}
        names = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        kwargs = {}
        for key, value in data.items():
            if key in names and names[key].metadata.get("json", True):
                convert = names[key].metadata.get("from_json")
                kwargs[key] = convert(value) if convert else value
        try:
            return cls(**kwargs)
        except TypeError as exc:
            raise ParameterError(f"{where}: {exc}.") from exc


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


@dataclass
class NoSettings(MethodSettings):
    """A method with no parameters of its own (its inputs are the common settings)."""


# --- common settings ------------------------------------------------------------------------------

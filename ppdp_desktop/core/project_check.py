"""Checking a project file's fields before anything uses them: each field's JSON type and range, named
in the one-line refusal ("p.ppdp: field 'theta' must be a number, got 'abc'"), so a hand-edited or
damaged project never raises somewhere later in the window's event loop."""
from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from ppdp_desktop.core.data.bounded_json import check_path_text
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.errors import InputError, PPDPError
from ppdp_desktop.core.methods import REGISTRY, get_method
from ppdp_desktop.core.privacy.sensitivity import check_pair
from ppdp_desktop.core.settings import MethodSettings, ProtectionSettings
from ppdp_desktop.core.taxonomy.io import from_dict

ROLES = {r.value for r in Role}
#: what ``load_options`` may hold: :func:`load_table`'s keyword arguments (the import dialog's choices)
LOAD_OPTIONS = {k: v for k, v in typing.get_type_hints(load_table).items() if k not in ("path", "rows", "return")}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _fail(name: str, field: str, what: str, value: Any) -> InputError:
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return InputError(f"{name}: field {field!r} must be {what}, got {shown}; fix it or save the project again "
                      "from the window.")


# --- a JSON value against a type hint (``list[str]``, ``dict[str, tuple[float, float]]``, ``int | None`` ...) ---

def _fits(value: Any, hint: Any) -> bool:
    """Whether the JSON ``value`` has the shape of ``hint`` (a whole-valued float passes as an int)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return _number(value) and float(value).is_integer()
    if hint is float:
        return _number(value)
    if hint is str:
        return isinstance(value, str)
    if origin in (list, tuple):
        if not isinstance(value, list):
            return False
        if origin is tuple and Ellipsis not in args:
            return len(value) == len(args) and all(_fits(v, a) for v, a in zip(value, args))
        return all(_fits(v, args[0]) for v in value) if args else True
    if origin in (dict, Mapping) or hint is dict:
        return isinstance(value, dict) and (not args or all(_fits(v, args[1]) for v in value.values()))
    return True  # an object built by its owner (a taxonomy): not checked here


def _describe(hint: Any, plural: bool = False) -> str:
    """``hint`` in words: "a list of numbers", "text or null"."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a, plural) for a in args)
    if hint is type(None):
        return "null"
    simple = {bool: ("true or false", "true or false"), int: ("a whole number", "whole numbers"),
              float: ("a number", "numbers"), str: ("text", "text")}
    if hint in simple:
        return simple[hint][plural]
    if origin in (list, tuple):
        if origin is tuple and Ellipsis not in args:
            return f"{'lists' if plural else 'a list'} of {len(args)} {_describe(args[0], True)}"
        return f"{'lists' if plural else 'a list'} of {_describe(args[0], True) if args else 'values'}"
    if origin in (dict, Mapping) or hint is dict:
        values = f" of name -> {_describe(args[1])}" if args and args[1] is not Any else ""
        return ("objects" if plural else "an object") + values
    return "values" if plural else "a value"


def _check_shape(data: Mapping[str, Any], hints: Mapping[str, Any], name: str, prefix: str) -> None:
    """Raise naming ``prefix.key`` for the first entry of ``data`` whose value does not fit its hint."""
    for key, value in data.items():
        if key in hints and not _fits(value, hints[key]):
            raise _fail(name, f"{prefix}.{key}", _describe(hints[key]), value)


def _json_hints(settings_type: type[MethodSettings]) -> dict[str, Any]:
    """The type hint of each field a settings type reads from the project file."""
    hints = typing.get_type_hints(settings_type)
    return {f.name: hints[f.name] for f in dataclasses.fields(settings_type)  # type: ignore[arg-type]
            if f.metadata.get("json", True)}


def _check_settings(settings_type: type[MethodSettings], options: Any, name: str, where: str) -> None:
    """A method's (or re-identification's) settings: no unknown key, each field's shape and declared limits, by
    name."""
    if not isinstance(options, dict):
        raise _fail(name, where, "an object", options)
    hints = _json_hints(settings_type)
    unknown = [k for k in options if k not in hints]
    if unknown:  # dropped silently, the release would be made without the setting the file asks for
        raise InputError(f"{name}: field {where!r} has an unknown setting {unknown[0]!r}; its settings are "
                         f"{', '.join(hints) or 'none'}. Correct or remove it, or save the project again from the "
                         "window.")
    _check_shape(options, _json_hints(settings_type), name, where)
    for key, constraint in settings_type.constraints.items():
        if key in options and not constraint.allows(options[key]):
            raise _fail(name, f"{where}.{key}", constraint.describe(), options[key])
    try:
        settings_type.from_json(options, f"{name}: {where}").check()
    except PPDPError as exc:
        raise InputError(f"{name}: field {where!r}: {exc}") from None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        raise InputError(f"{name}: field {where!r} is malformed ({exc}); fix it or save the project again "
                         "from the window.") from None


def check_project_data(data: dict[str, Any], name: str, fields: Iterable[str] | None = None) -> None:
    """Raise :class:`InputError` naming the first field of a (migrated) project that is unknown (not one of
    ``fields``, the project's own, nor ``format`` or ``version``; None: not checked) or has the wrong shape."""
    known = list(fields) if fields is not None else list(data)
    def optional_text(field: str) -> None:
        if data.get(field) is not None and not isinstance(data[field], str):
            raise _fail(name, field, "text", data[field])

    unknown = [k for k in data if k not in known and k not in ("format", "version")]
    if unknown:  # a misspelt or foreign setting would be dropped silently, and the release made without it
        raise InputError(f"{name}: unknown field {unknown[0]!r}; a project file has the fields {', '.join(known)}. "
                         "Correct or remove it, or save the project again from the window.")
    for field in ("data_path", "choice_column", "release_folder", "key_path", "project_id"):
        optional_text(field)
    for field in ("data_path", "release_folder", "key_path"):
        if data.get(field):
            check_path_text(data[field], f"{name}: field {field!r}")
    if not isinstance(data.get("require_signing", False), bool):
        raise _fail(name, "require_signing", "true or false", data["require_signing"])
    budget = data.get("budget")
    if budget is not None and not (_number(budget) and budget > 0):
        raise _fail(name, "budget", "a positive number (the largest cumulative epsilon) or null", budget)
    load_options = data.get("load_options", {})
    if not isinstance(load_options, dict):
        raise _fail(name, "load_options", "an object", load_options)
    unknown = [k for k in load_options if k not in LOAD_OPTIONS]
    if unknown:
        raise InputError(f"{name}: field 'load_options' has an unknown option {unknown[0]!r}; the options are "
                         f"{', '.join(LOAD_OPTIONS)}. Fix it or save the project again from the window.")
    _check_shape(load_options, LOAD_OPTIONS, name, "load_options")
    roles = data.get("roles", {})
    if not isinstance(roles, dict) or not all(isinstance(v, str) and v in ROLES for v in roles.values()):
        raise _fail(name, "roles", f"an object of column -> one of {', '.join(sorted(ROLES))}", roles)
    sensitive = [c for c, r in roles.items() if r == Role.SENSITIVE.value]
    if len(sensitive) > 1:  # else the second would be released unchanged, relabelled insensitive
        raise InputError(f"{name}: field 'roles' marks {sensitive[1]!r} sensitive besides {sensitive[0]!r}; a release "
                         "protects one sensitive column. Give one of them another role (step 2), or release them "
                         "separately.")
    method = data.get("method")
    if not isinstance(method, str) or method not in REGISTRY:
        raise _fail(name, "method", f"one of {', '.join(REGISTRY)}", method)
    compare = data.get("compare", [])
    if not isinstance(compare, list) or not all(isinstance(m, str) and m in REGISTRY for m in compare):
        raise _fail(name, "compare", "a list of method names", compare)
    for field in ("theta", "rho1", "rho2"):
        if data.get(field) is not None and not _number(data[field]):
            raise _fail(name, field, "a number", data[field])
    for given, other in (("rho1", "rho2"), ("rho2", "rho1")):  # one pair for all values: both or neither
        if data.get(given) is not None and data.get(other) is None:
            raise _fail(name, other, f"a number when {given!r} is given", data.get(other))
    pairs = data.get("pairs", {})
    if not isinstance(pairs, dict) or not all(
            isinstance(v, list) and len(v) == 2 and all(_number(x) for x in v) for v in pairs.values()):
        raise _fail(name, "pairs", "an object of value -> [rho1, rho2]", pairs)
    for value, (rho1, rho2) in pairs.items():
        try:
            check_pair(rho1, rho2, repr(value))
        except PPDPError as exc:
            raise InputError(f"{name}: field 'pairs': {str(exc)[:1].lower()}{str(exc)[1:]}") from None
    default = data.get("default_choice", 2)
    if isinstance(default, bool) or default not in (1, 2, 3):
        raise _fail(name, "default_choice", "1, 2 or 3", default)
    choices = data.get("value_choices", {})
    if not isinstance(choices, dict) or not all(not isinstance(v, bool) and v in (1, 2, 3) for v in choices.values()):
        raise _fail(name, "value_choices", "an object of value -> 1, 2 or 3", choices)
    for field in ("protection", "taxonomies", "options"):
        if not isinstance(data.get(field, {}), dict):
            raise _fail(name, field, "an object", data[field])
    for attribute, taxonomy in data.get("taxonomies", {}).items():
        try:
            from_dict(taxonomy, attribute, f"{name}: field {f'taxonomies.{attribute}'!r}")
        except PPDPError as exc:
            raise InputError(f"{exc} Fix it or save the project again from the window.") from None
    _check_settings(ProtectionSettings, data.get("protection", {}), name, "protection")
    for method_name, options in data.get("options", {}).items():
        where = f"options.{method_name}"
        if method_name not in REGISTRY:
            raise _fail(name, where, f"the settings of one of {', '.join(REGISTRY)}", method_name)
        _check_settings(get_method(method_name).settings_type, options, name, where)

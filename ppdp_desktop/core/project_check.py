"""Checking a project file's fields before anything uses them: each field's JSON type and range, named
in the one-line refusal ("p.ppdp: field 'theta' must be a number, got 'abc'"), so a hand-edited or
damaged project never raises somewhere later in the window's event loop."""
from __future__ import annotations

import math
from typing import Any

from ppdp_desktop.core.data.schema import Role
from ppdp_desktop.core.errors import InputError, PPDPError
from ppdp_desktop.core.methods import REGISTRY, get_method

ROLES = {r.value for r in Role}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _fail(name: str, field: str, what: str, value: Any) -> InputError:
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    return InputError(f"{name}: field {field!r} must be {what}, got {shown}; fix it or save the project again "
                      "from the window.")


def check_project_data(data: dict[str, Any], name: str) -> None:
    """Raise :class:`InputError` naming the first field of a (migrated) project that has the wrong shape."""
    def optional_text(field: str) -> None:
        if data.get(field) is not None and not isinstance(data[field], str):
            raise _fail(name, field, "text", data[field])

    for field in ("data_path", "choice_column", "release_folder", "key_path"):
        optional_text(field)
    if not isinstance(data.get("load_options", {}), dict):
        raise _fail(name, "load_options", "an object", data["load_options"])
    roles = data.get("roles", {})
    if not isinstance(roles, dict) or not all(isinstance(k, str) and v in ROLES for k, v in roles.items()):
        raise _fail(name, "roles", f"an object of column -> one of {', '.join(sorted(ROLES))}", roles)
    method = data.get("method")
    if method is not None and method not in REGISTRY:
        raise _fail(name, "method", f"one of {', '.join(REGISTRY)}", method)
    compare = data.get("compare", [])
    if not isinstance(compare, list) or not all(m in REGISTRY for m in compare):
        raise _fail(name, "compare", "a list of method names", compare)
    for field in ("theta", "rho1", "rho2"):
        if data.get(field) is not None and not _number(data[field]):
            raise _fail(name, field, "a number", data[field])
    pairs = data.get("pairs", {})
    if not isinstance(pairs, dict) or not all(
            isinstance(v, list) and len(v) == 2 and all(_number(x) for x in v) for v in pairs.values()):
        raise _fail(name, "pairs", "an object of value -> [rho1, rho2]", pairs)
    default = data.get("default_choice", 2)
    if isinstance(default, bool) or default not in (1, 2, 3):
        raise _fail(name, "default_choice", "1, 2 or 3", default)
    choices = data.get("value_choices", {})
    if not isinstance(choices, dict) or not all(not isinstance(v, bool) and v in (1, 2, 3) for v in choices.values()):
        raise _fail(name, "value_choices", "an object of value -> 1, 2 or 3", choices)
    for field in ("protection", "taxonomies", "options"):
        if not isinstance(data.get(field, {}), dict):
            raise _fail(name, field, "an object", data[field])
    if not all(isinstance(t, dict) for t in data.get("taxonomies", {}).values()):
        raise _fail(name, "taxonomies", "an object of column -> taxonomy", data["taxonomies"])
    for method_name, options in data.get("options", {}).items():
        where = f"options.{method_name}"
        if method_name not in REGISTRY:
            raise _fail(name, where, f"the settings of one of {', '.join(REGISTRY)}", method_name)
        try:
            settings = get_method(method_name).settings_type.from_json(options, f"{name}: {where}")
            settings.check()
        except PPDPError as exc:
            raise InputError(f"{name}: field {where!r}: {exc}") from None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise InputError(f"{name}: field {where!r} is malformed ({exc}); fix it or save the project again "
                             "from the window.") from None

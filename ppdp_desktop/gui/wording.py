"""The window speaks of its own controls: a core message refers to a setting by its key
(:func:`~ppdp_desktop.core.errors.setting_ref`) and :func:`window_name` names the control that sets it.

A setting every job shares is named by :data:`COMMON` (the step and the control, by hand: these controls are
the window's own pages). A method's own setting is named by the label its settings class declares
(:func:`~ppdp_desktop.core.declarations.setting`), found across the registry, so a new plug-in method's messages
come through in the window's words with no code here. An unknown key is shown as it is.

Use ``error.phrase(window_name)`` for a :class:`~ppdp_desktop.core.errors.PPDPError` and
``phrase(text, window_name)`` for a message kept as text (a precheck's list).
"""
from __future__ import annotations

from ppdp_desktop.core.methods import REGISTRY, declared_setting
from ppdp_desktop.core.protection_settings import ProtectionSettings

STEP1 = "in the import options (step 1)"
PAIR = "'The same requirement for every value' (step 3)"
METHOD_PAGE = "on the method page (step 4)"
PROTECTION = "in 'Protect the quasi-identifiers' on the method page (step 4)"
EXPORT = "on the export page"
REPEAT = "in 'Repeated releases' on the Run page (step 5)"
STABLE = "The same pseudonym for a patient in every release"

#: key -> the control that sets it, for the settings every job shares
COMMON: dict[str, str] = {
    # step 1: how the file is read
    "sep": f"the delimiter {STEP1}",
    "encoding": f"the encoding {STEP1}",
    "decimal": f"the decimal mark {STEP1}",
    "header-row": f"the header row {STEP1}",
    "sheet": f"the sheet {STEP1}",
    # step 2: roles and taxonomies
    "kind": "the column's Kind on step 2",
    "sensitive": "the Sensitive role on step 2",
    "quasi": "the Quasi-identifier role on step 2",
    "identifier": "the Identifier role on step 2",
    "identifiers": "the Identifier role on step 2",
    "taxonomy": "the taxonomy editor on step 2",
    # step 3: sensitivity and choices
    "rho1": f"rho1 of {PAIR}",
    "rho2": f"rho2 of {PAIR}",
    "theta": "theta of 'Less frequent values are more sensitive' (step 3)",
    "pairs": "the sensitivity table on step 3",
    "choice-column": "the privacy choice column on step 3",
    "default-choice": "the default privacy choice on step 3",
    "value-choices": "the default choices of the values in the sensitivity table on step 3",
    # step 5: repeated releases
    "project": f"'Project in the ledger' {REPEAT}",
    "budget": f"'Budget' {REPEAT}",
    "over-budget-reason": f"'Reason to go past it' {REPEAT}",
    "secret-passphrase-file": f"the custodian secret's 'Passphrase' {REPEAT}",
    "stable-pseudonyms": f"'{STABLE}' {REPEAT}",
    "no-stable-pseudonyms": f"unticking '{STABLE}' {REPEAT}",
    # the export page
    "out": f"'Release folder' {EXPORT}",
    "key": f"'Key file' {EXPORT}",
    "overwrite": f"'Overwrite an existing release folder and key file' {EXPORT}",
    "allow-weak-passphrase": f"'Use this weak passphrase anyway' {EXPORT}",
    "sign": f"'Sign with' {EXPORT}",
    "format": f"'Data format' {EXPORT}",
    "zip": f"'Write one .zip file instead of a folder' {EXPORT}",
}


def _flag_label(key: str) -> str | None:
    """The label of a parameter a registered method names only in its ``flags`` (a settings class without
    declarations): the field's name in words."""
    for method in REGISTRY.values():
        for name, flag in dict(getattr(method.settings_type, "flags", None) or {}).items():
            if str(flag).lstrip("-") == key:
                return name.replace("_", " ")
    return None


def window_name(key: str, metavar: str = "") -> str:
    """The window's name for setting ``key``: the control that sets it and where (``metavar`` is the command
    line's; the window does not need it)."""
    if key in COMMON:
        return COMMON[key]
    declaration = declared_setting(key)
    if declaration is not None:
        protection = any(d.key == key for d in ProtectionSettings.declarations().values())
        return f"'{declaration.title}' {PROTECTION if protection else METHOD_PAGE}"
    label = _flag_label(key)
    return f"'{label}' {METHOD_PAGE}" if label else key

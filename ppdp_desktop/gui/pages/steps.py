"""The wizard's steps by name: each step's title and where its page class lives, without importing it.

The main window lists every step before the window is shown but builds (and imports) only the first page then;
the page modules after it pull in the core's job, report and method code, which the first frame must not wait for.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ppdp_desktop.gui.pages.base import WizardPage


class Step(NamedTuple):
    """One step of the wizard: its title in the step list, its page class as ``module:Class``, and whether its page
    lists every registered method (the registry then imports the method families when the page is made)."""

    title: str
    page: str
    lists_methods: bool = False

    def page_class(self) -> type[WizardPage]:
        """Import the step's page module (on first use only) and return its page class."""
        module, _, name = self.page.partition(":")
        return getattr(importlib.import_module(module), name)

    def prepare(self) -> None:
        """Import what making the page needs (its module; the method families for a page that lists them), so
        that a background thread can do it while the window answers: making the page after that is quick."""
        self.page_class()
        if self.lists_methods:
            from ppdp_desktop.core.methods import REGISTRY

            len(REGISTRY)  # fills the registry (under its lock): scipy and each family imported here


_PAGES = "ppdp_desktop.gui.pages."
#: the wizard's steps, in order (each title is its page class's ``title``; a test holds them equal)
STEPS: tuple[Step, ...] = (
    Step("Load data", _PAGES + "load_page:LoadPage"),
    Step("Roles & taxonomies", _PAGES + "roles_page:RolesPage"),
    Step("Sensitivity & choices", _PAGES + "sensitivity_page:SensitivityPage"),
    Step("Method", _PAGES + "method_page:MethodPage", lists_methods=True),
    Step("Run", _PAGES + "run_page:RunPage"),
    Step("Report", _PAGES + "report_page:ReportPage"),
    Step("Export", _PAGES + "export_page:ExportPage"),
)

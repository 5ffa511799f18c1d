"""Step 4's "what to keep" of one quasi-identifier: how fine it must stay at least (ARX's maximum generalization level,
``ProtectionSettings.max_levels``) and its weight in the utility metric (``weights``).

The levels are offered in words on the column's own values ("10-year bands (30-39, 40-49, …)",
:func:`~ppdp_desktop.core.generalization.alternatives.level_words`), from the hierarchy the job will build
(:func:`~ppdp_desktop.core.protection.hierarchies_for`, on the column's distinct values: the same levels, cheaply).
"""
from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QLabel, QWidget

from ppdp_desktop.core.errors import PPDPError
from ppdp_desktop.core.generalization import Hierarchy
from ppdp_desktop.core.generalization.alternatives import level_kind, level_words
from ppdp_desktop.core.protection import hierarchies_for
from ppdp_desktop.core.settings import ProtectionSettings
from ppdp_desktop.gui.state import WizardState

ANY_LEVEL = "any level"
NO_HIERARCHY = "any level (give its hierarchy first)"
#: the metric's choices in plain words, in the order shown (ProtectionSettings.metric)
METRIC_CHOICES = {
    "precision": "fewest generalization steps (precision)",
    "loss": "cells standing for the fewest values (ARX's loss)",
    "entropy": "least information lost (non-uniform entropy)",
    "discernibility": "smallest, most even groups (discernibility)",
    "aecs": "smallest groups on average (average class size)",
}


class Levels:
    """The hierarchy the job will build for each quasi-identifier, built again only when what it is built from (the
    data, the widths or cut points, the tree) changed: typing a weight or another column's widths costs nothing."""

    def __init__(self, state: WizardState) -> None:
        self.state = state
        self._distinct: dict[str, pd.DataFrame] = {}
        self._built: dict[str, tuple[tuple, Hierarchy | None]] = {}
        self._data: object = None

    def clear(self) -> None:
        """Forget every hierarchy (a tree may have been edited in step 2)."""
        self._data = None

    def of(self, name: str, settings: ProtectionSettings) -> Hierarchy | None:
        """The hierarchy of quasi-identifier ``name`` (None when it cannot be built yet, e.g. no widths given)."""
        dataset = self.state.dataset
        if dataset is None:
            return None
        if dataset is not self._data:
            self._data, self._distinct, self._built = dataset, {}, {}
        tree = self.state.taxonomies.get(name)
        key = (repr(settings.intervals.get(name)), repr(settings.cuts.get(name)), id(tree), tree.depth if tree else 0)
        if name in self._built and self._built[name][0] == key:
            return self._built[name][1]
        if name not in self._distinct:
            self._distinct[name] = dataset.frame[[name]].drop_duplicates()  # the same levels as on every record
        try:
            built: Hierarchy | None = hierarchies_for(self._distinct[name], [name], dataset.schema, settings,
                                                      self.state.taxonomies)[name]
        except (PPDPError, ValueError):
            built = None
        self._built[name] = (key, built)
        return built


class KeepRow(QWidget):
    """"Keep at least as: [any level | exact values (…) | 5-year bands (…) | …]" and the weight of one quasi-identifier."""

    #: the level or the weight changed
    edited = Signal()

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.hierarchy: Hierarchy | None = None
        self.wanted: str | None = None  # the kind of level chosen ("10-year bands"), kept while widths are typed
        self.level = QComboBox()
        self.level.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.level.setMinimumContentsLength(12)  # long level words are elided, not widening the page
        self.level.setToolTip(f"The coarsest {name!r} may become (ARX's maximum generalization level): the release keeps "
                              f"{name!r} at least this fine, whatever it costs in suppressed records or other columns")
        self.weight = QDoubleSpinBox(decimals=1, minimum=0.0, maximum=100.0, singleStep=0.5, value=1.0)
        self.weight.setToolTip(f"How much keeping {name!r} fine counts in the utility metric (1: as much as the others; "
                               "higher: the search prefers nodes that generalize it less; 0: its generalization is free)")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("keep at least as:"))
        layout.addWidget(self.level, 1)
        layout.addWidget(QLabel("weight:"))
        layout.addWidget(self.weight)
        self.level.currentIndexChanged.connect(self._on_chosen)
        self.weight.valueChanged.connect(lambda _v: self.edited.emit())

    def show_levels(self, hierarchy: Hierarchy | None, chosen: int | None, wanted: str | None = None) -> None:
        """Offer the levels of ``hierarchy`` below its top (the top is "any level"); selected: the level of the kind
        ``wanted`` (chosen earlier in this session, e.g. "5-year bands") if given, else level ``chosen`` (a project's),
        else "any level"; without a hierarchy only "any level"."""
        if wanted is not None:
            self.wanted = wanted
            self.follow(hierarchy)
            return
        self._show(hierarchy, lambda words, level: level == chosen)
        self.wanted = level_kind(self.level.currentText()) if self.max_level() is not None else None

    def follow(self, hierarchy: Hierarchy | None) -> None:
        """New levels (other widths or cut points): the level chosen stays chosen only where the new hierarchy has one
        of the same kind ("5-year bands"), else "any level" — never a coarser level in its place; the kind is kept while
        the widths are being typed, so it comes back with them."""
        self._show(hierarchy, lambda words, level: self.wanted is not None and level_kind(words) == self.wanted)

    def _on_chosen(self, _index: int) -> None:
        self.wanted = level_kind(self.level.currentText()) if self.max_level() is not None else None
        self.edited.emit()

    def _show(self, hierarchy: Hierarchy | None, is_chosen) -> None:
        self.hierarchy = hierarchy
        self.level.blockSignals(True)
        self.level.clear()
        self.level.addItem(ANY_LEVEL if hierarchy is not None else NO_HIERARCHY, None)
        if hierarchy is not None:
            for level in range(hierarchy.height):
                words = level_words(hierarchy, level)
                self.level.addItem(words, level)
                self.level.setItemData(self.level.count() - 1, f"level {level} of {hierarchy.height}: {words}",
                                       Qt.ItemDataRole.ToolTipRole)
        found = [i for i in range(1, self.level.count()) if is_chosen(self.level.itemText(i), self.level.itemData(i))]
        self.level.setCurrentIndex(found[0] if found else 0)
        self.level.setEnabled(hierarchy is not None and hierarchy.height > 0)
        self.level.blockSignals(False)

    def max_level(self) -> int | None:
        """The highest level allowed (None: any)."""
        data = self.level.currentData()
        return int(data) if data is not None else None

    def set_weight(self, weight: float) -> None:
        self.weight.blockSignals(True)
        self.weight.setValue(float(weight))
        self.weight.blockSignals(False)

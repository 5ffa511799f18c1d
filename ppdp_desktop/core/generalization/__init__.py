"""Full-domain generalization of quasi-identifiers to k-anonymity with record suppression.

* :class:`Hierarchy` (:mod:`.hierarchy`): one quasi-identifier's generalization levels, from a taxonomy
  tree, ARX hierarchy rows or file, interval widths or cut points.
* :func:`optimal_generalization` (:mod:`.lattice`): the most precise lattice node whose classes all have
  at least ``k`` records once at most a given share of records is suppressed; :class:`Generalization`
  (:mod:`.result`) applies it to the records and describes it; :func:`node_generalization` checks one given node
  (a project's next release keeps its previous release's).
* :func:`check_k_anonymity` (:mod:`.verify`): the verifier's independent check of a released table.
* :class:`Criteria` (:mod:`.criteria`): l-diversity (distinct, entropy, recursive), t-closeness and prosecutor-risk
  thresholds besides k, which :func:`optimal_generalization` accepts (:mod:`.judge` evaluates them in the search)
  and :func:`check_criteria` (:mod:`.check_criteria`) re-checks on the released text.

Imports only ``core.data``, ``core.taxonomy``, ``core.errors`` and ``core.progress``.
"""
from ppdp_desktop.core.generalization.check_criteria import check_criteria
from ppdp_desktop.core.generalization.criteria import Criteria
from ppdp_desktop.core.generalization.hierarchy import Hierarchy
from ppdp_desktop.core.generalization.lattice import exhaustive_generalization, node_generalization, optimal_generalization
from ppdp_desktop.core.generalization.result import Generalization
from ppdp_desktop.core.generalization.verify import check_k_anonymity

__all__ = [
    "Criteria", "Generalization", "Hierarchy", "check_criteria", "check_k_anonymity", "exhaustive_generalization",
    "node_generalization", "optimal_generalization",
]

"""What combining two generalized releases of a project reveals: groups that shrink below k (Qt-free).

The attacker holds both releases and links a record of one to the same patient's record in the other (by the
columns both release unchanged). For a record in both, they then know both of its equivalence classes: its
*combined class* is the set of common records that share its class in the earlier release and its class in this
one. Released with the same generalization (lattice node) over the same records, the combined class is the class
itself; with a different node, or a changed record set, it can hold fewer than k records although each release
alone is k-anonymous -- the intersection attack. :func:`intersection_check` counts those records before anything
is published.

A record is identified by its identity digest; a patient with several records in a release (or records alike in
every identifying column) counts once, with the class of their first record, so a combined class never looks
larger than it is.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.repeat.records import ReleaseRecords

__all__ = ["IntersectionReport", "intersection_check"]

#: who the intersection sentences are about
ATTACKER = "someone who holds both releases and links their records by the columns they share"


@dataclass(frozen=True)
class IntersectionReport:
    """The intersection of this release with the project's last generalized release."""

    k: int
    #: records (by identity) in both releases
    common: int
    #: of them, records whose combined class holds fewer than k of the common records
    shrunk: int
    #: the smallest combined class among the common records (0 if none)
    smallest: int
    #: both releases were generalized to the same lattice node
    same_node: bool
    #: ``k`` is the group size the criteria promise (l-diversity ...), no k having been asked
    by_criteria: bool = False

    def to_json(self) -> dict[str, Any]:
        """Plain JSON numbers and flags (``by_criteria`` only when true)."""
        out = asdict(self)
        if not self.by_criteria:
            del out["by_criteria"]
        return out

    def sentences(self) -> list[str]:
        """What combining the two releases reveals, in plain words; each sentence names its attacker."""
        node = ("the same generalization as" if self.same_node else "a different generalization from")
        bound = f"the {self.k} records the criteria promise" if self.by_criteria else f"k = {self.k}"
        lines = [f"This release uses {node} the project's previous generalized release; {self.common:,} "
                 f"record{'' if self.common == 1 else 's'} are in both."]
        if not self.common:
            lines.append(f"No record is in both releases, so {ATTACKER} finds no record in a smaller group by "
                         "combining them.")
        elif self.shrunk:
            cause = ("the records in each group changed between the releases" if self.same_node else
                     "the groups of the two generalizations cut across each other")
            lines.append(f"{self.shrunk:,} record{' would' if self.shrunk == 1 else 's would'} be in a group smaller "
                         f"than {bound} (the smallest holds {self.smallest}) if the two releases were combined, "
                         f"because {cause}: for {ATTACKER}, each of them hides among fewer than {self.k} records.")
        else:
            lines.append(f"Combined, every record in both releases stays in a group of at least {bound} "
                         f"(the smallest holds {self.smallest}) for {ATTACKER}.")
        return lines


def intersection_check(previous: ReleaseRecords, current: ReleaseRecords, k: int, same_node: bool,
                       by_criteria: bool = False) -> IntersectionReport:
    """The combined classes of the records in both ``previous`` and ``current`` (see the module docstring).

    Parameters
    ----------
    previous, current : ReleaseRecords
        The project's last generalized release and the release being made; both need ``classes``.
    k : int
        The k of k-anonymity the releases promise.
    same_node : bool
        Both were generalized to the same lattice node (reported, not used in the counts).

    Raises
    ------
    ParameterError
        A release has no equivalence classes (it was not generalized), or ``k`` is below 1.
    """
    for name, release in (("The previous release", previous), ("This release", current)):
        if release.classes is None:
            raise ParameterError(f"{name} records no equivalence classes (its quasi-identifiers were not "
                                 "generalized), so the intersection of the two releases cannot be computed.")
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ParameterError(f"k must be a whole number of at least 1; got {k!r}.", setting="k-anonymity", value=k,
                             allowed="a whole number >= 1")
    before_ids, before_classes = _first_class(previous.identities, previous.classes)
    now_ids, now_classes = _first_class(current.identities, current.classes)
    _, in_before, in_now = np.intersect1d(before_ids, now_ids, assume_unique=True, return_indices=True)
    common = len(in_now)
    if not common:
        return IntersectionReport(int(k), 0, 0, 0, bool(same_node), bool(by_criteria))
    _, a = np.unique(before_classes[in_before], return_inverse=True)
    _, b = np.unique(now_classes[in_now], return_inverse=True)
    combined = np.ravel(a).astype(np.int64) * (int(np.max(b)) + 1) + np.ravel(b)
    _, group, sizes = np.unique(combined, return_inverse=True, return_counts=True)
    size = sizes[np.ravel(group)]
    return IntersectionReport(int(k), common, int((size < k).sum()), int(sizes.min()), bool(same_node), bool(by_criteria))


def _first_class(identities: np.ndarray, classes: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A release's distinct identities (sorted) and the class of each one's first record."""
    distinct, first = np.unique(identities, return_index=True)
    return distinct, np.asarray(classes)[first]

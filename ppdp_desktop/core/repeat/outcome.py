"""This release among its project's releases: what the job computed before anything is written (the records as
the ledger will keep them, the cumulative guarantee, the intersection with the last generalized release)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ppdp_desktop.core.repeat.records import ReleaseRecords

if TYPE_CHECKING:
    from ppdp_desktop.core.repeat.accounting import CumulativeGuarantee
    from ppdp_desktop.core.repeat.intersection import IntersectionReport
    from ppdp_desktop.core.repeat.ledger import LedgerEntry

#: the ledger parameter naming a generalized release's quasi-identifiers, in the order of its node's levels
NODE_QUASI = "quasi_identifiers"


@dataclass
class RepeatOutcome:
    """What a job knows of its release as one of its project's releases.

    ``identity`` says in words what identifies a record across releases (the identifier columns, or the whole
    record when none is tagged); ``persistent`` whether its draws came from the custodian secret.
    """

    project_id: str
    identity: str
    persistent: bool
    records: ReleaseRecords
    cumulative: CumulativeGuarantee
    budget: float | None = None
    override_reason: str | None = None
    stable_pseudonyms: bool = False
    node: list[int] | None = None
    intersection: IntersectionReport | None = None
    notes: list[str] = field(default_factory=list)
    #: the method's plan as the project's next release may keep it (``Method.repeat_state``); never published
    plan_state: dict[str, Any] | None = None
    #: the quasi-identifiers ``node`` gives the levels of (kept in the ledger with the node: the next release keeps
    #: the node for the same quasi-identifiers)
    quasi: list[str] = field(default_factory=list)
    #: for the custodian only (a secret made at a path of this PC, none at hand): the summary and the window say
    #: them; never release.json or README.txt
    custodian_notes: list[str] = field(default_factory=list)
    #: what the custodian should weigh before publishing (records that combining releases would single out)
    warnings: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """release.json's ``repeated_release`` block: public figures only (no digest, no identity)."""
        figures = {k: v for k, v in self.cumulative.to_json().items() if k not in ("project_id", "persistent")}
        return {
            "project": self.project_id,
            "identity": self.identity,
            "persistent_randomness": self.persistent,
            "stable_pseudonyms": self.stable_pseudonyms,
            **figures,
            **({"intersection": self.intersection.to_json()} if self.intersection is not None else {}),
            **({"budget_override_reason": self.override_reason} if self.override_reason else {}),
            "statement": self.sentences(),
        }

    def ledger_entry(self, method: str, parameters: dict[str, Any]) -> LedgerEntry:
        """What the release ledger keeps of this release (written around its publication)."""
        from ppdp_desktop.core.repeat.ledger import LedgerEntry

        kept = {**parameters, **({"plan_state": self.plan_state} if self.plan_state is not None else {}),
                **({NODE_QUASI: list(self.quasi)} if self.node is not None else {})}
        return LedgerEntry(self.project_id, method, kept, self.records, self.persistent, self.stable_pseudonyms,
                           self.cumulative.to_json(), self.budget, self.override_reason, self.node)

    def custodian_lines(self) -> list[str]:
        """:meth:`sentences` and what only the custodian is told (the CLI summary, the window's Run page)."""
        return self.sentences() + self.custodian_notes

    def sentences(self) -> list[str]:
        """The plain-language lines for README.txt, release.json and the reports (nothing about this PC)."""
        lines = [f"Records are recognised across releases by {self.identity}."]
        lines += self.cumulative.sentences()
        if self.intersection is not None:
            lines += self.intersection.sentences()
        return lines + self.notes

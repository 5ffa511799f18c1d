"""Personalized recoding with aliases and graded grouping (seed 004, SPEC 4).

Each record of a categorical sensitive attribute is published as its value (choice 1), its alias1
(2: the generalized value from the taxonomy) or its alias2 (3: an opaque code); numeric sensitive
attributes may be graded. The alias meanings and the category bounds go only into the sealed key.
Honesty first: this is a keyed recoding, not a randomization; it gives no formal guarantee.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ppdp_desktop.core.data.domain import label_text, text_column
from ppdp_desktop.core.data.schema import Kind
from ppdp_desktop.core.errors import ParameterError, PrivacyError, setting_ref
from ppdp_desktop.core.methods.base import Method
from ppdp_desktop.core.methods.personalized import release as personalized_release
from ppdp_desktop.core.methods.personalized import settings as personalized_settings
from ppdp_desktop.core.methods.personalized.choices import ChoiceRule
from ppdp_desktop.core.methods.personalized.grading import Grading, plan_grading
from ppdp_desktop.core.methods.personalized.settings import RecodingSettings
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy.randomness import RandomSource, keyed_streams
from ppdp_desktop.core.progress import CancelToken, Progress
from ppdp_desktop.core.taxonomy.io import load_taxonomy
from ppdp_desktop.core.taxonomy.tree import Taxonomy

if TYPE_CHECKING:
    import argparse

    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.settings import AnonymizationSettings

NO_GUARANTEE = (
    "Personalized recoding gives no formal privacy guarantee: each record shows its actual value, a "
    "generalized value or an opaque code according to its choice, and graded values keep their order. "
    "It protects only as far as the aliases and category bounds stay secret (they are in the sealed key), and "
    "they can be worked out without the key: a code is as frequent as its value among the records shown as codes, "
    "and graded values keep their spacing."
)


@dataclass
class PersonalizedPlan:
    """The taxonomy (with aliases) of the recoded attribute, the choice rule and the gradings."""

    attribute: str | None
    taxonomy: Taxonomy | None
    rule: ChoiceRule
    gradings: list[Grading] = field(default_factory=list)
    source: str = "the data"
    method: str = "personalized"
    needs_pseudonyms: bool = True

    def recoding_taxonomy(self) -> Taxonomy:
        """The taxonomy (with aliases) of the recoded attribute (a PrivacyError if the plan holds none: fail closed)."""
        if self.taxonomy is None:
            raise PrivacyError(f"The plan recodes {self.attribute!r} but holds no taxonomy of its values.")
        return self.taxonomy

    def verify(self) -> dict[str, Any]:
        """Aliases must decode unambiguously and never look like a real value; grades must reverse."""
        if self.taxonomy is not None:
            leaves = {leaf.label for leaf in self.taxonomy.leaves()}
            alias2 = [leaf.alias2 for leaf in self.taxonomy.leaves()]
            if len(set(alias2)) != len(alias2):
                raise PrivacyError(f"Two values of {self.attribute!r} share an alias2; each needs its own code.")
            clash = sorted(set(alias2) & leaves)
            if clash:
                raise PrivacyError(f"The alias2 {clash[0]!r} of {self.attribute!r} is also a real value; change it.")
        return {"kind": "none", "verified": True, "statement": NO_GUARANTEE}

    def apply(self, frame: pd.DataFrame, randomness: RandomSource, start: int = 0, bound: None = None) -> Applied:
        """Recode the records ``start, start+1, ...`` of ``frame`` (deterministic: no draw)."""
        keyed_streams(randomness)  # the job's keyed source only (fail closed), though nothing is drawn
        columns: dict[str, np.ndarray] = {}
        secrets: dict[str, np.ndarray] = {}
        if self.attribute is not None and self.taxonomy is not None:
            missing = frame[self.attribute].isna().to_numpy()  # a blank stays blank: nothing to hide
            values = text_column(frame[self.attribute])
            choices = self.rule.choices(frame, self.attribute, self.source, start)
            leaves = self.taxonomy.leaves()
            index = pd.Index([leaf.label for leaf in leaves])
            codes = index.get_indexer(values)
            if ((codes < 0) & ~missing).any():
                bad = values[(codes < 0) & ~missing].iloc[0]
                raise ParameterError(f"Value {bad!r} of {self.attribute!r} has no leaf in the taxonomy.")
            # Published text per (leaf, choice) as a Categorical: no Python object per record.
            published = [[leaf.label, leaf.alias1, leaf.alias2] for leaf in leaves]
            categories = pd.unique(pd.Series([t for row in published for t in row], dtype=object))
            lookup = pd.Index(categories)
            table = np.array([lookup.get_indexer(row) for row in published], dtype=np.int64)
            codes = np.where(missing, 0, codes)
            chosen = table[codes, choices.astype(np.intp) - 1]
            columns[self.attribute] = pd.Categorical.from_codes(np.where(missing, -1, chosen), categories=categories)
            ambiguous = self._ambiguous_alias1(leaves)
            needs = (choices == 2) & ambiguous[codes] & ~missing
            # None as an object array: numpy's stubs read where(c, x, None) as its one-argument form
            secrets[self.attribute] = np.where(needs, values.to_numpy(dtype=object), np.array(None, dtype=object))
        for grading in self.gradings:
            columns[grading.attribute] = grading.grade(pd.to_numeric(frame[grading.attribute]).to_numpy(dtype=float))
        dropped = [self.rule.column] if self.rule.column else []
        return Applied(columns, dropped=dropped, record_secrets=secrets)

    @staticmethod
    def _ambiguous_alias1(leaves: list) -> np.ndarray:
        alias1 = pd.Series([leaf.alias1 for leaf in leaves])
        return alias1.duplicated(keep=False).to_numpy()

    def release_json(self) -> dict[str, Any]:
        recoded = []
        if self.attribute is not None:
            recoded.append({"attribute": self.attribute,
                            "published": "the value, its alias1 or its alias2, by each record's choice"})
        graded = [
            {"attribute": g.attribute, "categories": g.k, "decimals": g.decimals,
             "meaning": "category number + position within the category (0 to 0.999); bounds are secret"}
            for g in self.gradings
        ]
        return {
            "parameters": {"choices": self.rule.describe()},
            "recoded": recoded,
            "graded": graded,
            "guarantee": {"kind": "none", "statement": NO_GUARANTEE},
            "reconstruction": "Aliases and grades can be decoded only with the sealed key file (ppdp lookup).",
        }

    def key_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"parameters": {"choices": self.rule.describe()}}
        if self.taxonomy is not None:
            alias1, alias2 = self.taxonomy.alias_maps()
            out["aliases"] = {self.attribute: {"alias1": alias1, "alias2": alias2}}
        out["graded"] = {g.attribute: g.key_json() for g in self.gradings}
        return out

    def describe(self) -> list[str]:
        lines = []
        if self.attribute is not None:
            lines.append(f"recoded: {self.attribute} ({len(self.recoding_taxonomy().leaves())} values; {self.rule.describe()})")
        for g in self.gradings:
            lines.append(f"graded: {g.attribute} ({g.k} secret categories)")
        lines.append("no formal privacy guarantee (keyed recoding; see the release's guarantee statement)")
        return lines


class PersonalizedRecoding(Method[PersonalizedPlan, RecodingSettings]):
    name = "personalized"
    title = "Personalized recoding with aliases"
    summary = (
        "Each patient's record shows the actual diagnosis, a generalized one (alias1) or a meaningless code "
        "(alias2), as that patient chose; numeric values can be graded into secret categories. The sealed key "
        "maps them back; without it, codes can often be matched to values by how often they occur, and grades "
        "decoded from a few known values. It gives no formal privacy guarantee and does not protect "
        "records whose choice is to publish the actual value."
    )

    settings_type = RecodingSettings
    plan_type = PersonalizedPlan
    needs_pairs = False
    needs_key = True
    window_editor = "recoding"

    def roles(self, settings: AnonymizationSettings) -> tuple[list[str], list[str]]:
        """Graded columns are protected too (their values are replaced by secret grades)."""
        graded = self.settings(settings).graded
        return [settings.sensitive] + [c for c in graded if c != settings.sensitive], list(settings.quasi)

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> PersonalizedPlan:
        rec = self.settings(settings)
        rec.check()
        edited = settings.taxonomies.get(settings.sensitive)
        frame, label = dataset.frame, dataset.label
        attribute: str | None = settings.sensitive
        kind = dataset.schema.attributes[settings.sensitive].kind
        taxonomy = None
        if kind is Kind.NUMERIC and settings.sensitive in rec.graded:
            attribute = None  # a numeric sensitive column is graded, not aliased
        elif kind is Kind.NUMERIC and not (rec.taxonomy_path or edited is not None):
            raise ParameterError(
                f"Sensitive column {settings.sensitive!r} is numeric: grade it ({setting_ref('graded', settings.sensitive)}"
                f" with {setting_ref('categories', 'K')}), or give a taxonomy of its values "
                f"({setting_ref('taxonomy', 'FILE')}).", setting="graded", column=settings.sensitive
            )
        if attribute is not None:
            values = sorted(label_text(v) for v in frame[attribute].dropna().unique())
            if rec.taxonomy_path:
                taxonomy = load_taxonomy(rec.taxonomy_path, attribute)
            elif edited is not None:
                taxonomy = edited
            else:
                taxonomy = Taxonomy.flat(attribute, values)
            taxonomy.check(values)
        missing = [c for c in rec.graded if c not in frame.columns]
        if missing:
            raise ParameterError(f"Graded column {missing[0]!r} is not in {label}.")
        gradings = [plan_grading(frame[c], c, rec.categories, rec.grading, rec.bounds, label) for c in rec.graded]
        choices = settings.choices
        rule = ChoiceRule(choices.choice_column, dict(choices.value_choices), choices.default_choice or 2)
        if rule.column is not None and rule.column not in frame.columns:
            raise ParameterError(f"Choice column {rule.column!r} is not in {label}.")
        if attribute is not None:
            rule.choices(frame, attribute, label)  # every record's choice valid, every per-value choice's value present
        return PersonalizedPlan(attribute, taxonomy, rule, gradings, label)

    def report_part(self, report: MethodReport, result: Anonymization, progress: Progress, cancel: CancelToken,
                    public: bool = False) -> None:
        from ppdp_desktop.core.methods.personalized.report import personalized_part

        personalized_part(report, result, self.own_plan(result), progress, cancel)

    def verify_release(self, release: LoadedRelease) -> list[str]:
        return personalized_release.verify_personalized_release(release)

    def readme_text(self, metadata: dict[str, Any]) -> str:
        return personalized_release.readme_text(metadata)

    def key_grading(self, attribute: str, entry: dict[str, Any]) -> Grading:
        """The secret categories of a graded column, as the key keeps them."""
        from ppdp_desktop.core.errors import KeyFileError

        try:
            return Grading.from_key_json(attribute, entry)
        except (KeyError, TypeError, ValueError, IndexError):
            raise KeyFileError(f"The key's grades of {attribute!r} are damaged") from None

    def demo_settings(self) -> RecodingSettings:
        """The demo's diagnosis taxonomy; income graded into 4 secret categories."""
        from ppdp_desktop.core.data.resources import DEMO_TAXONOMY, resource_path

        return RecodingSettings(taxonomy_path=str(resource_path(DEMO_TAXONOMY)), graded=["income"], categories=4)

    def settings_from_args(self, args: argparse.Namespace) -> RecodingSettings:
        """The declared settings, and the sensitive column's taxonomy from the shared ``--taxonomy``."""
        taxonomy = personalized_settings.taxonomy_from_args(args)
        settings = super().settings_from_args(args)
        assert isinstance(settings, RecodingSettings)
        settings.taxonomy_path = taxonomy
        return settings

"""The contract every method keeps: settings, plan from statistics, verify, apply to rows, and its
parts of the report, of ``release.json``, of the recipient's README and of ``ppdp verify``.

A plan holds global statistics only (domains, counts, matrices, categories, alias maps): it is
small, serializable and verified before use. ``apply`` then transforms each record independently,
so the same plan can be applied to a file chunk by chunk. The generic job, report, release, project
file, CLI and window reach a method only through :mod:`ppdp_desktop.core.methods` (the registry):
adding a method is one package with a :class:`Method` subclass and one registry entry.
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar, cast

import pandas as pd

from ppdp_desktop.core.errors import KeyFileError, ParameterError, PPDPError, PrivacyError, ReleaseError, setting_ref
from ppdp_desktop.core.outcome import Anonymization, Applied
from ppdp_desktop.core.privacy.randomness import RandomSource
from ppdp_desktop.core.settings import AnonymizationSettings, MethodSettings, NoSettings, ProtectionSettings

if TYPE_CHECKING:
    import numpy as np

    from ppdp_desktop.core.data.dataset import Dataset
    from ppdp_desktop.core.data.released import LoadedRelease
    from ppdp_desktop.core.evaluation.report_model import MethodReport
    from ppdp_desktop.core.evaluation.utility import UtilitySummary
    from ppdp_desktop.core.methods.hooks import Comparison, GradeDecoder
    from ppdp_desktop.core.progress import CancelToken, Progress

NO_GUARANTEE = "This method gives no formal privacy guarantee."

#: The job (``ppdp_desktop.core.anonymize.anonymize``), handed to a method family's comparisons so that
#: a method never imports the job that runs it.
Runner = Callable[["Dataset", AnonymizationSettings], Anonymization]


class Plan(Protocol):
    """A method's plan: verified before use, applied per row."""

    method: str
    needs_pseudonyms: bool

    def verify(self) -> dict[str, Any]:
        """Check the claimed guarantee; return it as JSON; raise ``PrivacyError`` if it fails."""

    def apply(self, frame: pd.DataFrame, randomness: RandomSource) -> Applied:
        """The plan applied to the records of ``frame``: their released columns.

        ``randomness`` is the job's :class:`~ppdp_desktop.core.privacy.randomness.RandomSource`, the only
        randomness a method may use: keyed per-record streams (``randomness.keyed.stream(column, draw)
        .uniforms(start, stop)``, ``.bernoulli``, ``.integers``), never a sequential generator; anything else
        raises ``RandomnessContractError``. A plan that takes ``start`` (the index of ``frame``'s first record)
        and ``bound`` (its ``bind(frame, randomness)`` result for the whole table) too can be applied chunk by
        chunk: its draws for record ``i`` read word ``i`` of their streams.
        """

    def release_json(self) -> dict[str, Any]:
        """Public entries merged into ``release.json`` (never anything secret)."""

    def key_json(self) -> dict[str, Any]:
        """Secrets for the sealed key file (alias meanings, bounds, parameters)."""

    def describe(self) -> list[str]:
        """A few plain-language lines for the CLI and the report."""


#: The plan class of one method family (``Method[PlanT, SettingsT]``).
PlanT = TypeVar("PlanT", bound=Plan)
#: The settings class of one method family.
SettingsT = TypeVar("SettingsT", bound=MethodSettings)


class Method(Generic[PlanT, SettingsT]):
    """A privacy method of the registry: what it needs, how it plans, and its parts of every output.

    Subclasses set ``name``, ``title``, ``summary``, ``settings_type`` and ``plan_type`` and implement
    :meth:`prepare`; every other hook has a default that suits a method which perturbs the sensitive
    column only.

    ``Method`` is generic in the family's plan and settings classes: a family declares
    ``class DPMicroaggregation(Method[DPMicroaggPlan, DPSettings])`` with ``plan_type = DPMicroaggPlan`` and
    ``settings_type = DPSettings``, and its hooks then see its own types through :meth:`settings` and
    :meth:`own_plan` (both check the object's class at run time, so the types are never only a promise). The
    registry holds ``Method[Any, Any]``.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]
    #: the class of this method's settings (``SettingsT``; a class variable cannot name a type variable)
    settings_type: ClassVar[type[MethodSettings]] = NoSettings
    #: the class of this method's plans (``PlanT``), which :meth:`own_plan` checks
    plan_type: ClassVar[type[Any]]
    #: its randomness is drawn per record through ``keep_or_draw`` with mechanism digests, so a project's custodian
    #: secret makes it persistent (issue 30); a method whose noise is per group (dp-microagg) draws fresh every time
    draws_per_record: ClassVar[bool] = False
    #: a sensitive column must be chosen in step 2 (``--sensitive``)
    needs_sensitive: ClassVar[bool] = True
    #: step 3's (rho1, rho2) pairs are needed
    needs_pairs: ClassVar[bool] = True
    #: it takes one (rho1, rho2) pair for every value (no theta rule, no value with a pair of its own)
    needs_one_pair: ClassVar[bool] = False
    #: the guarantee is step 3's per-value (rho1, rho2) bound (the window shows which values it covers)
    bounds_per_value: ClassVar[bool] = False
    #: the release cannot be used without its sealed key (``--key`` is required)
    needs_key: ClassVar[bool] = False
    #: the report inside the package shows released data only (nothing from the original records)
    public_report: ClassVar[bool] = False
    #: it randomizes the quasi-identifiers itself (k-anonymity by generalization does not apply in front of it)
    randomizes_quasi: ClassVar[bool] = False
    #: the method is the k-anonymous generalization itself (nothing randomized behind it)
    generalizes_only: ClassVar[bool] = False
    #: the name the literature gives this method behind k-anonymous generalization, if it has one
    generalized_title: ClassVar[str | None] = None
    #: the window's own editor of this method's settings, by name (None: the form built from its declarations)
    window_editor: ClassVar[str | None] = None
    #: the header of step 3's column saying how often a record keeps its value (:meth:`planned_retention`; None:
    #: the method has no such column)
    retention_header: ClassVar[str | None] = None

    # --- the job --------------------------------------------------------------------------------
    def settings(self, settings: AnonymizationSettings) -> SettingsT:
        """This method's own settings object from the job's settings (the defaults if none of its kind)."""
        options = settings.options
        own = options if isinstance(options, self.settings_type) else self.settings_type()
        return cast(SettingsT, own)  # an instance of settings_type, the class SettingsT stands for

    def own_plan(self, result_or_plan: Anonymization | Plan) -> PlanT:
        """This method's own plan: ``result_or_plan`` itself or a job's ``result.plan``, checked to be an instance of
        :attr:`plan_type`.

        Raises
        ------
        PrivacyError
            If it is another method's plan (or the method declares no plan class): a hook never reads the fields
            of a plan it does not know (fail closed).
        """
        plan = result_or_plan.plan if isinstance(result_or_plan, Anonymization) else result_or_plan
        plan_type = getattr(type(self), "plan_type", None)
        if plan_type is None or not isinstance(plan, plan_type):
            expected = plan_type.__name__ if plan_type is not None else "no declared plan class"
            raise PrivacyError(f"{self.title} ({self.name!r}) was given a plan of method "
                               f"{getattr(plan, 'method', '?')!r} ({type(plan).__name__}, expected {expected}).")
        return cast(PlanT, plan)

    def job_settings(self, settings: AnonymizationSettings) -> AnonymizationSettings:
        """The job's settings as this method reads them (e.g. a default sensitive column)."""
        return settings

    def job_dataset(self, dataset: Dataset, settings: AnonymizationSettings) -> Dataset:
        """The table the job works on (``settings`` as :meth:`job_settings` gave them): ``dataset`` itself, unless
        the method's settings treat its records first (dp-microagg's blank cells: filled, or their records left out,
        :func:`~ppdp_desktop.core.data.blanks.treat_blanks`, which the plan then states)."""
        return dataset

    def roles(self, settings: AnonymizationSettings) -> tuple[list[str], list[str]]:
        """``(sensitive, quasi-identifier)`` columns of the release's schema for this job."""
        return [settings.sensitive], list(settings.quasi)

    def prepare(self, dataset: Dataset, settings: AnonymizationSettings) -> PlanT:
        """The plan of this job from the whole ``dataset``'s statistics (verified by the job before use).

        A method whose planning takes long declares ``progress: Progress = no_progress`` and ``cancel: CancelToken |
        None = None`` after ``settings``: the job then passes its progress (the planning's part of it) and its
        cancel token, to be reported and checked at least once a second (rr's optimizer does)."""
        raise NotImplementedError

    def demo_settings(self) -> MethodSettings:
        """This method's own settings for the shipped demo data (``ppdp demo``, the wizard's demo): sensible values
        of its parameters; by default its declared defaults."""
        return self.settings_type.from_json({})

    def demo_protection(self) -> ProtectionSettings:
        """The re-identification settings of the demo job (``ppdp demo``, the wizard's demo); by default none asked
        (the risk is measured only). A method that needs k or a criterion gives them here."""
        return ProtectionSettings()

    def planned_retention(self, prior: np.ndarray, gamma: np.ndarray) -> np.ndarray:
        """Step 3's column (:attr:`retention_header`): for each value, the retention ``p_i`` this method would use
        under the amplification bounds ``gamma`` (inf: no concern), given the values' shares ``prior``; a record
        keeps its value with probability ``p_i + (1 - p_i) / m``."""
        raise NotImplementedError(f"{self.title} declares no retention column")

    def precheck(self, settings: AnonymizationSettings) -> list[str]:
        """What stops this method from running with ``settings``, found without reading the data (cheap
        enough for the window to ask while the user edits); ``prepare`` checks everything again."""
        try:
            self.settings(settings).check()
        except PPDPError as exc:
            return [exc.message]  # with its setting references: each face phrases them
        if self.needs_sensitive and not settings.sensitive:
            return [f"{self.title} needs a sensitive column: choose it with {setting_ref('sensitive', 'COL')}."]
        return []

    # --- the report -------------------------------------------------------------------------------
    def report_part(self, report: MethodReport, result: Anonymization, progress: Progress,
                    cancel: CancelToken, public: bool = False) -> None:
        """Add this method's figures and lines to ``report`` (``public``: released data only)."""

    def reports_from_release(self, original: pd.DataFrame, release: LoadedRelease, title: str,
                             progress: Progress, workload_seed: int = 0) -> list[MethodReport]:
        """The report of a written release, rebuilt from the original table (``ppdp report``)."""
        from ppdp_desktop.core.evaluation.report_model import MethodReport

        meta = release.metadata
        guarantee = dict(meta.get("guarantee") or {"kind": "none", "statement": NO_GUARANTEE})
        lines = [f"recoded: {r.get('attribute')} ({r.get('published')})" for r in meta.get("recoded", [])]
        lines += [f"graded: {g.get('attribute')} ({g.get('categories')} secret categories)" for g in meta.get("graded", [])]
        return [MethodReport(self.name, title, int(meta.get("n_records", len(release.table))), guarantee, lines)]

    def group_bound(self, settings: AnonymizationSettings) -> tuple[float, str]:
        """``(bound, its name)`` a released group's most frequent sensitive value is compared with: the group bound
        the custodian gave, else ``1/l`` for a method whose own settings bound attribute disclosure by ``1/l``,
        else the re-identification threshold."""
        protection = settings.protection
        if protection.group_bound is not None:
            return float(protection.group_bound), "the group bound"
        l = getattr(self.settings(settings), "l", None)
        if isinstance(l, (int, float)) and l > 1:
            return 1.0 / float(l), "1/l"
        return float(protection.threshold), "the threshold"

    def utility_summary(self, result: Anonymization) -> UtilitySummary | None:
        """Utility figures of the sensitive column for the CLI's ``--utility`` (None: not measured)."""
        return None

    # --- the release ------------------------------------------------------------------------------
    def verify_release(self, release: LoadedRelease) -> list[str]:
        """Re-check this method's guarantee and structure on a release; one line per check passed."""
        raise NotImplementedError

    def readme_text(self, metadata: dict[str, Any]) -> str:
        """This method's sections of the recipient's README.txt (what was done, guaranteed, how to use)."""
        return ""

    def published_entries(self, release: LoadedRelease, entry: dict[str, Any]) -> tuple[Any, Any, Any]:
        """``(entry of each record, matrix, value of each entry or None)`` of a perturbed column ``entry`` of
        ``release`` (its ``sensitive`` entry), which ``ppdp estimate --sensitive`` un-mixes; a method that
        publishes no such column refuses."""
        raise ReleaseError(f"{self.title} publishes no perturbed column whose counts can be estimated.")

    def estimate_table(self, release: LoadedRelease, attributes: list[str], project: bool = False) -> pd.DataFrame:
        """Estimated counts of every combination of ``attributes`` of ``release`` (``ppdp estimate --table``;
        ``project``: clipped to non-negative counts summing to the total); a method that publishes no matrices
        for its released columns refuses."""
        raise ParameterError(f"{setting_ref('table')} estimates the tables of releases that publish the matrices of "
                             f"their randomized columns; this release was made by {self.name!r}: estimate its perturbed "
                             f"column with {setting_ref('sensitive', 'COL')}.", setting="table")

    def key_grading(self, attribute: str, entry: dict[str, Any]) -> GradeDecoder:
        """How ``ppdp lookup`` decodes the grades of ``attribute`` from the key's ``graded`` entry; a method that
        publishes no grades refuses (the key does not belong to its kind of release)."""
        raise KeyFileError(f"The key holds grades of {attribute!r}, but {self.title} publishes no grades")

    def release_epsilon(self, plan: Plan, guarantee: dict[str, Any]) -> float:
        """The local differential privacy epsilon this release spends on one record's values: what composes in the
        release ledger when the record is released again with fresh draws (issue 30); ``inf`` when the method
        states none. By default the guarantee's ``epsilon_ldp`` (perturbation and partitioning)."""
        stated = guarantee.get("epsilon_ldp")
        return float(stated) if isinstance(stated, int | float) and not isinstance(stated, bool) else math.inf

    def repeat_state(self, plan: Plan) -> dict[str, Any] | None:
        """What the release ledger keeps of this release's plan (JSON), so that the project's next release can keep
        the same plan when it still fits (``settings.repeat.previous_plan``); None: planned afresh every time."""
        return None

    def repeat_notes(self, plan: Plan) -> list[str]:
        """What the release's statement says of the plan among the project's releases (a layout kept from an earlier
        release, say); none by default."""
        return []

    def comparisons(self) -> tuple[Comparison, ...]:
        """The ways ``ppdp compare`` compares this method with others (:class:`~ppdp_desktop.core.methods.hooks.
        Comparison`); none by default."""
        return ()

    # --- the command line ---------------------------------------------------------------------------
    def add_arguments(self, group: argparse._ArgumentGroup) -> None:
        """Add this method's options to ``ppdp anonymize``: one per parameter its settings declare with a flag
        (:func:`~ppdp_desktop.core.declarations.setting`: type, choices, default, help). An option already on the
        parser (one the CLI shares, such as ``--taxonomy``) is not added twice."""
        from ppdp_desktop.core.declarations import add_arguments

        add_arguments(group, self.settings_type)

    def settings_from_args(self, args: argparse.Namespace) -> MethodSettings:
        """This method's settings from parsed ``ppdp anonymize`` arguments, by its declarations (a method adds
        what it reads from a shared option)."""
        from ppdp_desktop.core.declarations import from_args

        return self.settings_type(**from_args(self.settings_type, args))

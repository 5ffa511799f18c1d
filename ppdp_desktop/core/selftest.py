"""The installation self-test: the demo job end to end, headless, in a temporary folder.

Run by ``ppdp selftest`` and by the bundled executables' ``--selftest`` so a custodian (or CI) can
check on the target PC that everything the app needs is there: the data readers, the methods and
their verifier, the report (figures, PDF), the release writer and the sealed key (scrypt +
AES-GCM). Each step is timed; the first failure stops the run and names the step.
"""
from __future__ import annotations

import secrets
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class SelftestStep:
    """One checked step: its name, whether it passed, how long it took and what it found."""

    name: str
    passed: bool
    seconds: float
    detail: str = ""

    def line(self) -> str:
        mark = "ok  " if self.passed else "FAIL"
        return f"{mark} {self.name:<34} {self.seconds:6.2f} s  {self.detail}"


class _Run:
    """Steps share state (the dataset, the job, the paths) through this object."""

    def __init__(self, folder: Path, report: Callable[[SelftestStep], None]) -> None:
        self.folder = folder
        self.report = report
        self.steps: list[SelftestStep] = []
        self.state: dict[str, Any] = {}

    def step(self, name: str, action: Callable[[], str]) -> bool:
        start = time.perf_counter()
        try:
            detail, passed = action(), True
        except Exception as exc:  # the self-test reports every failure as a failed step
            detail, passed = f"{type(exc).__name__}: {exc}", False
            self.state["traceback"] = traceback.format_exc()
        outcome = SelftestStep(name, passed, time.perf_counter() - start, detail)
        self.steps.append(outcome)
        self.report(outcome)
        return passed


def run_selftest(report: Callable[[SelftestStep], None] = lambda step: None,
                 folder: str | Path | None = None) -> list[SelftestStep]:
    """Run the demo job through every stage; return the steps (stops at the first failure).

    Parameters
    ----------
    report
        Called after each step (the CLI prints it).
    folder
        Where to write; default a fresh temporary folder, removed afterwards.
    """
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="ppdp-selftest-") as tmp:
            return _steps(_Run(Path(tmp), report))
    return _steps(_Run(Path(folder), report))


def _steps(run: _Run) -> list[SelftestStep]:
    s = run.state
    passphrase = secrets.token_urlsafe(16)
    release, key = run.folder / "release", run.folder / "release.ppdpkey"

    def load() -> str:
        from ppdp_desktop.core.data.loading import load_table
        from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path

        s["dataset"] = load_table(resource_path(DEMO_DATA))
        return f"{s['dataset'].n_records:,} records, {len(s['dataset'].frame.columns)} columns"

    def plan() -> str:
        from ppdp_desktop.core.data.schema import Role
        from ppdp_desktop.core.demo import DEMO_ROLES, DEMO_SENSITIVE
        from ppdp_desktop.core.methods import DEFAULT_METHOD, get_method
        from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

        s["settings"] = AnonymizationSettings(
            DEMO_SENSITIVE, DEFAULT_METHOD, [c for c, r in DEMO_ROLES.items() if r is Role.IDENTIFIER],
            [c for c, r in DEMO_ROLES.items() if r is Role.QUASI_IDENTIFIER], SensitivitySettings(theta=3.0))
        guarantee = get_method(DEFAULT_METHOD).prepare(s["dataset"], s["settings"]).verify()
        return f"{get_method(DEFAULT_METHOD).title} plan verified ({guarantee['kind']})"

    def apply() -> str:
        from ppdp_desktop.core.anonymize import anonymize

        s["result"] = anonymize(s["dataset"], s["settings"])
        return f"{len(s['result'].table):,} records released"

    def build_report() -> str:
        from ppdp_desktop.core.report.build import build_report

        s["reports"] = [build_report(s["result"])]
        return f"{len(s['reports'][0].figures)} figures"

    def export() -> str:
        from ppdp_desktop.core.release.package import write_release

        write_release(s["result"], release, key_path=key, passphrase=passphrase, reports=s["reports"])
        names = sorted(p.name for p in release.iterdir())
        for needed in ("release.json", "README.txt", "report.html", "report.pdf", "SHA256SUMS"):
            if needed not in names:
                raise AssertionError(f"{needed} is missing from the release")
        return f"{len(names)} files, key {key.stat().st_size:,} bytes"

    def verify() -> str:
        from ppdp_desktop.core.release.analysis import verify_release
        from ppdp_desktop.core.release.package import read_release

        return f"{len(verify_release(read_release(release)))} checks passed"

    def open_key() -> str:
        from ppdp_desktop.core.errors import KeyFileError
        from ppdp_desktop.core.release.lookup import KeyRing

        ring = KeyRing.open(release, key, passphrase)
        pseudonym = str(ring.release.table[ring.pseudonym_column].iloc[0])
        row = ring.lookup_pseudonym(pseudonym)
        result = s["result"]
        expected = result.dataset.frame["patient_id"].iloc[result.order[0]]
        if row.get("patient_id") != expected:
            raise AssertionError(f"pseudonym {pseudonym} decoded to {row.get('patient_id')!r}, not {expected!r}")
        try:
            KeyRing.open(release, key, passphrase + "x")
        except KeyFileError:
            return "opened; a pseudonym decoded; a wrong passphrase refused"
        raise AssertionError("the key opened with a wrong passphrase")

    for name, action in (("load the demo data", load), ("plan and verify", plan), ("apply", apply),
                         ("build the report", build_report), ("export release, seal key", export),
                         ("verify the release", verify), ("open the key, reverse lookup", open_key)):
        if not run.step(name, action):
            break
    return run.steps

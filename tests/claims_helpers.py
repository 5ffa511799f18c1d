"""Shared helpers of the claims battery (``tests/test_claims_*.py``): run ``ppdp anonymize`` on a slice of the
real Adult data, read back every face a custodian or a recipient sees (the CLI's sentences and its ``--json``
document, README.txt, release.json, the report inside the release and the custodian's report), and the exact
computations and attacks the sentences are checked against.

Nothing here knows what a sentence should say: the tests parse the figures out of the outputs and recompute
them, so a sentence that stops holding fails the suite.
"""
from __future__ import annotations

import contextlib
import html
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tests.conftest import shared_adult

#: a passphrase the sealed key's policy accepts (the personalized method always writes a key)
PASSPHRASE = "correct horse battery staple zebra"
#: how many keyed releases the Monte-Carlo attackers draw (each is one vectorized pass over the slice)
RELEASES = 400
#: sampling error allowed between an attacker's empirical figure and the exact one, in standard errors
Z = 5.0


def adult_frame() -> pd.DataFrame:
    """The whole shared Adult file (a test without it is skipped, or fails in CI: conftest), every cell as text."""
    return pd.read_csv(shared_adult(), sep=";", dtype=str, keep_default_na=False)


def adult_slice(folder: Path, n: int, extra: dict[str, list[str]] | None = None) -> Path:
    """The first ``n`` records of adult.csv written to ``folder`` (``;``-separated, as the shared file), with
    optional ``extra`` columns; returns the file's path."""
    frame = adult_frame().head(n).copy()
    for name, values in (extra or {}).items():
        frame[name] = values
    path = folder / f"adult{n}.csv"
    frame.to_csv(path, sep=";", index=False)
    return path


def run_cli(args: list) -> tuple[int, str, str]:
    """``ppdp ARGS`` in this process: ``(exit code, stdout, stderr)``."""
    from ppdp_desktop.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def html_lines(path: Path) -> list[str]:
    """The visible text of an HTML report, one stripped line per block (images and styles dropped)."""
    text = Path(path).read_text(encoding="utf-8")
    text = re.sub(r"<(style|script)\b.*?</\1>", "", text, flags=re.S)
    text = re.sub(r"<[^>]+>", "\n", text)
    return [line.strip() for line in html.unescape(text).splitlines() if line.strip()]


@dataclass
class Faces:
    """Everything one ``ppdp anonymize --json`` run printed and wrote."""

    folder: Path
    cli: list[str]  # the summary's sentences (stderr under --json), progress lines left out
    document: dict  # the --json document
    readme: str
    meta: dict  # release.json
    report: list[str]  # report.html inside the release
    custodian: list[str]  # the custodian's report beside the release
    values: pd.DataFrame | None  # the custodian's full per-value table, if written
    table: pd.DataFrame  # release.csv, every cell as text

    def all_text(self) -> dict[str, str]:
        """Each face as one text, by name."""
        return {"cli": "\n".join(self.cli), "json": json.dumps(self.document), "readme": self.readme,
                "release.json": json.dumps(self.meta), "report": "\n".join(self.report),
                "custodian report": "\n".join(self.custodian)}


def anonymize_faces(data: Path, out: Path, args: list) -> Faces:
    """Run ``ppdp anonymize DATA --out OUT ARGS --json`` and read back every face of the release."""
    code, stdout, stderr = run_cli(["anonymize", data, "--out", out, *args, "--json"])
    assert code == 0, stderr
    document = json.loads(stdout)
    cli = [line for line in stderr.splitlines() if not re.match(r"ppdp:\s+\d+%", line)]
    custodian = Path(document["custodian_report"])
    values_path = custodian.with_name(custodian.name.replace("custodian-report.html", "custodian-report-values.csv"))
    return Faces(
        folder=out, cli=cli, document=document,
        readme=(out / "README.txt").read_text(encoding="utf-8"),
        meta=json.loads((out / "release.json").read_text(encoding="utf-8")),
        report=html_lines(out / "report.html"), custodian=html_lines(custodian),
        values=pd.read_csv(values_path, encoding="utf-8-sig") if values_path.is_file() else None,
        table=pd.read_csv(out / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig"),
    )


def one(pattern: str, text: str, flags: int = 0) -> re.Match:
    """The single match of ``pattern`` in ``text`` (the sentence must be there, once)."""
    found = list(re.finditer(pattern, text, flags))
    assert len(found) == 1, f"expected one match of {pattern!r}, found {len(found)} in:\n{text}"
    return found[0]


def number(text: str) -> float:
    """A printed number (thousands separators allowed)."""
    return float(text.replace(",", ""))


def percent_of(share: float) -> str:
    """A share as the app prints it (its own helper: the tests compare the printed text, not the rounding)."""
    from ppdp_desktop.core.evaluation.report_model import percent

    return percent(share)


# --- exact computations -------------------------------------------------------------------------------

def retention_matrix(retention: np.ndarray) -> np.ndarray:
    """``P[y][x]``: keep ``x`` with ``p_x``, else one of the ``m`` values uniformly (the published formula),
    built here from the formula, not from the app's code."""
    p = np.asarray(retention, dtype=float)
    m = len(p)
    return np.diag(p) + np.ones((m, 1)) * ((1.0 - p) / m)[None, :]


def posterior(matrix: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """``post[y][x] = Pr[original = x | released = y]`` by Bayes' rule (0 on rows that cannot occur)."""
    joint = matrix * np.asarray(prior, dtype=float)[None, :]
    total = joint.sum(axis=1, keepdims=True)
    return np.divide(joint, total, out=np.zeros_like(joint), where=total > 0)


def worst_posterior(matrix: np.ndarray, rho1: np.ndarray) -> np.ndarray:
    """Per value ``x``: the largest posterior of ``x`` over every released value and *every* prior that gives
    ``x`` at most ``rho1[x]`` (the worst prior puts ``rho1`` on ``x`` and the rest on the value least likely
    to be released as ``y``)."""
    m = matrix.shape[0]
    out = np.full(m, np.nan)
    for x in np.flatnonzero(np.isfinite(rho1)):
        others = np.delete(matrix, x, axis=1).min(axis=1) if m > 1 else np.zeros(m)
        mass = rho1[x] * matrix[:, x]
        out[x] = np.max(mass / (mass + (1.0 - rho1[x]) * others))
    return out


def ldp_epsilon(matrix: np.ndarray) -> float:
    """``ln max_y max_{x, x'} P[y][x] / P[y][x']``: the local-DP epsilon of the matrix."""
    return float(np.log(np.max(matrix.max(axis=1) / matrix.min(axis=1))))


def empirical_agrees(counts: np.ndarray, expected: np.ndarray, z: float = Z) -> tuple[bool, float]:
    """Whether empirical conditional shares (``counts`` rows, normalized) match ``expected`` rows within ``z``
    binomial standard errors in every cell of a row that was observed; also the largest |z| found."""
    rows = counts.sum(axis=1, keepdims=True)
    seen = rows[:, 0] > 0
    share = counts[seen] / rows[seen]
    want = expected[seen]
    se = np.sqrt(np.maximum(want * (1.0 - want), 1e-12) / rows[seen])
    worst = float(np.max(np.abs(share - want) / se))
    return worst <= z, worst


def joint_counts(true_codes: np.ndarray, released: np.ndarray, m: int) -> np.ndarray:
    """``counts[y][x]``: how many records of value ``x`` were released as ``y``."""
    return np.bincount(released.astype(np.int64) * m + true_codes.astype(np.int64), minlength=m * m).reshape(m, m)


def keyed_releases(job, frame: pd.DataFrame, attribute: str, seeds: range) -> list:
    """The plan of ``job`` applied to ``frame`` with each seed's keyed randomness (the release's own sampler,
    every draw keyed by record): one :class:`~ppdp_desktop.core.outcome.Applied` per seed."""
    from ppdp_desktop.core.privacy.randomness import RandomSource

    out = []
    for seed in seeds:
        rng = RandomSource(seed)
        bound = getattr(job.plan, "bind", None)
        out.append(job.plan.apply(frame, rng, start=0, bound=bound(frame, rng) if bound else None))
    return out


def cli_job(data: Path, args: list):
    """``(dataset, settings)`` exactly as ``ppdp anonymize DATA ARGS`` reads them (the CLI's own parser and
    settings), for the in-process runs and attacks that need the original rows beside the released ones."""
    from ppdp_desktop.cli.commands import _settings, load_options
    from ppdp_desktop.cli.parser import build_parser
    from ppdp_desktop.cli.repeat_args import default_project, repeat_settings
    from ppdp_desktop.core.data.loading import load_table

    parsed = build_parser().parse_args(["anonymize", str(data), "--out", "unused", *map(str, args)])
    settings = _settings(parsed)
    settings.repeat = repeat_settings(parsed, default_project(str(data), parsed.project), None)  # as the CLI's draws
    return load_table(data, **load_options(parsed)), settings


def same_release(result, table: pd.DataFrame) -> bool:
    """Whether an in-process run's table is the written release.csv, cell for cell (as text)."""
    mine = result.table.astype(str).reset_index(drop=True)
    return list(mine.columns) == list(table.columns) and bool((mine.to_numpy() == table.to_numpy()).all())


def flat(text: str) -> str:
    """``text`` with every run of white space as one space (README.txt wraps its sentences)."""
    return " ".join(text.split())


def sensitive_verdicts(faces: Faces) -> list[tuple[str, str]]:
    """The first page's "Sensitive values ..." verdict of the custodian's report and of the report inside the release:
    ``(level, sentence)`` each, the level being the colour class the HTML gives it (``ok``, ``warning``, ``danger``)."""
    out = []
    for path in (Path(faces.document["custodian_report"]), faces.folder / "report.html"):
        text = Path(path).read_text(encoding="utf-8")
        found = re.findall(r'<p class="(\w+)">(Sensitive values\b.*?)</p>', text, re.S)
        assert len(found) == 1, (path, found)
        out.append((found[0][0], html.unescape(re.sub(r"<[^>]+>", "", found[0][1]))))
    return out


def bound_verdict_parts(sentence: str) -> tuple[int | None, int | None, list[str]]:
    """What a verdict on an upward bound says it covers: ``(covered, with a bound, values not covered)``; ``covered``
    is 0 for "no value is covered by its bound", and both counts None for a plain "protected" (every value)."""
    names = re.search(r": (?:no value is covered by its bound: |[\d,]+ of [\d,]+ values with a bound are protected, "
                      r"checked before the release was written; )((?:'[^']+'(?:, | and )?)+)(?: and ([\d,]+) more)? "
                      r"(?:is|are) held by more than (?:its|their) rho1 of the records, where the bound says nothing "
                      r"about (?:it|them)", sentence)
    if re.search(r"^Sensitive values(?: \(.+?\))?: protected, checked before the release was written\. ", sentence):
        return None, None, []
    assert names, sentence
    listed = re.findall(r"'([^']+)'", names[1])
    counted = re.search(r": ([\d,]+) of ([\d,]+) values with a bound are protected", sentence)
    if counted:
        return int(number(counted[1])), int(number(counted[2])), listed
    return 0, None, listed


def verify_forged_guarantee(faces: Faces, folder: Path, change) -> tuple[int, str, str]:
    """``ppdp verify`` on a copy of the release whose first sensitive entry's guarantee ``change`` edited, the
    checksums made anew (a forger without the signing key): ``(exit code, stdout, stderr)``."""
    import shutil

    from ppdp_desktop.core.data.checksums import write_checksums

    meta = json.loads(json.dumps(faces.meta))
    change(meta["sensitive"][0]["guarantee"])
    target = folder / f"forged{len(list(folder.iterdir()))}"
    shutil.copytree(faces.folder, target)
    (target / "release.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    for name in ("SHA256SUMS", "SIGNATURE"):
        (target / name).unlink(missing_ok=True)
    write_checksums(target)
    return run_cli(["verify", target])

"""The release ledger (issue 30): a real SQLite file, real release folders and real processes.

What it must keep: every published release's row and record arrays, read back exactly; an ordinal per project;
and, around the atomic publish, the release and its ledger row together or not at all -- also when the publishing
process is killed (SIGKILL) at any step of the publication, or when the publish fails after the rename.
"""
from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import ReleaseError
from ppdp_desktop.core.release.pipeline import TableSource, publish_release
from ppdp_desktop.core.release.signing import new_signing_key
from ppdp_desktop.core.repeat.appdata import data_dir, ledger_path, project_folder
from ppdp_desktop.core.repeat.ledger import Ledger, LedgerEntry, manifest_of
from ppdp_desktop.core.repeat.records import ReleaseRecords
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings

REPO = Path(__file__).resolve().parents[1]
PASSPHRASE = "correct horse battery staple zebra"


def _records(n: int, seed: int, classes: bool = False) -> ReleaseRecords:
    rng = np.random.default_rng(seed)
    words = lambda: rng.integers(0, 2**64, n, dtype=np.uint64)  # noqa: E731 - the full 64-bit range
    epsilon = rng.uniform(0, 3, n)
    epsilon[:3] = [0.0, np.inf, 1.5]
    return ReleaseRecords(words(), words(), epsilon, words() if classes else None)


def _entry(project: str = "adult", n: int = 50, seed: int = 1, **fields) -> LedgerEntry:
    return LedgerEntry(project, fields.pop("method", "uniform"), fields.pop("parameters", {"theta": 3.0}),
                       _records(n, seed, fields.pop("classes", False)), fields.pop("persistent", True), **fields)


def _release_folder(path: Path, text: str = "a release") -> tuple[Path, str]:
    """A folder with a SHA256SUMS (all the ledger looks at) and its manifest hash."""
    path.mkdir(parents=True)
    sums = f"{hashlib.sha256(text.encode()).hexdigest()}  release.csv\n".encode()
    (path / "SHA256SUMS").write_bytes(sums)
    return path, hashlib.sha256(sums).hexdigest()


def _same(a: ReleaseRecords, b: ReleaseRecords) -> bool:
    classes = (a.classes is None and b.classes is None) or (
        a.classes is not None and b.classes is not None and np.array_equal(a.classes, b.classes))
    return (np.array_equal(a.identities, b.identities) and np.array_equal(a.draws, b.draws)
            and np.array_equal(a.epsilon, b.epsilon) and classes)


def _rows(path: Path) -> list[tuple]:
    """Every row (id, status) and the ids of every records row, read with plain sqlite3."""
    with sqlite3.connect(path) as db:
        return [*db.execute("SELECT id, status FROM releases ORDER BY id"),
                *db.execute("SELECT release_id, 'records' FROM records ORDER BY release_id")]


# --- the folder ----------------------------------------------------------------------------------------------------

def test_the_data_folder_follows_the_variable_and_projects_get_private_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))
    assert data_dir() == tmp_path / "data" and ledger_path() == tmp_path / "data" / "ledger.sqlite3"
    folder = project_folder("Adult monthly é")
    assert folder.parent == tmp_path / "data" / "projects" and not folder.exists()
    assert folder.name == hashlib.sha256("Adult monthly é".encode()).hexdigest()[:16]
    assert project_folder("Adult monthly é", create=True).is_dir()
    if os.name == "posix":
        for made in (folder, folder.parent, folder.parent.parent):
            assert made.stat().st_mode & 0o777 == 0o700
    with Ledger():
        pass
    if os.name == "posix":
        assert ledger_path().stat().st_mode & 0o777 == 0o600


# --- round trip, ordinals ------------------------------------------------------------------------------------------

def test_entries_and_record_arrays_read_back_exactly(tmp_path):
    folder, manifest = _release_folder(tmp_path / "rel")
    entry = _entry(n=2000, classes=True, stable_pseudonyms=True, budget=4.5, override_reason="audit asked for it",
                   node=[1, 0, 2], signer="3f1a 9c0e 0000 1111 2222 3333 4444 5555",
                   parameters={"theta": np.float64(3.0), "quasi": ["age", "sex"], "k": np.int64(5)},
                   cumulative={"epsilon_cumulative_max": 2.2, "changed": 212})
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        release_id = ledger.begin(entry, folder, manifest)
        assert ledger.releases() == []  # pending: not listed, not counted
        ledger.mark_published(release_id)
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:  # read back from the file
        (release,) = ledger.releases("adult")
        assert (release.project_id, release.method, release.ordinal, release.folder, release.manifest) == (
            "adult", "uniform", 1, str(folder), manifest)
        assert release.parameters == {"theta": 3.0, "quasi": ["age", "sex"], "k": 5}
        assert (release.signer, release.persistent, release.stable_pseudonyms, release.budget, release.override_reason,
                release.node, release.cumulative) == (entry.signer, True, True, 4.5, "audit asked for it", [1, 0, 2],
                                                      {"epsilon_cumulative_max": 2.2, "changed": 212})
        assert release.created.endswith("+00:00") and release.n_records == 2000
        assert _same(release.records(), entry.records)
        assert _same(ledger.previous_records("adult")[0], entry.records)
        document = release.to_json()
        assert document["n_records"] == 2000 and not {"records", "identities", "draws"} & set(document)
    assert _same(release.records(), entry.records)  # also once the ledger is closed


def test_ordinals_count_per_project_and_only_published_releases_are_listed(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        assert ledger.next_ordinal("a") == 1
        for i, project in enumerate(["a", "b", "a", "a", "b"]):
            folder, manifest = _release_folder(tmp_path / f"r{i}")
            ledger.mark_published(ledger.begin(_entry(project, n=10 + i, seed=i), folder, manifest))
        assert [(r.project_id, r.ordinal) for r in ledger.releases()] == [("a", 1), ("b", 1), ("a", 2), ("a", 3),
                                                                           ("b", 2)]
        assert [r.n_records for r in ledger.releases("a")] == [10, 12, 13]  # oldest first
        assert [len(r) for r in ledger.previous_records("b")] == [11, 14]
        assert ledger.next_ordinal("a") == 4 and ledger.next_ordinal("c") == 1
        folder, manifest = _release_folder(tmp_path / "failed")
        ledger.discard(ledger.begin(_entry("a"), folder / "never-published", manifest))
        assert ledger.next_ordinal("a") == 4 and len(ledger.releases("a")) == 3  # a failed publish leaves no trace


# --- pending rows: settled both ways -------------------------------------------------------------------------------

_BEGIN_AND_DIE = """
import json, os, sys
from pathlib import Path
import numpy as np
from ppdp_desktop.core.repeat.ledger import Ledger, LedgerEntry
from ppdp_desktop.core.repeat.records import ReleaseRecords
records = ReleaseRecords(np.arange(7, dtype=np.uint64), np.arange(7, dtype=np.uint64), np.ones(7))
ledger = Ledger(Path(sys.argv[1]))
for project, folder, manifest in json.loads(sys.argv[2]):
    ledger.begin(LedgerEntry(project, "uniform", {}, records, True), Path(folder), manifest)
os._exit(0)  # gone without publishing or discarding
"""


def _begin_in_a_process_that_ends(path: Path, *rows: tuple[str, Path, str]) -> None:
    """Pending rows written by a process that then ends (as a killed publish leaves them)."""
    subprocess.run([sys.executable, "-c", _BEGIN_AND_DIE, str(path), json.dumps([(p, str(f), m) for p, f, m in rows])],
                   cwd=REPO, check=True, timeout=120)


def test_pending_rows_of_a_process_that_is_gone_are_settled_both_ways(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    published, manifest = _release_folder(tmp_path / "published")
    zipped, zip_manifest = _release_folder(tmp_path / "zipped")
    with zipfile.ZipFile(tmp_path / "zipped.zip", "w") as archive:
        archive.write(zipped / "SHA256SUMS", "SHA256SUMS")
    altered, altered_manifest = _release_folder(tmp_path / "altered")
    (altered / "SHA256SUMS").write_text("something else\n")  # e.g. an older release left at that path
    _begin_in_a_process_that_ends(path, ("in place", published, manifest),
                                  ("zip in place", tmp_path / "zipped.zip", zip_manifest),
                                  ("never renamed", tmp_path / "missing", manifest),
                                  ("another release there", altered, altered_manifest))
    assert [status for _, status in _rows(path)] == ["pending"] * 4 + ["records"] * 4
    with Ledger(path) as ledger:
        assert [r.project_id for r in ledger.releases()] == ["in place", "zip in place"]
        assert [len(r) for r in ledger.previous_records("zip in place")] == [7]
    assert _rows(path) == [(1, "published"), (2, "published"), (1, "records"), (2, "records")]  # records went too


def test_a_pending_row_of_a_running_process_is_left_alone_and_discard_never_orphans_a_release(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    folder, manifest = _release_folder(tmp_path / "rel")
    with Ledger(path) as first:
        under_way = first.begin(_entry(), tmp_path / "not yet", manifest)
        with Ledger(path) as second:  # opened while this process publishes: the row stays pending
            assert second.releases() == [] and second.next_ordinal("adult") == 2
        assert _rows(path)[0] == (under_way, "pending")
        first.discard(under_way)
        assert _rows(path) == []
        renamed = first.begin(_entry(), folder, manifest)
        first.discard(renamed)  # the publish failed after its rename: the release is out, so is its row
        assert [r.id for r in first.releases()] == [renamed]


# --- a ledger that cannot be read ----------------------------------------------------------------------------------

def test_a_damaged_ledger_is_one_clear_error_naming_the_file(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    path.write_bytes(b"this is not a database, it was overwritten by something else" * 100)
    with pytest.raises(ReleaseError, match="damaged") as caught:
        Ledger(path)
    assert caught.value.file == str(path) and str(path) in str(caught.value) and "move it aside" in str(caught.value)


def test_a_ledger_of_a_newer_version_or_with_damaged_records_is_refused(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    folder, manifest = _release_folder(tmp_path / "rel")
    with Ledger(path) as ledger:
        ledger.mark_published(ledger.begin(_entry(n=40), folder, manifest))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE records SET draws = ?", (b"\x00" * 13,))
    with Ledger(path) as ledger, pytest.raises(ReleaseError, match="damaged"):
        ledger.previous_records("adult")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(ReleaseError, match="newer version of PPDP Desktop"):
        Ledger(path)


def test_publish_refuses_a_damaged_ledger_before_any_work(tmp_path, monkeypatch, small_result):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "data").mkdir()
    ledger_path().write_bytes(b"\x00garbage" * 64)
    with pytest.raises(ReleaseError, match="release ledger"):
        publish_release(TableSource(small_result), tmp_path / "rel", include_report=False, ledger_entry=_entry())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # nothing written, no temporary folder


# --- the publish pipeline ------------------------------------------------------------------------------------------

_FRAME = """
rng = np.random.default_rng(1)
n = 200
frame = pd.DataFrame({"patient": [f"P{i:05d}" for i in range(n)], "age": rng.integers(20, 80, n),
                      "diagnosis": rng.choice(["flu", "asthma", "diabetes", "copd"], n)})
settings = AnonymizationSettings("diagnosis", "uniform", ["patient"], ["age"], SensitivitySettings(theta=3.0), seed=3)
"""


@pytest.fixture(scope="module")
def small_result():
    scope = {"np": np, "pd": pd, "AnonymizationSettings": AnonymizationSettings,
             "SensitivitySettings": SensitivitySettings}
    exec(_FRAME, scope)  # the same job as the killed process's
    return anonymize(Dataset(scope["frame"]), scope["settings"])


def test_publish_writes_its_row_around_the_rename_and_nothing_into_the_release(tmp_path, monkeypatch, small_result):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))
    plain = publish_release(TableSource(small_result), tmp_path / "plain", include_report=False)
    signer = new_signing_key(tmp_path / "custodian.ppdpsign", PASSPHRASE)
    out = publish_release(TableSource(small_result), tmp_path / "rel", include_report=False, zip_file=True,
                          signer=signer, ledger_entry=_entry(n=200))
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == sorted([p.name for p in plain.iterdir()] + ["SIGNATURE"])
    with Ledger() as ledger:
        (release,) = ledger.releases()
    assert (release.folder, release.manifest, release.signer) == (str(out.resolve()), manifest_of(out),
                                                                   signer.fingerprint)


@pytest.mark.parametrize("step", ["start", "new release in place"])
def test_a_publish_that_fails_keeps_the_release_and_its_row_together(tmp_path, monkeypatch, small_result, step):
    monkeypatch.setenv("PPDP_DATA_DIR", str(tmp_path / "data"))

    def fail(name: str) -> None:
        if name == step:
            raise OSError(5, "Input/output error")

    with pytest.raises(OSError):
        publish_release(TableSource(small_result), tmp_path / "rel", include_report=False, hook=fail,
                        ledger_entry=_entry())
    with Ledger() as ledger:
        rows = ledger.releases()
    out = tmp_path / "rel"
    assert out.exists() == (step == "new release in place") == bool(rows)
    assert all(r.manifest == manifest_of(out) for r in rows)
    assert [s for _, s in _rows(ledger_path())] == (["published", "records"] if rows else [])


_KILLED = """
import os, signal, sys
from pathlib import Path
import numpy as np
import pandas as pd
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.release.pipeline import TableSource, publish_release
from ppdp_desktop.core.repeat.ledger import LedgerEntry
from ppdp_desktop.core.repeat.records import ReleaseRecords
from ppdp_desktop.core.settings import AnonymizationSettings, SensitivitySettings
FRAME
out, step, zipped, overwrite = sys.argv[1], sys.argv[2], sys.argv[3] == "zip", sys.argv[4] == "overwrite"
settings.seed = int(os.environ.get("KILLED_SEED", settings.seed))
records = ReleaseRecords(np.arange(n, dtype=np.uint64), np.arange(n, dtype=np.uint64), np.ones(n))

def hook(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)

publish_release(TableSource(anonymize(Dataset(frame), settings)), out, include_report=False, zip_file=zipped,
                overwrite=overwrite, key_path=out + ".ppdpkey", passphrase="correct horse battery staple zebra",
                hook=hook, ledger_entry=LedgerEntry("killed", "uniform", {"theta": 3.0}, records, True))
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX")
@pytest.mark.parametrize(("step", "zipped", "overwrite"), [
    ("start", "folder", "new"),                           # after the pending row, before any rename
    ("new key in place", "folder", "new"),                # the key in place, the release not yet
    ("new release in place", "folder", "new"),            # right after the rename, before mark_published
    ("done", "zip", "new"),                               # a .zip, renamed, before mark_published
    ("old release moved aside", "folder", "overwrite"),   # the old release gone, the new one not yet there
    ("new release in place", "folder", "overwrite"),      # the new release replaced the old one
])
def test_a_kill_mid_publish_leaves_the_release_and_its_ledger_row_together_or_neither(tmp_path, step, zipped, overwrite):
    data = tmp_path / "data"
    env = {**os.environ, "PPDP_DATA_DIR": str(data)}
    out = tmp_path / ("rel.zip" if zipped == "zip" else "rel")
    args = [sys.executable, "-c", _KILLED.replace("FRAME", _FRAME), str(tmp_path / "rel"), "", zipped, overwrite]
    if overwrite == "overwrite":  # an earlier release of the project at the same place, with another seed: with the
        # same seed the two releases are byte-identical when made within one second (release.json's time)
        subprocess.run(args, cwd=REPO, env={**env, "KILLED_SEED": "4"}, check=True, timeout=300)
    earlier = set()
    if data.exists():
        with Ledger(data / "ledger.sqlite3") as ledger:
            earlier = {r.manifest for r in ledger.releases()}
    killed = subprocess.run(args[:-3] + [step, zipped, overwrite], cwd=REPO, env=env, timeout=300,
                            capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr  # killed at that step, not finished or failed
    with Ledger(data / "ledger.sqlite3") as ledger:
        new = [r for r in ledger.releases("killed") if r.manifest not in earlier]
    in_place = manifest_of(out)
    published = in_place is not None and in_place not in earlier
    assert published == (step in ("new release in place", "done"))
    assert [r.manifest for r in new] == ([in_place] if published else [])  # together, or neither
    assert all(r.folder == str(out.resolve()) for r in new)
    assert "pending" not in {s for _, s in _rows(data / "ledger.sqlite3")}
    assert len([s for _, s in _rows(data / "ledger.sqlite3") if s == "records"]) == len(earlier) + len(new)

"""``ppdp run PROJECT --out DIR`` after the project's release folder and key path are gone (issue 31, point 12):
``--out`` alone works, the key goes beside the new folder unless ``--key`` is given, and the summary says where."""
from __future__ import annotations

import shutil
from pathlib import Path

from ppdp_desktop.cli import main
from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path
from ppdp_desktop.core.demo import DEMO_ROLES
from ppdp_desktop.core.project import Project
from ppdp_desktop.core.release.lookup import KeyRing

PASSPHRASE = "correct horse battery staple 42"


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _moved_project(tmp_path: Path) -> Path:
    """A project saved by the window that released to old/rel with its key old/rel.ppdpkey; old/ is gone since."""
    shutil.copy(resource_path(DEMO_DATA), tmp_path / "patients.csv")
    old = tmp_path / "old"
    project = Project(data_path=str(tmp_path / "patients.csv"), roles={c: r.value for c, r in DEMO_ROLES.items()},
                      method="uniform", theta=3.0, release_folder=str(old / "rel"), key_path=str(old / "rel.ppdpkey"))
    project.save(tmp_path / "study.ppdp")
    assert not old.exists()
    return tmp_path / "study.ppdp"


def test_run_with_out_alone_seals_the_key_beside_the_new_folder(tmp_path, capsys, monkeypatch):
    project = _moved_project(tmp_path)
    monkeypatch.setenv("PPDP_PASSPHRASE", PASSPHRASE)
    (tmp_path / "new").mkdir()
    code, out, err = run(["run", project, "--out", tmp_path / "new" / "rel", "--seed", "3", "--no-bom"], capsys)
    assert code == 0, err
    key = tmp_path / "new" / "rel.ppdpkey"
    assert (tmp_path / "new" / "rel" / "release.csv").is_file() and key.is_file()
    assert not (tmp_path / "old").exists()
    assert (f"  sealed key: {key} (keep it apart from the release; written beside the new release folder, not to the "
            f"project's {tmp_path / 'old' / 'rel.ppdpkey'}; --key FILE chooses another)") in out.splitlines()
    assert KeyRing.open(tmp_path / "new" / "rel", key, PASSPHRASE) is not None  # the new release's key, sealed as asked
    # --key still chooses the key file
    code, out, err = run(["run", project, "--out", tmp_path / "rel", "--key", tmp_path / "keys.ppdpkey", "--seed", "3"],
                         capsys)
    assert code == 0, err
    assert (tmp_path / "keys.ppdpkey").is_file() and not (tmp_path / "rel.ppdpkey").exists()
    assert f"  sealed key: {tmp_path / 'keys.ppdpkey'} (keep it apart from the release)" in out.splitlines()

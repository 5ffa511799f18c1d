"""A release made on a Dask cluster is recorded in the release ledger too (issue 30): each partition's ledger records
(keyed identity digests, draw digests, epsilons, generalized classes) come back to this computer in record order, so
the ledger holds exactly what the in-memory job computes for the same data, seed and custodian secret; the next
release of the project counts against it (unchanged patients cost nothing), and stable pseudonyms are the same.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.streamed import open_streamed
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.repeat.ledger import Ledger
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, RepeatSettings, SensitivitySettings
from ppdp_desktop.core.streaming.dask_engine import write_dask_release

pytest.importorskip("distributed")

KINDS = {"id": "text"}
N = 3000


@pytest.fixture(scope="module")
def data_file(tmp_path_factory) -> Path:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({
        "id": [f"P{i:06d}" for i in range(N)],
        "sex": rng.choice(["F", "M"], N),
        "age": rng.integers(18, 90, N),
        "dx": rng.choice(list("abcdefgh"), N, p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05]),
    })
    path = tmp_path_factory.mktemp("repeat-dask") / "patients.csv"
    frame.to_csv(path, index=False)
    return path


def _settings(project: str, seed: int, stable: bool = False) -> AnonymizationSettings:
    """k-anonymous sex and age in front of uniform perturbation of dx: the records have classes and persistent draws."""
    settings = AnonymizationSettings("dx", "uniform", ["id"], ["sex", "age"], SensitivitySettings(rho1=0.1, rho2=0.5),
                                     seed=seed, protection=ProtectionSettings(k=5, intervals={"age": (10, 20)}))
    settings.repeat = RepeatSettings(project_id=project, keys=PersistentKeys(bytes(range(32))), stable_pseudonyms=stable)
    return settings


def _on_dask(path: Path, settings: AnonymizationSettings, out: Path, cluster: str):
    return write_dask_release(open_streamed(path, kinds=KINDS), settings, out, scheduler=cluster, partitions=4,
                              include_report=False)


def test_the_ledger_records_of_a_dask_release_are_the_in_memory_job_s(data_file, cluster, tmp_path):
    expected = anonymize(load_table(data_file, kinds=KINDS), _settings("dask-monthly", 7)).repeat.records
    done = _on_dask(data_file, _settings("dask-monthly", 7), tmp_path / "dask", cluster)
    assert done.result.repeat is not None
    with Ledger() as ledger:
        (release,) = ledger.releases("dask-monthly")
        recorded = release.records()
    assert len(recorded) == N and release.node == [done.result.reidentification.generalization.levels[q]
                                                   for q in ("sex", "age")]
    for name in ("identities", "draws", "epsilon", "classes"):
        np.testing.assert_array_equal(getattr(recorded, name), getattr(expected, name), err_msg=name)
    block = json.loads((tmp_path / "dask" / "release.json").read_text(encoding="utf-8"))["repeated_release"]
    assert block["ordinal"] == 1 and block["records"] == N
    # the next month on the cluster counts against it: the same patients, the same draws, nothing spent again
    again = _on_dask(data_file, _settings("dask-monthly", 8), tmp_path / "dask-2", cluster)
    c = again.result.repeat.cumulative
    assert (c.ordinal, c.matched, c.unchanged, c.new) == (2, N, N, 0)
    assert again.result.repeat.intersection.shrunk == 0 and again.result.repeat.intersection.same_node


def test_stable_pseudonyms_on_the_cluster_are_the_in_memory_ones(data_file, cluster, tmp_path):
    write_release(anonymize(load_table(data_file, kinds=KINDS), _settings("dask-stable", 3, stable=True)),
                  tmp_path / "memory", include_report=False)
    _on_dask(data_file, _settings("dask-stable", 3, stable=True), tmp_path / "dask", cluster)
    assert (tmp_path / "dask" / "release.csv").read_bytes() == (tmp_path / "memory" / "release.csv").read_bytes()
    with Ledger() as ledger:
        assert [r.stable_pseudonyms for r in ledger.releases("dask-stable")] == [True, True]

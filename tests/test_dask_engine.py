"""The Dask engine (issue 19, point 3): both passes on a cluster of worker processes give the in-memory release's
data file byte for byte, for every method that streams; the file is cut into partitions of whole records; the
CLI runs it; a cancel publishes nothing; Dask is imported only when the engine runs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.anonymize import anonymize, applies_in_chunks
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.data.streamed import open_streamed
from ppdp_desktop.core.errors import Cancelled, InputError, ParameterError, phrase
from ppdp_desktop.core.methods import REGISTRY, get_method
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, SensitivitySettings
from ppdp_desktop.core.streaming.dask_cluster import MISSING, distributed_module
from ppdp_desktop.core.streaming.dask_engine import ClusterFile, write_cluster_data, write_dask_release
from ppdp_desktop.core.streaming.dask_partitions import layout_of
from ppdp_desktop.core.streaming.job import plan_from_file, write_streamed_data
from ppdp_desktop.core.streaming.release import write_streamed_release

KINDS = {"id": "text", "note": "text"}
N = 3000


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    notes = np.array(["", "plain", 'said "fine", then left', "two\nlines", "a, b; c", '"quoted"'], dtype=object)
    return pd.DataFrame({
        "id": [f"P{i:06d}" for i in range(n)],
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(18, 90, n),
        "bmi": np.where(rng.random(n) < 0.05, np.nan, np.round(rng.normal(25, 4, n), 1)),
        "town": rng.choice(["Besançon", "Lyon", "=Nîmes", "Metz"], n),
        "note": notes[rng.integers(0, len(notes), n)],  # quotes, delimiters and line breaks inside fields
        "dx": rng.choice(list("abcdefgh"), n, p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05]),
    })


def _settings(name: str) -> AnonymizationSettings:
    if name == "rr":
        return AnonymizationSettings("dx", name, ["id"], ["sex"], options=RRSettings(l=1.5, randomize="both"), seed=7)
    if name == "generalization":  # nothing randomized: k-anonymity and 2-diversity of dx behind sex and age bands
        protection = ProtectionSettings(k=5, intervals={"age": [10, 30]}, l_diversity=2)
        return AnonymizationSettings("dx", name, ["id"], ["sex", "age"], protection=protection, seed=7)
    if name == "dp-microagg":
        dp = DPSettings(attributes=["age"], epsilon=1.0, k=10, domains={"age": (18, 89)})
        return AnonymizationSettings("", name, ["id"], [], options=dp, seed=7)
    pairs = {"rho1": 0.12, "rho2": 0.5} if name == "partition" else {"theta": 3.0}
    return AnonymizationSettings("dx", name, ["id"], [], SensitivitySettings(**pairs), seed=7)


def _streams(name: str, path: Path) -> bool:
    """Whether the method's plan is applied record range by record range (dp-microagg once it is keyed)."""
    return applies_in_chunks(get_method(name).prepare(load_table(path, kinds=KINDS), _settings(name)))


@pytest.fixture(scope="module")
def data_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dask") / "patients.csv"
    _table(N).to_csv(path, index=False)
    return path


def _in_memory(path: Path, settings: AnonymizationSettings, out: Path) -> bytes:
    write_release(anonymize(load_table(path, kinds=KINDS), settings), out, include_report=False)
    return (out / "release.csv").read_bytes()


def _on_dask(path: Path, settings: AnonymizationSettings, out: Path, cluster: str, **options) -> bytes:
    options = {"include_report": False, "partitions": 3, **options}
    done = write_dask_release(open_streamed(path, kinds=KINDS), settings, out, scheduler=cluster, **options)
    assert done.folder == out and done.n_records == N
    return (out / "release.csv").read_bytes()


def _verifies(folder: Path) -> None:
    with read_release(folder) as release:
        assert any(line.startswith("checksums") for line in verify_release(release))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_dask_release_is_the_in_memory_release_byte_for_byte(name, data_file, cluster, tmp_path):
    if not _streams(name, data_file):
        pytest.skip(f"{name} applies its plan to the whole table at once")
    settings = _settings(name)
    expected = _in_memory(data_file, settings, tmp_path / "memory")
    write_streamed_release(open_streamed(data_file, kinds=KINDS), settings, tmp_path / "streamed", chunk_size=700,
                           include_report=False)
    assert (tmp_path / "streamed" / "release.csv").read_bytes() == expected
    assert _on_dask(data_file, settings, tmp_path / "dask", cluster) == expected
    _verifies(tmp_path / "dask")


def test_generalized_quasi_identifiers_are_sliced_per_partition(data_file, cluster, tmp_path):
    """k-anonymity in front of the method: the suppression decided on every record reaches each partition."""
    settings = AnonymizationSettings("dx", "uniform", ["id"], ["sex", "age"], SensitivitySettings(theta=3.0), seed=5,
                                     protection=ProtectionSettings(k=5, intervals={"age": (10, 20)}))
    expected = _in_memory(data_file, settings, tmp_path / "memory")
    assert _on_dask(data_file, settings, tmp_path / "dask", cluster, partitions=4) == expected


def test_the_cluster_writer_gives_what_the_local_writer_gives(data_file, cluster, tmp_path):
    """Not only the file: the digest, the columns, the released quasi-identifiers and the key's record table
    (record order) that the risk measure and the key are made from."""
    from distributed import Client

    settings = _settings("rr")
    local_source = open_streamed(data_file, kinds=KINDS)
    job, bound, frame, _ = plan_from_file(local_source, settings, 500)
    (tmp_path / "local").mkdir()
    local = write_streamed_data(local_source, job, bound, tmp_path / "local.csv", tmp_path / "local", sep=";",
                                bom=False, chunk_size=500, n_records=len(frame))
    with Client(cluster, set_as_default=False) as client:
        source = open_streamed(data_file, kinds=KINDS)
        on_cluster = ClusterFile.on(source, client, layout_of(source, 3), 2, CancelToken())
        job, bound, frame, _ = plan_from_file(on_cluster, settings, 500)
        assert sorted(on_cluster.counts) == [0, 1, 2] and sum(on_cluster.counts.values()) == N
        (tmp_path / "cluster").mkdir()
        data = write_cluster_data(on_cluster, job, bound, tmp_path / "cluster.csv", tmp_path / "cluster", sep=";",
                                  bom=False, chunk_size=500, n_records=len(frame))
    assert (tmp_path / "cluster.csv").read_bytes() == (tmp_path / "local.csv").read_bytes()
    assert (data.sha256, data.n_records, data.columns, data.guarded, data.secrets) == (
        local.sha256, local.n_records, local.columns, local.guarded, local.secrets)
    assert data.guarded == ["town"]
    pd.testing.assert_frame_equal(data.quasi, local.quasi)
    from ppdp_desktop.core.streaming.sealed_spill import open_sealed

    records = open_sealed(data.identifiers, data.spill_key).read_all()  # sealed under each job's own spill key
    assert records.equals(open_sealed(local.identifiers, local.spill_key).read_all()) and records.num_rows == N


def test_the_report_sample_is_gathered_on_the_workers(data_file, cluster, tmp_path):
    settings = _settings("finegrain")
    write_streamed_release(open_streamed(data_file, kinds=KINDS), settings, tmp_path / "streamed", chunk_size=1000)
    _on_dask(data_file, settings, tmp_path / "dask", cluster, include_report=True)
    for name in ("release.csv", "report-values.csv"):
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "streamed" / name).read_bytes()


def test_parquet_row_groups_are_the_partitions(cluster, tmp_path):
    table = _table(N, seed=3)
    csv, parquet = tmp_path / "p.csv", tmp_path / "p.parquet"
    table.to_csv(csv, index=False)
    table.to_parquet(parquet, index=False, row_group_size=700)
    assert len(layout_of(open_streamed(parquet, kinds=KINDS), 3).groups) == 3
    settings = _settings("finegrain")
    expected = _in_memory(parquet, settings, tmp_path / "memory")
    assert _on_dask(parquet, settings, tmp_path / "dask", cluster) == expected


def test_a_cancel_publishes_nothing(data_file, cluster, tmp_path):
    cancel = CancelToken()

    def progress(fraction: float, message: str = "") -> None:
        if "pass 2" in message:
            cancel.cancel()

    out = tmp_path / "release"
    with pytest.raises(Cancelled):
        _on_dask(data_file, _settings("uniform"), out, cluster, progress=progress, cancel=cancel, partitions=8)
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == []


def test_a_worker_error_comes_back_as_the_users_error(cluster, tmp_path, monkeypatch):
    """A value that does not fit its column's kind, after the records the kinds were decided on: the worker's
    InputError reaches the caller with its message."""
    monkeypatch.setattr("ppdp_desktop.core.data.streamed.PREVIEW_ROWS", 50)
    table = _table(400)
    table["age"] = table["age"].astype(object)
    table.loc[350, "age"] = "unknown"
    path = tmp_path / "bad.csv"
    table.to_csv(path, index=False)
    with pytest.raises(InputError, match="age"):
        write_dask_release(open_streamed(path, kinds=KINDS), _settings("uniform"), tmp_path / "out",
                           scheduler=cluster, partitions=3, include_report=False)


def test_the_cli_runs_on_a_local_cluster(data_file, tmp_path, capsys):
    out = tmp_path / "release"
    code = main(["anonymize", str(data_file), "--out", str(out), "--engine", "dask", "--workers", "2", "--sensitive",
                 "dx", "--identifier", "id", "--kind", "note=text", "--theta", "3", "--seed", "1", "--method",
                 "uniform", "--chunk-size", "1000", "--no-report"])
    assert code == 0, capsys.readouterr().err
    assert "on Dask" in capsys.readouterr().out
    _verifies(out)


def test_partitions_begin_at_records(tmp_path):
    """Byte ranges cut after a line feed outside quotes; read on their own they give the file's records, typed
    as StreamedFile types them. A quote that does not open or close a field keeps the file whole."""
    path = tmp_path / "q.csv"
    _table(N).to_csv(path, index=False, lineterminator="\r\n")
    source = open_streamed(path, kinds=KINDS)
    layout = layout_of(source, 5)
    assert layout.n_partitions == 5
    parts = [frame for k in range(5) for frame in layout.frames(k, source.columns)]
    whole = [frame for _, frame in source.batches(N)]
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), pd.concat(whole, ignore_index=True))
    stray = tmp_path / "stray.csv"
    stray.write_text("id,height\n" + "".join(f'P{i},5\'{i % 12}"\n' for i in range(500)), encoding="utf-8")
    assert layout_of(open_streamed(stray, kinds={"id": "text"}), 4).bounds == (0, stray.stat().st_size)


def test_without_dask_the_engine_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed raises ImportError
    with pytest.raises(ParameterError) as caught:
        distributed_module()
    assert str(caught.value) == phrase(MISSING) == "--engine dask needs Dask: pip install ppdp-desktop[cluster]"


def test_importing_the_engine_does_not_import_dask():
    code = ("import sys, ppdp_desktop.core.streaming.dask_engine; "
            "sys.exit(any(m == 'dask' or m.startswith(('dask.', 'distributed')) for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_the_job_pickles_with_its_keyed_randomness(data_file):
    """The verified job goes to the workers by pickle: the copy draws what the original draws."""
    import pickle

    job, _bound, _frame, _ = plan_from_file(open_streamed(data_file, kinds=KINDS), _settings("partition"))
    copy = pickle.loads(pickle.dumps(job))
    for stream in (("(release rows)", "order"), ("dx", "keep")):
        np.testing.assert_array_equal(copy.randomness.keyed.stream(*stream).words(10, 20),
                                      job.randomness.keyed.stream(*stream).words(10, 20))
    assert copy.pseudonym_key == job.pseudonym_key


def test_the_dask_release_records_the_input_files_sha256(data_file, cluster, tmp_path):
    """The workers read byte ranges, so this computer hashes the file in a thread during pass 1 (provenance):
    release.json gets the digest keyed with this installation's secret, never plain (tests/test_claims_oracle.py)."""
    import hashlib
    import json

    from ppdp_desktop.core.release.provenance import Provenance

    _on_dask(data_file, _settings("uniform"), tmp_path / "out", cluster)
    block = json.loads((tmp_path / "out" / "release.json").read_text(encoding="utf-8"))["provenance"]
    content = data_file.read_bytes()
    assert block["input"] == {"name": data_file.name}
    assert Provenance.from_json(block).keyed.matches("input", hashlib.sha256(content).hexdigest(), len(content))
    assert hashlib.sha256(content).hexdigest() not in json.dumps(block)

"""Streaming (issue 19): a release written from a file read in chunks is byte for byte the in-memory release of
the same seed, for every method and any chunk size; it passes its own verification; a killed or cancelled run
leaves nothing under the output's name."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdp_desktop.cli import main
from ppdp_desktop.cli.repeat_args import seeded_secret
from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.loading import load_table
from ppdp_desktop.core.data.released import read_release
from ppdp_desktop.core.data.streamed import open_streamed
from ppdp_desktop.core.errors import Cancelled, InputError
from ppdp_desktop.core.methods import REGISTRY
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.methods.rr.settings import RRSettings
from ppdp_desktop.core.privacy.persistent import PersistentKeys
from ppdp_desktop.core.progress import CancelToken
from ppdp_desktop.core.release.analysis import verify_release
from ppdp_desktop.core.release.package import write_release
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings, RepeatSettings, SensitivitySettings
from ppdp_desktop.core.streaming.release import write_streamed_release

KINDS = {"id": "text"}


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "id": [f"P{i:06d}" for i in range(n)],
        "sex": rng.choice(["F", "M"], n),
        "age": rng.integers(18, 90, n),
        "bmi": np.where(rng.random(n) < 0.05, np.nan, np.round(rng.normal(25, 4, n), 1)),
        "town": rng.choice(["Besançon", "Lyon", "=Nîmes", "Metz"], n),
        "dx": rng.choice(list("abcdefgh"), n, p=[0.3, 0.2, 0.15, 0.1, 0.1, 0.05, 0.05, 0.05]),
    })


def _settings(name: str) -> AnonymizationSettings:
    if name == "rr":
        return AnonymizationSettings("dx", name, ["id"], ["sex"], options=RRSettings(l=1.5, randomize="both"), seed=11)
    if name == "generalization":  # nothing randomized: k-anonymity and 2-diversity of dx behind sex and age bands
        protection = ProtectionSettings(k=5, intervals={"age": [10, 30]}, l_diversity=2)
        return AnonymizationSettings("dx", name, ["id"], ["sex", "age"], protection=protection, seed=11)
    if name == "dp-microagg":
        dp = DPSettings(attributes=["age"], epsilon=1.0, k=10, domains={"age": (18, 89)})
        return AnonymizationSettings("", name, ["id"], [], options=dp, seed=11)
    pairs = {"rho1": 0.12, "rho2": 0.5} if name == "partition" else {"theta": 3.0}
    return AnonymizationSettings("dx", name, ["id"], [], SensitivitySettings(**pairs), seed=11)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("streaming") / "patients.csv"
    _table(600).to_csv(path, index=False)
    return path


def _in_memory(path: Path, settings: AnonymizationSettings, out: Path) -> bytes:
    result = anonymize(load_table(path, kinds=KINDS), settings)
    write_release(result, out, include_report=False)
    return (out / "release.csv").read_bytes()


def _streamed(path: Path, settings: AnonymizationSettings, out: Path, size: int, **kwargs) -> Path:
    kwargs.setdefault("include_report", False)
    done = write_streamed_release(open_streamed(path, kinds=KINDS), settings, out, chunk_size=size, **kwargs)
    assert done.folder == out and out.is_dir()
    return out


STREAMING_METHODS = sorted(REGISTRY)  # every built-in method streams


@pytest.mark.parametrize("name", STREAMING_METHODS)
def test_every_chunk_size_gives_the_in_memory_release_byte_for_byte(name, data_file, tmp_path):
    settings = _settings(name)
    expected = _in_memory(data_file, settings, tmp_path / "memory")
    for size in (1, 7, 10_000):
        out = _streamed(data_file, settings, tmp_path / f"streamed-{size}", size)
        assert (out / "release.csv").read_bytes() == expected, f"chunks of {size}"
        with read_release(out) as release:
            assert any(line.startswith("checksums") for line in verify_release(release))


def test_generalized_quasi_identifiers_stream_alike(data_file, tmp_path):
    """k-anonymity in front of the method: the suppression is decided on every record, not per chunk."""
    settings = AnonymizationSettings("dx", "uniform", ["id"], ["sex", "age"], SensitivitySettings(theta=3.0), seed=5,
                                     protection=ProtectionSettings(k=5, intervals={"age": (10, 20)}))
    expected = _in_memory(data_file, settings, tmp_path / "memory")
    out = _streamed(data_file, settings, tmp_path / "streamed", 13)
    assert (out / "release.csv").read_bytes() == expected
    with read_release(out) as release:
        assert any(line.startswith("k-anonymity") for line in verify_release(release))


def test_parquet_input_streams_to_the_same_release(tmp_path):
    table = _table(500, seed=3)
    csv, parquet = tmp_path / "p.csv", tmp_path / "p.parquet"
    table.to_csv(csv, index=False)
    table.to_parquet(parquet, index=False)
    settings = _settings("finegrain")
    expected = _in_memory(parquet, settings, tmp_path / "memory")
    out = _streamed(parquet, settings, tmp_path / "streamed", 64)
    assert (out / "release.csv").read_bytes() == expected


def test_the_streamed_release_follows_the_published_matrix(tmp_path):
    """Chi-square of the streamed release's counts against P @ f (the plan's law, chunks of 1,000)."""
    n = 60_000
    path = tmp_path / "big.csv"
    _table(n, seed=9).to_csv(path, index=False)
    settings = AnonymizationSettings("dx", "uniform", ["id"], [], SensitivitySettings(theta=3.0), seed=2)
    out = _streamed(path, settings, tmp_path / "streamed", 1_000)
    with read_release(out) as release:
        entry = release.sensitive_entry("dx")
        observed = np.bincount(release.codes(entry), minlength=len(entry["values"]))
        from ppdp_desktop.core.methods.perturbation.release import published_matrix

        matrix = published_matrix(entry)
    original = pd.read_csv(path)["dx"].value_counts().reindex(entry["values"]).to_numpy(dtype=float)
    expected = np.asarray(matrix @ original, dtype=float)
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_a_cancelled_run_leaves_nothing(data_file, tmp_path):
    token, calls = CancelToken(), []

    def progress(fraction, text=""):
        calls.append(text)
        if "pass 2" in text:
            token.cancel()

    out = tmp_path / "release"
    with pytest.raises(Cancelled):
        write_streamed_release(open_streamed(data_file, kinds=KINDS), _settings("uniform"), out, chunk_size=50,
                               progress=progress, cancel=token)
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_a_killed_run_leaves_nothing_under_the_output_name(tmp_path):
    path = tmp_path / "large.csv"
    _table(400_000, seed=4).to_csv(path, index=False)
    out = tmp_path / "release"
    command = [sys.executable, "-m", "ppdp_desktop", "anonymize", str(path), "--out", str(out), "--streaming",
               "--chunk-size", "2000", "--sensitive", "dx", "--identifier", "id", "--theta", "3", "--seed", "1",
               "--method", "uniform", "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # kill it once pass 2 is spilling records beside the output
        if any(p.name.endswith(".partial") and any(p.rglob("*.arrows")) for p in tmp_path.iterdir() if p.is_dir()):
            break
        if process.poll() is not None:
            pytest.fail("the run ended before it could be killed")
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not out.exists()
    assert any(p.name.startswith(".release.") for p in tmp_path.iterdir())  # hidden leftovers, not a release
    # the next run cleans what the killed one left and publishes a release that verifies
    assert main([*command[3:]]) == 0
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    with read_release(out) as release:
        verify_release(release)


def test_a_value_that_does_not_fit_the_kind_names_its_record(tmp_path, monkeypatch):
    monkeypatch.setattr("ppdp_desktop.core.data.streamed.PREVIEW_ROWS", 50)
    table = _table(200)
    table["age"] = table["age"].astype(object)
    table.loc[150, "age"] = "unknown"
    path = tmp_path / "bad.csv"
    table.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"age.*unknown.*first 50 records.*--kind age="):
        write_streamed_release(open_streamed(path, kinds=KINDS), _settings("uniform"), tmp_path / "out", chunk_size=40)
    assert not (tmp_path / "out").exists()


def test_the_cli_switches_to_streaming_for_a_file_larger_than_memory_allows(data_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_AVAILABLE_MEMORY", "1000")
    args = ["anonymize", str(data_file), "--out", str(tmp_path / "auto"), "--sensitive", "dx", "--identifier", "id",
            "--theta", "3", "--seed", "11", "--method", "finegrain"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "larger than a third of the free memory" in captured.err and "streamed in chunks" in captured.out
    settings = _settings("finegrain")  # as the command line plans it: a project (the file's name), the seed's secret
    settings.repeat = RepeatSettings(project_id=data_file.stem, keys=PersistentKeys(seeded_secret(11)), ledger=False)
    expected = _in_memory(data_file, settings, tmp_path / "memory")
    assert (tmp_path / "auto" / "release.csv").read_bytes() == expected
    assert main([*args[:3], str(tmp_path / "whole"), *args[4:], "--in-memory", "--no-report"]) == 0
    assert "streamed" not in capsys.readouterr().out
    assert main([*args[:3], str(tmp_path / "zipped"), *args[4:], "--zip", "--no-report"]) == 0  # streamed, zipped
    assert "streamed in chunks" in capsys.readouterr().out
    with zipfile.ZipFile(tmp_path / "zipped.zip") as zipped:
        assert zipped.read("release.csv") == expected


def test_the_reports_of_a_streamed_release_say_they_are_measured_on_a_sample(data_file, tmp_path, monkeypatch):
    monkeypatch.setattr("ppdp_desktop.core.streaming.sample.REPORT_SAMPLE", 150)
    out = _streamed(data_file, _settings("partition"), tmp_path / "release", 64, include_report=True)
    custodian = (tmp_path / "release.custodian-report.html").read_text(encoding="utf-8")
    package = (out / "report.html").read_text(encoding="utf-8")
    for page in (custodian, package):
        found = re.search(r"random sample of ([\d,]+) of its 600 records", page)
        assert found and 100 <= int(found.group(1).replace(",", "")) <= 220
    with read_release(out) as release:  # the reports are listed in the checksums and carry the fingerprint
        assert "the reports print it on every page" in "\n".join(verify_release(release))
    assert {"report.html", "report.pdf", "report-values.csv"} <= {p.name for p in out.iterdir()}


def test_a_small_streamed_release_reports_every_record(data_file, tmp_path):
    out = _streamed(data_file, _settings("uniform"), tmp_path / "release", 100, include_report=True)
    assert "random sample" not in (out / "report.html").read_text(encoding="utf-8")


def test_ppdp_verify_reads_a_large_release_in_part_and_still_catches_duplicate_ids(data_file, tmp_path, monkeypatch,
                                                                                  capsys):
    out = _streamed(data_file, _settings("partition"), tmp_path / "release", 100)
    monkeypatch.setenv("PPDP_AVAILABLE_MEMORY", "1000")  # the release is "too large to hold"
    from ppdp_desktop.core.streaming.readback import too_large_to_hold

    assert too_large_to_hold(out)
    assert main(["verify", str(out)]) == 0
    assert "600 distinct ids" in capsys.readouterr().out
    lines = (out / "release.csv").read_text(encoding="utf-8-sig").splitlines()
    first, second = lines[1].split(","), lines[2].split(",")
    lines[2] = ",".join([first[0], *second[1:]])  # the second record takes the first one's pseudonym
    (out / "release.csv").write_text("\n".join(lines) + "\n", encoding="utf-8-sig")
    from ppdp_desktop.core.data.checksums import write_checksums

    write_checksums(out)  # a forger who also rewrites the checksums
    assert main(["verify", str(out)]) != 0
    assert "duplicate ids" in capsys.readouterr().err


def test_a_hash_collision_between_distinct_ids_is_settled_by_comparing_the_ids(tmp_path):
    from ppdp_desktop.core.streaming.readback import _distinct

    path = tmp_path / "ids.csv"
    ids = pd.Series([f"R{i:032x}" for i in range(1000)])
    ids.to_frame("pseudonym").to_csv(path, index=False)
    hashes = pd.util.hash_array(ids.to_numpy(dtype=object))
    forced = hashes.copy()
    forced[7] = forced[3]  # as if two distinct ids hashed alike
    assert _distinct(path, ",", ["c0"], "c0", forced) is True
    ids[7] = ids[3]
    ids.to_frame("pseudonym").to_csv(path, index=False)
    assert _distinct(path, ",", ["c0"], "c0", pd.util.hash_array(ids.to_numpy(dtype=object))) is False


@pytest.mark.parametrize("name", ["uniform", "personalized"])
def test_the_streamed_key_finds_every_patient_from_a_released_pseudonym(name, data_file, tmp_path):
    """The key holds the pseudonym key and the record table (identifiers, record secrets) written during pass 2:
    every released record decodes to its patient, as from the in-memory release's key."""
    from ppdp_desktop.core.release import keyfile
    from ppdp_desktop.core.release.lookup import KeyRing

    settings = _settings(name)
    out, key = tmp_path / "release", tmp_path / "release.ppdpkey"
    _streamed(data_file, settings, out, 37, key_path=key, passphrase="correct horse battery")
    ring = KeyRing.open(out, key, "correct horse battery")
    assert ring.payload["pseudonyms"]["n"] == 600 and "ids" not in ring.payload["pseudonyms"]
    assert ring.payload[keyfile.RECORDS].num_rows == 600
    decoded = ring.decode_table(ring.release.table)
    original = pd.read_csv(data_file, dtype={"id": str}).set_index("id")
    assert decoded["id"].notna().all() and decoded["id"].is_unique
    assert (original.loc[decoded["id"], "sex"].to_numpy() == decoded["sex"].to_numpy()).all()
    if name == "personalized":  # the record secrets came back: every diagnosis exact
        assert (original.loc[decoded["id"], "dx"].to_numpy() == decoded["dx"].to_numpy()).all()
    memory = tmp_path / "memory"
    result = anonymize(load_table(data_file, kinds=KINDS), settings)
    write_release(result, memory, include_report=False, key_path=tmp_path / "memory.ppdpkey",
                  passphrase="correct horse battery")
    other = KeyRing.open(memory, tmp_path / "memory.ppdpkey", "correct horse battery")
    assert other.payload["pseudonyms"]["key"] == ring.payload["pseudonyms"]["key"]  # same seed, same ids
    assert other.payload[keyfile.RECORDS].equals(ring.payload[keyfile.RECORDS])


def test_ppdp_run_streams_a_project_whose_file_is_too_large(data_file, tmp_path, monkeypatch, capsys):
    from ppdp_desktop.core.project import Project

    project = Project(data_path=str(data_file), roles={"id": "identifier", "dx": "sensitive"}, method="finegrain", theta=3.0)
    path = tmp_path / "job.ppdp.json"
    project.save(path)
    monkeypatch.setenv("PPDP_AVAILABLE_MEMORY", "1000")
    assert main(["run", str(path), "--out", str(tmp_path / "release"), "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "Released 600 records" in out and "streamed)" in out
    with read_release(tmp_path / "release") as release:
        assert release.metadata["n_records"] == 600
        verify_release(release)


def test_an_identifier_empty_in_the_first_chunk_still_goes_into_the_key(tmp_path):
    table = _table(300, seed=5)
    table["name"] = [None] * 50 + [f"Patient {i}" for i in range(250)]
    path = tmp_path / "names.csv"
    table.to_csv(path, index=False)
    settings = AnonymizationSettings("dx", "uniform", ["id", "name"], [], SensitivitySettings(theta=3.0), seed=1)
    out, key = tmp_path / "release", tmp_path / "release.ppdpkey"
    write_streamed_release(open_streamed(path, kinds={"id": "text", "name": "text"}), settings, out, chunk_size=40,
                           include_report=False, key_path=key, passphrase="correct horse battery")
    from ppdp_desktop.core.release.lookup import KeyRing

    decoded = KeyRing.open(out, key, "correct horse battery").decode_table(read_release(out).table)
    assert decoded["name"].notna().sum() == 250


def test_the_report_sample_holds_only_the_sampled_records(data_file, monkeypatch):
    from ppdp_desktop.core.privacy.randomness import ROW_ORDER_STREAM
    from ppdp_desktop.core.streaming.job import plan_from_file
    from ppdp_desktop.core.streaming.passes import release_chunks
    from ppdp_desktop.core.streaming.sample import ReportSample

    source = open_streamed(data_file, kinds=KINDS)
    job, bound, frame, dataset = plan_from_file(source, _settings("uniform"), 50)
    sample, keys = ReportSample(len(frame), size=60), job.randomness.keyed.stream(ROW_ORDER_STREAM, "order")
    for chunk, released in release_chunks(source, job, bound, 50):
        sample.add(chunk, released, keys.sort_keys(released.start, released.start + len(chunk)))
    held = sum(len(p.rows) + len(p.original) for p in sample.parts)
    assert 2 * 30 <= held <= 2 * 100  # about 60 records, twice (original and released), not 600
    result = sample.outcome(job, dataset, None)
    assert len(result.table) == len(result.dataset.frame) == held // 2 and result.n_released == 600


def test_the_external_shuffle_gives_every_record_in_key_order_whatever_its_columns(tmp_path):
    """Buckets larger than the few-values probe: text of few values (gathered as dictionary codes, with missing
    cells), unique text and numbers come out exactly as a plain sort of the whole table by (key, arrival)."""
    import pyarrow as pa

    from ppdp_desktop.core.streaming.shuffle import ExternalShuffle

    rng = np.random.default_rng(5)
    n = 30_000
    keys = rng.integers(0, 2**63, n, dtype=np.uint64)
    keys[100:110] = keys[5]  # equal keys keep their arrival order
    few = np.array(["=A", "B", "C", None], dtype=object)[rng.integers(0, 4, n)]
    table = pa.table({"few": pa.array(few, pa.string()), "unique": [f"R{i:07x}" for i in range(n)],
                      "number": rng.normal(size=n)})
    shuffle = ExternalShuffle(tmp_path / "s", n, run_rows=8_000)  # 4 buckets of about 7,500 records
    for start in range(0, n, 7_000):
        shuffle.add(keys[start:start + 7_000], table.slice(start, 7_000))
    got = pa.concat_tables(list(shuffle.sorted_tables()))
    shuffle.remove()
    order = np.argsort(keys, kind="stable")
    expected = table.take(pa.array(order))
    assert got.num_rows == n
    for name in table.column_names:
        assert got.column(name).to_pylist() == expected.column(name).to_pylist(), name

"""Benchmark of the sealed key file (not a test): pseudonyms and a key with a record table of N records.

    python benchmarks/bench_keyfile.py                      # 10,000,000 records, best of 3
    python benchmarks/bench_keyfile.py --rows 1000000 --runs 1

Measures PseudonymKey.ids for the N records (in the 1M-record blocks a streamed job asks for, and in one
call), index_of over all of them, then seal and open of a format-2 key: the payload (pseudonym key, a
seed, a few aliases) and a record table of N rows (an id like "P0001234" and a name per record, plus a
record secret that is mostly empty), handed to seal as an iterator of 1M-row batches, as a streamed job
will. Seal and open use the DEFAULT KDF parameters (scrypt n=2**16, r=8, p=1), so the times include the
KDF. Prints one JSON object on stdout; progress notes go to stderr. Target: seconds for 10M records.
"""
from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_desktop.core.privacy.pseudonyms import PseudonymKey
from ppdp_desktop.core.privacy.record_table import pseudonym_entry
from ppdp_desktop.core.release import keyfile

TARGET_S = 10.0
MANIFEST = "0123456789abcdef" * 4
PASSPHRASE = "correct horse battery staple"
BLOCK = 1_000_000
FIRST = ["Anna", "Jean", "Zoë", "Mohamed", "Li", "Sofia", "Lukas", "Amélie", "Noah", "Fatima", "Olga", "Pierre"]
LAST = ["Martin", "Bernard", "Dubois", "Nguyen", "Müller", "García", "Rossi", "Kowalski", "Smith", "Yilmaz"]


def note(message: str) -> None:
    print(f"[bench_keyfile] {message}", file=sys.stderr, flush=True)


def batches(rows: int, seed: int = 7) -> list[pa.RecordBatch]:
    """The record table in 1M-row batches: patient_id, name, and a record secret (one record in 20)."""
    rng = np.random.default_rng(seed)
    first, last = pa.array(FIRST), pa.array(LAST)
    out = []
    for start in range(0, rows, BLOCK):
        index = pa.array(np.arange(start, min(start + BLOCK, rows)))
        size = len(index)
        names = pc.binary_join_element_wise(first.take(pa.array(rng.integers(0, len(FIRST), size))),
                                            last.take(pa.array(rng.integers(0, len(LAST), size))), " ")
        ids = pc.binary_join_element_wise("P", pc.utf8_lpad(index.cast(pa.string()), 9, "0"), "")
        secret = pc.if_else(pc.equal(pc.bit_wise_and(index, 19), 0), "Hypertension", pa.scalar(None, pa.string()))
        out.append(pa.record_batch({"patient_id": ids, "name": names, "__original__diagnosis": secret}))
    return out


def best_of(runs: int, work) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times), times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    n, key = args.rows, PseudonymKey.random()

    note(f"ids of {n:,} records")
    ids_blocks_s, ids_blocks_runs = best_of(args.runs,
                                            lambda: [key.ids(s, min(s + BLOCK, n)) for s in range(0, n, BLOCK)])
    ids_s, ids_runs = best_of(args.runs, lambda: key.ids(0, n))
    ids = key.ids(0, n)
    found: list[np.ndarray] = []
    index_s, index_runs = best_of(args.runs, lambda found=found, ids=ids: found.append(key.index_of(ids)))
    assert np.array_equal(found[-1], np.arange(n)), "index_of does not invert ids"
    del ids, found

    payload = {"pseudonyms": pseudonym_entry("pseudonym", key, n, ["patient_id", "name"], ["diagnosis"]),
               "aliases": {"diag": {f"A{i}": f"diagnosis {i}" for i in range(50)}}, "seed": "12345678901234567890",
               "method": "personalized"}
    note("building the record table")
    table = batches(n)
    kdf_s, kdf_runs = best_of(args.runs, lambda: keyfile._derive(PASSPHRASE, keyfile.KdfParams()))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "release.ppdpkey"
        note("sealing")
        seal_s, seal_runs = best_of(
            args.runs, lambda: keyfile.seal(payload, PASSPHRASE, MANIFEST, path, iter(table), overwrite=True))
        size = path.stat().st_size
        note("opening")
        opened: list[dict] = []
        open_s, open_runs = best_of(args.runs, lambda opened=opened: opened.append(keyfile.open_key(path, PASSPHRASE, MANIFEST)))
        records = opened[-1].pop(keyfile.RECORDS)
        assert opened[-1] == payload and records.equals(pa.Table.from_batches(table)), "round trip changed the key"
        table_bytes = records.nbytes
        del opened, records
    result = {
        "rows": n,
        "ids_in_1M_blocks_s": round(ids_blocks_s, 3), "ids_one_call_s": round(ids_s, 3),
        "index_of_s": round(index_s, 3),
        "kdf_s": round(kdf_s, 3), "seal_s": round(seal_s, 3), "open_s": round(open_s, 3),
        "file_bytes": size, "record_table_arrow_bytes": table_bytes,
        "compression_ratio": round(table_bytes / size, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "runs_s": {"ids_in_1M_blocks": [round(t, 3) for t in ids_blocks_runs],
                   "ids_one_call": [round(t, 3) for t in ids_runs],
                   "index_of": [round(t, 3) for t in index_runs], "kdf": [round(t, 3) for t in kdf_runs],
                   "seal": [round(t, 3) for t in seal_runs], "open": [round(t, 3) for t in open_runs]},
        "target_s": TARGET_S,
        "targets_met": {"seal": seal_s < TARGET_S, "open": open_s < TARGET_S, "ids": ids_blocks_s < TARGET_S},
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

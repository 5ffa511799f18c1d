"""Benchmark of the sealed key file (not a test): seal and open a 1,000,000-pseudonym key.

    python benchmarks/bench_keyfile.py              # 1,000,000 pseudonyms, best of 3
    python benchmarks/bench_keyfile.py --rows 100000 --runs 1

The payload holds the pseudonym -> identifiers map as columnar lists (a random 16-hex-digit
pseudonym, an id like "P0001234" and a name per record) plus a seed and a few aliases. Seal and
open use the DEFAULT KDF parameters (scrypt n=2**16, r=8, p=1), so the times include the KDF.
Prints one JSON object on stdout; progress notes go to stderr. Target: under 5 s each.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ppdp_desktop.core.release import keyfile

TARGET_S = 5.0
MANIFEST = "0123456789abcdef" * 4
PASSPHRASE = "correct horse battery staple"
FIRST = ["Anna", "Jean", "Zoë", "Mohamed", "Li", "Sofia", "Lukas", "Amélie", "Noah", "Fatima", "Olga", "Pierre"]
LAST = ["Martin", "Bernard", "Dubois", "Nguyen", "Müller", "García", "Rossi", "Kowalski", "Smith", "Yilmaz"]


def note(message: str) -> None:
    print(f"[bench_keyfile] {message}", file=sys.stderr, flush=True)


def make_payload(rows: int, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    hexes = os.urandom(8 * rows).hex()
    first = np.array(FIRST, dtype=object)[rng.integers(0, len(FIRST), rows)]
    last = np.array(LAST, dtype=object)[rng.integers(0, len(LAST), rows)]
    return {
        "pseudonyms": {
            "pseudonym": [hexes[i : i + 16] for i in range(0, 16 * rows, 16)],
            "patient_id": [f"P{i:07d}" for i in range(rows)],
            "name": [f"{a} {b}" for a, b in zip(first.tolist(), last.tolist())],
        },
        "aliases": {"diag": {f"A{i}": f"diagnosis {i}" for i in range(50)}},
        "seed": str(int.from_bytes(os.urandom(16), "big")),
        "method": {"name": "finegrain", "theta": 3.0},
    }


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
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)

    note(f"building a payload with {args.rows:,} pseudonyms")
    payload = make_payload(args.rows)
    json_bytes = len(json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    kdf_s, kdf_runs = best_of(args.runs, lambda: keyfile._derive(PASSPHRASE, keyfile.KdfParams()))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "release.ppdpkey"
        note("sealing")
        seal_s, seal_runs = best_of(
            args.runs, lambda: keyfile.seal(payload, PASSPHRASE, MANIFEST, path, overwrite=True)
        )
        size = path.stat().st_size
        note("opening")
        opened: list[dict] = []
        open_s, open_runs = best_of(args.runs, lambda: opened.append(keyfile.open_key(path, PASSPHRASE, MANIFEST)))
        assert opened[-1] == payload, "round trip changed the payload"
        header = keyfile.read_header(path)
    result = {
        "rows": args.rows,
        "kdf": {"name": "scrypt", "n": header.kdf.n, "r": header.kdf.r, "p": header.kdf.p},
        "payload_json_bytes": json_bytes,
        "file_bytes": size,
        "compression_ratio": round(json_bytes / size, 2),
        "kdf_s": round(kdf_s, 3),
        "seal_s": round(seal_s, 3),
        "open_s": round(open_s, 3),
        "kdf_runs_s": [round(t, 3) for t in kdf_runs],
        "seal_runs_s": [round(t, 3) for t in seal_runs],
        "open_runs_s": [round(t, 3) for t in open_runs],
        "target_s": TARGET_S,
        "targets_met": {"seal": seal_s < TARGET_S, "open": open_s < TARGET_S},
    }
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark (not a test): how soon a declared limit or a tampered key header is refused (the timing assertions
of ``tests/test_fail_closed_release.py`` and ``tests/test_keyfile.py`` before issue 29; the tests now check that
nothing is allocated or derived before the refusal).

    .venv/bin/python benchmarks/bench_limits.py            # best of 3
    .venv/bin/python benchmarks/bench_limits.py --runs 1

* ``cli_refusal_s``: ``ppdp anonymize`` in-process (``cli.main``) on a 400-record CSV with a size-like option far
  beyond its declared limit (personalized's ``--categories 1000000000``, ``--k-anonymity 99999999999``, 30
  interval levels, dp-microagg's ``--k 99999999999``, ``--header-row 99999999``), to its exit code 2. The run
  before the limits were declared went 143 s into the OOM killer. Target: under 1 s each (it was asserted
  under 20 s).
* ``tampered_kdf_refusal_ms``: ``keyfile.open_key`` of a sealed key whose header's scrypt parameters were
  raised out of bounds (n = 2**40, r = 33, p = 17, a 200-character salt) or made invalid, to its KeyFileError,
  before any key is derived. Target: under 1 s each (it was asserted so); the default KDF itself takes ~0.2 s.

Prints one JSON object; progress on stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_desktop.cli import main as cli_main
from ppdp_desktop.core.errors import KeyFileError
from ppdp_desktop.core.release import keyfile

PASSPHRASE = "correct horse battery staple 16"
MANIFEST = "0123456789abcdef" * 4
TARGET_S = 1.0
LIMITS = {
    "categories": ["--method", "personalized", "--key", "{key}", "--graded", "age", "--categories", "1000000000"],
    "k_anonymity": ["--rho1", "0.1", "--rho2", "0.5", "--quasi", "age", "--k-anonymity", "99999999999",
                    "--intervals", "age=5"],
    "interval_levels": ["--rho1", "0.1", "--rho2", "0.5", "--quasi", "age", "--k-anonymity", "5", "--intervals",
                        "age=" + ",".join(str(5 * 2 ** i) for i in range(30))],
    "dp_k": ["--method", "dp-microagg", "--attributes", "age", "--epsilon", "1", "--k", "99999999999"],
    "header_row": ["--rho1", "0.1", "--rho2", "0.5", "--header-row", "99999999"],
}
TAMPERED = {"n_2_40": {"n": 2**40}, "r_33": {"r": 33}, "p_17": {"p": 17}, "n_not_int": {"n": "1024"},
            "long_salt": {"salt": "A" * 200}, "other_kdf": {"name": "argon2"}}


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def refuse(argv: list[str]) -> None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        code = cli_main(argv)
    assert code == 2, f"not refused (exit {code}): {argv}"


def tampered_key(folder: Path, change: dict[str, object]) -> Path:
    sealed = keyfile.seal({"seed": "1"}, PASSPHRASE, MANIFEST, folder / "k.ppdpkey", overwrite=True,
                          kdf=keyfile.KdfParams(n=2**10, r=8, p=1))
    data = sealed.read_bytes()
    length = struct.unpack(">I", data[8:12])[0]
    header, body = json.loads(data[12:12 + length]), data[12 + length:]
    header["kdf"].update(change)
    raw = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    forged = folder / "forged.ppdpkey"
    forged.write_bytes(keyfile.MAGIC + struct.pack(">I", len(raw)) + raw + body)
    return forged


def open_refused(path: Path) -> None:
    try:
        keyfile.open_key(path, PASSPHRASE, MANIFEST)
    except KeyFileError:
        return
    raise AssertionError("a tampered header was opened")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    os.environ["PPDP_PASSPHRASE"] = PASSPHRASE
    cli: dict[str, float] = {}
    kdf: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rng = np.random.default_rng(0)
        n = 400
        data = folder / "d.csv"
        pd.DataFrame({"patient": [f"P{i:04d}" for i in range(n)], "sex": rng.choice(["F", "M"], n),
                      "age": rng.integers(20, 90, n),
                      "diagnosis": rng.choice(["flu", "asthma", "gout", "cancer"], n)}).to_csv(data, index=False)
        for name, extra in LIMITS.items():
            print(name, file=sys.stderr, flush=True)
            command = ["anonymize", str(data), "--out", str(folder / "rel"), "--sensitive", "diagnosis", "--no-report",
                       *[a.format(key=folder / "k.key") for a in extra]]
            cli[name] = round(best_of(args.runs, lambda command=command: refuse(command)), 3)
        for name, change in TAMPERED.items():
            forged = tampered_key(folder, change)
            kdf[name] = round(best_of(args.runs, lambda forged=forged: open_refused(forged)) * 1000.0, 2)
    print(json.dumps({"runs": args.runs, "cli_refusal_s": cli, "tampered_kdf_refusal_ms": kdf,
                      "load_average": os.getloadavg(), "target_s": TARGET_S,
                      "target_met": max(cli.values()) <= TARGET_S and max(kdf.values()) <= TARGET_S * 1000},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

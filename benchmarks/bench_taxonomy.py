"""Taxonomy benchmarks (not tests): an ICD-sized hierarchy and the semantic distance matrix.

    python benchmarks/bench_taxonomy.py            # best of 5 runs per figure
    python benchmarks/bench_taxonomy.py --runs 1

Builds a synthetic ICD-like taxonomy: 22 chapters -> 250 blocks -> 15,000 codes (uneven: block sizes
vary), writes it as an ARX hierarchy CSV in a temporary folder, then times loading the CSV, validating
it against 15,000 data values, exporting ARX CSV and JSON, and loading the JSON. Also times the
distance matrix and marginality over a 500-leaf taxonomy. Prints one JSON object (wall-clock seconds,
best of the runs); the target is load + validate + export (ARX and JSON) under 1 s.
"""
from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ppdp_desktop.core.taxonomy.io import load_arx_csv, load_json, save_arx_csv, save_json, to_arx_csv, to_json
from ppdp_desktop.core.taxonomy.semantic import distance_matrix, marginality
from ppdp_desktop.core.taxonomy.tree import Taxonomy

CHAPTERS, BLOCKS, CODES = 22, 250, 15_000
TARGET_S = 1.0


def icd_like(chapters: int = CHAPTERS, blocks: int = BLOCKS, codes: int = CODES, seed: int = 1) -> Taxonomy:
    """A 3-level taxonomy with ``codes`` leaves, blocks of uneven size spread over the chapters."""
    rng = np.random.default_rng(seed)
    block_chapter = np.sort(rng.integers(0, chapters, blocks))
    sizes = rng.multinomial(codes - blocks, np.ones(blocks) / blocks) + 1
    t = Taxonomy("diagnosis", "Any diagnosis")
    for c in range(chapters):
        t.add(t.root, f"Chapter {c + 1:02d}")
    code = 0
    for b, (chapter, size) in enumerate(zip(block_chapter, sizes)):
        block = t.add(f"Chapter {chapter + 1:02d}", f"Block {b + 1:03d}")
        for _ in range(size):
            t.add(block, f"{chr(65 + code // 1000 % 26)}{code % 1000:03d}.{code // 26_000}")
            code += 1
    return t


def best(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    taxonomy = icd_like()
    data = taxonomy.leaf_labels()
    assert len(data) == CODES and taxonomy.depth == 3
    out: dict[str, object] = {
        "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "runs": args.runs,
        "leaves": len(data),
        "nodes": len(taxonomy),
    }
    with tempfile.TemporaryDirectory() as folder:
        csv_path, json_path = Path(folder) / "icd.csv", Path(folder) / "icd.json"
        save_arx_csv(taxonomy, csv_path)
        save_json(taxonomy, json_path)
        loaded = load_arx_csv(csv_path, "diagnosis")
        assert loaded.parents() == taxonomy.parents() and loaded.validate(data) == []
        figures = {
            "load_arx_csv_s": best(lambda: load_arx_csv(csv_path, "diagnosis"), args.runs),
            "validate_15000_values_s": best(lambda: loaded.validate(data), args.runs),
            "export_arx_csv_s": best(lambda: save_arx_csv(loaded, csv_path), args.runs),
            "export_json_s": best(lambda: save_json(loaded, json_path), args.runs),
            "load_json_s": best(lambda: load_json(json_path), args.runs),
            "to_arx_csv_in_memory_s": best(lambda: to_arx_csv(loaded), args.runs),
            "to_json_in_memory_s": best(lambda: to_json(loaded), args.runs),
        }
    total = sum(figures[k] for k in ("load_arx_csv_s", "validate_15000_values_s", "export_arx_csv_s", "export_json_s"))
    out.update(figures)
    out["load_validate_export_s"] = total
    out["target_s"] = TARGET_S
    out["target_met"] = total < TARGET_S

    small = icd_like(chapters=10, blocks=40, codes=500)
    rng = np.random.default_rng(2)
    labels = small.leaf_labels()
    records = rng.choice(labels, size=100_000, p=rng.dirichlet(np.ones(len(labels))))
    counts = dict(zip(*np.unique(records, return_counts=True)))
    out["distance_matrix_500_s"] = best(lambda: distance_matrix(small), args.runs)
    out["marginality_500_leaves_s"] = best(lambda: marginality(small, counts), args.runs)
    out["marginality_100000_records_s"] = best(lambda: marginality(small, records.tolist()), args.runs)
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

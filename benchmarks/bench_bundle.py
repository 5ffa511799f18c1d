"""Bundle size and start-up: ``python benchmarks/bench_bundle.py [--bundle DIR] [--build]``.

Reports the folder size (and its largest parts), the self-test time, and the time from launching
``ppdp-desktop --quit-when-shown`` to the window being shown: the first launch right after dropping
the page cache when the OS allows it ("cold"), then five more ("warm"). Prints JSON.
Targets (issue "Packaging for air-gapped PCs"): folder < 300 MB, self-test < 20 s, window < 3 s.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))

import build_bundle  # noqa: E402

ENV = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))


def drop_page_cache() -> bool:
    """Linux as root: empty the page cache so the next launch reads the bundle from disk."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def time_to_window(exe: Path) -> float:
    start = time.perf_counter()
    run = subprocess.run([str(exe), "--quit-when-shown"], env=ENV, capture_output=True, text=True, timeout=120)
    if "shown" not in run.stdout:
        raise RuntimeError(run.stderr)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=ROOT / "dist" / "ppdp-desktop")
    parser.add_argument("--build", action="store_true", help="build the bundle first")
    args = parser.parse_args(argv)
    result: dict[str, object] = {}
    if args.build:
        start = time.perf_counter()
        args.bundle = build_bundle.build(args.bundle.parent, ROOT / "build" / "pyinstaller")
        result["build_s"] = round(time.perf_counter() - start, 1)
    exe = args.bundle / ("ppdp-desktop.exe" if os.name == "nt" else "ppdp-desktop")
    internal = args.bundle / "_internal"
    parts = {p.name: build_bundle.folder_size(p) if p.is_dir() else p.lstat().st_size
             for p in internal.iterdir() if not p.is_symlink()}  # top-level links point into packages
    result["size_mb"] = round(build_bundle.folder_size(args.bundle) / 2**20, 1)
    result["largest_parts_mb"] = {k: round(v / 2**20, 1) for k, v in sorted(parts.items(), key=lambda kv: -kv[1])[:10]}
    cold = drop_page_cache()
    result["cold_cache_dropped"] = cold
    result["window_first_s"] = round(time_to_window(exe), 2)
    warm = [round(time_to_window(exe), 2) for _ in range(5)]
    result["window_warm_s"] = warm
    start = time.perf_counter()
    code = subprocess.run([str(exe), "--selftest"], env=ENV, capture_output=True, timeout=300).returncode
    result["selftest_s"] = round(time.perf_counter() - start, 1)
    result["selftest_passed"] = code == 0
    result["targets"] = {"size_mb": 300, "selftest_s": 20, "window_s": 3}
    result["targets_met"] = {"size_mb": result["size_mb"] < 300, "selftest_s": result["selftest_s"] < 20,
                             "window_s": max([result["window_first_s"], *warm]) < 3}
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

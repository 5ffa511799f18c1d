"""One child process run to its end, timed as the issue-34 benchmarks compare contenders: its CPU seconds (user +
system, ``getrusage(RUSAGE_CHILDREN)`` before and after: the benchmarks wait for one child at a time) and wall
seconds. A child that fails stops the benchmark with its last lines of stderr.

The children run the app as installed: from compiled bytecode. ``PYTHONDONTWRITEBYTECODE`` (set in some shells) is
dropped for them and :func:`compile_app` compiles the tree the children import first; otherwise every child would
compile the app's modules again (~0.35 CPU s, a third of the pyarrow floor, counted in every ratio)."""
from __future__ import annotations

import resource
import subprocess
import sys
import time


def compile_app(env: dict[str, str]) -> None:
    """Compile the ``ppdp_desktop`` package that a child under ``env`` imports (its ``PYTHONPATH`` decides which)."""
    code = ("import compileall, pathlib, ppdp_desktop; "
            "compileall.compile_dir(str(pathlib.Path(ppdp_desktop.__file__).parent), quiet=1)")
    subprocess.run([sys.executable, "-c", code], env=_compiled(env), check=True)


def _compiled(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(cmd: list[str], env: dict[str, str], name: str) -> tuple[float, float]:
    """Run ``cmd`` under ``env`` (with bytecode written and read); ``(cpu_s, wall_s)``. ``name`` names the benchmark
    in a failure."""
    env = _compiled(env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{name}: {' '.join(cmd[1:3])} failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall

"""One child process run to its end, timed as the issue-34 benchmarks compare contenders: its CPU seconds (user +
system, ``getrusage(RUSAGE_CHILDREN)`` before and after: the benchmarks wait for one child at a time) and wall
seconds. A child that fails stops the benchmark with its last lines of stderr."""
from __future__ import annotations

import resource
import subprocess
import time


def timed(cmd: list[str], env: dict[str, str], name: str) -> tuple[float, float]:
    """Run ``cmd`` under ``env``; ``(cpu_s, wall_s)``. ``name`` names the benchmark in a failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{name}: {' '.join(cmd[1:3])} failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall

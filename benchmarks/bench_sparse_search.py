"""The sparse lattice search alone (issue 34), one whole process per run, for A B A B comparisons of two trees.

``PYTHONPATH=TREE python benchmarks/bench_sparse_search.py [K ...]`` (default k = 5 and 50) builds
``bench_generalization.py``'s ``sparse`` scenario (1M rows x 5 QIs x 5 levels, 693,813 distinct combinations),
aggregates it (not timed), then times ``search_lattice`` (suppression 0.05, the app's 5 alternatives) in CPU seconds
(``time.process_time``) and prints one line per k: CPU s, nodes checked, the node, suppressed, precision, and a digest
of the whole answer (alternatives included; not the nodes checked, which a walk may change) to check that two trees
agree; then the peak RSS of the process.
Run it from outside the checkout (``-m`` and the script's folder otherwise decide which tree is imported)::

    for run in A B A B; do PYTHONPATH=$TREE_$run python /path/to/benchmarks/bench_sparse_search.py; done
"""
from __future__ import annotations

import hashlib
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_generalization import make_data  # noqa: E402 - the scenario's data and hierarchies
from ppdp_desktop.core.generalization.lattice import search_lattice  # noqa: E402
from ppdp_desktop.core.generalization.table import aggregate_records  # noqa: E402


def main(ks: list[int]) -> None:
    frame, hierarchies = make_data("sparse")
    table = aggregate_records(frame, hierarchies)
    del frame
    for k in ks:
        start = time.process_time()
        g = search_lattice(table, list(hierarchies.values()), k, 0.05)
        cpu = time.process_time() - start
        answer = repr((g.levels, g.suppressed, g.precision, g.metric_value, g.alternatives))  # not the nodes checked
        print(f"k={k} cpu_s={cpu:.2f} nodes={g.n_nodes_checked} levels={tuple(g.levels.values())} "
              f"suppressed={g.suppressed} precision={g.precision:.6f} "
              f"digest={hashlib.sha256(answer.encode()).hexdigest()[:12]}", flush=True)
    print(f"peak_rss_mb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [5, 50])

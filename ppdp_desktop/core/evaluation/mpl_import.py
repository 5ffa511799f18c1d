"""Importing matplotlib for the report's figures without its 3D toolkit (Qt-free).

``matplotlib.figure`` imports ``matplotlib.projections``, which imports ``mpl_toolkits.mplot3d`` to register the
"3d" projection: a quarter of the import's CPU time (0.07 of 0.29 s on the benchmark machine), for a projection
no figure of the app uses. :func:`import_figure` imports matplotlib's Figure with that one import refused, so a
report that draws its figures pays only for what they need.

The report's imports go with the cyclic garbage collector paused
(:func:`~ppdp_desktop.core.collection.collection_paused`): importing matplotlib and fpdf2 (~400 modules, ~100k
objects that live as long as the process) set off young and full collections that traverse every object alive, and
every later full collection traverses them again: in a 1M-row job with its report, the collector took ~0.9 s (wall,
loaded machine) with them, ~0.2 s without.
"""
from __future__ import annotations

import sys
import threading
import warnings
from typing import Any

#: the toolkit matplotlib imports only to register the "3d" projection
MPLOT3D = "mpl_toolkits.mplot3d"

# matplotlib says so when the toolkit does not import; here that is on purpose
warnings.filterwarnings("ignore", message="Unable to import Axes3D", category=UserWarning)

_lock = threading.Lock()


def import_figure() -> Any:
    """matplotlib's ``Figure`` class. The first import of ``matplotlib.figure`` goes without the 3D toolkit (the
    "3d" projection is then not registered) where matplotlib allows it (3.9 on; 3.8 imports it unguarded and gets
    it); the toolkit itself stays importable afterwards."""
    if "matplotlib.figure" not in sys.modules:
        with _lock:
            if "matplotlib.figure" not in sys.modules and MPLOT3D not in sys.modules:
                sys.modules[MPLOT3D] = None  # type: ignore[assignment]  # an import of it raises ImportError
                try:
                    import matplotlib.figure  # noqa: F401
                except ImportError:  # a matplotlib that cannot go without it (3.8 imports it unguarded): with it
                    pass
                finally:
                    if sys.modules.get(MPLOT3D, 0) is None:
                        del sys.modules[MPLOT3D]
    from matplotlib.figure import Figure  # imported now if the import without the toolkit failed

    return Figure

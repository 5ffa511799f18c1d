"""An independent brute force over every lattice node, for the golden tests of the utility metrics (issue 33).

It reads the ARX hierarchy files itself (no :class:`Hierarchy`, no class tables, no search code), computes
each record's label and cell cost at every level as text with pandas, groups every node's records, and scores
each metric straight from its definition in :mod:`ppdp_desktop.core.generalization.metrics`, in exact fractions
(floats for entropy).
"""
from __future__ import annotations

import csv
import itertools
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd


def read_rows(path: Path) -> dict[str, list[str]]:
    """value -> its labels at levels 1..H (a "*" level added when the last column has several labels)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f, delimiter=";") if r]
    width = max(len(r) for r in rows)
    rows = [r + [r[-1]] * (width - len(r)) for r in rows]
    if len({r[-1] for r in rows}) > 1 or width == 1:
        rows = [r + ["*"] for r in rows]
    return {r[0]: r[1:] for r in rows}


def node_figures(frame: pd.DataFrame, files: dict[str, Path], weights: dict[str, float] | None = None):
    """Yield ``(levels, class sizes per record, cell-cost frames)`` for every node: what :func:`best` scores."""
    weights = weights or {}
    n = len(frame)
    per_qi = {}
    for name, path in files.items():
        rows = read_rows(path)
        height = len(next(iter(rows.values())))
        values = frame[name].astype(str)
        f_value = values.map(values.value_counts())
        levels = []
        for h in range(height + 1):
            labels = values if h == 0 else values.map({v: r[h - 1] for v, r in rows.items()})
            # leaves under each label, over the hierarchy's whole domain (every row of the file)
            under = pd.Series([v if h == 0 else r[h - 1] for v, r in rows.items()]).value_counts()
            d = len(rows)
            top = h == height
            # loss numerators over d - 1: (leaves - 1), the top label d - 1
            cost = {lab: d - 1 if top else int(under[lab]) - 1 for lab in under.index}
            loss = labels.map(cost).to_numpy(dtype=np.int64)
            f_label = labels.map(labels.value_counts()).to_numpy(dtype=np.float64)
            entropy = np.log2(f_label / f_value.to_numpy(dtype=np.float64))
            levels.append({"labels": labels.to_numpy(), "h": h, "height": height, "d": d, "loss": loss,
                           "entropy": entropy, "top_entropy": np.log2(n / f_value.to_numpy(dtype=np.float64))})
        per_qi[name] = (height, levels, Fraction(repr(float(weights.get(name, 1)))))
    names = list(files)
    for node in itertools.product(*(range(per_qi[a][0] + 1) for a in names)):
        keys = pd.DataFrame({a: per_qi[a][1][h]["labels"] for a, h in zip(names, node)})
        sizes = keys.groupby(names).transform("size") if len(names) > 1 else keys.groupby(names[0])[names[0]].transform("size")
        yield node, sizes.to_numpy().ravel(), [(per_qi[a][2], per_qi[a][1][h], per_qi[a][1][-1]) for a, h in zip(names, node)]


def score(node, sizes, cells, k: int, n: int) -> dict:
    """Every metric of one node, from its definitions (suppressed records cost their top-level cells)."""
    small = sizes < k
    s = int(small.sum())
    wsum = sum(w for w, _, _ in cells)
    prec = loss = Fraction(0)
    entropy = 0.0
    for w, here, top in cells:
        prec += w * (Fraction((n - s) * here["h"], here["height"]) + s)  # a suppressed cell costs 1
        loss += w * Fraction(int(np.where(small, top["loss"], here["loss"]).sum()), here["d"] - 1)
        entropy += float(w) * float(np.where(small, top["top_entropy"], here["entropy"]).sum())
    classes = pd.Series(sizes[~small]).value_counts()  # size -> number of records in classes of that size
    n_classes = sum(int(records) // int(size) for size, records in classes.items())
    dm = sum(int(size) ** 2 * (int(records) // int(size)) for size, records in classes.items()) + s * n
    return {"levels": node, "suppressed": s, "precision": prec, "loss": loss, "entropy": entropy,
            "discernibility": dm, "aecs": Fraction(n, n_classes + (1 if s else 0)), "wsum": wsum}


def best(frame: pd.DataFrame, files: dict[str, Path], settings: list[tuple[int, float]], metrics: list[str],
         weights: dict[str, float] | None = None, max_levels: dict[str, int] | None = None) -> dict:
    """``{(k, suppression, metric): (levels, suppressed, value)}``: the best node by the metric, then fewer
    suppressed records, then discernibility, then precision loss, then the level vector; the value as the
    search reports it (per weighted cell for the cell metrics)."""
    n, names, out = len(frame), list(files), {}
    scored = {kv: [] for kv in settings}
    for node, sizes, cells in node_figures(frame, files, weights):
        if max_levels and any(node[names.index(a)] > h for a, h in max_levels.items()):
            continue
        for k, suppression in settings:
            if (sizes < k).sum() <= math.floor(Fraction(repr(suppression)) * n):
                scored[(k, suppression)].append(score(node, sizes, cells, k, n))
    for (k, suppression), nodes in scored.items():
        for metric in metrics:
            def key(f, metric=metric):
                if metric == "discernibility":
                    return (f[metric], f["suppressed"], f["precision"], f["levels"])
                return (f[metric], f["suppressed"], f["discernibility"], f["precision"], f["levels"])
            f = min(nodes, key=key)
            value = f[metric] / (n * f["wsum"]) if metric in ("precision", "loss", "entropy") else f[metric]
            out[(k, suppression, metric)] = (f["levels"], f["suppressed"], float(value))
    return out

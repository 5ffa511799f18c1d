"""The report's figures: plain matplotlib Figures (no pyplot, no Qt), shared by every method family.

The window wraps them in ``FigureCanvasQTAgg``; report files save the same figures. matplotlib is
imported on first use, so opening the window does not pay for it.
"""
from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from ppdp_desktop.core.visible import shortened, visible

# A value in a script the bundled fonts lack (CJK, emoji) is drawn as a box; matplotlib's warning about it
# would reach stderr on a run that succeeded, so it is silenced (the value is still in the tables as text).
warnings.filterwarnings("ignore", message=r"Glyph \d+ .*missing from (current )?font", category=UserWarning)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ppdp_desktop.core.privacy.structured import RetentionMatrix

MAX_BARS = 40  # larger domains show their 40 most frequent values
MAX_LABEL = 60  # a value's label is cut to this many characters (the tables give it whole)


def _figure(**kwargs: Any) -> Figure:
    """A new matplotlib Figure; matplotlib is imported on first use, so opening the window does not
    pay for it (the window warms it up right after it is shown), nor for its 3D toolkit (:mod:`.mpl_import`)."""
    from ppdp_desktop.core.evaluation.mpl_import import import_figure

    return import_figure()(**kwargs)


def _bar_figure(n_bars: int) -> tuple[Figure, Any]:
    """A figure tall enough for ``n_bars`` horizontal bars with readable labels. Its margins are set from
    the labels (:func:`_value_axis`) rather than by a layout engine, which draws every text twice more."""
    fig = _figure(figsize=(7.5, max(3.0, 0.6 + 0.24 * n_bars)))
    return fig, fig.add_subplot()


def _shown(weight: np.ndarray, what: str) -> tuple[np.ndarray, str]:
    """Indices of at most :data:`MAX_BARS` values by decreasing ``weight`` and a title suffix."""
    order = np.argsort(-np.nan_to_num(weight, nan=-np.inf), kind="stable")
    if len(order) <= MAX_BARS:
        return order, ""
    return order[:MAX_BARS], f"\n({MAX_BARS} {what} of {len(order)})"


def _value_axis(ax: Any, values: list[str], idx: np.ndarray) -> np.ndarray:
    y = np.arange(len(idx))
    labels = [shortened(visible(values[i]), MAX_LABEL) for i in idx]  # a label is a few words, on one line
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()  # the first (most frequent) value on top
    width, height = ax.figure.get_size_inches()
    longest = max((len(label) for label in labels), default=4)
    left = min(0.45 * width, 0.3 + 0.068 * longest)  # 8-point labels: about 0.068 inch a character
    ax.figure.subplots_adjust(left=left / width, right=1 - 0.25 / width, top=1 - 0.7 / height, bottom=0.55 / height)
    # The value axis has no label: placed where it is, matplotlib does not measure every value's label again
    # at each drawing to put it beside them (with the title's place, :func:`_bar_title`: ~10 % of the drawing).
    ax.yaxis.set_label_coords(-0.1, 0.5)
    return y


def _bar_title(ax: Any, title: str) -> None:
    """The title of a bar figure, where matplotlib would put it: at the top of the axes (nothing is drawn above
    them). Stated, it is not placed anew at each drawing by measuring both axes' tick labels."""
    ax.set_title(title, y=1.0)


def distribution_figure(
    values: list[str], original: np.ndarray | None, reconstructed: np.ndarray,
    low: np.ndarray | None, high: np.ndarray | None,
) -> Figure:
    """Original vs reconstructed count per value; the 95 % band as error bars. Without ``original`` (the
    report inside a release) the estimates alone, with the intervals computed from the released counts."""
    if original is None:
        idx, suffix = _shown(np.clip(reconstructed, 0, None), "values with the largest estimates")
        fig, ax = _bar_figure(len(idx))
        y = _value_axis(ax, values, idx)
        ax.barh(y, reconstructed[idx], height=0.6, label="estimated from the release", color="#dd8452")
        if low is not None and high is not None:
            mid, half = (low[idx] + high[idx]) / 2.0, (high[idx] - low[idx]) / 2.0
            ax.errorbar(mid, y, xerr=half, fmt="none", ecolor="black", capsize=2, lw=0.8, label="95 % interval")
        ax.set_xlabel("records")
        _bar_title(ax, "Counts estimated from the release" + suffix)
        ax.legend(loc="lower right", fontsize=8)
        return fig
    idx, suffix = _shown(original, "most frequent values")
    fig, ax = _bar_figure(len(idx))
    y = _value_axis(ax, values, idx)
    ax.barh(y - 0.2, original[idx], height=0.4, label="original", color="#4c72b0")
    ax.barh(y + 0.2, reconstructed[idx], height=0.4, label="estimated from the release", color="#dd8452")
    if low is not None and high is not None:
        mid, half = (low[idx] + high[idx]) / 2.0, (high[idx] - low[idx]) / 2.0
        ax.errorbar(mid, y + 0.2, xerr=half, fmt="none", ecolor="black", capsize=2, lw=0.8,
                    label="95 % interval of the estimate")
    ax.set_xlabel("records")
    _bar_title(ax, "Original and estimated counts" + suffix)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def retention_figure(values: list[str], original: np.ndarray, retention: np.ndarray,
                     matrix: np.ndarray | RetentionMatrix) -> Figure:
    """Per value: the retention probability ``p_i`` and the chance ``P[i][i]`` it is released unchanged."""
    idx, suffix = _shown(original, "most frequent values")
    fig, ax = _bar_figure(len(idx))
    y = _value_axis(ax, values, idx)
    ax.barh(y, retention[idx], height=0.6, label="retention p", color="#55a868")
    diagonal = matrix.diagonal() if hasattr(matrix, "diagonal") else np.diag(matrix)
    ax.plot(diagonal[idx], y, "k|", markersize=9, label="released unchanged P[i][i]")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("probability")
    _bar_title(ax, "Retention per value" + suffix)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def posterior_figure(values: list[str], max_posterior: np.ndarray, rho2: np.ndarray, prior: np.ndarray) -> Figure:
    """Per protected value: the adversary's largest posterior against its bound ``rho2``."""
    protected = np.flatnonzero(~np.isnan(rho2))
    ratio = max_posterior[protected] / rho2[protected]
    order, suffix = _shown(ratio, "closest to the bound")
    idx = protected[order]
    fig, ax = _bar_figure(len(idx))
    if not len(idx):
        ax.text(0.5, 0.5, "No value carries a privacy requirement.", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return fig
    y = _value_axis(ax, values, idx)
    ax.barh(y, max_posterior[idx], height=0.6, label="max posterior", color="#8172b3")
    ax.plot(rho2[idx], y, "r|", markersize=11, mew=2, label="rho2 (bound)")
    ax.plot(prior[idx], y, "k.", label="prior (frequency)")
    ax.set_xlabel("probability")
    _bar_title(ax, "Max posterior vs rho2 per protected value" + suffix)
    ax.legend(loc="lower right", fontsize=8)
    return fig


def choice_figure(attribute: str, counts: dict[str, int]) -> Figure:
    """How many records of ``attribute`` were published as value / alias1 / alias2."""
    fig = _figure(figsize=(6.0, 3.2), layout="constrained")
    ax = fig.add_subplot()
    bars = ax.bar(list(counts), list(counts.values()), color=["#c44e52", "#dd8452", "#4c72b0", "#8c8c8c"][: len(counts)])
    ax.bar_label(bars, fmt="{:,.0f}", fontsize=8)
    ax.set_ylabel("records")
    ax.set_title(f"{attribute}: records published as")
    return fig


def grade_figure(attribute: str, grades: np.ndarray, k: int) -> Figure:
    """Histogram of the published grades (category number + position within the category)."""
    fig = _figure(figsize=(6.5, 3.2), layout="constrained")
    ax = fig.add_subplot()
    finite = grades[np.isfinite(grades)]
    ax.hist(finite, bins=np.linspace(1.0, k + 1.0, 10 * k + 1).tolist(), color="#4c72b0")  # the stubs take a sequence
    for c in range(2, k + 1):
        ax.axvline(c, color="black", lw=0.8, ls="--")
    ax.set_xlabel("published grade (category boundaries dashed)")
    ax.set_ylabel("records")
    ax.set_title(f"{attribute}: grades in {k} secret categories")
    return fig


#: resolution of the figures' PNG images: sharp on paper at the page width, light enough for a 1M-row report
PNG_DPI = 150
#: zlib level of the figures' PNG images: a third of the encoding time of the default (6) for about a tenth more
#: bytes; flat-coloured plots compress well at any level
PNG_COMPRESS_LEVEL = 1


def figure_png(fig: Figure, dpi: int = PNG_DPI) -> bytes:
    """``fig`` drawn once by Agg as PNG bytes: the report files and the window all show this image, so a
    figure is laid out and rasterized once (in the worker), never again on the GUI thread. An opaque figure
    (every one of the report's) is written as RGB, without its constant alpha channel: the same pixels, a
    quarter less to encode here, and a PDF embeds it without a transparency mask."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = FigureCanvasAgg(fig)
    fig.dpi = dpi  # as savefig(dpi=...) does; the figure is drawn at this resolution from now on
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    image = Image.fromarray(rgba, "RGBA")
    if int(rgba[..., 3].min()) == 255:
        image = image.convert("RGB")
    buf = io.BytesIO()
    image.save(buf, format="png", dpi=(dpi, dpi), compress_level=PNG_COMPRESS_LEVEL)
    return buf.getvalue()


def plain_log_ticks(axis: Any) -> None:
    """Tick labels of a log axis as plain numbers ("1,000", not 10^3): easier to read, and they are not
    typeset by mathtext, whose parsing holds the interpreter long enough to stall the window."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:,.0f}" if value >= 1 or value == 0
                                           else f"{value:g}"))


def count_ticks(axis: Any, top: float) -> None:
    """Enough labelled ticks on a symlog axis of record counts up to ``top``: every whole number up to 5, the
    1-2-5 steps up to 1,000, the powers of ten above (matplotlib alone labels only 0 and 1 below 10)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    if top <= 5:
        ticks = list(range(int(top) + 1))
    else:
        steps = (1,) if top > 1000 else (1, 2, 5)
        ticks = [0] + [m * 10 ** e for e in range(int(np.log10(top)) + 1) for m in steps if m * 10 ** e <= top]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())


_warmed = False
_warm_lock = threading.Lock()


def warm_up() -> None:
    """Import matplotlib and load its default font, laying out one line of text, so the fonts are read now
    (C code that holds the interpreter for ~0.1 s the first time) rather than in the middle of a run. Only
    the first call does anything; a call while another thread warms up waits for it (so drawing never
    overlaps it). No figure is drawn: the first figure of a run is drawn no slower after this, and drawing
    one here was CPU time every report paid for nothing."""
    from ppdp_desktop.core.collection import collection_paused

    global _warmed
    with _warm_lock:
        if _warmed:
            return
        with collection_paused():  # the imports' objects live on: no collection to traverse them meanwhile
            _figure()  # matplotlib.figure and what it imports
            from matplotlib import font_manager
            from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401 - the renderer figure_png uses

            font = font_manager.get_font(font_manager.findfont(font_manager.FontProperties()))
            font.set_size(8, 72)
            font.set_text("Warm up 0123456789", 0.0)
        _warmed = True


def warm_up_in_background() -> threading.Thread:
    """:func:`warm_up` on a daemon thread, e.g. while the data loads (reading releases the interpreter lock);
    :func:`~ppdp_desktop.core.report.build.build_report` calls :func:`warm_up` first, which waits for it."""
    thread = threading.Thread(target=warm_up, name="matplotlib warm-up", daemon=True)
    thread.start()
    return thread


def class_size_figure(before: dict[int, int] | None, after: dict[int, int], k: int | None = None) -> Figure:
    """Records by the size of the group sharing their quasi-identifiers, original and release (log scale):
    the bars left of ``k`` (or at 1) are the records that can be singled out."""
    fig = _figure(figsize=(7.0, 3.4), layout="constrained")
    ax = fig.add_subplot()
    sizes = sorted({int(s) for s in (before or {})} | {int(s) for s in after})
    cap = 50
    bins = [s for s in sizes if s < cap] + ([cap] if any(s >= cap for s in sizes) else [])

    def counts(hist: dict[int, int] | None) -> np.ndarray:
        hist = {int(s): int(c) for s, c in (hist or {}).items()}
        return np.array([sum(c for s, c in hist.items() if (s >= cap if b == cap else s == b)) for b in bins], float)

    x = np.arange(len(bins))
    if before is not None:
        ax.bar(x - 0.2, counts(before), width=0.4, label="original", color="#c44e52")
    ax.bar(x + (0.2 if before is not None else 0.0), counts(after), width=0.4, label="release", color="#4c72b0")
    ax.set_xticks(x, [f"{b}+" if b == cap else str(b) for b in bins], fontsize=7, rotation=90 if len(bins) > 20 else 0)
    if k is not None and k in bins:
        ax.axvline(bins.index(k) - 0.5, color="black", ls="--", lw=0.8, label=f"k = {k}")
    ax.set_yscale("symlog")
    plain_log_ticks(ax.yaxis)
    top = max([*counts(before), *counts(after), 1.0])
    count_ticks(ax.yaxis, top)
    ax.set_ylim(0, top * 1.05)
    ax.set_xlabel("size of the group sharing the quasi-identifiers")
    ax.set_ylabel("records")
    ax.set_title("Who can be singled out: records by group size")
    ax.legend(fontsize=8)
    return fig

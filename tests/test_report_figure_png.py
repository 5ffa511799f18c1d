"""Issue 34: the report's figures drawn once, for less CPU, with the pixels matplotlib's own PNG has."""
from __future__ import annotations

import io

import numpy as np
from PIL import Image

from ppdp_desktop.core.evaluation import figures


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGBA"))


def _savefig_png(fig, dpi: int) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buf = io.BytesIO()
    FigureCanvasAgg(fig)
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def test_an_opaque_figure_is_written_as_rgb_with_matplotlibs_pixels():
    values = [f"D{i:02d}" for i in range(50)]
    counts = np.random.default_rng(1).integers(100, 40_000, 50).astype(float)
    makers = [lambda: figures.distribution_figure(values, counts, counts * 1.01, counts * 0.98, counts * 1.03),
              lambda: figures.class_size_figure({1: 5, 3: 30, 60: 100}, {2: 10, 5: 40}, 2)]  # a layout engine too
    for make in makers:
        png = figures.figure_png(make())
        with Image.open(io.BytesIO(png)) as image:
            assert image.mode == "RGB"  # no alpha channel to encode (and none for a PDF to mask)
            assert round(image.info["dpi"][0]) == figures.PNG_DPI
        expected = _pixels(_savefig_png(make(), figures.PNG_DPI))
        assert np.array_equal(_pixels(png), expected)


def test_a_figure_with_transparency_keeps_its_alpha():
    fig = figures.distribution_figure(["a", "b"], np.array([3.0, 1.0]), np.array([2.0, 2.0]), None, None)
    fig.patch.set_alpha(0.0)
    png = figures.figure_png(fig, dpi=40)
    with Image.open(io.BytesIO(png)) as image:
        assert image.mode == "RGBA"
    assert np.array_equal(_pixels(png), _pixels(_savefig_png(fig, 40)))


def test_the_warm_up_loads_the_font_and_draws_no_figure(monkeypatch):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    drawn: list[object] = []
    draw = FigureCanvasAgg.draw
    monkeypatch.setattr(FigureCanvasAgg, "draw", lambda self, *a, **k: drawn.append(self) or draw(self, *a, **k))
    monkeypatch.setattr(figures, "_warmed", False)
    figures.warm_up()
    assert figures._warmed and drawn == []


def test_the_figures_import_matplotlib_without_its_3d_toolkit():
    """A quarter of matplotlib's import is its 3D toolkit, which no figure uses: a report does not import it (in
    a fresh interpreter, as a job's), no warning says so, and it can still be imported by whoever needs it."""
    import subprocess
    import sys

    code = ("import sys, warnings; warnings.simplefilter('error')\n"
            "from ppdp_desktop.core.evaluation import figures\n"
            "figures.warm_up(); figures.figure_png(figures.class_size_figure(None, {1: 3, 2: 4}), dpi=30)\n"
            "assert 'matplotlib.figure' in sys.modules and 'mpl_toolkits.mplot3d' not in sys.modules\n"
            "import mpl_toolkits.mplot3d\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_bar_figures_place_title_and_value_axis_label_where_matplotlib_would():
    """The bar figures state where their title and (empty) value-axis label go, so that drawing does not measure
    every value's label again to place them: the pixels are those of matplotlib's own placement."""
    values = [f"value {i:02d}" for i in range(45)]
    counts = np.random.default_rng(2).integers(10, 900_000, 45).astype(float)
    makers = [lambda: figures.distribution_figure(values, counts, counts * 1.01, counts * 0.98, counts * 1.03),
              lambda: figures.distribution_figure(values, None, counts, counts * 0.98, counts * 1.03),
              lambda: figures.retention_figure(values, counts, np.full(45, 0.4), np.eye(45) * 0.4),
              lambda: figures.posterior_figure(values, np.linspace(0.1, 0.4, 45), np.full(45, 0.5), counts / counts.sum())]
    for make in makers:
        stated, auto = make(), make()
        ax = auto.axes[0]
        assert ax._autotitlepos is False and ax.yaxis._autolabelpos is False  # what saves the measuring
        ax._autotitlepos, ax.yaxis._autolabelpos = None, True  # matplotlib's own placement, as before
        assert np.array_equal(_pixels(figures.figure_png(stated)), _pixels(figures.figure_png(auto)))

"""Issue 34: the report's figures are charts (what they show) drawn by one Pillow renderer, without matplotlib.

The pixels are checked where they carry a fact: a bar's length, a log axis's decades, a dashed rule, labels drawn.
"""
from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from ppdp_desktop.core.evaluation import figures
from ppdp_desktop.core.evaluation.chart import Axis, Bars, Chart, Markers, Rule, Steps, positions
from ppdp_desktop.core.evaluation.chart_png import render_png
from ppdp_desktop.core.evaluation.fonts import font_file
from ppdp_desktop.core.evaluation.ticks import labelled_ticks, nice_step, tick_text

BLUE = (76, 114, 176)  # "#4c72b0"
ORANGE = (221, 132, 82)  # "#dd8452"


def _pixels(png: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(png)) as image:
        assert image.mode == "P"  # a palette image: a few flat colours and the text's greys
        return np.asarray(image.convert("RGB"))


def _extent(pixels: np.ndarray, colour: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The rows and columns where ``colour`` is drawn."""
    mask = (pixels == np.array(colour, dtype=np.uint8)).all(axis=2)
    return np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))


def test_a_png_is_a_palette_image_at_the_charts_size_and_resolution_in_its_exact_colours():
    chart = Chart("title", (4.0, 2.0), Axis("x"), Axis("y"), [Bars(positions(2), np.array([1.0, 2.0]), 0.8, "#4c72b0")])
    png = render_png(chart, dpi=50)
    with Image.open(io.BytesIO(png)) as image:
        assert image.size == (200, 100) and image.mode == "P"
        assert round(image.info["dpi"][0]) == 50
        colours = {rgb for _, rgb in image.convert("RGB").getcolors(256)}
    assert {BLUE, (255, 255, 255), (0, 0, 0)} <= colours
    greys = {c for c in colours if c[0] == c[1] == c[2]}
    assert len(greys) > 5  # the text smoothed: shades between black and white


def test_bars_have_lengths_in_proportion_from_the_same_base():
    chart = Chart("", (6.0, 3.0), Axis(ticks=(0.0, 1.0), tick_labels=("long", "short"), inverted=True),
                  Axis("records", limits=(0.0, 1.0)), horizontal=True, legend=None)
    chart.marks += [Bars(np.array([0.0]), np.array([1.0]), 0.6, "#4c72b0"),
                    Bars(np.array([1.0]), np.array([0.25]), 0.6, "#dd8452")]
    pixels = _pixels(render_png(chart, dpi=100))
    long_rows, long_cols = _extent(pixels, BLUE)
    short_rows, short_cols = _extent(pixels, ORANGE)
    assert long_cols[0] == short_cols[0]  # both from 0
    long_len, short_len = long_cols[-1] - long_cols[0] + 1, short_cols[-1] - short_cols[0] + 1
    assert abs(long_len - 4 * short_len) <= 3
    assert long_rows.max() < short_rows.min()  # inverted: the first category on top
    assert (pixels[long_rows[len(long_rows) // 2], long_cols[-1] + 1:long_cols[-1] + 4] < 60).all(axis=1).any()  # the frame


def test_a_log_axis_gives_each_decade_the_same_height():
    chart = Chart("", (4.0, 4.0), Axis(ticks=(0.0, 1.0, 2.0), tick_labels=("a", "b", "c")),
                  Axis("error", scale="log", limits=(1.0, 10_000.0)), legend=None)
    chart.marks += [Bars(positions(3), np.array([10.0, 100.0, 1000.0]), 0.3, "#4c72b0")]
    pixels = _pixels(render_png(chart, dpi=100))
    mask = (pixels == np.array(BLUE, dtype=np.uint8)).all(axis=2)
    columns = np.flatnonzero(mask.any(axis=0))
    groups = np.split(columns, np.flatnonzero(np.diff(columns) > 1) + 1)
    heights = [int(mask[:, g[len(g) // 2]].sum()) for g in groups]
    assert len(heights) == 3
    assert abs(heights[1] - 2 * heights[0]) <= 3 and abs(heights[2] - 3 * heights[0]) <= 3
    _, ticks, texts = labelled_ticks(chart, chart.value)
    assert ticks == [1.0, 10.0, 100.0, 1000.0, 10000.0] and texts == ["1", "10", "100", "1,000", "10,000"]


def test_labels_are_drawn():
    def dark_left_of_bars(labels: tuple[str, ...]) -> int:
        chart = Chart("", (5.0, 2.0), Axis(ticks=(0.0, 1.0), tick_labels=labels), Axis(limits=(0.0, 1.0)),
                      horizontal=True, legend=None)
        chart.marks.append(Bars(positions(2), np.array([0.5, 0.5]), 0.6, "#4c72b0"))
        pixels = _pixels(render_png(chart, dpi=100))
        start = _extent(pixels, BLUE)[1][0]
        return int((pixels[:, : start - 8] < 100).all(axis=2).sum())

    assert dark_left_of_bars(("a value label", "another one")) > dark_left_of_bars(("", "")) + 100


def test_a_dashed_rule_is_drawn_across_the_axes():
    chart = Chart("", (4.0, 3.0), Axis(limits=(0.0, 1.0)), Axis(limits=(0.0, 1.0)), [Rule(0.5, color="#c44e52")],
                  legend=None)
    pixels = _pixels(render_png(chart, dpi=100))
    rows, cols = _extent(pixels, (196, 78, 82))
    assert 0 < len(cols) <= 2 and len(rows) > 100
    assert len(rows) < rows[-1] - rows[0] + 1  # gaps between the dashes


def test_overlapping_translucent_bars_blend():
    chart = Chart("", (4.0, 3.0), Axis(), Axis(), legend=None)
    chart.marks += [Bars(positions(1), np.array([1.0]), 0.8, "#c44e52", alpha=0.6),
                    Bars(positions(1), np.array([2.0]), 0.8, "#4c72b0", alpha=0.6)]
    pixels = _pixels(render_png(chart, dpi=60))
    colours = {tuple(p) for p in pixels.reshape(-1, 3)}
    low, high = np.array([196, 78, 82]) * 0.6 + 255 * 0.4, np.array(BLUE) * 0.6 + 255 * 0.4
    blended = np.array(BLUE) * 0.6 + low * 0.4
    for expected in (high, blended):
        assert any(np.abs(np.array(c) - expected).max() <= 2 for c in colours), expected


def test_a_chart_with_a_message_draws_the_message_alone():
    chart = figures.posterior_figure(["a"], np.array([0.1]), np.array([np.nan]), np.array([1.0]))
    assert chart.message and not chart.marks
    pixels = _pixels(render_png(chart, dpi=50))
    dark = (pixels < 100).all(axis=2)
    assert dark.any()
    rows = np.flatnonzero(dark.any(axis=1))
    assert rows[-1] - rows[0] < 20  # one line of text, no frame


def test_ticks_are_readable_numbers():
    assert nice_step(40_000, 8) == 5000 and nice_step(1.0, 5) == 0.2 and nice_step(1.0, 4) == 0.25
    assert tick_text(Axis(), [0.0, 0.25, 0.5]) == ["0.00", "0.25", "0.50"]
    assert tick_text(Axis(), [0.0, 0.2, 0.4]) == ["0.0", "0.2", "0.4"]
    assert tick_text(Axis(), [0.0, 5000.0, 10000.0]) == ["0", "5,000", "10,000"]
    risk = Chart("", (7.0, 3.4), Axis(), Axis(scale="symlog"), [Steps(np.array([0.0, 0.5, 1.0]), np.array([3.0, 250.0]), "k")])
    assert labelled_ticks(risk, risk.y)[2] == ["0", "1", "10", "100"]


def test_every_figure_kind_draws_and_states_what_it_shows():
    values = [f"value {i}" for i in range(45)]
    counts = np.linspace(1000.0, 100.0, 45)
    distribution = figures.distribution_figure(values, counts, counts * 1.01, counts * 0.98, counts * 1.03)
    assert distribution.horizontal and distribution.y.tick_labels == tuple(values[:40])
    np.testing.assert_array_equal(distribution.series("original").values, counts[:40])
    assert distribution.labels() == ["original", "estimated from the release", "95 % interval of the estimate"]
    posterior = figures.posterior_figure(values, np.linspace(0.1, 0.4, 45), np.full(45, 0.5), counts / counts.sum())
    bound = posterior.series("rho2 (bound)")
    assert isinstance(bound, Markers) and bound.color == "red" and (bound.values == 0.5).all()
    sizes = figures.class_size_figure({1: 5, 3: 30, 60: 100}, {2: 10, 5: 40}, 2)
    assert sizes.value.scale == "symlog" and sizes.x.tick_labels == ("1", "2", "3", "5", "50+")
    (rule,) = [m for m in sizes.marks if isinstance(m, Rule)]
    assert rule.at == 0.5 and rule.label == "k = 2"
    grades = figures.grade_figure("age", np.array([1.2, 1.3, 2.5, np.nan]), 2)
    assert sum(grades.marks[0].values) == 3 and [m.at for m in grades.marks if isinstance(m, Rule)] == [2.0]
    for chart in (distribution, posterior, sizes, grades, figures.choice_figure("x", {"value": 3, "alias 1": 1})):
        assert len(figures.figure_png(chart, dpi=40)) > 1000


def test_the_fonts_ship_with_the_application():
    assert font_file().is_file() and font_file(bold=True).is_file()
    assert (font_file().parent / "LICENSE_DEJAVU").is_file()


def test_the_warm_up_loads_the_renderer_once():
    figures.warm_up()
    figures.warm_up()  # a second call does nothing
    assert "ppdp_desktop.core.evaluation.chart_png" in sys.modules and "PIL.ImageFont" in sys.modules


@pytest.mark.slow
def test_a_job_with_its_report_never_imports_matplotlib(tmp_path):
    """The report's figures, PDF and HTML need no matplotlib (issue 35's bundle can leave it out)."""
    from ppdp_desktop.core.data.resources import DEMO_DATA, resource_path

    script = (
        "import sys\n"
        "from ppdp_desktop.cli import main\n"
        f"code = main(['anonymize', {str(resource_path(DEMO_DATA))!r}, '--out', {str(tmp_path / 'rel')!r},\n"
        "             '--sensitive', 'diagnosis', '--identifier', 'patient_id', '--identifier', 'name',\n"
        "             '--rho1', '0.1', '--rho2', '0.6'])\n"
        "assert code == 0, code\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'mpl_toolkits')], 'matplotlib imported'\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "PPDP_DATA_DIR": str(tmp_path / "ledger")})
    assert run.returncode == 0, run.stderr
    assert list((tmp_path / "rel").rglob("*.pdf")), "the release holds its PDF report"

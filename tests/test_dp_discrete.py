"""dp-microagg's numeric noise resists floating-point attacks (issue 20, point 4): an exact discrete Laplace
sampler on the keyed streams, its law, the exact privacy loss of the released grid values on neighbouring
data sets, and released values that are grid points and nothing else."""
from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.dp.grid import Grid, default_step, discrete_t
from ppdp_desktop.core.methods.dp.noise import DISCRETE_LAPLACE_DRAW, MAX_T, WORDS_AHEAD, discrete_laplace, discrete_laplace_pmf
from ppdp_desktop.core.methods.dp.numeric import grid_means
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.privacy.keyed import KeyedRandomness
from ppdp_desktop.core.settings import AnonymizationSettings

# --- the sampler ----------------------------------------------------------------------------------

@pytest.mark.parametrize("t", [1, 3])
def test_the_sampler_pmf_is_exp_minus_abs_k_over_t(t):
    """Monte Carlo: 200,000 draws, one bin per integer in [-6t, 6t] and the two tails, against
    exp(-|k|/t) (1 - e^(-1/t)) / (1 + e^(-1/t)); a 20 % larger t is rejected (the test has power)."""
    z = discrete_laplace(KeyedRandomness(20 + t).stream("x", DISCRETE_LAPLACE_DRAW), 0, 200_000, t)
    assert z.dtype == np.int64
    edge = 6 * t
    ks = np.arange(-edge, edge + 1)
    observed = np.concatenate([[np.sum(z < -edge)], np.bincount(np.clip(z, -edge, edge) + edge, minlength=len(ks))[:],
                               [np.sum(z > edge)]])
    observed[1] -= observed[0]  # the clip put the tails on the edge bins
    observed[-2] -= observed[-1]

    def expected(tt: float) -> np.ndarray:
        pmf = discrete_laplace_pmf(ks, tt)
        tail = (1 - pmf.sum()) / 2
        return np.concatenate([[tail], pmf, [tail]]) * len(z)

    assert expected(t).sum() == pytest.approx(len(z))
    assert stats.chisquare(observed, expected(t)).pvalue > 0.001
    assert stats.chisquare(observed, expected(1.2 * t)).pvalue < 1e-6
    # the probability of 0 and of +-1, exactly (standard errors below 0.1 %)
    assert np.mean(z == 0) == pytest.approx(discrete_laplace_pmf(0, t), abs=0.005)
    assert np.mean(z == 1) == pytest.approx(np.mean(z == -1), abs=0.005)


def test_a_large_t_keeps_its_scale_and_the_addressing():
    """t = 10**9: variance 2 q / (1 - q)**2 ~ 2 t**2; each index's draw is the same computed alone, in any range,
    or past the words read ahead (indices whose draw needs more than 16 words use the step sub-streams)."""
    stream = KeyedRandomness(5).stream("x", DISCRETE_LAPLACE_DRAW)
    t = 10**9
    z = discrete_laplace(stream, 0, 20_000, t)
    assert np.std(z) / (np.sqrt(2) * t) == pytest.approx(1.0, abs=0.03)
    np.testing.assert_array_equal(np.concatenate([discrete_laplace(stream, a, min(a + 999, 3000), t)
                                                  for a in range(0, 3000, 999)]), z[:3000])
    np.testing.assert_array_equal(discrete_laplace(stream, 12_345, 12_346, t), z[12_345:12_346])
    # the sampler's first 16 words of index i are words 16 i .. 16 i + 15 of the stream: another stream, another draw
    other = KeyedRandomness(5).stream("y", DISCRETE_LAPLACE_DRAW)
    assert not np.array_equal(discrete_laplace(other, 0, 100, t), z[:100])
    assert WORDS_AHEAD == 16


def test_the_sampler_refuses_a_parameter_it_cannot_draw_exactly():
    stream = KeyedRandomness(1).stream("x", DISCRETE_LAPLACE_DRAW)
    for bad in (0, 2.5, MAX_T + 1, True):
        with pytest.raises(ParameterError, match="whole number"):
            discrete_laplace(stream, 0, 3, bad)


def test_words_at_reads_the_same_words_dense_or_sparse():
    stream = KeyedRandomness(2).stream("x", "w")
    whole = stream.words(0, 200_000)
    dense = np.arange(1000, 3000, 3)
    sparse = np.array([5, 70_000, 70_001, 150_000, 199_999])
    np.testing.assert_array_equal(stream.words_at(dense), whole[dense])
    np.testing.assert_array_equal(stream.words_at(sparse), whole[sparse])
    assert not np.array_equal(stream.substream("step", 1).words(0, 10), stream.words(0, 10))
    with pytest.raises(ParameterError):
        stream.substream(1)  # an integer first would collide with the retry streams of integers()


# --- the exact privacy loss -----------------------------------------------------------------------

def _cluster_law(sums: np.ndarray, size: int, t: int, units: int) -> np.ndarray:
    """Exact law of a cluster's released grid unit j = clip(round((S + Z) / size), 0, units), one row per sum S."""
    width = 80 * t + 2 * units * size  # |Z| beyond this puts j at a clamp with certainty: the tails go there
    z = np.arange(-width, width + 1)
    pmf = discrete_laplace_pmf(z, t)
    q = np.exp(-1.0 / t)
    tail = q ** (width + 1) / (1 + q)  # P(Z > width) = P(Z < -width)
    law = np.zeros((len(sums), units + 1))
    for row, s in enumerate(sums):  # a handful of sums; the z axis is vectorized
        j = grid_means(np.full(len(z), s), np.full(len(z), size), z, units)
        law[row] = np.bincount(j, weights=pmf, minlength=units + 1)
        law[row, 0] += tail
        law[row, -1] += tail
    return law


@pytest.mark.parametrize("epsilon", [0.5, 1.0])
def test_the_release_is_exactly_epsilon_dp_on_every_neighbouring_pair(epsilon):
    """Exhaustive and exact, no sampling: every data set of 4 values on a grid of 8 units (k = 2: two clusters) and
    every neighbour (one value changed). The released (cluster 0, cluster 1) grid points, rounding and clamping
    included, have a log-ratio of at most epsilon on every output (the attacker sees less: the multiset), and the
    bound is nearly attained; with t one unit smaller than ceil(units / epsilon) it is broken."""
    units, k = 8, 2

    def worst(t: int) -> float:
        laws = _cluster_law(np.arange(2 * units + 1), k, t, units)
        logs = np.log(laws)
        result = 0.0
        for data in itertools.combinations_with_replacement(range(units + 1), 4):
            for i, v in itertools.product(range(4), range(units + 1)):
                other = sorted(data[:i] + (v,) + data[i + 1:])
                a = (data[0] + data[1], data[2] + data[3])
                b = (other[0] + other[1], other[2] + other[3])
                ratio = [logs[a[c]] - logs[b[c]] for c in (0, 1)]
                result = max(result, ratio[0].max() + ratio[1].max(), -(ratio[0].min() + ratio[1].min()))
        return result

    t = discrete_t(units, 1, epsilon)
    loss = worst(t)
    assert loss <= units / t + 1e-9 <= epsilon + 1e-9
    assert loss >= 0.9 * units / t  # tight: the sums' sensitivity is used in full
    assert worst(t - 1) > epsilon


# --- released values are grid points --------------------------------------------------------------

def _frame(n: int = 1000) -> pd.DataFrame:
    rng = np.random.default_rng(20)
    return pd.DataFrame({"weight": rng.normal(70, 12, n).clip(20, 200), "age": rng.integers(17, 91, n),
                         "income": rng.lognormal(10, 1, n).clip(0, 500_000)})


def test_every_released_number_is_a_grid_point_and_its_float_is_the_grids(tmp_path):
    """No low-bit leakage: each released number is (first + j) * h written as (first + j) p / q, so its float (and
    its text in release.csv) is a function of the integer j alone; declared and default steps."""
    from ppdp_desktop.core.release.package import write_release

    frame = _frame()
    dp = DPSettings(["weight", "age", "income"], 1.0, 10, {"weight": (20, 200), "age": (17, 90), "income": (0, 500_000)},
                    grids={"weight": 0.25})
    result = anonymize(Dataset(frame), AnonymizationSettings("", "dp-microagg", options=dp, seed=4))
    grids = {a.attribute: a.grid for a in result.plan.attributes}
    assert grids["weight"].step == Fraction(1, 4)  # declared
    assert grids["age"].step == 1  # whole numbers, b = 3 * 73 / 10 = 21.9: at least 1
    assert grids["income"].step == 1000  # b = 3 * 500000 / 10 = 150000: the largest power of ten <= b / 100
    for name, grid in grids.items():
        released = np.asarray(result.applied.columns[name], dtype=np.float64)
        units = np.rint(released / grid.h) - grid.first
        assert np.all(units == np.round(units)) and units.min() >= 0 and units.max() <= grid.units
        np.testing.assert_array_equal(grid.values(units.astype(np.int64)), released)  # bit for bit
        assert grid.on_grid(released).all()
        assert not grid.on_grid(np.nextafter(released[:5], np.inf)).any()  # one ulp off is not a grid point
    out = write_release(result, tmp_path / "r", include_report=False)
    table = pd.read_csv(out / "release.csv", dtype=str)
    weights = table["weight"].to_numpy()
    assert all(len(w.split(".")[1]) <= 2 for w in weights if "." in w)  # 70.25, not 70.25000000000001
    assert all(v == "0" or v.endswith("000") for v in table["income"])  # multiples of 1000 (0: the clamp)
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    entry = meta["protected"][0]
    assert entry["grid"]["step_exact"] == "1/4" and entry["discrete_laplace_t"] == discrete_t(grids["weight"].units, 3, 1.0)
    assert "discrete Laplace on a grid of step 0.25" in entry["noise"]
    assert entry["privacy_loss"] <= 1 / 3


def test_verify_refuses_a_value_off_the_grid_and_a_tampered_t(tmp_path):
    from ppdp_desktop.core.data.checksums import write_checksums
    from ppdp_desktop.core.data.released import read_release
    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.methods.dp.release import verify_dp_release
    from ppdp_desktop.core.release.package import write_release

    dp = DPSettings(["weight"], 1.0, 10, {"weight": (20, 200)})
    out = write_release(anonymize(Dataset(_frame()), AnonymizationSettings("", "dp-microagg", options=dp, seed=4)),
                        tmp_path / "r", include_report=False)
    with read_release(out) as release:
        assert any("grid of step 0.1" in line for line in verify_dp_release(release))
    table = pd.read_csv(out / "release.csv", dtype=str)
    first = table.loc[0, "weight"]
    table.loc[table["weight"] == first, "weight"] = str(float(first) + 0.01)  # the whole cluster: counts still fit
    table.to_csv(out / "release.csv", index=False)
    (out / "SHA256SUMS").unlink()
    write_checksums(out)
    with read_release(out) as release, pytest.raises(PrivacyError, match="not a point of the grid of step 0.1"):
        verify_dp_release(release)
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    meta["protected"][0]["discrete_laplace_t"] //= 2  # half the noise
    (out / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    (out / "SHA256SUMS").unlink()
    write_checksums(out)
    with read_release(out) as release, pytest.raises(PrivacyError, match="ceil"):
        verify_dp_release(release)


def test_grid_steps_and_their_errors():
    assert default_step(5.84, 73, True) == 1 and default_step(0.5, 10, False) == Fraction(1, 1000)
    assert default_step(150_000, 500_000, False) == 1000
    assert default_step(1e-6, 1e6, False) == Fraction(1, 1000)  # at most 2**32 units
    dp = DPSettings(["age"], 1.0, 10, {"age": (17, 90)}, grids={"age": 0.5})
    with pytest.raises(ParameterError, match="whole number"):
        get_method("dp-microagg").prepare(Dataset(_frame()), AnonymizationSettings("", "dp-microagg", options=dp))
    dp = DPSettings(["weight"], 1.0, 10, {"weight": (20, 200)}, grids={"weight": 500})
    with pytest.raises(ParameterError, match="fewer than two grid points"):
        get_method("dp-microagg").prepare(Dataset(_frame()), AnonymizationSettings("", "dp-microagg", options=dp))
    dp = DPSettings(["weight"], 1.0, 10, {"weight": (20, 200)}, grids={"nope": 1})
    with pytest.raises(ParameterError, match="--grid names 'nope'"):
        get_method("dp-microagg").prepare(Dataset(_frame()), AnonymizationSettings("", "dp-microagg", options=dp))
    assert Grid.for_domain(0.05, 0.95, Fraction(1, 10), False, "x") == Grid(Fraction(1, 10), 1, 8)


def test_the_cli_takes_a_grid_and_the_project_file_keeps_it():
    from ppdp_desktop.core.methods.dp.settings import parse_grids

    assert parse_grids(["weight=0.1", "age=5"]) == {"weight": 0.1, "age": 5.0}
    with pytest.raises(ParameterError, match="COL=STEP"):
        parse_grids(["weight"])
    with pytest.raises(ParameterError, match="positive"):
        parse_grids(["weight=-1"])
    dp = DPSettings(["weight"], 1.0, 10, {"weight": (20, 200)}, grids={"weight": 0.25, "gone": 1.0})
    again = DPSettings.from_json(json.loads(json.dumps(dp.to_json())))
    assert again.grids == {"weight": 0.25}


def test_a_release_with_floating_point_laplace_no_longer_verifies(tmp_path):
    """A release.json without a grid (made with the floating-point Laplace of before) fails closed, saying why."""
    from ppdp_desktop.core.data.checksums import write_checksums
    from ppdp_desktop.core.data.released import read_release
    from ppdp_desktop.core.errors import PrivacyError
    from ppdp_desktop.core.methods.dp.release import verify_dp_release
    from ppdp_desktop.core.release.package import write_release

    dp = DPSettings(["weight"], 1.0, 10, {"weight": (20, 200)})
    out = write_release(anonymize(Dataset(_frame()), AnonymizationSettings("", "dp-microagg", options=dp, seed=4)),
                        tmp_path / "r", include_report=False)
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    assert meta["parameters"]["grids"] == {"weight": 0.1}
    for key in ("grid", "discrete_laplace_t", "privacy_loss"):
        del meta["protected"][0][key]
    meta["protected"][0]["noise"] = "Laplace, one draw per cluster"
    (out / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    (out / "SHA256SUMS").unlink()
    write_checksums(out)
    with read_release(out) as release, pytest.raises(PrivacyError, match="floating-point Laplace.*Mironov"):
        verify_dp_release(release)


def test_the_grid_sums_do_not_depend_on_the_snap_blocks(monkeypatch):
    from ppdp_desktop.core.methods.dp import numeric
    from ppdp_desktop.core.methods.dp.numeric import NumericDomain, dp_microaggregate

    values = _frame(5000)["weight"].to_numpy()
    domain, grid = NumericDomain("weight", 20, 200), Grid.for_domain(20, 200, Fraction(1, 10), False, "weight")
    whole = dp_microaggregate(values, domain, 7, grid, 2000, KeyedRandomness(9))[0]
    monkeypatch.setattr(numeric, "SNAP_BLOCK", 333)
    np.testing.assert_array_equal(dp_microaggregate(values, domain, 7, grid, 2000, KeyedRandomness(9))[0], whole)


def test_ppdp_anonymize_takes_grid(tmp_path, capsys):
    from ppdp_desktop.cli import main

    path = tmp_path / "data.csv"
    _frame(300).to_csv(path, index=False)
    out = tmp_path / "r"
    code = main(["anonymize", str(path), "--out", str(out), "--method", "dp-microagg", "--attributes", "weight,age",
                 "--epsilon", "1", "--k", "10", "--domain", "weight=20:200", "--domain", "age=17:90",
                 "--grid", "weight=0.5", "--seed", "1", "--no-report"])
    assert code == 0, capsys.readouterr().err
    meta = json.loads((out / "release.json").read_text(encoding="utf-8"))
    assert meta["parameters"]["grids"] == {"weight": 0.5, "age": 1}
    table = pd.read_csv(out / "release.csv")
    assert ((table["weight"] * 2) % 1 == 0).all() and (table["age"] % 1 == 0).all()
    assert main(["verify", str(out)]) == 0

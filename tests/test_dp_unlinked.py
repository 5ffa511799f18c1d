"""dp-microagg's unlinked layout (issue 28, point 2): every released column protected, each shuffled on its own with
keyed randomness, no pseudonyms; what it refuses; the figure a linked release states; and what ``ppdp verify``
refuses in the guarantee's words. On the demo patients (several numeric columns) and small tables."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_desktop.core.anonymize import anonymize
from ppdp_desktop.core.data.dataset import Dataset
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.methods import get_method
from ppdp_desktop.core.methods.dp.claim import FULL_KIND, singled_out_count
from ppdp_desktop.core.methods.dp.settings import DPSettings
from ppdp_desktop.core.release.package import write_checksums, write_release
from ppdp_desktop.core.settings import AnonymizationSettings, ProtectionSettings

DOMAINS = {"age": (0, 120), "length_of_stay": (0, 365), "income": (0, 500_000)}


def _settings(layout: str, unprotected: str = "drop", identifiers=("patient_id", "name"), k: int = 50, **kwargs):
    dp = DPSettings(list(DOMAINS), 1.0, k, dict(DOMAINS), layout=layout, unprotected=unprotected)
    return AnonymizationSettings("", "dp-microagg", list(identifiers), [], options=dp, seed=4, **kwargs)


def _demo(demo_data, n: int = 4000) -> Dataset:
    from dataclasses import replace

    return replace(demo_data, frame=demo_data.frame.head(n).reset_index(drop=True))


def test_unlinked_columns_are_the_linked_multisets_each_shuffled_on_its_own(demo_data):
    data = _demo(demo_data)
    linked = anonymize(data, _settings("linked", k=200))  # k = 200: little noise, so the pairing shows
    unlinked = anonymize(data, _settings("unlinked", k=200))
    assert list(unlinked.table.columns) == list(DOMAINS)  # the other columns left out, no pseudonym column
    assert not unlinked.has_pseudonyms and linked.has_pseudonyms
    for column in DOMAINS:  # the same keyed noise per cluster: the same values, in other rows
        assert np.array_equal(np.sort(linked.table[column].to_numpy()), np.sort(unlinked.table[column].to_numpy()))
    # the linked release keeps each record's clusters together: its columns move together as the data's do
    original = data.frame[list(DOMAINS)].corr(method="spearman").loc["age", "income"]
    kept = linked.table[list(DOMAINS)].astype(float).corr(method="spearman").loc["age", "income"]
    shuffled = unlinked.table[list(DOMAINS)].astype(float).corr(method="spearman").loc["age", "income"]
    assert abs(original) > 0.1 and abs(kept - original) < 0.1 and abs(shuffled) < 4 / np.sqrt(len(data.frame))
    g = unlinked.guarantee
    assert g["kind"] == FULL_KIND and g["row_level"] and g["singled_out"]["records"] == 0
    assert linked.guarantee["row_level"] is False


def test_the_shuffle_is_keyed_the_same_for_a_seed_and_differs_per_column(demo_data):
    data = _demo(demo_data, 1000)
    a, b = anonymize(data, _settings("unlinked")), anonymize(data, _settings("unlinked"))
    pd.testing.assert_frame_equal(a.table, b.table)
    order = {c: np.argsort(np.asarray(a.applied.columns[c]), kind="stable") for c in DOMAINS}
    assert not np.array_equal(order["age"], order["income"])


def test_an_unlinked_release_refuses_what_would_link_its_rows(demo_data):
    data = _demo(demo_data, 500)
    with pytest.raises(ParameterError, match=r"'sex'.*neither protected nor an identifier.*--unprotected drop"):
        anonymize(data, _settings("unlinked", "refuse"))
    with pytest.raises(ParameterError, match="k-anonymity"):
        anonymize(data, _settings("unlinked", protection=ProtectionSettings(k=5)))
    with pytest.raises(ParameterError, match="--layout must be one of linked, unlinked"):
        anonymize(data, _settings("sideways"))


def test_the_layout_goes_through_the_project_file():
    settings = DPSettings(["age"], 1.0, 10, layout="unlinked", unprotected="drop")
    again = DPSettings.from_json(json.loads(json.dumps(settings.to_json())))
    assert (again.layout, again.unprotected) == ("unlinked", "drop")
    assert (DPSettings.from_json({"attributes": ["age"]}).layout, DPSettings().unprotected) == ("linked", "refuse")


def test_singled_out_count_is_exact_whole_and_in_batches():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"a": rng.integers(0, 6, 5000), "b": rng.choice(["x", "y", None], 5000)})
    expected = int((frame.groupby(["a", "b"], dropna=False)["a"].transform("size") == 1).sum())
    assert singled_out_count([frame]) == expected
    assert singled_out_count([frame.iloc[i:i + 700] for i in range(0, 5000, 700)]) == expected
    assert singled_out_count([]) == 0


def test_a_streamed_unlinked_release_is_the_in_memory_one(demo_data, tmp_path):
    from ppdp_desktop.core.data.loading import load_table
    from ppdp_desktop.core.data.streamed import open_streamed
    from ppdp_desktop.core.streaming.release import write_streamed_release

    path = tmp_path / "demo.csv"
    demo_data.frame.head(700).to_csv(path, index=False)
    for layout in ("unlinked", "linked"):
        settings = _settings(layout)
        memory = write_release(anonymize(load_table(path), settings), tmp_path / f"memory-{layout}", include_report=False)
        streamed = write_streamed_release(open_streamed(path), settings, tmp_path / f"streamed-{layout}", chunk_size=97,
                                          include_report=False).folder
        assert (memory / "release.csv").read_bytes() == (streamed / "release.csv").read_bytes()
        one, two = (json.loads((f / "release.json").read_text(encoding="utf-8"))["guarantee"] for f in (memory, streamed))
        assert one["kind"] == two["kind"] and one["singled_out"] == two["singled_out"]  # read back from the file


def _verify(folder):
    from ppdp_desktop.core.data.released import read_release
    from ppdp_desktop.core.release.analysis import verify_release

    with read_release(folder) as release:
        return verify_release(release)


def _forge(folder, meta=None, table=None):
    if meta is not None:
        (folder / "release.json").write_text(json.dumps(meta), encoding="utf-8")
    if table is not None:
        table.to_csv(folder / "release.csv", index=False)
    (folder / "SHA256SUMS").unlink()
    write_checksums(folder)


def test_verify_holds_the_guarantee_to_its_words(demo_data, tmp_path):
    from ppdp_desktop.core.errors import PrivacyError

    data = _demo(demo_data, 800)
    unlinked = write_release(anonymize(data, _settings("unlinked")), tmp_path / "u", include_report=False)
    linked = write_release(anonymize(data, _settings("linked")), tmp_path / "l", include_report=False)
    assert any(line.startswith("rows: every released column is protected") for line in _verify(unlinked))
    meta = json.loads((linked / "release.json").read_text(encoding="utf-8"))
    stated = meta["guarantee"]["singled_out"]["records"]
    assert any(f"{stated:,} of 800 records" in line and "recounted" in line for line in _verify(linked))

    table = pd.read_csv(unlinked / "release.csv", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    _forge(unlinked, table=table.assign(sex=data.frame["sex"].to_numpy()))  # a column the release says is not there
    with pytest.raises(PrivacyError):
        _verify(unlinked)

    forged = json.loads(json.dumps(meta))
    forged["guarantee"]["singled_out"]["records"] = stated - 10  # understates what the rows give away
    forged["guarantee"]["kind"] = forged["guarantee"]["kind"].replace(f"{stated:,} of", f"{stated - 10:,} of")
    _forge(linked, meta=forged)
    with pytest.raises(PrivacyError, match="can be singled out"):
        _verify(linked)
    forged = json.loads(json.dumps(meta))
    forged["guarantee"].update(kind=FULL_KIND, row_level=True)  # a linked release calling itself epsilon-DP
    _forge(linked, meta=forged)
    with pytest.raises(PrivacyError, match="not epsilon-differentially private as a whole"):
        _verify(linked)
    old = json.loads(json.dumps(meta))  # a release made before the layout existed: verified, with a note
    del old["parameters"]["layout"], old["guarantee"]["layout"]
    _forge(linked, meta=old)
    assert any(line.startswith("note: this release was made before") for line in _verify(linked))


def test_an_unlinked_release_refuses_criteria_without_k_naming_them(demo_data):
    data = _demo(demo_data, 500)
    settings = _settings("unlinked", protection=ProtectionSettings(l_diversity=3, highest_risk=0.2))
    with pytest.raises(ParameterError) as refused:
        anonymize(data, settings)
    said = refused.value.phrase()
    assert ("An unlinked release (--layout unlinked) publishes no quasi-identifier, so criteria on groups of them "
            "(--l-diversity, --highest-risk) do not apply") in said
    assert "k-anonymity" not in said  # no k was asked: the message names what was
    assert get_method("dp-microagg").precheck(settings) == [refused.value.args[0]]
    with pytest.raises(ParameterError, match="k-anonymity.*--t-closeness"):
        anonymize(data, _settings("unlinked", protection=ProtectionSettings(k=5, t_closeness=0.3)))

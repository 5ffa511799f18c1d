"""How often the encoding guess (``core/data/encoding_guess.py``) asks, is right, or is wrong, on real text.

``python benchmarks/bench_encoding_guess.py`` prints JSON. Inputs:

* the shared adult CSV (``../shared/data/adult/adult.csv``, plain ASCII), written in Windows-1252, Latin-1 and
  Windows-1250: the same bytes, which are valid UTF-8, so the guess must never be asked (never ask);
* the adult CSV with a column ``region`` added: each record gets a real subdivision name of one country, in its
  own spelling ("Plzeňský kraj", "Łódzkie", "Győr-Moson-Sopron", "Ardèche", "Møre og Romsdal"), from the ISO 3166-2
  list of the iso-codes package (``/usr/share/iso-codes/json/iso_3166-2.json``), drawn with a fixed seed; the
  first 50, 1,000 and all 30,162 records; Western countries written in Windows-1252 and Latin-1, Central European
  ones in Windows-1250 and Latin-2.

Each file goes through the loader's own decision (``sniffing.decode`` with the file's path, as ``load_table``
does). Outcomes: ``right`` (the letters read are the letters written), ``asked`` (``EncodingUnclear``), ``wrong``
(other letters, silently). ``false_alarm_rate`` is ``asked`` over the Western files; ``ms`` the time of one
decision (best of 3, cache cleared).
"""
from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path

from ppdp_desktop.core.data import encoding_guess, sniffing
from ppdp_desktop.core.data.encoding_guess import EncodingUnclear

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT.parent / "shared" / "data" / "adult" / "adult.csv"
ISO = Path("/usr/share/iso-codes/json/iso_3166-2.json")
WESTERN = ("FR", "DE", "ES", "PT", "IT", "SE", "DK", "NO", "FI", "IS", "AT", "BE", "CH", "NL", "LU", "IE")
CENTRAL = ("CZ", "PL", "HU", "SK", "SI", "HR")
SIZES = (50, 1000, None)


def decide(path: Path) -> tuple[str | None, list[str], float]:
    data = path.read_bytes()
    times = []
    for _ in range(3):
        encoding_guess._cached.cache_clear()
        start = time.perf_counter()
        try:
            _text, codec = sniffing.decode(data, None, path.name, path)
            asked: list[str] = []
        except EncodingUnclear as exc:
            codec, asked = None, [c.codec for c in exc.candidates]
        times.append(time.perf_counter() - start)
    return codec, asked, min(times) * 1000


def region_table(lines: list[str], names: list[str], rows: int | None, seed: int = 0) -> str:
    rng = random.Random(seed)
    body = lines[1 : (rows or len(lines)) + 1]
    return "\r\n".join([lines[0] + ";region"] + [f"{line};{rng.choice(names)}" for line in body]) + "\r\n"


def main() -> None:
    if not ADULT.is_file():
        sys.exit(f"{ADULT} not found (see ../shared/data/README.md)")
    lines = ADULT.read_text(encoding="utf-8").splitlines()
    out: dict[str, object] = {"ascii": {}, "files": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for encoding in ("cp1252", "latin-1", "cp1250"):
            path = folder / f"adult-{encoding}.csv"
            path.write_bytes(ADULT.read_text(encoding="utf-8").encode(encoding))
            codec, asked, ms = decide(path)
            out["ascii"][encoding] = {"codec": codec, "asked": bool(asked), "ms": round(ms, 1)}
        if ISO.is_file():
            subdivisions = json.loads(ISO.read_text(encoding="utf-8"))["3166-2"]
            for group, countries, encodings in (("western", WESTERN, ("cp1252", "latin-1")),
                                                ("central", CENTRAL, ("cp1250", "iso8859-2"))):
                for country in countries:
                    names = [s["name"] for s in subdivisions if s["code"].startswith(country + "-")]
                    for rows in SIZES:
                        text = region_table(lines, names, rows)
                        if text.isascii():
                            continue
                        for encoding in encodings:
                            try:
                                data = text.encode(encoding)
                            except UnicodeEncodeError:
                                continue
                            path = folder / f"{country}-{rows}-{encoding}.csv"
                            path.write_bytes(data)
                            codec, asked, ms = decide(path)
                            right = codec is not None and data.decode(codec) == text
                            outcome = "asked" if codec is None else "right" if right else "wrong"
                            out["files"].append({"group": group, "country": country, "rows": rows or len(lines) - 1,
                                                 "written_in": encoding, "outcome": outcome, "read_as": codec,
                                                 "candidates": asked, "ms": round(ms, 1)})
    files = out["files"]
    for group in ("western", "central"):
        mine = [f for f in files if f["group"] == group]
        counts = {k: sum(f["outcome"] == k for f in mine) for k in ("right", "asked", "wrong")}
        out[group] = {"files": len(mine), **counts,
                      "asked_rate": round(counts["asked"] / max(1, len(mine)), 3),
                      "max_ms": max((f["ms"] for f in mine), default=0)}
    out["false_alarm_rate"] = out["western"]["asked_rate"]
    out["ascii_never_asks"] = not any(v["asked"] for v in out["ascii"].values())
    out["never_wrong_silently"] = all(f["outcome"] != "wrong" for f in files)
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

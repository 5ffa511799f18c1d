"""A German clinical export as a clinician's spreadsheet has it (issue 31): a title row above the header, umlauts,
dates, postcodes with leading zeros, ICD-10 codes and blanks. Synthetic (no real patient), reproducible by seed.

Used by the window's tests and benchmarks (``write_clinical_xlsx``), never shipped.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

TITLE = "Klinikum Musterstadt – Stationäre Fälle 2025 (Export für Forschung)"
ICD10 = ["I21.0", "I50.1", "E11.9", "J44.1", "C34.1", "K35.8", "S72.0", "F32.1", "N39.0", "I63.5", "A41.9", "M16.1"]
WARDS = ["Kardiologie", "Innere Medizin", "Unfallchirurgie", "Gynäkologie", "Geriatrie", "Neurologie"]
#: the column with blanks that dp-microagg and others refuse (86 of them, as in the issue)
BLANK_COLUMN, BLANKS = "Station", 86


def clinical_frame(n: int = 5000, seed: int = 0) -> pd.DataFrame:
    """``n`` synthetic in-patient cases with the columns a German hospital export has."""
    rng = np.random.default_rng(seed)
    birth = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 365 * 75, n), unit="D")
    admission = pd.Timestamp("2025-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D")
    frame = pd.DataFrame({
        "Patienten-Nr.": [f"P{100000 + i}" for i in range(n)],
        "Geschlecht": rng.choice(["weiblich", "männlich", "divers"], n, p=[0.51, 0.485, 0.005]),
        "Geburtsdatum": birth.date,
        "PLZ": [f"{z:05d}" for z in rng.choice([1067, 1069, 4109, 6108, 8056, 9111, 10115, 20095, 80331, 99084], n)],
        "Aufnahmedatum": admission.date,
        "Hauptdiagnose (ICD-10)": rng.choice(ICD10, n, p=np.linspace(2, 0.5, len(ICD10)) / np.linspace(2, 0.5, len(ICD10)).sum()),
        "Station": rng.choice(WARDS, n).astype(object),
        "Größe (cm)": np.round(rng.normal(171, 9, n)).astype(int),
        "Gewicht (kg)": np.round(rng.normal(78, 14, n), 1),
        "Verweildauer (Tage)": rng.integers(1, 40, n),
    })
    frame.loc[rng.choice(n, BLANKS, replace=False), BLANK_COLUMN] = None
    return frame


def write_clinical_xlsx(path: Path, n: int = 5000, seed: int = 0) -> Path:
    """The export as .xlsx: the title in row 1, the header in row 2, the cases below (openpyxl)."""
    frame = clinical_frame(n, seed)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        frame.to_excel(writer, sheet_name="Fälle", index=False, startrow=1)
        writer.sheets["Fälle"].cell(row=1, column=1, value=TITLE)
    return path

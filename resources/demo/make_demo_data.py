"""Generate the synthetic demo data shipped with PPDP Desktop.

Every record is invented: no row describes a real person. Run

    python resources/demo/make_demo_data.py

to rewrite, next to this script,

* ``patients.csv``             20,000 synthetic hospital admissions;
* ``diagnosis_taxonomy.json``  the diagnosis hierarchy as a tree (root -> chapter -> diagnosis);
* ``diagnosis_hierarchy.csv``  the same hierarchy in ARX format (``value;chapter;*``, no header);
* ``README.md``                a description of the files.

The output is deterministic: a fixed seed, only ``Generator.random`` and
``Generator.standard_normal`` draws (whose streams numpy keeps stable), and ``\\n`` line
endings, so running the script twice gives byte-identical files.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

SEED = 20240611
N_PATIENTS = 20_000
ZIPF_EXPONENT = 1.1
ROOT_LABEL = "Any diagnosis"

# --------------------------------------------------------------------------------------------
# Diagnoses, most to least frequent overall (the target marginal is Zipf-like over this rank).
# The rare ones are mostly the stigmatized ones, so "less frequent is more sensitive" holds.
#   age_slope : log-relative risk per 25 years of age (positive: more common in the old)
#   min_age   : no admissions for this diagnosis below this age
#   sex_ratio : relative risk for men versus women (None: men only, see _MEN_ONLY)
#   los       : median length of stay in days
# --------------------------------------------------------------------------------------------
#            name                       chapter                  age_slope min_age sex_ratio los
DIAGNOSES: list[tuple[str, str, float, int, float, float]] = [
    ("Hypertension",            "Cardiovascular",         1.2, 15, 1.1, 2),
    ("Type 2 diabetes",         "Endocrine & metabolic",  1.2, 12, 1.2, 3),
    ("Osteoarthritis",          "Musculoskeletal",        1.5, 30, 0.7, 4),
    ("Asthma",                  "Respiratory",           -0.8,  2, 0.9, 2),
    ("COPD",                    "Respiratory",            1.4, 35, 1.2, 5),
    ("Urinary tract infection", "Infectious",             0.6,  0, 0.3, 3),
    ("Pneumonia",               "Respiratory",            0.8,  0, 1.1, 6),
    ("Atrial fibrillation",     "Cardiovascular",         1.8, 20, 1.3, 3),
    ("Gastroenteritis",         "Digestive & renal",     -0.6,  0, 1.0, 2),
    ("Heart failure",           "Cardiovascular",         1.8, 20, 1.2, 7),
    ("Migraine",                "Neurological",          -0.8,  8, 0.35, 1),
    ("Cellulitis",              "Infectious",             0.4,  0, 1.1, 4),
    ("Chronic kidney disease",  "Digestive & renal",      1.4,  5, 1.2, 5),
    ("Influenza",               "Respiratory",            0.0,  0, 1.0, 3),
    ("Hip fracture",            "Musculoskeletal",        2.4,  5, 0.5, 12),
    ("Appendicitis",            "Digestive & renal",     -1.2,  3, 1.2, 3),
    ("Myocardial infarction",   "Cardiovascular",         1.3, 25, 1.8, 5),
    ("Stroke",                  "Cardiovascular",         1.7, 18, 1.1, 10),
    ("Dementia",                "Neurological",           3.0, 45, 0.7, 14),
    ("Breast cancer",           "Cancer",                 0.6, 20, 0.01, 4),
    ("Prostate cancer",         "Cancer",                 1.8, 40, 1.0, 4),
    ("Colorectal cancer",       "Cancer",                 1.2, 20, 1.3, 8),
    ("Lung cancer",             "Cancer",                 1.3, 25, 1.2, 7),
    ("Hypothyroidism",          "Endocrine & metabolic",  0.5,  0, 0.2, 2),
    ("Rheumatoid arthritis",    "Musculoskeletal",        0.6, 16, 0.35, 4),
    ("Epilepsy",                "Neurological",          -0.3,  1, 1.2, 3),
    ("Depression",              "Mental health",         -0.4, 10, 0.6, 14),
    ("Sepsis",                  "Infectious",             1.0,  0, 1.1, 9),
    ("Parkinson disease",       "Neurological",           2.2, 35, 1.5, 9),
    ("Multiple sclerosis",      "Neurological",          -0.5, 15, 0.35, 6),
    ("Lupus",                   "Musculoskeletal",       -0.5, 10, 0.1, 5),
    ("Cirrhosis",               "Digestive & renal",      0.4, 20, 1.8, 8),
    ("Leukaemia",               "Cancer",                 0.2,  0, 1.4, 15),
    ("Alcohol dependence",      "Substance use",         -0.1, 14, 2.0, 7),
    ("Bipolar disorder",        "Mental health",         -0.6, 12, 0.9, 18),
    ("Hepatitis C",             "Infectious",            -0.3, 14, 1.8, 4),
    ("Tuberculosis",            "Infectious",            -0.2,  5, 1.8, 10),
    ("Schizophrenia",           "Mental health",         -0.8, 14, 1.5, 25),
    ("Opioid dependence",       "Substance use",         -1.0, 14, 2.2, 8),
    ("Anorexia nervosa",        "Mental health",         -2.0, 10, 0.1, 30),
    ("HIV infection",           "Infectious",            -0.8, 15, 2.5, 6),
]
_MEN_ONLY = {"Prostate cancer"}

# Chapters in the order they appear in the taxonomy.
CHAPTERS = [
    "Cardiovascular",
    "Respiratory",
    "Cancer",
    "Infectious",
    "Mental health",
    "Substance use",
    "Neurological",
    "Musculoskeletal",
    "Digestive & renal",
    "Endocrine & metabolic",
]

# Synthetic London-style outward codes (always contain letters, so pandas keeps them strings):
# (code, relative frequency, log-income effect).
POSTCODES: list[tuple[str, float, float]] = [
    ("E14", 9.0, 0.15), ("N1", 8.0, 0.20), ("SE15", 7.5, -0.15), ("E17", 7.0, -0.05),
    ("SW11", 6.5, 0.25), ("N16", 6.0, -0.05), ("E8", 5.5, -0.10), ("SE1", 5.0, 0.10),
    ("NW10", 4.8, -0.20), ("W2", 4.5, 0.30), ("CR0", 4.2, -0.20), ("IG1", 4.0, -0.25),
    ("SE22", 3.8, 0.10), ("SW2", 3.5, -0.05), ("E2", 3.2, 0.00), ("N7", 3.0, -0.05),
    ("W6", 2.8, 0.20), ("HA0", 2.6, -0.15), ("NW3", 2.4, 0.55), ("SE10", 2.2, 0.10),
    ("W11", 2.0, 0.45), ("SW19", 1.8, 0.35), ("BR1", 1.6, 0.05), ("N4", 1.4, -0.10),
    ("NW6", 1.2, 0.15), ("EC1", 1.0, 0.40), ("SW7", 0.9, 0.70), ("WC1", 0.7, 0.30),
    ("W14", 0.6, 0.15), ("E1", 0.5, -0.20),
]

FIRST_NAMES_F = [
    "Emma", "Olivia", "Sophie", "Charlotte", "Amelia", "Grace", "Chloe", "Hannah", "Lucy",
    "Emily", "Maria", "Anna", "Laura", "Sara", "Elena", "Sofia", "Isabella", "Lucia", "Ines",
    "Camille", "Claire", "Julia", "Lena", "Katarina", "Ingrid", "Freya", "Aisha", "Fatima",
    "Mariam", "Leila", "Yasmin", "Zainab", "Amina", "Priya", "Ananya", "Deepa", "Kavya", "Mei",
    "Yuki", "Hana", "Jia", "Sakura", "Jiwoo", "Ngozi", "Chiamaka", "Adaeze", "Amara",
    "Wanjiru", "Thandiwe", "Zanele", "Noor", "Elif", "Zeynep", "Carmen", "Rosa", "Gabriela",
    "Valentina", "Ewa", "Agnieszka", "Irina",
]
FIRST_NAMES_M = [
    "James", "Oliver", "Jack", "Harry", "George", "Thomas", "William", "Daniel", "Samuel",
    "Joseph", "David", "Michael", "Luca", "Marco", "Matteo", "Alessandro", "Pierre", "Louis",
    "Hugo", "Lukas", "Felix", "Jonas", "Erik", "Lars", "Mohammed", "Ahmed", "Omar", "Ali",
    "Yusuf", "Hassan", "Ibrahim", "Karim", "Arjun", "Rahul", "Vikram", "Sanjay", "Rohan",
    "Wei", "Hao", "Jun", "Hiroshi", "Kenji", "Minho", "Chinedu", "Emeka", "Oluwaseun",
    "Kwame", "Kofi", "Tendai", "Sipho", "Mehmet", "Emre", "Carlos", "Javier", "Diego",
    "Mateo", "Pedro", "Piotr", "Tomasz", "Dmitri",
]
LAST_NAMES = [
    "Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Johnson", "Davies", "Evans",
    "Roberts", "Walker", "Wright", "Robinson", "Thompson", "White", "Hughes", "Edwards",
    "Green", "Hall", "Wood", "Clarke", "Murphy", "O'Brien", "Kelly", "Byrne", "Campbell",
    "MacDonald", "Stewart", "Patel", "Shah", "Singh", "Kaur", "Sharma", "Gupta", "Khan",
    "Hussain", "Rahman", "Chowdhury", "Begum", "Nguyen", "Tran", "Chen", "Wang", "Li",
    "Zhang", "Liu", "Kim", "Park", "Tanaka", "Sato", "Suzuki", "Okafor", "Adeyemi", "Mensah",
    "Osei", "Mwangi", "Dlamini", "Garcia", "Rodriguez", "Martinez", "Lopez", "Fernandez",
    "Silva", "Santos", "Costa", "Rossi", "Bianchi", "Muller", "Schmidt", "Fischer", "Dubois",
    "Bernard", "Nowak", "Kowalski", "Petrov", "Jansen", "Andersen", "Johansson", "Yilmaz",
    "Cohen",
]

ADMISSION_YEARS = np.arange(2015, 2025)
# Slow growth, with the 2020 dip in elective admissions.
YEAR_WEIGHTS = np.array([0.90, 0.93, 0.96, 0.99, 1.00, 0.80, 0.90, 1.02, 1.05, 1.08])

# Age distribution of an adult-heavy general hospital: a neonatal peak, few children,
# rising through adulthood to a peak in the late seventies.
_AGE_KNOTS = np.array([0, 1, 5, 17, 18, 30, 45, 60, 75, 82, 90, 99], dtype=float)
_AGE_WEIGHTS = np.array([1.6, 0.5, 0.35, 0.4, 0.7, 0.9, 1.1, 1.8, 2.5, 2.4, 1.2, 0.1])

COLUMNS = [
    "patient_id", "name", "age", "sex", "postcode", "admission_year", "diagnosis",
    "length_of_stay", "income",
]


# --------------------------------------------------------------------------------------------
# Sampling helpers (only Generator.random / standard_normal are used, for stable streams)
# --------------------------------------------------------------------------------------------
def _categorical(rng: np.random.Generator, weights: np.ndarray, size: int) -> np.ndarray:
    """Indices drawn with probability proportional to ``weights`` (inverse CDF)."""
    cdf = np.cumsum(np.asarray(weights, dtype=float))
    u = (1.0 - rng.random(size)) * cdf[-1]  # in (0, total]
    return np.minimum(np.searchsorted(cdf, u, side="left"), len(cdf) - 1)


def _categorical_rows(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One index per row of ``weights`` (n x k), each row its own distribution."""
    cdf = np.cumsum(weights, axis=1)
    u = (1.0 - rng.random(weights.shape[0]))[:, None] * cdf[:, -1:]  # in (0, row total]
    return np.minimum((cdf < u).sum(axis=1), weights.shape[1] - 1)


def _diagnosis_risks(age: np.ndarray, is_male: np.ndarray) -> np.ndarray:
    """Relative risk (n x D) of each diagnosis for each patient, from age and sex."""
    risks = np.empty((age.size, len(DIAGNOSES)))
    for j, (name, _chapter, slope, min_age, sex_ratio, _los) in enumerate(DIAGNOSES):
        r = np.exp(slope * (age - 50.0) / 25.0)
        r[age < min_age] = 0.0
        if name in _MEN_ONLY:
            r[~is_male] = 0.0
        else:
            r[is_male] *= sex_ratio
        risks[:, j] = r
    return risks


def _calibrated_probabilities(risks: np.ndarray) -> np.ndarray:
    """Per-patient diagnosis probabilities whose average matches the Zipf target by rank."""
    ranks = np.arange(1, len(DIAGNOSES) + 1, dtype=float)
    target = ranks**-ZIPF_EXPONENT
    target /= target.sum()
    base = target.copy()
    for _ in range(200):  # iterative proportional fitting of the per-diagnosis base weight
        p = risks * base
        p /= p.sum(axis=1, keepdims=True)
        base *= target / p.mean(axis=0)
        base /= base.sum()
    p = risks * base
    return p / p.sum(axis=1, keepdims=True)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------
def make_patients(rng: np.random.Generator, n: int = N_PATIENTS) -> pd.DataFrame:
    """The synthetic patient table (see the module docstring)."""
    # Age and sex.
    ages = np.arange(100)
    age = _categorical(rng, np.interp(ages, _AGE_KNOTS, _AGE_WEIGHTS), n).astype(np.int64)
    p_female = np.interp(age, [0, 17, 18, 40, 75, 99], [0.49, 0.49, 0.55, 0.56, 0.55, 0.68])
    is_male = rng.random(n) >= p_female
    sex = np.where(is_male, "M", "F")

    # Names: first name by sex, last name uniform.
    f_first = np.array(FIRST_NAMES_F, dtype=object)
    m_first = np.array(FIRST_NAMES_M, dtype=object)
    first = np.where(
        is_male,
        m_first[_categorical(rng, np.ones(len(m_first)), n)],
        f_first[_categorical(rng, np.ones(len(f_first)), n)],
    )
    last = np.array(LAST_NAMES, dtype=object)[_categorical(rng, np.ones(len(LAST_NAMES)), n)]
    name = first + " " + last

    # Postcode (uneven), admission year.
    pc_codes = np.array([c for c, _, _ in POSTCODES], dtype=object)
    pc_weights = np.array([w for _, w, _ in POSTCODES])
    pc_effect = np.array([e for _, _, e in POSTCODES])
    pc_idx = _categorical(rng, pc_weights, n)
    year = ADMISSION_YEARS[_categorical(rng, YEAR_WEIGHTS, n)]

    # Diagnosis: Zipf-like overall, depending on age and sex.
    probs = _calibrated_probabilities(_diagnosis_risks(age.astype(float), is_male))
    dx_idx = _categorical_rows(rng, probs)
    dx_names = np.array([d[0] for d in DIAGNOSES], dtype=object)

    # Length of stay: log-normal around the diagnosis median, longer for the old.
    median_los = np.array([d[5] for d in DIAGNOSES], dtype=float)[dx_idx]
    age_los = 1.0 + np.maximum(age - 65, 0) / 40.0
    los = np.ceil(median_los * age_los * np.exp(0.7 * rng.standard_normal(n)) - 0.5)
    los = np.clip(los, 1, 365).astype(np.int64)

    # Annual (household) income: log-normal, by age and postcode, rounded to 100.
    age_effect = np.interp(
        age, [0, 18, 25, 35, 50, 65, 75, 99], [0.1, 0.1, -0.25, 0.05, 0.2, 0.0, -0.2, -0.3]
    )
    log_income = np.log(32_000) + age_effect + pc_effect[pc_idx] + 0.55 * rng.standard_normal(n)
    income = np.clip(np.round(np.exp(log_income) / 100.0) * 100.0, 2_000, 1_000_000)

    return pd.DataFrame(
        {
            "patient_id": [f"P{i:06d}" for i in range(1, n + 1)],
            "name": name,
            "age": age,
            "sex": sex,
            "postcode": pc_codes[pc_idx],
            "admission_year": year.astype(np.int64),
            "diagnosis": dx_names[dx_idx],
            "length_of_stay": los,
            "income": income.astype(np.int64),
        },
        columns=COLUMNS,
    )


# --------------------------------------------------------------------------------------------
# The hierarchy
# --------------------------------------------------------------------------------------------
def taxonomy(values: set[str]) -> dict:
    """Root -> chapter -> diagnosis tree over the diagnosis values that occur."""
    chapters = []
    for chapter in CHAPTERS:
        leaves = [{"label": d[0]} for d in DIAGNOSES if d[1] == chapter and d[0] in values]
        if leaves:
            chapters.append({"label": chapter, "children": leaves})
    return {"attribute": "diagnosis", "root": {"label": ROOT_LABEL, "children": chapters}}


def arx_hierarchy(tree: dict) -> str:
    """The tree as an ARX hierarchy: ``value;chapter;*`` per leaf, no header."""
    lines = [
        f"{leaf['label']};{chapter['label']};*"
        for chapter in tree["root"]["children"]
        for leaf in chapter["children"]
    ]
    return "\n".join(lines) + "\n"


def readme(frame: pd.DataFrame) -> str:
    counts = frame["diagnosis"].value_counts()
    return f"""# Demo data

Synthetic data shipped with PPDP Desktop for the demo, the tutorial and the tests.
**All records are invented**: they were drawn from random distributions by
`make_demo_data.py` and describe no real person. Names are random pairings of common
first and last names; postcodes are London-style outward codes only.

| File | What it is |
|------|------------|
| `patients.csv` | {len(frame):,} synthetic hospital admissions (UTF-8, comma-separated, header row) |
| `diagnosis_taxonomy.json` | the diagnosis hierarchy as a tree: root -> chapter -> diagnosis |
| `diagnosis_hierarchy.csv` | the same hierarchy in ARX format: `value;chapter;*`, no header |
| `make_demo_data.py` | the script that writes all of the above (and this README) |

## `patients.csv` columns

| Column | Meaning |
|--------|---------|
| `patient_id` | record number, `P000001` ... (direct identifier) |
| `name` | first and last name (direct identifier) |
| `age` | age in years, 0-99, adult-heavy |
| `sex` | `F` or `M` |
| `postcode` | one of {frame["postcode"].nunique()} outward codes, uneven frequencies |
| `admission_year` | {frame["admission_year"].min()}-{frame["admission_year"].max()} |
| `diagnosis` | one of {counts.size} diagnoses, Zipf-like frequencies ({counts.iloc[0]:,} to {counts.iloc[-1]:,} records); the rare ones are mostly the stigmatized ones (HIV, substance dependence, severe mental illness) |
| `length_of_stay` | days in hospital, at least 1, right-skewed, depending on the diagnosis and age |
| `income` | annual household income, log-normal, rounded to 100 |

Diagnoses depend on age and sex (prostate cancer occurs only in men, breast cancer
almost only in women, dementia only from age 45), so count queries by age and sex are
meaningful.

## Regenerating

    python resources/demo/make_demo_data.py

The script uses a fixed seed ({SEED}) and is deterministic: running it again gives
byte-identical files (`tests/test_demo_data.py` checks this).
"""


def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))


def main(out_dir: Path) -> None:
    """Write the demo files into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    frame = make_patients(rng)
    tree = taxonomy(set(frame["diagnosis"]))

    _write(out_dir / "patients.csv", frame.to_csv(index=False, lineterminator="\n"))
    _write(out_dir / "diagnosis_taxonomy.json", json.dumps(tree, indent=2) + "\n")
    _write(out_dir / "diagnosis_hierarchy.csv", arx_hierarchy(tree))
    _write(out_dir / "README.md", readme(frame))


if __name__ == "__main__":
    main(Path(__file__).parent)

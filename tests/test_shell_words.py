"""Command lines the app prints are quoted for a shell (issue 31, point 11): README.txt's ``ppdp estimate ...
--sensitive Hauptdiagnose (ICD-10)`` was a syntax error in a POSIX shell. One quoting for POSIX shells, cmd and
PowerShell: double quotes, which the three read alike for a name holding none of their special characters."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.errors import ParameterError, setting_ref
from ppdp_desktop.core.shell_words import shell_option, shell_word
from tests.clinical_data import write_clinical_xlsx

SENSITIVE = "Hauptdiagnose (ICD-10)"


def test_readme_example_parses_into_the_intended_arguments_and_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", "correct horse battery staple 42")
    data = write_clinical_xlsx(tmp_path / "klinik.xlsx", n=300)
    release = tmp_path / "rel"
    assert main(["anonymize", str(data), "--out", str(release), "--sensitive", SENSITIVE, "--identifier",
                 "Patienten-Nr.", "--method", "uniform", "--theta", "3", "--no-report"]) == 0
    readme = (release / "README.txt").read_text(encoding="utf-8")
    example = next(line for line in readme.splitlines() if "ppdp estimate" in line).split("With PPDP Desktop:")[1]
    assert example.strip() == 'ppdp estimate THIS_FOLDER --sensitive "Hauptdiagnose (ICD-10)" --where "col=value"'
    words = shlex.split(example)
    assert words == ["ppdp", "estimate", "THIS_FOLDER", "--sensitive", SENSITIVE, "--where", "col=value"]
    capsys.readouterr()
    code = main([str(release) if w == "THIS_FOLDER" else w for w in words[1:5]] + ["--json"])  # as a recipient runs it
    assert code == 0
    assert sum(row["observed"] for row in json.loads(capsys.readouterr().out)) == 300


def windows_split(line: str) -> list[str]:
    """How a Windows program splits its command line (the C runtime's rules, as cmd passes it on), for a line
    without backslashes or quotes inside quotes: a double quote opens or closes quoting, blanks outside quotes
    separate arguments."""
    words: list[str] = []
    word, quoted, started = "", False, False
    for char in line:
        if char == '"':
            quoted, started = not quoted, True
        elif char in " \t" and not quoted:
            if started:
                words.append(word)
            word, started = "", False
        else:
            word, started = word + char, True
    return words + ([word] if started else [])


#: inside double quotes: special to a POSIX shell ($ ` \ ! "), to cmd (% ") or to PowerShell ($ ` " and its
#: typographic double quotes); anything else (& | < > ( ) ; , ' ^ blanks) is literal there in all three
SPECIAL_INSIDE = set('"$`\\!%\u201c\u201d\u201e')


@pytest.mark.parametrize("name", ["Hauptdiagnose (ICD-10)", "Größe (cm)", "Patienten Nr", "a,b", "O'Brien", "x&y",
                                  "@home", "~user", "*", "a|b", "(", "x^2 <y>; z", ""])
def test_a_name_needing_quotes_gets_double_quotes_read_alike_by_the_three_shells(name):
    quoted = shell_word(name)
    assert quoted == f'"{name}"' and not SPECIAL_INSIDE & set(name)
    assert shlex.split(f"ppdp {quoted}") == ["ppdp", name]  # POSIX shells
    assert windows_split(f"ppdp {quoted}") == ["ppdp", name]  # cmd (and what PowerShell hands a program)


@pytest.mark.parametrize("name", ["diagnosis", "Patienten-Nr.", "Geschlecht", "zip_code", "Größe", "a=b", "C:/data/x.csv"])
def test_a_plain_name_stays_as_it_is(name):
    assert shell_word(name) == name and shlex.split(name) == [name]


@pytest.mark.parametrize("name", ['say "hi"', "cost $5", "50 %", "a\\b", "wow!", "tab\there", "\u201cquoted\u201d"])
def test_a_name_special_inside_double_quotes_gets_posix_single_quotes(name):
    quoted = shell_word(name)
    assert quoted.startswith("'") and shlex.split(quoted) == [name]


def test_an_option_value_starting_with_a_dash_is_joined_by_equals():
    assert shell_option("--sensitive", "-x") == "--sensitive=-x"
    assert shlex.split(shell_option("--sensitive", "- Diagnose")) == ["--sensitive=- Diagnose"]
    assert shell_option("--sensitive", SENSITIVE) == '--sensitive "Hauptdiagnose (ICD-10)"'


def test_an_option_named_in_a_message_is_quoted(tmp_path, capsys, monkeypatch):
    assert str(ParameterError(f"grade it ({setting_ref('graded', 'Größe (cm)')})")) == 'grade it (--graded "Größe (cm)")'
    monkeypatch.setenv("PPDP_PASSPHRASE", "correct horse battery staple 42")
    data = write_clinical_xlsx(tmp_path / "klinik.xlsx", n=120)
    code = main(["anonymize", str(data), "--out", str(tmp_path / "x"), "--method", "personalized", "--sensitive",
                 "Größe (cm)", "--key", str(tmp_path / "x.ppdpkey")])
    error = capsys.readouterr().err.splitlines()[-1]
    assert code == 2 and '(--graded "Größe (cm)" with --categories K)' in error
    assert not Path(tmp_path / "x").exists()

"""The passphrase rule for sealing a key (zxcvbn, score >= MIN_SEALING_SCORE or an explicit override): the core
function, and the CLI through its real entry point (environment, passphrase file and a real terminal prompt)."""
from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

import pytest

from ppdp_desktop.cli import main
from ppdp_desktop.core.errors import ParameterError
from ppdp_desktop.core.release import keyfile, passphrase_policy
from ppdp_desktop.core.release.passphrase_policy import (
    MIN_SEALING_SCORE,
    assess,
    check_for_sealing,
    sealing_problem,
    user_inputs_for,
)
from ppdp_desktop.core.release.signing import open_signing_key

WEAK = "Password123!"
STRONG = "vanilla orbit kettle quorum"
ROOT = Path(__file__).resolve().parents[1]


def run(args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "mirabeau_cohort.csv"
    path.write_text("id,sex,dx\n" + "".join(f"{i},{'FM'[i % 2]},{['a', 'b', 'c'][i % 3]}\n" for i in range(60)),
                    encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def no_passphrase_in_env(monkeypatch):
    for name in ("PPDP_PASSPHRASE", "PPDP_SIGNING_PASSPHRASE"):
        monkeypatch.delenv(name, raising=False)


# --- the core rule ---------------------------------------------------------------------------------
def test_a_common_password_is_weak_with_feedback_in_words():
    found = assess(WEAK)
    assert found.score < MIN_SEALING_SCORE == 3 and not found.strong_enough
    assert found.word in {"very weak", "weak", "fair"}
    assert "commonly used password" in found.warning and found.suggestions
    assert found.warning in found.feedback() and all(s.rstrip(".") in found.feedback() for s in found.suggestions)
    with pytest.raises(ParameterError, match=r"(?s)^The passphrase is .*commonly used password.*"
                                             r"--allow-weak-passphrase.*nothing was written\.$") as raised:
        check_for_sealing(WEAK)
    assert "\n" not in str(raised.value)
    assert check_for_sealing(WEAK, allow_weak=True).score == found.score  # the explicit override


def test_a_strong_passphrase_seals_without_override():
    found = check_for_sealing(STRONG, user_inputs_for("/data/mirabeau_cohort.csv"))
    assert found.score >= MIN_SEALING_SCORE and found.word in {"good", "strong"} and found.strong_enough
    assert sealing_problem(found) is None


def test_too_short_is_refused_even_with_the_override():
    with pytest.raises(ParameterError, match="at least 8 characters"):
        check_for_sealing("xK#9q", allow_weak=True)
    assert assess("").score == 0 and assess("").word == "too short"


def test_the_jobs_own_words_count_as_weak():
    inputs = user_inputs_for("/data/study/mirabeau_cohort.csv", "/data/study/release", None)
    assert {"mirabeau_cohort.csv", "mirabeau_cohort", "mirabeau", "cohort", "study", "ppdp"} <= set(inputs)
    alone, in_context = assess("mirabeau_cohort"), assess("mirabeau_cohort", inputs)
    assert alone.strong_enough and in_context.score < alone.score and not in_context.strong_enough


def test_long_and_unusual_passphrases_are_rated():
    assert assess("x" * 500).score == 0  # zxcvbn rates the first MAX_RATED characters (it refuses longer input)
    assert assess("ünïcødé pässwörd wïth ümlauts \U0001f600" * 3).strong_enough
    assert passphrase_policy.MIN_PASSPHRASE == keyfile.MIN_PASSPHRASE


# --- the CLI: environment and passphrase file -----------------------------------------------------
def _opens(key: Path, passphrase: str) -> bool:
    return bool(keyfile.open_key(key, passphrase, keyfile.read_header(key).manifest_sha256))


def _anonymize(data: Path, tmp_path: Path, *extra) -> list:
    return ["anonymize", data, "--out", tmp_path / "release", "--sensitive", "dx", "--identifier", "id",
            "--rho1", "0.1", "--rho2", "0.5", "--key", tmp_path / "release.ppdpkey", "--no-report", "--seed", "1", *extra]


def test_cli_refuses_a_weak_passphrase_from_the_environment_in_one_line(data, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_PASSPHRASE", WEAK)
    code, out, err = run(_anonymize(data, tmp_path), capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("ppdp: error: The passphrase is weak (1 of 4)")
    assert "commonly used password" in err and "--allow-weak-passphrase" in err
    assert not (tmp_path / "release").exists() and not (tmp_path / "release.ppdpkey").exists()

    code, out, err = run(_anonymize(data, tmp_path, "--allow-weak-passphrase"), capsys)
    assert code == 0, err
    assert "will be sealed with a passphrase rated weak" in err
    assert _opens(tmp_path / "release.ppdpkey", WEAK)  # sealed with it


def test_cli_passphrase_file_weak_refused_strong_accepted(data, tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("mirabeau_cohort\n", encoding="utf-8")  # the data file's own name
    code, _, err = run(_anonymize(data, tmp_path, "--passphrase-file", secret), capsys)
    assert code == 2 and err.count("\n") == 1 and "very weak (0 of 4)" in err
    assert not (tmp_path / "release.ppdpkey").exists()
    secret.write_text(STRONG + "\n", encoding="utf-8")
    code, _, err = run(_anonymize(data, tmp_path, "--passphrase-file", secret), capsys)
    assert code == 0 and "weak" not in err, err
    assert _opens(tmp_path / "release.ppdpkey", STRONG)


def test_cli_signing_key_and_demo_follow_the_same_rule(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_SIGNING_PASSPHRASE", WEAK)
    key = tmp_path / "custodian.ppdpsign"
    code, _, err = run(["signing-key", key], capsys)
    assert code == 2 and err.count("\n") == 1 and "weak (1 of 4)" in err and not key.exists()
    code, out, err = run(["signing-key", key, "--allow-weak-passphrase"], capsys)
    assert code == 0 and "fingerprint" in out and open_signing_key(key, WEAK)
    monkeypatch.setenv("PPDP_PASSPHRASE", WEAK)
    code, _, err = run(["demo", "--out", tmp_path / "demo", "--no-report"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--allow-weak-passphrase" in err
    assert not (tmp_path / "demo").exists() and not (tmp_path / "demo.ppdpkey").exists()


# --- the CLI: a real terminal prompt ---------------------------------------------------------------
def _in_a_terminal(argv: list[str], answers: list[str], cwd: Path, timeout: float = 60.0) -> tuple[int, str]:
    """Run ``ppdp ARGV`` on a pseudo-terminal, typing the next answer at each passphrase prompt."""
    env = {k: v for k, v in os.environ.items() if k not in {"PPDP_PASSPHRASE", "PPDP_SIGNING_PASSPHRASE"}}
    env["PYTHONPATH"] = str(ROOT)
    pid, fd = pty.fork()
    if pid == 0:  # the child: its stdin, stdout and stderr are the terminal
        os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "ppdp_desktop", *argv], env)
    output, typed, deadline = b"", 0, time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # the child has gone: the terminal is closed
                    break
                if not chunk:
                    break
                output += chunk
                prompts = output.count(b"Passphrase for") + output.count(b"Repeat the passphrase")
                while typed < min(prompts, len(answers)):
                    os.write(fd, answers[typed].encode() + b"\n")
                    typed += 1
        else:
            os.kill(pid, 9)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output.decode(errors="replace")


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_the_prompt_explains_a_weak_passphrase_and_asks_again(tmp_path):
    code, said = _in_a_terminal(["signing-key", "s.ppdpsign"], [WEAK, WEAK, STRONG, STRONG], tmp_path)
    assert code == 0, said
    assert "commonly used password" in said and "Try again (2 left)" in said and "fingerprint" in said
    assert open_signing_key(tmp_path / "s.ppdpsign", STRONG)


@pytest.mark.skipif(not hasattr(pty, "fork"), reason="needs a POSIX pseudo-terminal")
def test_the_prompt_refuses_after_three_weak_passphrases(tmp_path):
    code, said = _in_a_terminal(["signing-key", "s.ppdpsign"], [WEAK] * 6, tmp_path)
    assert code == 2, said
    assert said.count("Try again") == 2 and "ppdp: error: The passphrase is weak" in said
    assert not (tmp_path / "s.ppdpsign").exists()

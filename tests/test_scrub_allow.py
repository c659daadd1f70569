"""SECONDBRAIN_SCRUB_ALLOW through the CLI: the allow file a user configures keeps the values
its patterns match, in `ingest` and in the `scrub` preview alike, counts them as "allowed",
and a bad file stops the ingest with one line naming file:line before anything is written."""
from __future__ import annotations

from conftest import dump_brain

DEMO = "fixture-" + "k3v9" + "x2m7"  # a password of the user's test fixtures, built at run time
REAL = "Vinter" + "2026!x"


def _note(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "demo.md").write_text(f"demo login: password: {DEMO}\n\nprod: password: {REAL}\n")
    return notes


def _allow(tmp_path, monkeypatch, text: str):
    path = tmp_path / "allow.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("SECONDBRAIN_SCRUB_ALLOW", str(path))
    return path


def test_ingest_keeps_what_the_allow_file_releases_and_counts_it(tmp_path, monkeypatch, run, brain_path):
    notes = _note(tmp_path)
    _allow(tmp_path, monkeypatch, "# our fixtures\n^fixture-[a-z0-9]+$\n")
    out = run("brain", "ingest", notes).output
    assert "1 allowed" in out and "1 password" in out
    stored = dump_brain(brain_path)
    assert DEMO in stored and REAL not in stored


def test_scrub_preview_reads_the_same_allow_file(tmp_path, monkeypatch, run):
    notes = _note(tmp_path)
    _allow(tmp_path, monkeypatch, "^fixture-[a-z0-9]+$\n")
    out = run("brain", "scrub", notes / "demo.md").output
    assert DEMO in out and REAL not in out


def test_a_bad_allow_file_is_one_line_and_nothing_is_written(tmp_path, monkeypatch, run, brain_path):
    notes = _note(tmp_path)
    path = _allow(tmp_path, monkeypatch, "^fixture-[a-z0-9]+$\nbroken(\n")
    result = run("brain", "ingest", notes, ok=False)
    assert result.exit_code == 1
    assert f"{path}:2:" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not brain_path.exists() or REAL not in dump_brain(brain_path)
    assert not brain_path.exists() or "demo login" not in dump_brain(brain_path)


def test_a_missing_allow_file_is_one_line(tmp_path, monkeypatch, run):
    notes = _note(tmp_path)
    monkeypatch.setenv("SECONDBRAIN_SCRUB_ALLOW", str(tmp_path / "nope.txt"))
    result = run("brain", "ingest", notes, ok=False)
    assert result.exit_code == 1
    assert "SECONDBRAIN_SCRUB_ALLOW" in result.output and "nope.txt" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_explain_names_the_rule_and_the_filter_never_the_value(tmp_path, monkeypatch, run):
    token = "ghp_" + "Zq8xLm2pWvR4tY7u" + "K1oN3bH6jD9fS0gA5cE2"
    note = tmp_path / "servers.md"
    note.write_text(f'db:\n  password: "{{{{ db_password }}}}"\n  token: {REAL}\nci: {token}\n'
                    f"demo password: {DEMO}\n")
    _allow(tmp_path, monkeypatch, "^fixture-[a-z0-9]+$\n")
    out = run("brain", "scrub", "--explain", note).output
    lines = out.splitlines()
    assert any(ln.split()[:4] == ["3:10", "redacted", "label-assignment", "secret"] and ln.endswith(f"length {len(REAL)}")
               for ln in lines)
    assert any(ln.split()[:4] == ["4:5", "redacted", "github-token", "github_token"] for ln in lines)
    assert any(ln.split()[:4] == ["5:16", "redacted", "allowed", "password"] for ln in lines)
    assert any(ln.split() == ["2:14", "let", "go", "password", "template_or_variable"] for ln in lines)
    assert REAL not in out and token not in out and DEMO not in out and "db_password" not in out

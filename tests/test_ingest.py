import hashlib
import json
import os
import sqlite3
from pathlib import Path

from conftest import dump_brain, llm_cmd, unprivileged

SECRETS = {
    "aws": "AKIAQYLPMN5HFIQR7XYZ",
    "github": "ghp_R3aLlyL0ngT0kenValue0123456789abcdEF",
    "pem_body": "MIIEowIBAAKCAQEAx4Pq9s8uS0bodyOfAPrivateKeyThatMustNotSurvive",
    "password": "Vinter2026!",
    "url_pass": "s3cr3t-Pa55word",
}

NOTE_WITH_SECRETS = f"""# Deploy notes

Export the key before deploying: AWS_ACCESS_KEY_ID={SECRETS['aws']}
The CI token is {SECRETS['github']} (rotate monthly).

-----BEGIN RSA PRIVATE KEY-----
{SECRETS['pem_body']}
-----END RSA PRIVATE KEY-----

The wifi password is {SECRETS['password']}
DATABASE_URL=postgres://app:{SECRETS['url_pass']}@db.local:5432/app
"""


def make_tree(root: Path) -> Path:
    notes = root / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "invoices.md").write_text(
        "INV/2026/00037 paid 2026-03-01\n\nThe Nordlys invoice was disputed in March.\n"
    )
    (notes / "sub" / "deploy.md").write_text(NOTE_WITH_SECRETS)
    (notes / "sub" / "todo.txt").write_text("Buy tomatoes and fix the garden sensor battery.\n")
    (notes / ".git").mkdir()
    (notes / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (notes / "node_modules" / "x").mkdir(parents=True)
    (notes / "node_modules" / "x" / "index.js").write_text("module.exports = 1;\n")
    (notes / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    return notes


def chunks(brain_path):
    conn = sqlite3.connect(brain_path)
    conn.row_factory = sqlite3.Row
    rows = [dict(r) for r in conn.execute("SELECT * FROM chunks ORDER BY path, line_start")]
    conn.close()
    return rows


def snapshot(root: Path) -> dict:
    return {
        str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_ingest_folder_file_and_stdin(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    extra = tmp_path / "single.md"
    extra.write_text("A single note about the garden tomatoes and watering.\n")
    result = run("brain", "ingest", notes, extra, "-", "--json", input="Stdin note about invoicing terms.\n")
    report = json.loads(result.stdout)
    assert report["ingested"] == 5
    assert report["skipped_by_reason"] == {"binary": 1}
    rows = chunks(brain_path)
    by_path = {r["path"]: r for r in rows}
    assert str(notes / "invoices.md") in by_path
    assert not any("node_modules" in p or ".git" in p for p in by_path)
    inv = by_path[str(notes / "invoices.md")]
    assert inv["project"] == "notes" and inv["source"] == "files"
    assert inv["line_start"] == 1 and inv["embedded"] == 0
    assert inv["ts"].startswith("20")
    assert by_path[str(extra)]["project"] == tmp_path.name
    assert by_path["-"]["source"] == "stdin"


def test_project_source_and_name_options(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    run("brain", "ingest", notes / "invoices.md", "--project", "work", "--source", "notes")
    run("brain", "ingest", "-", "--name", "clipboard", "--project", "work",
        input="Pasted text about the quarterly plan.\n")
    rows = chunks(brain_path)
    assert {(r["project"], r["source"], r["path"]) for r in rows} == {
        ("work", "notes", str(notes / "invoices.md")), ("work", "stdin", "clipboard")}
    # re-ingesting a named stdin source replaces it
    run("brain", "ingest", "-", "--name", "clipboard", input="Newer pasted text entirely different.\n")
    texts = [r["text"] for r in chunks(brain_path) if r["path"] == "clipboard"]
    assert texts == ["Newer pasted text entirely different."]


def test_no_secret_reaches_the_brain_file_or_the_output(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    result = run("brain", "ingest", notes)
    jresult = run("brain", "ingest", notes / "sub" / "deploy.md", "--json")
    for r in (run("brain", "stats", "--json"), run("brain", "sources", "--json"), result, jresult):
        for secret in SECRETS.values():
            assert secret not in r.output
    assert "secrets redacted" in result.output
    dump = dump_brain(brain_path)
    for secret in SECRETS.values():
        assert secret not in dump
        assert secret[:12] not in dump
    assert "[REDACTED:" in dump
    assert "INV/2026/00037" in dump


def test_sources_are_untouched(run, tmp_path):
    notes = make_tree(tmp_path)
    before = snapshot(notes)
    os.chmod(notes / "invoices.md", 0o444)
    run("brain", "ingest", notes)
    run("brain", "ingest", notes)
    assert snapshot(notes) == before


def test_unchanged_reingest_writes_nothing(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    run("brain", "ingest", notes)
    first = chunks(brain_path)
    report = json.loads(run("brain", "ingest", notes, "--json").stdout)
    assert report["ingested"] == 0 and report["unchanged"] == 3
    assert report["chunks_added"] == report["chunks_removed"] == 0
    assert chunks(brain_path) == first
    # touched but identical content: still unchanged
    os.utime(notes / "invoices.md", None)
    report = json.loads(run("brain", "ingest", notes, "--json").stdout)
    assert report["unchanged"] == 3


def test_changed_file_keeps_unchanged_chunks_and_vanished_file_is_removed(run, tmp_path, brain_path,
                                                                         monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    para = [(f"Paragraph {i}: " + f"topic{i} " * 30).strip() for i in range(3)]
    (notes / "a.md").write_text("\n\n".join(para))
    (notes / "b.md").write_text("A note that will be deleted later on.\n")
    monkeypatch.setenv("SECONDBRAIN_MAX_CHARS", "300")  # one paragraph per chunk
    run("brain", "ingest", notes)
    before = {r["text"]: r["id"] for r in chunks(brain_path)}
    (notes / "a.md").write_text("New first paragraph. " * 6 + "\n\n" + "\n\n".join([para[0], "Changed middle " * 10, para[2]]))
    (notes / "b.md").unlink()
    report = json.loads(run("brain", "ingest", notes, "--json").stdout)
    assert report["files_removed"] == 1
    after = chunks(brain_path)
    texts = {r["text"]: r for r in after}
    assert not any(r["path"].endswith("b.md") for r in after)
    for kept in (para[0], para[2]):
        assert texts[kept]["id"] == before[kept]  # same row, so its vector is kept too
    assert texts[para[0]]["line_start"] == 3  # line span refreshed
    assert para[1] not in texts
    assert report["chunks_kept"] == 2 and report["chunks_removed"] == 2
    assert "b.md" not in run("brain", "sources").output


def test_forget_by_path_project_and_source(run, tmp_path, brain_path, monkeypatch):
    notes = make_tree(tmp_path)
    run("brain", "ingest", notes)
    run("brain", "ingest", "-", "--project", "scratch", input="Some scratch text for later.\n")
    monkeypatch.chdir(notes)
    out = run("brain", "forget", "sub").output
    assert "forgot 2 chunks" in out
    assert all("/sub/" not in r["path"] for r in chunks(brain_path))
    out = run("brain", "forget", "--project", "scratch", "--json").stdout
    assert json.loads(out)["chunks_removed"] == 1
    out = run("brain", "forget", "--source", "files").output
    assert chunks(brain_path) == []
    conn = sqlite3.connect(brain_path)
    assert conn.execute("SELECT count(*) FROM fts_chunks_docsize").fetchone()[0] == 0
    assert run("brain", "forget", ok=False).exit_code == 1


def test_stats_path_and_db_option(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    assert run("brain", "path").output.strip() == str(brain_path)
    other = tmp_path / "other.db"
    assert run("brain", "path", "--db", other).output.strip() == str(other)
    run("brain", "ingest", notes, "--db", other)
    stats = json.loads(run("brain", "stats", "--json", "--db", other).stdout)
    assert stats["chunks"] == 3 and stats["pending"] == 3 and stats["embedded"] == 0
    assert stats["projects"] == {"notes": 3} and stats["sources"] == {"files": 3}
    assert stats["size_bytes"] > 0 and stats["embed_model"] is None
    assert not brain_path.exists()
    human = run("brain", "stats", "--db", other).output
    assert "3 pending" in human and "notes: 3" in human


def test_sources_lists_files_with_counts(run, tmp_path):
    notes = make_tree(tmp_path)
    run("brain", "ingest", notes)
    rows = [json.loads(line) for line in run("brain", "sources", "--json").stdout.splitlines()]
    assert {r["path"] for r in rows} == {
        str(notes / "invoices.md"), str(notes / "sub" / "deploy.md"), str(notes / "sub" / "todo.txt")}
    assert all(r["chunks"] >= 1 and r["project"] == "notes" and r["ingested"] for r in rows)


def test_include_exclude_globs(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    run("brain", "ingest", notes, "--include", "*.md", "--exclude", "sub/deploy.md")
    assert {Path(r["path"]).name for r in chunks(brain_path)} == {"invoices.md"}


def test_a_double_star_glob_matches_zero_folders_too(run, tmp_path, brain_path):
    """`**/` is zero or more folders, as in .gitignore: top-level notes match it too."""
    notes = make_tree(tmp_path)
    (notes / "sub" / "deep").mkdir()
    (notes / "sub" / "deep" / "plan.md").write_text("A plan for the greenhouse roof.\n")
    run("brain", "ingest", notes, "--exclude", "**/*.md")
    assert {Path(r["path"]).name for r in chunks(brain_path)} == {"todo.txt"}
    run("brain", "forget", notes)
    run("brain", "ingest", notes, "--include", "sub/**/*.md")
    assert {Path(r["path"]).name for r in chunks(brain_path)} == {"deploy.md", "plan.md"}


def test_a_filtered_re_ingest_keeps_a_file_named_like_a_token(run, tmp_path, brain_path):
    """Files a glob leaves out stay in the brain while they are on disk, and go once they are
    not: one stored under its scrubbed name (`[REDACTED:github_token]`, which the disk does
    not hold) exactly as the rest. Its name is nowhere in the output or the brain file."""
    notes = make_tree(tmp_path)
    secret = SECRETS["github"]
    (notes / f"{secret}.md").write_text("A note about the ferry timetable.\n")
    output = run("brain", "ingest", notes, "--no-embed").output

    def stored() -> int:
        return len(run("brain", "sources", "--json").stdout.splitlines())

    assert stored() == 4
    for glob in (["--include", "*.txt"], ["--exclude", "*.md"], ["--include", "["]):
        result = run("brain", "ingest", notes, *glob, "--no-embed", "--json")
        output += result.output
        assert json.loads(result.stdout)["files_removed"] == 0, glob
        assert stored() == 4
    (notes / f"{secret}.md").unlink()
    (notes / "invoices.md").unlink()
    result = run("brain", "ingest", notes, "--include", "*.txt", "--no-embed", "--json")
    output += result.output + run("brain", "sources").output
    assert json.loads(result.stdout)["files_removed"] == 2
    assert stored() == 2
    for haystack in (output, dump_brain(brain_path)):
        assert secret not in haystack and secret[-12:] not in haystack


def test_symlinks_out_of_folder_and_loops_are_not_followed(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text("Outside text that must not be ingested via a link.\n")
    (notes / "link.md").symlink_to(outside)
    (notes / "loop").symlink_to(notes)
    report = json.loads(run("brain", "ingest", notes, "--json").stdout)
    assert report["skipped_by_reason"]["symlink out of folder"] == 1
    assert all("outside" not in r["text"] for r in chunks(brain_path))


def test_missing_path_is_one_line_error(run, tmp_path, brain_path):
    result = run("brain", "ingest", tmp_path / "nope.md", ok=False)
    assert result.exit_code == 1
    assert result.output.strip() == f"Error: no such file or folder: {tmp_path / 'nope.md'}"
    assert "Traceback" not in result.output


def test_stats_without_a_brain_says_how_to_start(run):
    result = run("brain", "stats", ok=False)
    assert result.exit_code == 1 and "llm brain ingest" in result.output


def test_empty_and_undecodable_files_are_counted(run, tmp_path):
    d = tmp_path / "odd"
    d.mkdir()
    (d / "empty.md").write_text("")
    (d / "latin1.txt").write_bytes("caf\xe9 au lait, tr\xe8s bien".encode("latin-1"))
    (d / "utf16.txt").write_bytes("Notat om fakturaer og betaling.\n".encode("utf-16"))
    (d / "crlf.txt").write_bytes(b"Line one of a windows note.\r\n\r\nLine two here.\r\n")
    report = json.loads(run("brain", "ingest", d, "--json").stdout)
    assert report["skipped_by_reason"] == {"empty": 1, "not UTF-8": 1}
    assert report["ingested"] == 2


def test_unreadable_named_file_is_an_error_and_unreadable_file_in_folder_is_skipped(tmp_path, brain_path):
    notes = make_tree(tmp_path)
    locked = notes / "locked.md"
    locked.write_text("Locked note text about something private.\n")
    locked.chmod(0o000)
    res = unprivileged(llm_cmd("brain", "ingest", locked))
    assert res.returncode == 1, res.stderr
    assert res.stderr.strip() == f"Error: permission denied: {locked}"
    res = unprivileged(llm_cmd("brain", "ingest", notes, "--json"))
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["skipped_by_reason"]["unreadable"] == 1
    assert "Traceback" not in res.stderr


def test_read_only_brain_is_a_clear_error_and_unchanged(run, tmp_path, brain_path):
    notes = make_tree(tmp_path)
    run("brain", "ingest", notes / "invoices.md")
    before = brain_path.read_bytes()
    brain_path.chmod(0o400)
    res = unprivileged(llm_cmd("brain", "ingest", notes))
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("Error:") and "Traceback" not in res.stderr
    assert brain_path.read_bytes() == before
    res = unprivileged(llm_cmd("brain", "stats", "--json"))
    assert res.returncode == 0 and json.loads(res.stdout)["chunks"] == 1


def test_scrub_preview_stores_nothing(run, brain_path):
    result = run("brain", "scrub", "--report", input=NOTE_WITH_SECRETS)
    assert SECRETS["aws"] not in result.output and "[REDACTED:" in result.output
    assert "redacted" in result.output
    assert not brain_path.exists()


def test_later_chunks_are_found_by_their_notes_title(run, tmp_path, brain_path, monkeypatch):
    """A paragraph deep in a note is found by words of the note's title, and when the title
    changes, the kept paragraphs are found by the new one only."""
    monkeypatch.setenv("SECONDBRAIN_MAX_CHARS", "300")  # one paragraph per chunk
    notes = tmp_path / "notes"
    notes.mkdir()
    body = "\n\n".join(f"Paragraph {i}: feed it twice a day with equal weights of flour and water, "
                         f"keep it at room temperature, and throw half of it away before each "
                         f"feeding so the jar never overflows." for i in range(3))
    note = notes / "starter.md"
    note.write_text("# Sourdough starter\n\n" + body + "\n\n" + "Hydration stays at 100 percent. " * 5 + "\n")
    run("brain", "ingest", notes, "--no-embed", "--db", brain_path)

    def lexical(query):
        out = run("brain", "recall", query, "--mode", "lexical", "--json", "-k", "3", "--db", brain_path).output
        return [json.loads(line)["text"] for line in out.splitlines()]

    assert lexical("sourdough hydration")[0].startswith("Hydration stays")
    rows = chunks(brain_path)
    assert len(rows) == 4 and rows[0]["text"].startswith("# Sourdough starter")
    assert [r["title"] for r in rows] == [None] + ["Sourdough starter"] * 3

    note.write_text("# Rye levain\n\n" + body + "\n\n" + "Hydration stays at 100 percent. " * 5 + "\n")
    run("brain", "ingest", notes, "--no-embed", "--db", brain_path)
    after = chunks(brain_path)
    assert [r["id"] for r in after[1:]] == [r["id"] for r in rows[1:]]  # the paragraphs were kept
    assert [r["title"] for r in after] == [None] + ["Rye levain"] * 3
    assert lexical("levain hydration")[0].startswith("Hydration stays")
    assert lexical("sourdough") == []


def test_front_matter_is_metadata_not_text(run, tmp_path, brain_path):
    """`title:` is the title (found by the lexical lane in every chunk, first included), dates
    date the note, other keys are metadata scrubbed with their key as label; none of the block
    is chunk text (so none is embedded), and the body's lines cite as in the file."""
    notes = tmp_path / "vault" / "areas" / "kitchen"
    notes.mkdir(parents=True)
    (notes / "bread.md").write_text(
        "---\nid: 20240301T1022\ntitle: Rye levain: a schedule\ncreated: 2024-03-01 10:22\n"
        f"tags:\n  - baking\n  - rye\napi_key: {SECRETS['github']}\n---\n"
        "Feed it twice a day with equal weights of flour and water.\n")
    (notes / "plain.md").write_text("---\nlayout: post\n---\n")  # a block and nothing else
    run("brain", "ingest", tmp_path / "vault", "--no-embed", "--db", brain_path)
    rows = chunks(brain_path)
    assert [r["text"] for r in rows] == ["Feed it twice a day with equal weights of flour and water."]
    row = rows[0]
    assert row["title"] == "Rye levain: a schedule" and row["line_start"] == 10
    assert row["ts"].startswith("2024-03-01")
    meta = json.loads(row["meta"])
    assert meta["id"] == "20240301T1022" and meta["tags"] == ["baking", "rye"]
    assert SECRETS["github"] not in dump_brain(brain_path)
    out = run("brain", "recall", "levain schedule", "--mode", "lexical", "--json", "--db", brain_path).output
    hit = json.loads(out.splitlines()[0])
    assert hit["citation"].endswith("bread.md:10")
    assert run("brain", "recall", "levain", "--since", "2024-02-01", "--until", "2024-03-02",
               "--mode", "lexical", "--json", "--db", brain_path).output.strip()

"""The leak suite: every door by which a secret could reach the brain or a command's output,
tried as an attacker would. Secrets are made at run time (no fixture holds one), and each test
reads the raw bytes of brain.db, its -wal and -shm, and the output of every command that shows
what the brain holds: sources, stats, roots, recall --json and --explain, the fragment and the
tool (through llm's echo model), and the MCP server.

A leak is the secret itself, lower-cased (FTS5 keeps terms lower-cased) or not, or its last ten
characters (FTS5 writes a term after the prefix it shares with its neighbour).
"""
from __future__ import annotations

import base64
import json
import os
import random
import sqlite3
import string
import subprocess
import sys
from pathlib import Path

from conftest import llm_cmd
from docfixtures import docx_file, epub_bytes, mbox_bytes, message, notebook_bytes, pdf_bytes

from llm_secondbrain.store import text_sha

ALNUM = string.ascii_letters + string.digits


def token() -> str:
    """A GitHub personal access token's shape: found by its prefix, wherever it stands."""
    return "ghp_" + "".join(random.choices(ALNUM, k=36))


def password() -> str:
    """A password a person would pick: found only where something says it is one."""
    return "Fjord" + "".join(random.choices(string.digits, k=4)) + "".join(random.choices(string.ascii_lowercase, k=3))


def raw_brain(brain_path: Path) -> bytes:
    return b"".join(Path(f"{brain_path}{s}").read_bytes() for s in ("", "-wal", "-shm")
                    if Path(f"{brain_path}{s}").exists())


def leaks(secret: str, haystack: str | bytes) -> bool:
    if isinstance(haystack, bytes):
        haystack = haystack.decode("utf-8", "replace")
    low = haystack.lower()
    return secret in haystack or secret.lower() in low or secret.lower()[-10:] in low


def shown(run, query: str) -> str:
    """Everything the brain shows about itself and about `query`, through every face but MCP."""
    outputs = [run("brain", "sources", "--json").output, run("brain", "stats", "--json").output,
               run("brain", "roots", "--json").output,
               run("brain", "recall", query, "--json", "--mode", "lexical").output,
               run("brain", "recall", query, "--explain", "--mode", "lexical").output,
               run("-m", "echo", "-f", f"brain:{query}", "hi").output]
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": query}}]})
    outputs.append(run("-m", "echo", "-T", "brain_recall", call).output)
    return "\n".join(outputs)


def assert_kept_out(brain_path: Path, output: str, *secrets: str) -> None:
    raw = raw_brain(brain_path)
    for secret in secrets:
        assert not leaks(secret, raw), f"…{secret[-6:]} is in the brain file"
        assert not leaks(secret, output), f"…{secret[-6:]} was printed"


# ------------------------------------------------------------------------------------------------
# A value found in one part of a document is redacted in every part of it.


def cross_section_documents(folder: Path, pw: str) -> list[Path]:
    """One document per format that has parts: the password labelled in the first part, then
    named bare in the next."""
    folder.mkdir(parents=True, exist_ok=True)
    first, second = f"router password: {pw}", f"I typed {pw} into the router again today"
    docx_file(folder / "router.docx", title="Router", paragraphs=[
        ("Setup", "Heading 1"), (first, None), ("Later", "Heading 1"), (second, None)])
    (folder / "router.pdf").write_bytes(pdf_bytes([["Setup", first], ["Later", second]]))
    (folder / "router.epub").write_bytes(epub_bytes("Router", [("Setup", first), ("Later", second)]))
    from datetime import datetime, timezone

    when = datetime(2026, 3, 1, tzinfo=timezone.utc)
    (folder / "router.mbox").write_bytes(mbox_bytes([
        message("Setup", "a@example.org", when, first, message_id="m1@x"),
        message("Later", "b@example.org", when, second, message_id="m2@x")]))
    (folder / "router.ipynb").write_bytes(notebook_bytes([("markdown", first), ("markdown", second)]))
    return sorted(folder.iterdir())


def test_a_password_found_in_one_part_is_redacted_in_every_part(tmp_path, brain_path, run):
    pw = password()
    docs = cross_section_documents(tmp_path / "docs", pw)
    report = json.loads(run("brain", "ingest", tmp_path / "docs", "--no-embed", "--json").output)
    assert report["ingested"] == len(docs) and not report["skipped"]
    assert_kept_out(brain_path, shown(run, "router again"), pw)
    assert "I typed [REDACTED:password] into the router again" in run(
        "brain", "recall", "typed router again", "--json", "--mode", "lexical").output


def test_a_password_from_one_turn_is_redacted_in_the_next(tmp_path, brain_path, run):
    pw = password()
    run("-m", "echo", f"the new wifi password is {pw}")
    run("-m", "echo", "-c", f"so I log in with {pw} from the laptop?")
    run("brain", "ingest", "--llm-logs", "--no-embed")
    assert_kept_out(brain_path, shown(run, "log in laptop"), pw)


def test_a_value_redacted_once_stays_redacted_when_its_label_is_edited_out(tmp_path, brain_path, run):
    pw, other = password(), password()
    note = tmp_path / "router.md"
    note.write_text(f"Router setup\n\nrouter admin password: {pw}\n\nWhen it resets, log in with {pw} again.\n")
    run("brain", "ingest", note, "--no-embed")
    note.write_text(f"Router setup\n\nWhen it resets, log in with {pw} again.\n")  # the label line deleted
    run("brain", "ingest", note, "--no-embed")
    note.write_text(f"Router setup\n\nWhen it resets, log in with ({pw}), then {other}.\n")
    run("brain", "ingest", note, "--no-embed")
    output = shown(run, "router resets")
    assert_kept_out(brain_path, output, pw)
    assert f"then {other}" in output  # a word the note never labelled is not a secret


def test_a_label_at_the_foot_of_a_page_finds_its_value_at_the_top_of_the_next(tmp_path, brain_path, run):
    pw = password()
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "handover.pdf").write_bytes(pdf_bytes([
        ["Handover notes", "The alarm panel is in the hall.", "Wifi password:"],
        [pw, "The boiler is serviced in October."]]))
    run("brain", "ingest", tmp_path / "d", "--no-embed")
    assert_kept_out(brain_path, shown(run, "boiler serviced"), pw)


# ------------------------------------------------------------------------------------------------
# Titles, metadata and names are scrubbed with the document they belong to.


def test_titles_and_metadata_are_scrubbed_with_their_document(tmp_path, brain_path, run):
    pws = [password() for _ in range(4)]
    folder = tmp_path / "meta"
    folder.mkdir()
    (folder / "vpn.pdf").write_bytes(pdf_bytes([[f"vpn password: {pws[0]}"], ["Second page of notes."]],
                                               title=f"VPN {pws[0]}"))
    (folder / "nas.html").write_text(f"<html><head><title>NAS {pws[1]}</title></head><body>"
                                     f"<p>nas admin password: {pws[1]}</p><p>Backups run nightly.</p>"
                                     "</body></html>")
    from datetime import datetime, timezone

    (folder / "bank.eml").write_bytes(message(f"Your code {pws[2]}", "bank@example.org",
                                              datetime(2026, 1, 2, tzinfo=timezone.utc),
                                              f"Your one-time password: {pws[2]}\n\nRegards").as_bytes())
    (folder / "alarm.md").write_text(f"---\ntitle: Alarm {pws[3]}\n---\n\nalarm code password: {pws[3]}\n")
    run("brain", "ingest", folder, "--no-embed")
    assert_kept_out(brain_path, shown(run, "backups nightly regards alarm page"), *pws)


def test_front_matter_keys_and_values_are_scrubbed_with_their_note(tmp_path, brain_path, run):
    """A front-matter value whose key is its only label, a key that is itself a token, and a
    value named bare in the body: one scope per note, keys included."""
    pws, secret = [password() for _ in range(2)], token()
    folder = tmp_path / "fm"
    folder.mkdir()
    (folder / "router.md").write_text(f"---\ntitle: Router\nwifi_password: {pws[0]}\n{secret}: yes\n"
                                      f"admin_passwords:\n  - {pws[1]}\n---\n\nThe router reboots at "
                                      f"night; I typed {pws[0]} and {pws[1]} again.\n")
    run("brain", "ingest", folder, "--no-embed")
    assert_kept_out(brain_path, shown(run, "router reboots night"), *pws, secret)


def test_names_and_labels_a_user_gives_are_scrubbed(tmp_path, brain_path, run):
    secrets = [token() for _ in range(5)]
    folder = tmp_path / "notes"
    (folder / secrets[0]).mkdir(parents=True)
    (folder / secrets[0] / "inside.md").write_text("A note in a folder named oddly.\n")
    (folder / f"{secrets[1]}.md").write_text("A note with an odd file name.\n")
    run("brain", "ingest", folder, "--no-embed", "--source", secrets[2])
    run("brain", "ingest", "-", "--name", f"paste {secrets[3]}", "--project", secrets[4], "--no-embed",
        input="A pasted note about the odd names.\n")
    run("brain", "remember", "The fact about odd names", "--tag", secrets[1])
    output = shown(run, "odd name note") + run("brain", "facts", "--json").output
    assert_kept_out(brain_path, output, *secrets)
    names = [json.loads(line)["path"] for line in run("brain", "sources", "--json").output.splitlines()]
    assert sum("[REDACTED:github_token]" in name for name in names) == 3, names
    # a file stored under a scrubbed name is still found by its real one
    out = run("brain", "forget", folder / f"{secrets[1]}.md", "--json").output
    assert json.loads(out)["chunks_removed"] == 1 and not leaks(secrets[1], out)


def test_a_name_redacted_to_its_end_keeps_its_extension(tmp_path, brain_path, run):
    """A token runs on through '.', so `ghp_….md` is redacted whole; the file's kind is put
    back after it, and only a kind of file: a password's own '.2024' is not."""
    secrets = [token() for _ in range(3)]
    folder = tmp_path / "tok"
    folder.mkdir()
    (folder / f"{secrets[0]}.md").write_text("A note about the harbour crane.\n")
    (folder / f"backup-{secrets[1]}.txt").write_text("A note about the harbour ferry.\n")
    (folder / f"{secrets[2]}.pdf").write_bytes(pdf_bytes([["A page about the harbour pier."]]))
    (folder / "password=Fjord2024.2024").write_text("A note about the harbour gate.\n")
    output = run("brain", "ingest", folder, "--no-embed").output + shown(run, "harbour")
    assert_kept_out(brain_path, output, *secrets, "Fjord2024")
    names = {Path(json.loads(line)["path"]).name for line in run("brain", "sources", "--json").output.splitlines()}
    assert names == {"[REDACTED:github_token].md", "backup-[REDACTED:github_token].txt",
                     "[REDACTED:github_token].pdf", "password=[REDACTED:password]"}


def test_a_token_glued_to_a_word_is_found_where_it_is_glued(tmp_path, brain_path, run):
    secrets = [token() for _ in range(6)]
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / f"backup-{secrets[0]}.md").write_text("A note whose name carries a token.\n")
    (folder / "deploy.md").write_text(f"Billing runs on prod-{secrets[1]} since March.\n\n"
                                      f"The mirror pulls with mirror/{secrets[2]} and ci.{secrets[3]}.\n")
    run("brain", "ingest", folder, "--no-embed", "--source", f"src-{secrets[4]}")
    run("brain", "ingest", "-", "--name", f"paste_{secrets[5]}", "--no-embed",
        input="A pasted note about billing.\n")
    output = shown(run, "billing mirror note")
    assert_kept_out(brain_path, output, *secrets)
    assert "prod-[REDACTED:github_token]" in run("brain", "recall", "billing", "--mode", "lexical").output


def test_a_password_column_is_redacted_in_every_kind_of_table(tmp_path, brain_path, run):
    pws = [password() + "!" for _ in range(4)]
    folder = tmp_path / "access"
    folder.mkdir()
    (folder / "access.html").write_text("<table><tr><th>Service</th><th>User</th><th>Password</th></tr>"
                                        f"<tr><td>NAS</td><td>admin</td><td>{pws[0]}</td></tr></table>")
    docx_file(folder / "access.docx", title="Access", paragraphs=[("Where we log in", None)],
              table=[["Service", "User", "Password"], ["Router", "admin", pws[1]]], table_after=1)
    (folder / "export.tsv.txt").write_text(f"host\tuser\tpassword\nnas\tadmin\t{pws[2]}\n")
    (folder / "typed.md").write_text(f"Service | User | Password\nwiki | ola | {pws[3]}\n")
    run("brain", "ingest", folder, "--no-embed")
    output = shown(run, "service user password admin")
    assert_kept_out(brain_path, output, *pws)
    assert output.count("[REDACTED:password]") >= 4


def test_secrets_kept_in_a_notes_structure_stay_out(tmp_path, brain_path, run):
    """The shapes a person's own notes keep secrets in: a list under a heading, an HTML table
    pasted into a note, a SIM card's CSV, door codes under a heading, an IRC log."""
    pws = [password() + "!" for _ in range(4)]
    pins = ["".join(random.choices("123456789", k=n)) for n in (4, 8, 5)]
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "accounts.md").write_text(f"## Passwords\n\n- NAS: {pws[0]}\n- Router: {pws[1]}\n")
    (folder / "cabin.md").write_text("<table>\n  <tr><th>SSID</th><th>Password</th></tr>\n"
                                     f"  <tr><td>Hytta</td><td>{pws[2]}</td></tr>\n</table>\n")
    (folder / "sim.md").write_text(f"iccid,msisdn,pin,puk\n8947000000000000001,+47 900 00 000,{pins[0]},{pins[1]}\n")
    (folder / "house.md").write_text(f"### Door codes\n- Front door: {pins[2]}#\n")
    (folder / "irc.log").write_text(f"[21:13] <kai> /msg NickServ IDENTIFY {pws[3]}\n")
    run("brain", "ingest", folder, "--no-embed")
    output = shown(run, "NAS Router SSID Hytta iccid front door NickServ")
    assert_kept_out(brain_path, output, *pws, *pins)
    assert "NAS: [REDACTED:password]" in run("brain", "recall", "NAS Router", "--mode", "lexical").output


def test_secrets_named_around_their_value_stay_out(tmp_path, brain_path, run):
    """A secret whose words stand around it rather than before it: a lock after its code, a
    quoted password two words before its word, a value before a connector glued to the word
    (Japanese), "changed it to" in Ukrainian, the phrase a key's word opens ending in a
    compound before the colon, a shell's escape inside a password, a service's login."""
    pin = "".join(random.choices("123456789", k=5))
    pws = [password() + "!" for _ in range(3)]
    joined = [f"{w}-{''.join(random.choices(string.digits, k=4))}" for w in ("Fuji-San", "Sonyashnyk-Pole")]
    key = "".join(random.choices(ALNUM, k=32))
    login = "".join(random.choices("0123456789abcdef", k=40))
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "cabin.md").write_text(f"The key is in the lock box. The code for the lock box is {pin}.\n"
                                     f'Use "{pws[0]}" as the password.\n')
    (folder / "ja.md").write_text(f"{joined[0]} がDBの新パスワードです\n")
    (folder / "uk.md").write_text(f"Пароль адміністратора роутера змінив на {joined[1]}\n")
    (folder / "de.md").write_text(f"API-Schlüssel für den SMS-Dienst: {key}\n")
    (folder / "run.sh").write_text(f"docker run -e GF_SECURITY_ADMIN_PASSWORD={pws[1][:5]}\\&{pws[1][5:]} grafana/grafana\n"
                                   f"mvn sonar:sonar -Dsonar.login={login}\n")
    run("brain", "ingest", folder, "--no-embed")
    output = shown(run, "lock box password パスワード роутера SMS-Dienst grafana sonar")
    assert_kept_out(brain_path, output, pin, pws[0], *joined, key, pws[1][5:], login)


def test_secrets_written_in_other_languages_stay_out(tmp_path, brain_path, run):
    """A person's notes in their own language: the word for password, API key or token in its
    word order, a value given before its word, a chat answer, a setting named in the language,
    a table headed in it, a comment over a transliterated name."""
    pws = [password() + "#" for _ in range(8)]
    key = "".join(random.choices(ALNUM, k=32))
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "fr.md").write_text(f"Le mot de passe du routeur est {pws[0]}.\nClé API du service météo : {key}\n")
    (folder / "ru.md").write_text(f"{pws[1]} — это новый пароль от Steam.\n")
    (folder / "chat.txt").write_text(f"[09:05] Ana: jaké je heslo k Wi-Fi?\n[09:06] Petr: {pws[2]}\n")
    (folder / "settings.yaml").write_text(f"base_de_datos:\n  contraseña_bd: {pws[3]}\n")
    (folder / "vi.md").write_text(f"| Dịch vụ | Mật khẩu |\n|---|---|\n| FTP | {pws[4]} |\n")
    (folder / ".env.txt").write_text(f"# Парола за базата данни\nPAROLA_BD={pws[5]}\n")
    (folder / "ja.md").write_text(f"管理画面にはパスワード「{pws[6]}」でログインしてください。\n")
    (folder / "th.md").write_text(f"รหัสผ่านใหม่ของระบบบัญชีคือ {pws[7]} นะ\n")
    run("brain", "ingest", folder, "--no-embed")
    output = shown(run, "mot de passe пароль heslo contraseña Mật khẩu Парола パスワード รหัสผ่าน")
    assert_kept_out(brain_path, output, *pws, key)


def test_secrets_written_otherwise_stay_out(tmp_path, brain_path, run):
    """What a person reads as a secret, written so a pattern would not: a zero-width space or a
    soft hyphen inside it (a chat app's or a word processor's), full-width letters and digits
    (a Japanese input method's), percent-escapes (a URL's, a log's), a JSON export's \\u
    escapes, French typography's narrow space, inline HTML around it, a line break in it."""
    pws = [password() for _ in range(7)]
    tokens = [token() for _ in range(3)]
    wide = "".join(chr(ord(c) + 0xFEE0) for c in pws[1])  # "Ｆｊｏｒｄ１２３４ａｂｃ"
    written = {tokens[0]: tokens[0][:4] + "\u200b" + tokens[0][4:], pws[0]: pws[0],
               pws[1]: wide, pws[2]: pws[2][:5] + "%21" + pws[2][5:], tokens[1]: tokens[1]}
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "chat.md").write_text(f"[09:12] Ana: the deploy token is {written[tokens[0]]}\n")
    (folder / "brief.md").write_text(f"Das Pass\u00adwort für den Router: {pws[0]}\n")
    (folder / "ja.md").write_text(f"管理画面のパスワード：{wide}\n")
    (folder / "proxy.log").write_text(
        f"GET /login?user=ana&password%3D{written[pws[2]]} 302\n"
        f"GET /cb?next=%2Fhome%3Faccess_token%3D{tokens[1]}&state=x 200\n")
    (folder / "export.json").write_text(json.dumps({"ID": "tanaka.h", "パスワード": pws[3]}))
    (folder / "fr.md").write_text(f"Mot de passe\u202f: {pws[4]}\nIdentifiant\u202f: j.dupont\n")
    (folder / "wiki.md").write_text(f"Password: <code>{pws[5]}</code>\n")
    (folder / "oa.log").write_text(f"GET /login?user=wang&%E5%AF%86%E7%A0%81={pws[6]}%40 200\n")
    wrapped = f"Hi Carmen, here is the deploy token for the billing API, as promised: {tokens[2][:12]}"
    (folder / "mail.txt").write_text(f"{wrapped}\n{tokens[2][12:]}\n\nRegards\n")
    (folder / "form.txt").write_text("username=jdoe&password=&remember=1\n(login failed: empty password)\n")
    run("brain", "ingest", folder, "--no-embed")
    output = shown(run, "deploy token Router パスワード login access_token Carmen")
    assert_kept_out(brain_path, output, *tokens, *pws, *written.values(), tokens[2][:12], tokens[2][12:])
    assert "Pass\u00adwort für den Router" in run("brain", "recall", "Router", "--mode", "lexical").output
    assert "&remember=1" in run("brain", "scrub", folder / "form.txt").output  # an empty field, and the next


def test_a_file_named_label_equals_value_keeps_its_value_out(tmp_path, brain_path, run):
    pw = password() + "!"
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / f"password={pw}.txt").write_text("The router's login, written down once.\n")
    (folder / f"wifi password={pw}.md").write_text("")  # skipped as empty: its name is still shown
    result = run("brain", "ingest", folder, "--no-embed")
    output = result.output + shown(run, "router login")
    assert_kept_out(brain_path, output, pw)
    assert "password=[REDACTED:password].txt" in run("brain", "sources").output


def test_what_would_be_stored_verbatim_is_refused_when_it_holds_a_secret(tmp_path, brain_path, run):
    secret = token()
    root = tmp_path / secret
    root.mkdir()
    (root / "a.md").write_text("A note.\n")
    for args in (["ingest", root], ["ingest", tmp_path, "--include", f"*{secret}*"],
                 ["ingest", "--llm-logs", "--logs-db", tmp_path / f"{secret}.db"]):
        result = run("brain", *args, "--no-embed", ok=False)
        assert result.exit_code == 1 and "holds what looks like a secret" in result.output
        assert len(result.output.strip().splitlines()) == 1 and not leaks(secret, result.output)
    assert not brain_path.exists() or not leaks(secret, raw_brain(brain_path))


# ------------------------------------------------------------------------------------------------
# Nothing a library prints about a document, no partial secret, no query leaves unscrubbed.


def test_a_damaged_document_says_its_scrubbed_name_and_nothing_of_its_bytes(tmp_path, brain_path):
    secret = token()
    folder = tmp_path / "docs"
    folder.mkdir()
    damaged = pdf_bytes([["A page"]]).replace(b"%%EOF", b"").replace(b"startxref", b"startxrex")
    (folder / f"scan {secret}.pdf").write_bytes(damaged[:-40] + f" {secret} ".encode() * 3)
    (folder / "fine.md").write_text("A fine note.\n")
    res = subprocess.run(llm_cmd("brain", "ingest", folder, "--no-embed"), capture_output=True,
                         text=True, timeout=120, env={**os.environ, "SECONDBRAIN_DB": str(brain_path)})
    assert res.returncode == 0, res.stderr
    assert not leaks(secret, res.stdout + res.stderr) and not leaks(secret, raw_brain(brain_path))
    assert "skipped " in res.stderr and "[REDACTED:github_token]" in res.stderr
    assert "EOF marker" not in res.stderr  # pypdf's own line: not ours to print
    assert "1 ingested" in res.stdout


def test_a_private_key_block_of_any_length_is_redacted_whole(tmp_path, brain_path, run):
    body = base64.b64encode(os.urandom(73_000)).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "id.md").write_text("deploy key:\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines)
                                          + "\n-----END RSA PRIVATE KEY-----\n\nkept in the safe.\n")
    run("brain", "ingest", tmp_path / "k", "--no-embed")
    raw = raw_brain(brain_path).decode("latin-1")
    assert not any(line in raw for line in lines[::50])


def test_an_error_repeats_what_was_typed_scrubbed(tmp_path, brain_path, run):
    secret = token()
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text("The deploy pipeline rotates its credentials monthly.\n")
    run("brain", "ingest", tmp_path / "n", "--no-embed")
    typed = [("brain", "ingest", tmp_path / f"missing {secret}.md", "--no-embed"),
             ("brain", "recall", "deploy", "--project", secret),
             ("brain", "recall", "deploy", "--mode", secret),
             ("brain", "recall", "deploy", "--kind", secret),
             ("brain", "update", tmp_path / f"not a root {secret}"),
             ("brain", "roots", "--remove", tmp_path / secret),
             ("brain", "eval", tmp_path / f"{secret}.jsonl")]
    for args in typed:
        result = run(*args, ok=False)
        assert result.exit_code != 0 and "Error" in result.output and "Traceback" not in result.output, args
        assert not leaks(secret, result.output) and "[REDACTED:github_token]" in result.output, result.output
    call = json.dumps({"tool_calls": [{"name": "brain_recall", "arguments": {"query": "deploy", "kind": secret}}]})
    echoed = run("-m", "echo", "-T", "brain_recall", call).output  # echo repeats the call, then the result
    answer = echoed[echoed.index('"tool_results"'):]
    assert "could not search" in answer and not leaks(secret, answer)


def test_a_project_named_with_a_secret_is_found_by_what_was_typed(tmp_path, brain_path, run):
    project = f"pw={password()}!"
    run("brain", "ingest", "-", "--name", "harps", "--project", project, "--no-embed", input="A note about harps.\n")
    out = run("brain", "recall", "harps", "--project", project, "--mode", "lexical").output
    assert "A note about harps" in out and not leaks(project.split("=")[1], out)


def test_a_query_leaves_scrubbed(tmp_path, run, ollama):
    secret = token()
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text("The deploy pipeline rotates its credentials monthly.\n")
    run("brain", "ingest", tmp_path / "n", "--no-progress")
    ollama.requests.clear()
    out = run("brain", "recall", f"why does {secret} fail in the deploy pipeline", "--explain").output
    out += run("-m", "echo", "-f", f"brain:{secret} deploy pipeline", "hi").output
    assert ollama.requests and not leaks(secret, json.dumps(ollama.requests)) and not leaks(secret, out)


def test_eval_prints_the_golden_files_ids_and_classes_scrubbed(tmp_path, brain_path, run):
    """What eval repeats of a golden file (a query's id and class, the ids of negatives it
    answered) is scrubbed, with the rest of its line in scope: a password the query labels is
    redacted where the id repeats it."""
    secrets = [token(), "sIPM" + "".join(random.choices(ALNUM, k=16)), token(), password()]
    (tmp_path / "n").mkdir()
    (tmp_path / "n" / "a.md").write_text("The deploy pipeline rotates its credentials monthly.\n")
    run("brain", "ingest", tmp_path / "n", "--no-embed")
    golden, negatives = tmp_path / "golden.jsonl", tmp_path / "negatives.jsonl"
    golden.write_text("\n".join(json.dumps(q) for q in [
        {"id": f"q-{secrets[0]}", "class": f"api_key={secrets[1]}", "query": "deploy pipeline",
         "answers": ["n/a.md"]},
        {"id": f"q-{secrets[3]}", "query": f"router password: {secrets[3]}", "answers": ["n/a.md"]}]) + "\n")
    negatives.write_text(json.dumps({"id": secrets[2], "query": "pipeline credentials"}) + "\n")
    args = ("brain", "eval", golden, "--negatives", negatives, "--mode", "lexical")
    output = run(*args).output + run(*args, "--json", "--per-query").output
    assert_kept_out(brain_path, output, *secrets)
    assert "| lexical | api_key=[REDACTED:" in output and "answered: [REDACTED:github_token])" in output
    ids = [q["id"] for q in json.loads(run(*args, "--json", "--per-query").output)["queries"]["lexical"]]
    assert ids == ["q-[REDACTED:github_token]", "q-[REDACTED:password]"]


# ------------------------------------------------------------------------------------------------
# Upgrades re-scrub by themselves.


def test_a_brain_filled_under_other_rules_holds_none_of_what_todays_rules_catch(tmp_path, brain_path, run):
    """Rules that once let a token through (here: the stored rows are written back with the
    token, as older rules left them) are caught up on by the next ingest: files are read again,
    what cannot be read (stdin, conversations, a file stored under a scrubbed name) is scrubbed
    in place, names, titles, metadata, facts, labels and roots included."""
    secrets = [token() for _ in range(4)]
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "ci.md").write_text(f"CI notes\n\nthe runner token is {secrets[0]}\n")
    run("brain", "ingest", folder, "--no-embed", "--project", "ops")
    run("brain", "ingest", "-", "--name", "scratch", "--no-embed", input="scratch pad for later\n")
    run("brain", "remember", "the runner is rebuilt on Sundays", "--tag", "ci")
    conn = sqlite3.connect(brain_path)
    with conn:  # what an older release with weaker rules would have stored
        conn.execute("UPDATE chunks SET text = text || ' ' || ?, title = ? WHERE path LIKE '%ci.md'",
                     (secrets[0], secrets[0]))
        conn.execute("UPDATE chunks SET text = ?, meta = ? WHERE path = 'scratch'",
                     (f"scratch {secrets[1]}", json.dumps({"note": secrets[1]})))
        conn.execute("UPDATE facts SET text = text || ' ' || ?", (secrets[2],))
        conn.execute("UPDATE chunks SET text = text || ' ' || ? WHERE path LIKE 'fact:%'", (secrets[2],))
        conn.execute("UPDATE files SET path = ? WHERE path = 'scratch'", (f"scratch {secrets[3]}",))
        conn.execute("UPDATE chunks SET path = ? WHERE path = 'scratch'", (f"scratch {secrets[3]}",))
        conn.executemany("UPDATE chunks SET sha = ? WHERE id = ?", [
            (text_sha(text), cid) for cid, text in conn.execute("SELECT id, text FROM chunks")])
        conn.execute("UPDATE chunks SET scrub_version = 9")
        conn.execute("UPDATE files SET scrub_version = 9")
        conn.execute("DELETE FROM meta WHERE key = 'scrub_rules'")
    conn.close()
    assert all(leaks(s, raw_brain(brain_path)) for s in secrets)
    result = run("brain", "update", "--no-embed")
    assert "re-scrubbed in place" in result.output
    assert_kept_out(brain_path, shown(run, "runner scratch") + run("brain", "facts").output, *secrets)


# ------------------------------------------------------------------------------------------------
# Gone means gone; forget means forget.


def test_replaced_and_forgotten_text_leaves_no_bytes(tmp_path, brain_path, run):
    """Each round replaces a note's first paragraph (the title every chunk of it is indexed
    with) and one more; the words replaced must be gone from the file's bytes every time."""
    folder = tmp_path / "notes"
    folder.mkdir()
    word = lambda: "".join(random.choices(string.ascii_lowercase, k=12))  # noqa: E731
    for i in range(12):
        (folder / f"n{i}.md").write_text("\n\n".join(" ".join(word() for _ in range(30)) for _ in range(6)))
    run("brain", "ingest", folder, "--no-embed")
    note = folder / "n3.md"
    for _ in range(6):
        paragraphs = note.read_text().split("\n\n")
        old = paragraphs[0].split() + paragraphs[3].split()
        paragraphs[0], paragraphs[3] = " ".join(word() for _ in range(8)), " ".join(word() for _ in range(30))
        note.write_text("\n\n".join(paragraphs))
        run("brain", "ingest", folder, "--no-embed")
        raw = raw_brain(brain_path)
        assert not [w for w in old if w.encode() in raw]
    forgotten = (folder / "n5.md").read_text().split()
    run("brain", "forget", folder / "n5.md")
    raw = raw_brain(brain_path)
    assert not [w for w in forgotten if w.encode() in raw]


def test_a_forgotten_folder_stays_forgotten_until_ingested_again(tmp_path, brain_path, run):
    folder = tmp_path / "notes"
    (folder / "private").mkdir(parents=True)
    (folder / "private" / "diary.md").write_text("Dear diary, the quokka came back.\n")
    (folder / "todo.md").write_text("Buy stamps.\n")
    run("brain", "ingest", folder, "--no-embed")
    run("brain", "forget", folder / "private")
    assert "quokka" not in run("brain", "update", "--no-embed").output
    hits = run("brain", "recall", "quokka diary", "--json", "--mode", "lexical").output
    assert "diary" not in hits
    roots = json.loads(run("brain", "roots", "--json").output.splitlines()[0])
    assert roots["forgotten"] == [str((folder / "private").resolve())]
    # what watch does with a changed file (reconcile) passes it by too
    (folder / "private" / "diary.md").write_text("Dear diary, the quokka came back twice.\n")
    from llm_secondbrain import SecondBrain

    with SecondBrain.open(brain_path) as sb:
        assert sb.refresh([str((folder / "private" / "diary.md").resolve())]).ingested == 0
    # a typo is not success
    result = run("brain", "forget", folder / "privte", ok=False)
    assert result.exit_code == 1 and "holds nothing" in result.output
    result = run("brain", "forget", "--project", "no-such-project", ok=False)
    assert result.exit_code == 1 and "holds nothing" in result.output
    # ingesting it explicitly brings it back, and the next update keeps it
    run("brain", "ingest", folder / "private", "--no-embed")
    run("brain", "update", "--no-embed")
    assert "diary" in run("brain", "recall", "quokka diary", "--json", "--mode", "lexical").output
    # forgetting a whole root stops tracking it, and the roots inside it: an update brings nothing back
    out = run("brain", "forget", folder).output
    assert out.count("is no longer a root") == 2
    assert run("brain", "roots", "--json").output.strip() == ""
    run("brain", "update", "--no-embed")
    assert "diary" not in run("brain", "recall", "quokka diary", "--json", "--mode", "lexical").output


def test_forgetting_a_folder_that_holds_roots_sticks(tmp_path, brain_path, run):
    for name in ("work", "home"):
        (tmp_path / "all" / name).mkdir(parents=True)
        (tmp_path / "all" / name / "n.md").write_text(f"The {name} note about the quokka.\n")
    run("brain", "ingest", tmp_path / "all" / "work", tmp_path / "all" / "home", "--no-embed")
    out = run("brain", "forget", tmp_path / "all").output
    assert "forgot 2 chunks from 2 sources" in out and out.count("is no longer a root") == 2
    run("brain", "update", "--no-embed", ok=False)
    assert "quokka" not in run("brain", "recall", "quokka", "--mode", "lexical").output


def test_a_forgotten_file_is_named_and_kept_out_under_the_name_the_brain_stored(tmp_path, brain_path, run):
    """The file's name holds a value only its text labels: forget, roots and the roots table
    show the name ingest stored, not the name as typed (forgetting it twice too)."""
    pw = password() + "!"
    (tmp_path / "notes" / "ok").mkdir(parents=True)
    note = tmp_path / "notes" / "ok" / f"router-{pw}.md"
    note.write_text(f"router password: {pw}\n")
    run("brain", "ingest", tmp_path / "notes", "--no-embed")
    output = "".join(run(*args).output for args in (
        ("brain", "forget", note), ("brain", "forget", note, "--json"),
        ("brain", "roots"), ("brain", "roots", "--json")))
    assert_kept_out(brain_path, output, pw)
    assert json.loads(run("brain", "roots", "--json").output)["forgotten"] == [
        str((tmp_path / "notes" / "ok").resolve() / "router-[REDACTED:password].md")]


def test_a_forgotten_folder_is_named_as_its_files_stored_it_and_its_chunks_go(tmp_path, brain_path, run):
    """One note labels the value in its folder's name, its neighbour does not: each was stored
    with the folder's name scrubbed in its own scope. Forgetting the folder removes both and
    keeps it out under a name holding the value nowhere."""
    pw = password() + "!"
    folder = tmp_path / "p1" / f"db-{pw}"
    folder.mkdir(parents=True)
    (folder / "c.md").write_text(f"db password: {pw}\n")
    (folder / "d.md").write_text("The database moved to the new rack.\n")
    run("brain", "ingest", tmp_path / "p1", "--no-embed")
    result = run("brain", "forget", folder)
    assert "forgot 2 chunks from 2 sources" in result.output
    output = result.output + run("brain", "update", "--no-embed").output + shown(run, "database rack")
    assert_kept_out(brain_path, output, pw)
    assert json.loads(run("brain", "roots", "--json").output)["forgotten"] == [
        str((tmp_path / "p1").resolve() / "db-[REDACTED:password]")]
    assert "rack" not in run("brain", "recall", "database rack", "--json", "--mode", "lexical").output


# ------------------------------------------------------------------------------------------------
# MCP shows what the CLI shows, scrubbed.


def test_mcp_shows_nothing_the_gate_kept_out(tmp_path, brain_path, run):
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    secret, pw = token(), password()
    folder = tmp_path / "n"
    folder.mkdir()
    (folder / f"{secret}.md").write_text(f"vault password: {pw}\n\nThe vault opens with {pw} on Mondays.\n")
    run("brain", "ingest", folder, "--no-embed")

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "llm", "brain", "mcp"],
                                       env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                # a query naming what the brain never holds (the token) answers nothing: the
                # second one shows the passage as a model is handed it
                calls = [await session.call_tool("recall", {"query": f"vault Mondays {secret}"}),
                         await session.call_tool("recall", {"query": "vault Mondays"}),
                         await session.call_tool("sources", {}), await session.call_tool("stats", {})]
                return json.dumps([c.model_dump(mode="json") for c in calls])

    output = asyncio.run(asyncio.wait_for(main(), 120))
    assert "vault opens" in output
    assert not leaks(secret, output) and not leaks(pw, output)


def test_a_reader_holding_the_brain_is_named_and_the_next_command_finishes_the_job(tmp_path, brain_path, run):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("The vorpalquokka note.\n")
    (folder / "b.md").write_text("Another note.\n")
    run("brain", "ingest", folder, "--no-embed")
    # another process in the middle of a read, as a running watch or MCP server may be
    hold = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('BEGIN'); "
            "c.execute('SELECT count(*) FROM chunks').fetchone(); print('ready', flush=True); sys.stdin.read()")
    reader = subprocess.Popen([sys.executable, "-c", hold, str(brain_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert reader.stdout.readline().strip() == "ready"
    result = run("brain", "forget", folder / "a.md")
    reader.communicate("", timeout=60)
    assert "another process has the brain open" in result.output
    run("brain", "stats")
    wal = Path(f"{brain_path}-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert b"vorpalquokka" not in raw_brain(brain_path)

"""Secret scrubbing: the engine's behaviour (the interface and report, context kept, e-mails only
on request, never raising and idempotent on any text, a secret found once redacted everywhere,
the allow marker and patterns, what a marker says). What each rule and filter does is in its
examples beside it in scrub/catalogue.py and scrub/filters.py, walked by test_scrub_catalogue.py
(a secret typed twice in one example is a named field there: {alnum:12=pw} … {=pw}); linear
time and speed are measured in bench/scrub_linear.py and bench/scrub_speed.py.

Every "secret" here is generated at import time from a seeded RNG in the documented shape of
its vendor (prefix, alphabet, length), so this file holds no real credential and nothing that
a repository secret scanner would flag as one. The shared corpus is not needed.
"""
from __future__ import annotations

import random
import string
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from test_scrub_catalogue import _rules as catalogue_rules
from test_scrub_catalogue import fill

from llm_secondbrain.scrub import catalogue
from llm_secondbrain.scrub import engine as scrub_mod
from llm_secondbrain.scrub import labels as scrub_labels
from llm_secondbrain.scrub import rules_identity, scrub, scrub_report

_rng = random.Random(20260211)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def r(alphabet: str, n: int) -> str:
    """Random string with at least one digit, one lower and one upper where the alphabet allows."""
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if (any(c.isdigit() for c in s) or not any(c.isdigit() for c in alphabet)) and (
                any(c.islower() for c in s) or not any(c.islower() for c in alphabet)) and (
                any(c.isupper() for c in s) or not any(c.isupper() for c in alphabet)):
            return s


def pem(label: str, lines: int = 6, sep: str = "\n") -> tuple[str, str]:
    body = sep.join(r(B64, 64) for _ in range(lines)) + sep + r(B64, 20) + "=="
    return f"-----BEGIN {label}-----{sep}{body}{sep}-----END {label}-----", body


POSITIVES = [fill(t, rule.id + t)[0] for rule in catalogue_rules() for t in rule.examples]


# ------------------------------------------------------------------------------------------------
# interface and report
# ------------------------------------------------------------------------------------------------
def test_interface():
    assert rules_identity().startswith("rules-") and rules_identity() == rules_identity()
    out, counts = scrub_report("x")
    assert out == "x" and isinstance(counts, Counter) and not counts
    assert scrub("") == "" and scrub_report("") == ("", Counter())


def test_report_names_kinds_never_values():
    tok = "ghp_" + r(ALNUM, 36)
    pw = "Vinter" + r(string.digits, 4) + "#"
    text = f"GITHUB_TOKEN={tok}\npassword: {pw}\nthe wifi password is {pw}\n"
    out, counts = scrub_report(text)
    assert tok not in out and pw not in out
    assert counts["github_token"] == 1 and counts["password"] == 2
    for kind in counts:
        assert tok not in kind and pw not in kind
        assert f"[REDACTED:{kind}]" in out
    assert scrub(text) == out


def test_keeps_context_around_redactions():
    tok = "xoxb-" + r(string.digits, 12) + "-" + r(string.digits, 13) + "-" + r(ALNUM, 24)
    out = scrub(f"slack:\n  bot_token: '{tok}'\n  channel: '#ops'\n")
    assert out == "slack:\n  bot_token: '[REDACTED:slack_token]'\n  channel: '#ops'\n"


def test_a_redaction_that_stops_at_an_equals_sign_inside_a_token_goes_on_to_its_end():
    head, tail = r(ALNUM, 30) + r(string.digits, 6), r(ALNUM, 10) + "=" + r(ALNUM, 8)
    out = scrub(f"the client secret is {head}={tail} for now\npassword=Hytta2024! user=bob\n")
    assert out == "the client secret is [REDACTED:secret] for now\npassword=[REDACTED:password] user=bob\n"


def test_private_key_keeps_armour():
    block, body = pem("RSA PRIVATE KEY")
    out = scrub(block)
    assert out == "-----BEGIN RSA PRIVATE KEY-----\n[REDACTED:private_key]\n-----END RSA PRIVATE KEY-----"


def test_emails_only_on_request():
    text = "Kontaktperson: ola.nordmann@example.no, tlf 22 33 44 55\nFrom: Kari <kari@firma.example>"
    assert scrub(text) == text
    out, counts = scrub_report(text, strip_emails=True)
    assert "ola.nordmann@example.no" not in out and "kari@firma.example" not in out
    assert counts["email"] == 2 and "Kontaktperson:" in out
    assert scrub(out, strip_emails=True) == out


def test_import_compiles_lazily():
    # patterns compile on first use: importing the package compiles none, and a one-shot
    # recall's short query compiles only the few it reaches
    code = ("import sys; import llm_secondbrain.scrub as s; from llm_secondbrain.scrub import patterns; "
            "lazy = lambda: [v for m in list(sys.modules.values()) if m and m.__name__.startswith("
            "'llm_secondbrain.scrub') for v in vars(m).values() if isinstance(v, patterns.Lazy)]; "
            "assert len(lazy()) > 100 and not any('_rx' in vars(v) for v in lazy()); "
            "s.scrub('how do I roll back a deployment'); used = sum('_rx' in vars(v) for v in lazy()); "
            "assert 0 < used < len(lazy()) / 4, used; "
            "assert s.scrub('password = hunter2xyz!') == 'password = [REDACTED:password]'")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------------
_FRAGMENTS = POSITIVES[::7] + [fill(t, t)[0] for t in catalogue.STAYS[::5]] + [
    "password", "=", ":", " ", "\n", '"', "'", "`", "\\n", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "[REDACTED:secret]", "://", "@", "Bearer ", "Basic ", "-p",
    "token=", "eyJ", "ghp_", "sk-", "AKIA", "kind: Secret\ndata:\n", "Cookie: ", " / ", "passord er ",
    "PuTTY-User-Key-File-3: x\nPrivate-Lines: 2\n", "İ", "ß", "\u2028", "\x00", "é", "🙂",
    # other languages' words, particles and quotes (catalogue.SECRET_WORDS_ELSEWHERE)
    *(stem for stem, _, _ in catalogue.SECRET_WORDS_ELSEWHERE[::3]), "は", "是", "로", "「", "」", "«", "»", "„", "“",
    " est ", " — ", "?\n[09:00] Bo: ", "# ", "Kq7#x9Lm", "Chaton_Gris_88",
    # text written otherwise (fold.py): invisible characters, full-width forms, escapes, paragraphs
    "\u200b", "\u00ad", "\ufeff", "Ｐａｓｓｗｏｒｄ：", "Ｋｑ７＃ｘ９", "%3D", "%21", "%2", "\n\n",
    "&amp;", "&#106;", "\\u30d1\\u30b9", "<code>", "\u202f", "<tr><th>", "</td>\n<td>", "</tr>",
]
_text = st.lists(st.one_of(st.sampled_from(_FRAGMENTS), st.text(max_size=30)), max_size=12).map("".join)


@settings(max_examples=400, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_text, st.booleans())
# regressions found by hypothesis: a redaction marker must not become context for another rule
@example("[10:02] Ola: xapp-1-AVOI1OJ38U4-8335534445107-94a339c5b30c57f3835cfb9b63331cbc13e8fc43bf27565"
         "bc6d7a1566fd85dd2 (don't paste it)PuTTY-User-Key-File-3: x\nPrivate-Lines: 2\n", False)
@example("Benutzer: etl_user, Kennwort: Sommer2024!\r0;here is the key", False)
# a long token pushed the word "token" out of the context window on the first pass only
@example("token for staging: eyJVT4u0hK9dXwCJZFv1spSKKeEGOEDhaqi1.eyJL8jHNKzdItF4rlLpfifYoZZgZVw22Of5WE7XDZu2pHGtk"
         "yr-O0FrP10DwrMU.Foz1XcK9RDJeYyj5D21boUMuGZ6ejXPNGHGUV_9WXHQaz login -u 1b2c -p UPb4PQe9TIoJ! "
         "--tenant 3d4ePASSWORD_MIN_LENGTH = 12", False)
# ... and a short token's longer marker pulled a far "hash" word into it on the second pass only
@example('PASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]aws configure set '
         "aws_access_key_id AKIAC7XJTMIY5JF88TWE\naws configure set aws_secret_access_key "
         "9gpSrzDCjlwnFcZ3U4G5CoOeOpdZZKRG2pI58RmChere is the key:", False)
# an Authorization value of punctuation only ("Bearer ........") raised IndexError
@example("Authorization: Bearer ..........", False)
# a value let go because the sentence went on was taken on a second pass, its neighbour now a marker;
# a name in Latin letters ran on into a glued word of another script and hid a password word there
@example("password: hello Kq7#x9", False)
@example("jelszo est\nKq7#x9cléگذرواژه κωδικpasswordclé?API\n", False)
# a password word glued after a token was no word on the first pass, and one after the token's marker
@example("ghp_Zk3q9LmW2xR7vT4pN8sY1bQ6cF0hJ5dG2aE9пароль Hytta2024!x", False)
# "passw" followed by none of "ord", "d", "ort" (a password word of another language glued to it)
# raised AttributeError where a random token's context was read
@example("passwagwoord=Zk3q9LmW2xR7vT4pN8sY1bQ6cF0hJ5dG2aE9\n", False)
# a password read to its cap inside a base64 run kept the run's tail, which the second pass took
@example("curl -u USERNAME:PASSWORD https://api.example.com/\x85![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEA"
         "AAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==)", False)
# a second pass's context window began inside a marker ("…ker_key]") and read the kind's "key"
@example("key 373318-112915-358501-616737-538340-693374-643577-465961[10:02] Ola: AKIASLXJT2J9ZLAS0614 (don't "
         "paste it in #general pls)export SOME_VAR='AIzaoVP0w-v5_YuT7q6O5rXa7UwpBSFH5X8lLsK'\nPORT=8080a tokenizer splits "
         "cOp37deHDddcX10Y90ISSKha5RJf3fWD", False)
# ... and read "Backup phrase:" within three lines of a token, where the first read the phrase on three
@example("PORT=8080[10:02] Ola: AKIASLXJT2J9ZLAS0614 (don't paste it in #general pls)Backup phrase:\nutmog abfihwk "
         "toioqu lvvydv\nllhhnwhr gskdfkfp ogvtl ljztcrtj\nhopvoemt ifwvobvx uwfokg nqdxua tokenizer splits "
         "cOp37deHDddcX10Y90ISSKha5RJf3fWD", False)
# a password glued to the next label lent its name to that label's value on the first pass only
@example('salasana = TtwIiaw8n1!publicToken = "98kmAbq3ZrT5xV0pWd7Lm2"', False)
# a value took the table's first "|", so only the second pass read the table under it
@example("salasana = TtwIiaw8n1!| Dịch vụ | Mật khẩu |\n|---|---|\n| FTP | Hytta2024 |\n", False)
@example("a senha é TtwIiaw8n1Lm| Dịch vụ | Mật khẩu |\n|---|---|\n| FTP | Hytta2024 |\n", False)
# a label glued after a value a later rule found ran back into it on the first pass
@example("curl -X POST https://acme.tines.com/webhook/vnugprk6hvsai9d3nr373r665552tyvd/k7z27rz8hj379d3pogh3b6zhd4r2m2dz"
         "κλειδί_api: pnginmwqwkxg99019580", False)
# ... or began inside it ("klíč" of "…sfsklíčparola_d_ordine=…") and hid the label after it
@example("dnkey-jagzdibpvjiyopdbceaoradplo-srhuwhahawnediszedhcuznobmvevyqjbjoacgsyfrzqmhtsysfsklíčparola_d_ordine="
         "Kq7tpbf92Ya0", False)
# a copy of a value took a word glued to it ("commit", a label's first letters) that the first
# pass had read around it
@example("password: Vinter2026!x\npassword_confirmation: Vinter2026!xcommit 9fceb02d0ae598e95dc970b74767f19372d61af8\n"
         "Author: Kari\n\n    fix: handle CRLF", False)
@example("password: Vinter2026!x\npassword_confirmation: Vinter2026!xκλειδί_api: pnginmwqwkxg99019580", False)
# a second pass took a marker trimmed of its "[" for a login's password
@example("Login for the router: admin / Hytta6268[10:02] Ola: AKIASLXJT2J9ZLAS0614 (don't paste it in #general pls)"
         "Login for the router: admin / Hytta6268", False)
# a marker's colon was read as the one before a login's user name
@example("Login for the router: admin / Hytta6268contact ola@example.com / write2 more", True)
# a second pass's window began just after a marker's "[" and read the kind's "password"
@example('ldapsearch -x -D "cn=admin,dc=example,dc=org" -w n4txLXxLKZ! -b dc=exampleexport '
         "SOME_VAR='AIzaoVP0w-v5_YuT7q6O5rXa7UwpBSFH5X8lLsK'\nPORT=8080export SOME_VAR='AIzaoVP0w-v5_YuT7q6O5rXa7UwpBSFH5X8lLsK'"
         "\nPORT=8080a tokenizer splits cOp37deHDddcX10Y90ISSKha5RJf3fWD", False)
# an Arabic token word glued to a Thai password word ran on into it as one label and hid it
@example("- **Password**: Hytta2024توكنรหัสไวไฟคือMango@Sticky61นะ", False)
# a reader of "user:password" took the "password]" of a marker for a password
@example("پاس ورڈ「echo 'deploy:6jCAn7imIY!' | sudo chpasswd", False)
# a chat's answer, redacted, was read as a message's "[…]" head, and the line after it as the answer
@example("jaké je heslo k Wi-Fi pro hosty?\nKnedlik_Zeli_2023\n00;00A", False)
# the reach before a password word cut a long word, and its tail was read as a password
@example("https://metabase.example.com/question#?sql=SELECT%20user_token%2C%20api_key_hash%20FROM%20accounts%20WHERE"
         "%20id%3D42\u200bAdgangskoden til routeren er Sommer2022!def PFXImportCertStore(PFX, Password, Flags) -> "
         "_win32typing.PyCERTSTORE: ...", False)
# a label glued after a value another label redacted ran back into that value
@example("Authorization: SSWS 00zfsUFeQm1xcx5u19KvrxVu9iynxN-P1Zg0zHjGC9κλειδί_api: pnginmwqwkxg99019580", False)
def test_never_raises_and_is_idempotent(text, emails):
    out, counts = scrub_report(text, strip_emails=emails)
    assert isinstance(out, str)
    assert all(isinstance(k, str) and k.isidentifier() for k in counts)
    assert scrub(out, strip_emails=emails) == out


@settings(max_examples=200, deadline=None, database=None)
@given(st.text())
def test_arbitrary_unicode(text):
    out = scrub(text)
    assert scrub(out) == out


# ------------------------------------------------------------------------------------------------
# issue 15: a secret found once is redacted everywhere in the document
# ------------------------------------------------------------------------------------------------
def test_a_secret_found_once_goes_everywhere():
    pw = "Tr0ub4dor&" + r(string.digits, 1) + "horse"
    note = f"# Cabin\n\nwifi password: {pw}\n\nGuests connect with {pw} from the porch.\n"
    out, counts = scrub_report(note)
    assert pw not in out
    assert counts["password"] == 2 and out.count("[REDACTED:password]") == 2
    assert "Guests connect with [REDACTED:password] from the porch." in out
    line, counts = scrub_report(f"the wifi password is {pw} (guests use {pw} too)")
    assert pw not in line and counts["password"] == 2


def test_a_long_secret_glued_inside_a_word_goes_too():
    key = "SG." + r(ALNUM, 22) + "." + r(ALNUM, 43)
    out = scrub(f"SENDGRID_API_KEY={key}\n\nlater pasted as som{key}where in the log\n")
    assert key[3:] not in out and "som[REDACTED:" in out
    # a value of letters only is another word when it is glued: 'IAmSensitiveBytes' stays
    out = scrub("Model(password='IAmSensitive', password_bytes=b'IAmSensitiveBytes')")
    assert "IAmSensitiveBytes" in out and "'IAmSensitive'" not in out


def test_copies_are_whole_tokens_and_words_do_not_spread():
    pw = "Vint" + r(string.digits, 4) + "#Q"  # (under 12 characters: a copy inside a word is another word)
    out = scrub(f"db_password: {pw}\n\n\n\nlog: x{pw} and {pw}x stay, {pw} goes")
    assert out.count("[REDACTED:") == 2 and f"x{pw} and {pw}x stay" in out
    # a documented default is no secret of the user's, so neither it nor its copies go
    text = "POSTGRES_PASSWORD=postgres\nPOSTGRES_DB=postgres\npostgresql://postgres:postgres@localhost/app"
    assert scrub(text) == text


def test_names_and_words_are_never_redacted_everywhere():
    pw = r(ALNUM, 12)
    text = f"password: {pw}\nthe {pw} again, and password: Unicode\nUnicode strings"
    out = scrub(text)
    assert pw not in out and out.endswith("Unicode strings")


# ------------------------------------------------------------------------------------------------
# issue 15: a way out of a false positive
# ------------------------------------------------------------------------------------------------
def test_allow_marker_keeps_the_line_and_counts_it():
    pw = "Vinter" + r(string.digits, 4) + "#x"
    text = f"password: {pw}  # secondbrain:allow (a demo box)\npassword: {pw}x"
    out, counts = scrub_report(text)
    assert out.startswith(f"password: {pw}  # secondbrain:allow")
    assert f"{pw}x" not in out and counts["allowed"] == 1 and counts["password"] == 1


def test_allow_marker_never_lets_a_vendor_key_through_silently():
    tok = "ghp_" + r(ALNUM, 36)
    out, counts = scrub_report(f"GITHUB_TOKEN={tok}  # secondbrain:allow")
    assert tok in out and counts == Counter({"allowed": 1})


def test_allow_patterns_release_rule_findings_but_not_vendor_keys(tmp_path):
    allow_file = tmp_path / "allow.txt"
    allow_file.write_text("# fixtures of our test suite\n^fixture-[a-z0-9]+$\n\n^ghp_\n", encoding="utf-8")
    allow = scrub_mod.load_allow_patterns(str(allow_file))
    assert len(allow) == 2
    fixture = "fixture-" + r(LOWER_ALNUM, 16)
    tok = "ghp_" + r(ALNUM, 36)
    text = f"api_token: {fixture}\nGITHUB_TOKEN={tok}"
    out, counts = scrub_report(text, allow=allow)
    assert fixture in out and tok not in out
    assert counts["allowed"] == 1 and counts["github_token"] == 1
    assert scrub(text, allow=allow) == out


def test_bad_allow_pattern_names_file_and_line(tmp_path):
    allow_file = tmp_path / "allow.txt"
    allow_file.write_text("ok-[0-9]+\nbroken(\n", encoding="utf-8")
    with pytest.raises(ValueError) as err:
        scrub_mod.load_allow_patterns(str(allow_file))
    message = str(err.value)
    assert f"{allow_file}:2:" in message and "\n" not in message


# ------------------------------------------------------------------------------------------------
# the markers, and where a value ends
# ------------------------------------------------------------------------------------------------
def test_a_marker_never_repeats_what_it_hides():
    pw = "thisismypassword" + r(string.digits, 3)
    tok = "rubygems_" + r(HEX, 48)
    out, counts = scrub_report(f'"AdminPassword": "{pw}"\nAuthorization:{tok}\npassword: Vinter{r(string.digits, 4)}#x')
    assert "[REDACTED:secret]" in out and "password" not in out.split("\n")[0].split(":")[1]
    assert "rubygems" not in out.split("\n")[1] and "[REDACTED:password]" in out.split("\n")[2]
    assert counts["secret"] == 2 and counts["password"] == 1


def test_a_bare_value_stops_before_a_next_key_with_spaces():
    out = scrub("Server=db;User ID=sa;Password=Xk9mQ2vLp8r!;Persist Security Info=true")
    assert out.endswith("Password=[REDACTED:password];Persist Security Info=true")


def test_a_manual_of_settings_and_typographic_quotes_keeps_its_words():
    # GNU info manuals quote ‘--password=PASSWORD’ and list each setting's choices ("on/off"): a
    # redacted "on/off" went to every setting of the page, and "STRING’." to every mention of it
    manual = ("ask_password = on/off\n     Prompt for a password.\n\ncache = on/off\n\n"
              "‘--http-password=STRING’.\n‘--password=PASSWORD’\n")
    assert scrub(manual) == manual
    # a manual names an option's argument in capitals, and other options take it too
    gpg = "'--passwd USER-ID'\n     Change the passphrase.\n\n'--quick-revoke-uid USER-ID USER-ID-TO-REVOKE'\n"
    assert scrub(gpg) == gpg
    assert "HUNTER-TWO" not in scrub("sshpass -p HUNTER-TWO ssh --host HUNTER-TWO")
    pw = "Fj" + r(ALNUM, 10)
    assert scrub(f"The password is “{pw}”.\npassword: {pw}’") == (
        "The password is “[REDACTED:password]”.\npassword: [REDACTED:password]’")



def test_a_value_in_inline_html_or_with_a_quote_inside_is_redacted_whole():
    # "is X</p>" took "X</p" as the value, so the bare copy of X earlier in the note stayed; a
    # value in <code>…</code> after "is" was not read at all
    pw = "Zq" + r(ALNUM, 8) + "!-4417"
    note = f"Router admin {pw} here\nIts admin password is {pw}</p>\n"
    assert pw not in scrub(note) and scrub(note).endswith("[REDACTED:password]</p>\n")
    for wrapped in (f"the password is <code>{pw}</code>", f"password is <b>{pw}</b> ok",
                    f"password is {pw}<br/>next", f"Password: <kbd>{pw}</kbd>"):
        assert pw not in scrub(wrapped) and "[REDACTED:password]</" in scrub(wrapped).replace("<br/>", "</")
    # a label closed by its tag, and a no-break space written as a reference beside the colon
    assert scrub("<li><strong>PIN:</strong> 3568</li>") == "<li><strong>PIN:</strong> [REDACTED:pin]</li>"
    assert pw not in scrub(f"<p>Temporary password&nbsp;:&nbsp;{pw}&nbsp;(expires in 24h)</p>")
    # a bare value does not stop at a quote between two of its characters: the rest was kept
    for inside in ('"', "'", "`"):
        value = f"61aFnu{inside}Lrl9nR"
        assert scrub(f"password: <span>{value}</span>") == "password: <span>[REDACTED:password]</span>"
    value = "U7o7>0%SHd>nQ"  # a '>' inside is not the end of a tag
    assert scrub(f"Mum said the new password is “{value}” and I wrote it down.").count("[REDACTED:password]") == 1
    # ... but an English contraction or code markup after the label stays words
    for words in ("-pass isn't.", "pass :data:`h11.CLIENT`. If", "--stage-keys restApiId='a1b2',stageName='dev'"):
        assert scrub(words) == words


def test_a_passphrase_of_words_after_a_password_label_is_redacted():
    # words a person can remember, alone on the line after the label: no randomness to test
    words = " ".join(random.sample(["plaid", "fence", "tulip", "orbit", "lantern", "gravel", "mango", "quiver"], 4))
    assert scrub(f"Wifi password: {words}\nguest network") == "Wifi password: [REDACTED:password]\nguest network"
    for prose in ("password: must be at least twelve characters", "Password: stored in the keychain",
                  "PASS: objdump compress debug sections", "dostęp oparty o hasło: proszę wstawić hasło zamienne."):
        assert scrub(prose) == prose

def test_a_secret_is_read_the_same_beside_other_notes():
    """Found by pasting each catalogue example beside another: what the next paragraph, the line
    before or the value's own letters are must not let a secret go."""
    # a password word at the end of its line is a word ("… jelszóval" then a blank line)
    assert scrub("a „Kq7qUFX9lTFa!” jelszóval\n\nnext") == "a „[REDACTED:password]” jelszóval\n\nnext"
    # a password on the line before does not make a service's own name a plain label
    assert scrub('HASLO_BD=Kq7LhQYIhG5T\nwebexbot = "dP2BEVYfogLyBWnukvCYIml9E8Pqbd97p363rBK2"') == (
        'HASLO_BD=[REDACTED:password]\nwebexbot = "[REDACTED:secret]"')
    assert scrub("password: x\nSTRIPE_PUBLISHABLE_KEY=pk_test_aQbfVWeaCesES5FRSY7iIjk9").endswith("pk_test_aQbfVWeaCesES5FRSY7iIjk9")
    # a code of small letters by chance, beside one of the same shape with a digit
    assert scrub("2FA recovery codes\n- jijr-xklm\n- luoa-3qlq") == (
        "2FA recovery codes\n- [REDACTED:recovery_code]\n- [REDACTED:recovery_code]")
    # a short hex key is never let go as filler (about 2 % of random 13-character ones were)
    rng = random.Random(13)
    keys = ["".join(rng.choice("0123456789abcdef") for _ in range(rng.randrange(12, 20))) for _ in range(300)]
    assert [k for k in keys if not k.isdigit() and k in scrub(f"api_key = {k}")] == []
    # PostgreSQL's PGPASSWORD on a line before is no PGP key's id
    assert scrub("PGPASSWORD='B6StIdeApMZ5!' psql -h db\n\nthe token (Wi619hmNtwy9CTJ4AP7XZBE3KUuyh0lJ_)").endswith(
        "the token ([REDACTED:secret])")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted({chr(c) for c in range(1, 256)} - set(scrub_labels._OP_START))),
       st.text(alphabet=string.printable + "é", max_size=16))
def test_no_operator_starts_with_a_character_outside_op_start(first, rest):
    # _value_after tries neither _ASSIGN nor _ASSIGN_VALUE after a character outside _OP_START:
    # a change to _OP that lets it start with another character must add that character there
    scrub("warm up")  # the patterns compile on first use
    assert scrub_labels._ASSIGN.match(first + rest) is None
    assert scrub_labels._ASSIGN_VALUE.match(first + rest) is None

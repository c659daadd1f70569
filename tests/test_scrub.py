"""Secret scrubbing: representative positives / negatives per family, and the properties
(never raises, idempotent, linear on pathological input, e-mails only on request).

Every "secret" here is generated at import time from a seeded RNG in the documented shape of
its vendor (prefix, alphabet, length), so this file holds no real credential and nothing that
a repository secret scanner would flag as one. The shared corpus is not needed.
"""
from __future__ import annotations

import base64
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

from llm_secondbrain.scrub import engine as scrub_mod
from llm_secondbrain.scrub import labels as scrub_labels
from llm_secondbrain.scrub import RULES_VERSION, scrub, scrub_report

_rng = random.Random(20260211)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def _uuid() -> str:
    """A random version-4 UUID drawn from the seeded generator (the same in every run)."""
    return f"{r(HEX, 8)}-{r(HEX, 4)}-4{r(HEX, 3)}-a{r(HEX, 3)}-{r(HEX, 12)}"


def r(alphabet: str, n: int) -> str:
    """Random string with at least one digit, one lower and one upper where the alphabet allows."""
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if (any(c.isdigit() for c in s) or not any(c.isdigit() for c in alphabet)) and (
                any(c.islower() for c in s) or not any(c.islower() for c in alphabet)) and (
                any(c.isupper() for c in s) or not any(c.isupper() for c in alphabet)):
            return s


def leaked(secret: str, out: str, original: str) -> bool:
    """Like the corpus scorer: the whole secret or any 8-char window of it survives."""
    if secret in out:
        return True
    context = original.replace(secret, "\x00")
    for i in range(0, len(secret) - 7):
        w = secret[i:i + 8]
        if w not in context and w in out:
            return True
    return False


def pem(label: str, lines: int = 6, sep: str = "\n") -> tuple[str, str]:
    body = sep.join(r(B64, 64) for _ in range(lines)) + sep + r(B64, 20) + "=="
    return f"-----BEGIN {label}-----{sep}{body}{sep}-----END {label}-----", body


# ------------------------------------------------------------------------------------------------
# positives: the rules' own examples live beside the rules (scrub/catalogue.py) and
# tests/test_scrub_catalogue.py walks them; what is left here is what no one rule owns
# ------------------------------------------------------------------------------------------------
def test_a_private_key_in_a_yaml_block_goes_line_by_line():
    block, body = pem("RSA PRIVATE KEY")
    indented = "\n".join("    " + ln for ln in block.splitlines())
    text = f"tls:\n  key: |\n{indented}\n"
    out = scrub(text)
    for line in body.splitlines():
        if len(line) > 30:
            assert not leaked(line, out, text)


POSITIVES = [fill(t, rule.id + t)[0] for rule in catalogue_rules() for t in rule.examples]


# ------------------------------------------------------------------------------------------------
# negatives: must come back unchanged
# ------------------------------------------------------------------------------------------------
NEGATIVES = [
    "Invoice INV/2026/00037 is due 2026-06-04. Amount: NOK 5 644,76. KID: 9964717449",
    "| INV-2026-3611 | 2026-11-17 | 41 530,24 |\n| PO-80671 | 2026-06-02 | 0aebf0c | 24073,35 |",
    "Please transfer the deposit to IBAN NO93 8601 1117 947 (BIC DNBANOKKXXX).",
    '{"beneficiary": "Ola", "iban": "NL91ABNA0417164300", "bic": "ABNANL2A"}',
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Kari\n\n    fix: handle CRLF",
    "- uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2",
    "request_id=83633d51-3f50-4434-9e38-6c7babf980ec trace_id=c9cb8c55d4cdeecaff3345a6212d339b user_id=4",
    "oauth: token refreshed for client_id=b6488566-03c1-46a0-b594-52c1e2385d6e expires_in=3600",
    '"integrity": "sha512-dWlh/rJQ0vpCfWiVOFTGugLl4UYDJqTC2PHjOPhevuRl8PrIz1QV3uJXAAkpGUNnb+SRph6/fILibdzwZZMV8A=="',
    'hash = "sha256:c813c7d7cb9c1a35d9217c171fbe4209b251f363839ba81c28e40a18109960b1"',
    "golang.org/x/net v0.21.0 h1:U1kOOk8EnuWuAXLVLqADrQYvzY/4/Ow00zRu/IzQy1o=",
    '<script src="/x.js" integrity="sha384-uAPKYUJWVeGE5CixYZg85WMLRfWkVjrpvDxaRkZAb7nkVYfBTNWYlBcKjH41hFSV"></script>',
    "ssh host key fingerprint: SHA256:VJ27KqywIJKIGqRtdh9mnwb8mA8qrnMTWOV1kjGmtIo (ED25519)",
    "image: ghcr.io/acme/notifier@sha256:8d8157d6c3328ff83018bccadcabaa5396caad3087ac6ab67ae169325d237889",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKGhJOW27RKA965RY6e7z3sGJuKAe1S2R7BN/tlxseOm deploy@ci",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AicO2XMbVZvsjdBSDgzu3kqn/4Odk2+a3\n"
    "h0aEj0sYKK4+M8mnhNr7CAk65EwjEDidtDlWMPavQlQGr3oPza2KwuRc+hErcf/x\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDHjCCAgagAwIBAvQ0GntT5gWuVJ1c77iCcb6JroyJAAhaMXVsusvJKJ4KpY7S\n"
    "nTkA8XY3X4yYH2H/5TdK6Cfuu4Ks5gkUjV/i6ctZhQ7IXO4SX21AV9yUHdTpbRvt\n-----END CERTIFICATE-----",
    "[Peer]\nPublicKey = rTXM0xDZa/4KKUaPaecJ4f9WmE/5PxvWUsVPZ+9JUB8=\nEndpoint = vpn.example.org:51820",
    "# age public recipient\nage1ul3g6ud6thqf297n9cr46htqlesq3glq54w5wf9sekzvsxwmez5s6nylns",
    "![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==)",
    "Docs: https://docs.python.org/3/library/getpass.html#getpass.getpass",
    "git remote add origin git@github.com:acme/billing.git",
    "https://user@example.org/ is a URL with a username but no password.",
    "curl 'https://api.example.com/search?q=password+reset&lang=nb&page=2'",
    "Mirror: http://[2001:db8::1]:8080/debian/ bookworm main",
    "OPENAI_API_KEY=<YOUR_API_KEY>",
    "export GITHUB_TOKEN=YOUR_TOKEN_HERE",
    'api_key: "xxxxxxxxxxxxxxxxxxxxxxxx"',
    "Authorization: Bearer <token>",
    "password: ********",
    "ANTHROPIC_API_KEY=sk-ant-...",
    'client_secret: REDACTED\n"apiKey": "your-api-key-here",',
    "STRIPE_SECRET_KEY=sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "GITHUB_TOKEN=ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "postgres://user:password@localhost:5432/mydb\nDATABASE_URL=postgres://USER:PASS@HOST:5432/DB",
    "curl -u USERNAME:PASSWORD https://api.example.com/",
    "password: <%= ENV['DB_PASSWORD'] %>",
    'password = getpass.getpass("Password: ")',
    'password = os.environ["DB_PASSWORD"]\nconn = psycopg.connect(host=HOST, user=USER, password=password)',
    "if password != confirm_password:\n    raise ValidationError('Passwords do not match')",
    "const { username, password } = req.body;\nif (!password) return res.status(400).json({ error: 'password required' });",
    'token = request.headers.get("Authorization", "").removeprefix("Bearer ")',
    "api_key = settings.OPENAI_API_KEY\nclient = OpenAI(api_key=api_key)",
    'secret = client.get_secret_value(SecretId="prod/db")["SecretString"]',
    "PASSWORD_MIN_LENGTH = 12\nPASSWORD_HASHERS = [\"django.contrib.auth.hashers.Argon2PasswordHasher\"]",
    "primary_key=True, foreign_key=\"users.id\", keyFrame: 12",
    '"key": "ctrl+shift+down",\n"command": "editor.action.copyLinesDownAction"',
    "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=${API_KEY:?missing}",
    "password: \"{{ vault_db_password }}\"\napi_token: \"{{ lookup('env', 'API_TOKEN') }}\"",
    "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db-credentials\n        key: password",
    'export OPENAI_API_KEY=$(op read "op://Private/OpenAI/credential")',
    "password = %(DB_PASS)s\ntoken = $TOKEN",
    "aws secretsmanager get-secret-value --secret-id arn:aws:secretsmanager:eu-north-1:217001419436:secret:prod/db-zOX9YY",
    'client_secret = os.getenv("CLIENT_SECRET")  # set in 1Password, never commit',
    "An API key is a long random string. Treat it like a password: never commit it, rotate it if leaked.",
    "GitHub classic personal access tokens start with `ghp_`, fine-grained ones with `github_pat_`.",
    "Password policy: at least 12 characters, one digit, one symbol; passwords expire every 180 days.",
    "Hvis du mister API-nøkkelen, lag en ny under Innstillinger → API og slett den gamle.",
    "Der API-Schlüssel wird im Header X-API-Key übergeben. Bewahre ihn sicher auf.",
    "Welcome to Nordic2026! Registration opens at 09:00.",
    "The Summer2026 campaign starts on 1 June. Go Team2026!",
    "Stripe objects: customer cus_vkcrZmx9e5YsJ3, payment intent pi_f9JJT9LmRtmhKKmwXCBoDVye",
    "llm logs: conversation 01JN9EP41V3T4Y0TM67PS2B9Q2, model gpt-4o-mini, 812 input / 96 output tokens",
    "2026-01-01T05:18:49.462Z WARN  auth: login failed for user=ola.n reason=bad_password attempts=1",
    "2026-04-14T21:04:45.019Z DEBUG cache: key=user:143989:profile hit=true ttl=573",
    "Build 2026.02.11-rc3+sha.6eb2aee (go1.23.4 linux/amd64)",
    "model: claude-3-5-sonnet-20241022 / gpt-4o-2024-08-06 / gemini-2.0-flash-001",
    "docker run -p 8080:80 -v /data:/data nginx\nssh -p 2222 deploy@host\nmkdir -p /srv/app",
    "Cookie: theme=dark; lang=nb",
    "send the invoice to ola.nordmann@example.com please",
    # personal-secret labels in prose and their look-alikes: pins, codes, years, numbered steps
    "Connect the LED to pin 13 and GND.",
    "GPIO pin: 13",
    "pin the version to 2024 in requirements.txt",
    "The server answered with code 404.",
    "The process ended with exit code 1.",
    "error code 1234: disk full",
    "zip code 94107, area code 415, country code 47",
    "HTTP status code 500 means the server failed.",
    "The International Building Code 2018 applies.",
    "SIM PIN: 0000 (the default; change it)",
    "door code: 1234",
    "random seed: 1234",
    "A seed phrase is 12 words that you must never share with anyone.",
    "Write down the 12 words and keep them in a safe place.",
    "Recovery\n1. install\n2. restart\n3. verify\n4. login\n5. check\n6. backup\n7. reboot\n8. test\n"
    "9. done\n10. relax\n11. sleep\n12. wake",
    "Recovery steps:\n1. install the package\n2. run the tool\n3. reboot",
    "seed phrase:\n1. write it down\n2. store it offline\n3. never type it into a website",
    "Keep your backup codes somewhere safe; GitHub shows them only once.",
    "backup codes: see 1Password",
    "recovery codes: 10 remaining, regenerated 2024-03-01",
    'mnemonic = "test test test test test test test test test test test junk"  # Hardhat seed phrase',
    "ISBN 978-3-16-148410-0, coordinates 123456-654321",
]


@pytest.mark.parametrize("text", NEGATIVES, ids=[t[:40] for t in NEGATIVES])
def test_negative_cases_are_untouched(text):
    assert scrub(text) == text


# ------------------------------------------------------------------------------------------------
# interface and report
# ------------------------------------------------------------------------------------------------
def test_interface():
    assert RULES_VERSION == 10
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
    # patterns are compiled on first use, so importing the package stays cheap
    code = ("import llm_secondbrain.scrub as s; from llm_secondbrain.scrub import labels, patterns; "
            "assert isinstance(labels._ASSIGN_VALUE, patterns.Lazy); s.scrub('warm'); "
            "assert not isinstance(labels._ASSIGN_VALUE, patterns.Lazy)")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------------------------------------
# properties
# ------------------------------------------------------------------------------------------------
_FRAGMENTS = POSITIVES[::7] + NEGATIVES[::5] + [
    "password", "=", ":", " ", "\n", '"', "'", "`", "\\n", "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----", "[REDACTED:secret]", "://", "@", "Bearer ", "Basic ", "-p",
    "token=", "eyJ", "ghp_", "sk-", "AKIA", "kind: Secret\ndata:\n", "Cookie: ", " / ", "passord er ",
    "PuTTY-User-Key-File-3: x\nPrivate-Lines: 2\n", "İ", "ß", "\u2028", "\x00", "é", "🙂",
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
# issue 15: real notes are left alone (classes of false positives found on public notes)
# ------------------------------------------------------------------------------------------------
REAL_NOTE_NEGATIVES = {
    "percent-encoded-sql": "https://metabase.example.com/question#?sql=SELECT%20user_token%2C%20"
                           "api_key_hash%20FROM%20accounts%20WHERE%20id%3D42",
    "ci-secret-reference": "env:\n  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n  API_KEY: '{{ api_key }}'",
    "op-reference": "DB_PASSWORD=op://Private/Postgres/password\nTOKEN=$GITHUB_TOKEN",
    "gpg-key-id": "gpg --list-secret-keys --keyid-format=long\nsec   rsa4096/" + r("0123456789ABCDEF", 16)
                  + " 2025-10-19 [SC]\ngpg:                using RSA key " + r("0123456789ABCDEF", 40),
    "url-anchor-hash": "[confetti](https://manual.example.com/deeplinks#block-" + r(HEX, 32) + ")",
    "bcrypt-hash": "select crypt('pa$$w0rd', gen_salt('bf'));\n $2a$06$" + r(B64.replace("+", "."), 53),
    "k8s-configmap-path": "kind: Secret\nmetadata:\n  name: x\n---\nkind: ConfigMap\ndata:\n  key: secret/mysecret\n",
    "maven-coordinates": 'notes = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"',
    "public-token": 'publicToken = "' + r(ALNUM, 43) + '"',
    "attribute-name": '<entry key="jetbrains.mps.v8_elimination" value="executed" />',
    "vendor-filler": "apiKey: \"AIza" + "a" * 35 + "\"\ntoken = \"" + "x" * 14 + ".atlasv1." + "x" * 67 + "\"",
    "counting-placeholder": "secret_key => \"sk_abcdefghijklmnopqrstuvwxyz123\"\nSECRET_KEY_BASE=abc123efg456",
    "placeholder-url-password": "DATABASE_URL=postgresql://user_123:123456789012345@10.0.1.1/app",
    "placeholder-basic-auth": "> Authorization: Basic " + base64.b64encode(b"username:password\n").decode(),
    "prose-armour": "-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----",
    "sentence-end": "What is the password for a MySQL instance you've just created?\n"
                    "  puts 'That password did not match!'",
    "params-code": "new_user.password = params[:password]\ncreate_with(password: params[:password])",
    "angle-placeholder": "mongodump --username '<USER>' \\\n  --password '<PASSWORD>' \\\n  --out ./b/<DATE>-dump",
    "command-substitution": "-e SUMO_ACCESS_KEY=`etcdctl get /sumologic_secret`",
}


@pytest.mark.parametrize("name", sorted(REAL_NOTE_NEGATIVES))
def test_real_note_false_positive_classes_stay(name):
    text = REAL_NOTE_NEGATIVES[name]
    assert scrub(text) == text


# ------------------------------------------------------------------------------------------------
# issue 15: recall classes from other scanners' fixtures (values generated at run time)
# ------------------------------------------------------------------------------------------------
def _recall_cases():
    b64 = base64.b64encode(("admin:" + r(ALNUM, 12)).encode()).decode()
    dockercfg = base64.b64encode(('{"auths":{"r.example":{"auth":"' + b64 + '"}}}').encode()).decode()
    sumo, php, cred = r(ALNUM, 14), r(LOWER_ALNUM, 40), r(ALNUM, 10) + "!t"
    easypost = "EZAK" + r(ALNUM, 54)
    slack_a, slack_r = "xoxa-" + r(LOWER_ALNUM, 12), "xoxr-4-" + r(LOWER_ALNUM, 12)
    vendors = [  # shapes other scanners' rules know (kingfisher, noseyparker)
        "CCDB1_" + r(ALNUM, 22) + "_" + r(ALNUM, 40), "napi_" + r(ALNUM, 64), "PMAT-" + r(ALNUM, 26),
        "RGAPI-" + r(LOWER_ALNUM, 8) + "-" + r(LOWER_ALNUM, 27), "zpka_" + r(ALNUM, 32) + "_" + r(HEX, 8),
        "wandb_v1_" + r(ALNUM, 77), "cog_" + r("abcdefghijklmnopqrstuvwxyz234567", 52),
        "tskey-secret-" + r(ALNUM, 30), "xoxc-123456789012-123456789012-123456789012-" + r(HEX, 64)]
    return {
        "k8s-data-tab": (f"apiVersion: v1\nkind: secret\ndata:\n\textra: {b64}\n", [b64]),
        "k8s-block-scalar": (f"kind: Secret\ndata:\n  .dockercfg: |\n    {dockercfg}\n", [dockercfg]),
        "go-typed-declaration": (f'var sumoToken string = "{sumo}"', [sumo]),
        "php-concat-assign": (f'$coinbaseToken .= "{php}"', [php]),
        "make-assign": (f'HEROKU_TOKEN ?= "{php}"\nOTHER_TOKEN ::= "{php[::-1]}"', [php, php[::-1]]),
        "setproperty-pair": (f'System.setProperty("TRAVIS_TOKEN", "{php}")', [php]),
        "curl-empty-user": (f'curl -u ":{cred}" https://localhost:9200', [cred]),
        "curl-key-as-user": (f'curl -u "{cred}:" https://localhost:9200', [cred]),
        "slack-legacy": (f'"access_token": "{slack_a}"\n"refresh_token": "{slack_r}"', [slack_a, slack_r]),
        "easypost": (f"easypost\n- {easypost}\n", [easypost]),
        "bundler-host": (f"export BUNDLE_GEMS__EXAMPLE__COM={r(LOWER_ALNUM, 8)}:{cred}", [cred]),
        "more-vendor-prefixes": (" and ".join(vendors), vendors),
    }


# ------------------------------------------------------------------------------------------------
# issue 15, continued: a service's name as the label, short shapes, Jenkins, webhook URLs
# ------------------------------------------------------------------------------------------------
def _service_cases():
    tok, short_slack = r(ALNUM, 40), "xoxa-" + str(_rng.randint(2, 9)) + "-" + r(LOWER_ALNUM, 12)
    sumo, skey = "su" + r(ALNUM, 12), r(ALNUM, 40)
    jenkins = "AQAAABAAAAAQ" + r(B64, 44) + "="
    hook_a, hook_b = r(LOWER_ALNUM, 32), r(LOWER_ALNUM, 32)
    refresh = "0.A" + r(URLSAFE, 60) + "." + r(URLSAFE, 120)
    long_tok = "0.ABCDEFGHIJKLMNOPQRS_" + "A" * 12 + r(URLSAFE, 30) + "." + r(URLSAFE, 200)
    return {
        "service-as-label": (f'cloudflare: "{tok}"', [tok]),
        "service-first-argument": (f"mixpanel {tok}", [tok]),
        "service-name-prefix": (f'webexbot = "{tok}"', [tok]),
        "legacy-slack-under-20": (f'"access_token": "{short_slack}', [short_slack]),
        "sumo-access-id": (f'SUMO_ACCESS_ID = "{sumo}"', [sumo]),
        "duo-skey": (f'"duo_skey": "{skey}"', [skey]),
        "jenkins-credentials-xml": (f"<secret>{{{jenkins}}}</secret>", [jenkins]),
        "webhook-url": (f"curl -X POST https://acme.tines.com/webhook/{hook_a}/{hook_b}", [hook_a, hook_b]),
        "azure-refresh-token": (f'"refreshToken": "{refresh}"', [refresh]),
        "placeholder-head-random-body": (f"| {long_tok} |", [long_tok]),
    }


@pytest.mark.parametrize("text", [
    "github: " + r(HEX, 40),  # a commit beside the service's name is a hash, not a key
    "docker pull sentry:" + r(HEX, 64)[:12],
    "the cloudflare dashboard shows request " + r(HEX, 32) + " as blocked",
    "see https://example.com/hooks/setup and https://docs.example.com/webhooks/overview",
    "stripe docs: https://stripe.com/docs/api",
])
def test_service_names_alone_do_not_redact(text):
    assert scrub(text) == text


@pytest.mark.parametrize("name", [
    "3-hydroxy-3-methylglutaryl", "phosphatidylinositol-3-kinase", "GEP100-Arf6-AMAP1-cortactin",
    "TLR4-TRIF-RIPK1-FADD-CASP8", "A/Netherlands/602/2009", "epigallocatechin-3-gallate",
])
def test_compound_names_in_scientific_prose_are_left_alone(name):
    """Found on SciFact abstracts: a chemical or a gene pathway near the word "key" is a name
    built of words and short codes, not a random token."""
    text = f"A key finding: the {name} pathway is essential for angiogenesis in these mice."
    assert scrub(text) == text


def test_a_random_token_with_separators_beside_a_secret_word_is_still_redacted():
    rng = random.Random(11)
    alphabet = string.ascii_letters + string.digits
    token = "-".join("".join(rng.choice(alphabet) for _ in range(9)) for _ in range(3))
    token = "aB" + token  # a capital after a small letter, as random tokens have
    assert token not in scrub(f"the freshworks api key is {token} for the sandbox")


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted({chr(c) for c in range(1, 256)} - set(scrub_labels._OP_START))),
       st.text(alphabet=string.printable + "é", max_size=16))
def test_no_operator_starts_with_a_character_outside_op_start(first, rest):
    # _value_after tries neither _ASSIGN nor _ASSIGN_VALUE after a character outside _OP_START:
    # a change to _OP that lets it start with another character must add that character there
    scrub("warm up")  # the patterns compile on first use
    assert scrub_labels._ASSIGN.match(first + rest) is None
    assert scrub_labels._ASSIGN_VALUE.match(first + rest) is None


@pytest.mark.parametrize("text", [
    'sb.append("MasterUserPassword: " + getMasterUserPassword() + ",");',
    '"//localhost:1337/:_password = "+new Buffer("feast").toString("base64")',
    "echo 'password = '.$p['config']['daemon_password'].\"\\n\";",
    'usernameLabel:"Username or email:",passwordLabel:"Password:",rememberMeLabel:"Remember me:"',
])
def test_code_between_two_string_literals_is_not_a_password(text):
    # the label sits at the end of one literal; what follows its closing quote is code
    assert scrub(text) == text


@pytest.mark.parametrize("text", [
    "define wget::authfetch($source,$destination,$user,$password=\"\",$timeout=\"0\",$verbose=false) {",
    "USERNAME=donjuan\nPASSWORD=$($(dirname $0)/../bin/get-django-setting LOCAL_DATABASE_PASSWORD)",
    'text << "Password=#{password}, "',
])
def test_code_after_a_password_word_is_not_a_prose_password(text):
    assert scrub(text) == text


def test_a_password_after_a_closing_quote_is_still_redacted():
    pw = "Kq7" + r(ALNUM, 9) + "!"
    for text in (f'"password": "{pw}",', f"password = '{pw}'", f"the password is {pw} for now"):
        assert pw not in scrub(text)


@pytest.mark.parametrize("text", [
    '<?php\n  \\$user = \\$_POST[\\"username\\"];\n  \\$pwd = \\$_POST[\\"password\\"];\n?>',
    '"password": "&lt;YOURPASSWORD&gt;"',
    'this.addPassword = "#add-password";',
    "$('.password-field').val(''); var passwordSel = '.login-password-input';",
])
def test_escaped_variables_html_escaped_placeholders_and_selectors_are_not_passwords(text):
    assert scrub(text) == text


def test_a_password_starting_with_a_hash_or_backslash_is_still_redacted():
    pw = "#Kq7" + r(ALNUM, 8)
    assert pw not in scrub(f'password: "{pw}"')
    pw2 = "\\Kq7" + r(ALNUM, 8) + "!"
    assert pw2 not in scrub(f"password = '{pw2}'")


def test_salesforce_access_token_is_redacted_whole():
    org = "00D" + r(ALNUM, 12)
    tok = org + "!" + r(ALNUM + "._", 95) + "Q"
    out = scrub(f"sf org display says\nAccess Token      {tok}.\nInstance Url      https://x.my.salesforce.com")
    assert org not in out and tok[16:] not in out and "[REDACTED:salesforce_token]." in out
    assert scrub("Hello!" + r(string.ascii_lowercase, 90)).startswith("Hello!")


def test_slack_workspace_app_and_refresh_tokens_are_redacted_whole():
    tok = "xoxr-" + "-".join(str(_rng.randrange(10**5, 10**6)) for _ in range(3)) + "-" + r(HEX, 18)
    assert scrub(f"refresh: {tok} ok") == "refresh: [REDACTED:slack_token] ok"
    tok2 = "xoxa-2-" + "-".join(str(_rng.randrange(10**8, 10**9)) for _ in range(3)) + "-" + r(HEX, 18)
    assert tok2[7:] not in scrub(tok2)


def test_grafana_legacy_api_key_is_redacted():
    key = base64.b64encode(('{"k":"%s","n":"ci","id":7}' % r(ALNUM, 32)).encode()).decode()
    assert key.startswith("eyJrIjoi")
    assert scrub(f"curl -H 'Authorization: Bearer' {key}") == "curl -H 'Authorization: Bearer' [REDACTED:grafana_api_key]"


def test_unsigned_jwt_header_and_payload_is_redacted_but_a_lone_header_is_not():
    jwt = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ" + r(ALNUM, 30)
    assert scrub(f"token {jwt}") == "token [REDACTED:jwt]"
    for text in ("header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 only", "eyJAAAA.eyJBBB", "eyJBB.eyJCC.eyJDDDD"):
        assert scrub(text) == text


def test_aiven_password_is_redacted():
    pw = "AVNS_" + r(ALNUM, 19)
    assert scrub(f"avnadmin:{pw}@pg-1.aivencloud.com").count(pw[5:]) == 0
    assert scrub(f"it printed {pw}") == "it printed [REDACTED:aiven_password]"


def test_a_service_name_fused_before_apikey_is_still_an_api_key_label():
    key = r(ALNUM, 18) + "-" + r(ALNUM, 12) + "_" + r(ALNUM, 12)  # IBM Cloud keys mix '-' and '_' in
    assert key not in scrub(f"IBMCLOUDIAMAPIKEY={key}")
    assert key not in scrub(f"ibm_cloud_iamapikey= {key}")
    assert scrub("monkey = banana_split_recipe_v2") == "monkey = banana_split_recipe_v2"


@pytest.mark.parametrize("text", [
    'my_password = "fakesecret"',
    'cloud-iam-key:=afakekey',
    'theapikey = @"somefakekey"',
])
def test_a_value_that_says_it_is_fake_is_a_placeholder(text):
    assert scrub(text) == text


# ------------------------------------------------------------------------------------------------
# issue 15, continued: other languages, letters-only secrets, shell and PowerShell, more vendors
# ------------------------------------------------------------------------------------------------
def _random_letters_value() -> str:
    """Letters only, case flipping at random: the shape of a generated secret without a digit."""
    consonants = "bcdfghjklmnpqrstvwxz"
    while True:
        s = "".join(_rng.choice(consonants + consonants.upper()) for _ in range(16))
        if sum(a.isupper() != b.isupper() for a, b in zip(s, s[1:])) >= 6:
            return s


def _world_cases():
    pw = [r(ALNUM, 10) + "!" for _ in range(8)]
    letters = _random_letters_value()
    bearer = "A" * 22 + r(ALNUM, 90)
    together = "tgp_v1_" + r(URLSAFE, 43)
    dropbox = "sl." + r(URLSAFE, 138)
    resend = "re_" + r(ALNUM, 8) + "_" + r(ALNUM, 24)
    teams = (r(HEX, 8) + "-" + r(HEX, 4) + "-" + r(HEX, 4) + "-" + r(HEX, 4) + "-" + r(HEX, 12),
             r(HEX, 32))
    braintree = r(LOWER_ALNUM, 16) + "$" + r(HEX, 32)
    django = "%" + r(ALNUM, 14) + "!"
    newrelic = ("eu01xx" + r(HEX, 30) + "NRAL", "AA" + r(HEX, 40) + "-NRMA")
    openshift = r(ALNUM, 8) + "@=-." + r(ALNUM, 8)
    pair = (r(ALNUM, 22), r(ALNUM, 32))
    return {
        "portuguese-label": (f"senha: {pw[0]}", [pw[0]]),
        "portuguese-prose": (f"a senha é {pw[1]} desde ontem", [pw[1]]),
        "italian-prose": (f"la password è {pw[2][:-1]} per ora", [pw[2][:-1]]),
        "polish-prose": (f"hasło to {pw[3]}", [pw[3]]),
        "czech-prose": (f"heslo je {pw[4]}", [pw[4]]),
        "hungarian-label": (f"Jelszó: {pw[5]}", [pw[5]]),
        "finnish-label": (f"salasana = {pw[6]}", [pw[6]]),
        "letters-only-value": (f'"client_secret": "{letters}"', [letters]),
        "letters-only-bare": (f"API_TOKEN={letters}", [letters]),
        "ldap-bind-password": (f'ldapsearch -x -D "cn=admin,dc=example,dc=org" -w {pw[7]} -b dc=example',
                               [pw[7]]),
        "powershell-secure-string": (
            f'$pw = ConvertTo-SecureString "{pw[0]}" -AsPlainText -Force', [pw[0]]),
        "chpasswd-line": (f"echo 'deploy:{pw[1]}' | sudo chpasswd", [pw[1]]),
        "twitter-bearer": (f"curl -H 'Authorization: Bearer {bearer}'", [bearer]),
        "together-key": (f"key is {together}", [together]),
        "dropbox-token": (f"dbx = Dropbox('{dropbox}')", [dropbox]),
        "resend-key": (f"RESEND={resend}", [resend]),
        "teams-webhook": (f"https://acme.webhook.office.com/webhookb2/{teams[0]}@{teams[0]}"
                          f"/IncomingWebhook/{teams[1]}/{teams[0]}", [teams[1]]),
        "braintree-token": (f"gateway = access_token$production${braintree}", [braintree]),
        "wifi-qr": (f"qrencode 'WIFI:T:WPA;S:Hytta;P:{pw[2]};;'", [pw[2]]),
        "percent-opening-key": (f"SECRET_KEY = '{django}'", [django]),
        "new-relic-license-key": (f"license = '{newrelic[0]}'", [newrelic[0]]),
        "new-relic-mobile-token": (f"NEW_RELIC_APP = {newrelic[1]}", [newrelic[1]]),
        "authorization-value-with-at": (f'curl -H "Authorization: sha256~{openshift}"', [openshift]),
        "id-and-secret-pair": (f"pat ci-token\n{pair[0]}==:{pair[1]}\n", list(pair)),
    }


@pytest.mark.parametrize("text", [
    'password = newPassword',  # camelCase names are variables, even without a digit
    "api_key: myAPIKeyForProdEnv",
    "$pw = Read-Host -AsSecureString",  # a PowerShell call, not a value
    "$cred = Get-Credential",
    "password=%DB_PASSWORD%",  # Windows and TeamCity variables, Python formats
    "password=%env.DB_PASSWORD%",
    'password = "%(password)s"',
    "ldapsearch -x -H ldap://localhost -b dc=example -w",  # -w with nothing after it
    "grep -w password notes.txt",  # -w outside an LDAP command is another flag
    "echo 'hello' | wc -l",
    "a senha é obrigatória",  # the word alone, in a sentence
])
def test_names_calls_and_variables_in_the_new_places_stay(text):
    assert scrub(text) == text


# ------------------------------------------------------------------------------------------------
# issue 15, continued: classes of false positives found in software documentation (Node.js, pip,
# nettle, systemd) read as a user would ingest it
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "gpg --keyserver hkps://keys.openpgp.org --recv-keys " + r(HEX, 40).upper(),  # public key ids
    "gpg --recv-keys 0x" + r(HEX, 16).upper(),
    "git config --global user.signingkey " + r(HEX, 16).upper(),
    "git config --global user.signingkey " + r(HEX, 40).upper(),
    "* **A Releaser** <<someone@keybase.io>>\n  `" + r(HEX, 40).upper() + "`",
    "const myURL = new URL('https://abc:xyz@example.com');",  # a host kept for examples
    "const password = 'Password used to generate key';",  # words that say what goes there
    "passphrase: 'top secret',",
    "// Encrypted with same algorithm, key and iv.\nconst encrypted =\n  '" + r(HEX, 64) + "';",
    "pubkey: <Buffer 04 a1>,\n  serialNumber: '" + r(HEX, 32).upper() + "',",
    "- **build,win**: pass --debug-nghttp2 to configure",  # 'pass' the verb
    "- **http2**: pass session to DEBUG\\_HTTP2SESSION2 (Daniel)",
    "In most cases it is OK to simply pass `v8::Isolate::GetCurrent()`, e.g.",
    "passing an empty password and/or salt to crypto.pbkdf2() would cause a fatal error",
    "crypto.pbkdf2(password, salt, iterations, keylen, digest, callback)#",
    "encrypted with the given cipher and passphrase using PKCS#5 v2.0 password based encryption",
    "the secret: https://en.wikipedia.org/wiki/Diffie%E2%80%93Hellman_key_exchange",  # percent-encoded
    'please add them to the "hosts:",\n        "passwd:" and "group:" lines of /etc/nsswitch.conf',
    "Default key size, 32.\nFunction: void camellia128_set_encrypt_key (struct camellia128_ctx *ctx)",
    "'other-sensitive-header': 'very secret data',\n  [http2.sensitiveHeaders]: ['cookie']",
    "passphrase: &#x3C;string>]}",
    "  cvs://:pserver:anoncvs@sources.redhat.com:/cvs/src",  # a protocol and a user, no password
    "  wchar_t *password, *protocol, *host, *path, target[1024];",  # C, not prose
    '  else if (!strcmp(buf, "password"))\n   password = utf8_to_utf16_dup(value);',
    "interactive password provision?  (file? command-line? env. variable?)",
    "secret flags are set via v8.setFlagsFromString(flags)",
    "/* store the encrypted session key */\nnode = xmlSecTmplKeyInfoAddEncryptedKey(keyInfo,\n    xmlSecTransformRsaPkcs1Id,",
    "<KeyInfo/>\n<CipherData>\n<CipherValue>" + r(B64, 32) + "</CipherValue>",
])
def test_documentation_shapes_are_left_alone(text):
    assert scrub(text) == text


def test_the_same_places_still_redact_what_is_a_secret():
    pw, strong = r(ALNUM, 10) + "!", r(ALNUM, 12) + "&"
    assert pw not in scrub(f"gpg --batch --passphrase {pw} -c notes.txt")
    assert strong not in scrub(f"https://deploy:{strong}@example.com/repo.git")
    assert pw not in scrub(f"wifi pass: {pw}") and pw not in scrub(f"pass for the NAS: {pw}")
    assert pw not in scrub(f"the pass is {pw[:-1]}")
    key = r(ALNUM, 40)
    assert key not in scrub(f"API_KEY = '{key}'")
    assert pw not in scrub(f"redis://:{pw}@cache:6379/0")  # an empty user is still a password


# ------------------------------------------------------------------------------------------------
# issue 15, continued: source code (Python's standard library and packages) is left alone
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "    def read(self, name, pwd=None):\n        return self.open(name, 'r', pwd)\n"
    "    def extract(self, member, path=None, pwd=None):\n",  # not 'None):', nor everywhere
    "        sig = \"from %d to %d\" % (atleast, len(args))",  # a format string
    "        2 GiB, pass force_zip64 to use the ZIP64 format",
    "            pw = pw[:-1]",
    "            password = auth[0]",
    "            self.password = config['password']\n            self.realm = config['realm']",
    "            self.username, self.password = credentials",
    "            passwd = passwd + 'anonymous@'",  # FTP's documented anonymous password
    "        :param password: Unicode password.\n        :param client: Client object.",
    '        print(f"password={password!r}")',
    '                        creds = " --username=" + auth',
    "def _looks_like_msys2_mingw_scheme() -> bool:",
    "PRIVATE_KEY_TYPES = typing.Union[\n    ed25519.Ed25519PrivateKey,\n    x25519.X25519PrivateKey,\n]",
    "    password = models.CharField(max_length=128)",
    "            binary_stdout.write('password={0}'.format(signature))",
    "    def export(self, password: Unused = False) -> bytes: ...",
    '          "NextToken": "' + r(LOWER_ALNUM, 36) + '",',  # paging cursors and request ids
    "nextPageToken: " + r(ALNUM, 32),
    '    "AmazonRoute53AutoNamingFullAccess": "arn:aws:iam::aws:policy/AmazonRoute53AutoNamingFullAccess",',
    "# the secret key lexers\n__all__ = ['Inform6Lexer', 'Inform6TemplateLexer', 'Inform7Lexer']",
    "# token styles\n    'Terminal256Formatter': ('pygments.formatters.terminal256', 'Terminal256'),",
    "yaml/representer.py,sha256=IuNWk_Bv0UtZ7rbyEJSLnJlMKqpIgr3yUHp4KU5wJD0,14190",  # a wheel's RECORD
    "    >>> _encode_auth('username%3Apassword')\n    'dXNlcm5hbWU6cGFzc3dvcmQ='",
    "    const noCreds = !(creds.token || creds.username)",
    "    log.info('token', `removing ${toRemove.length} tokens`)",
    "libpub.unpublish('lodash', { token: 'i-am-a-token'})",
    "await libpub.unpublish('lodash', { token: 'i-am-the-worst'})",  # a slug, one case, no digit
    "exports.SOCKS5_CUSTOM_AUTH_END = SOCKS5_CUSTOM_AUTH_END;",
])
def test_source_code_is_left_alone(text):
    assert scrub(text) == text


def test_names_and_words_are_never_redacted_everywhere():
    pw = r(ALNUM, 12)
    text = f"password: {pw}\nthe {pw} again, and password: Unicode\nUnicode strings"
    out = scrub(text)
    assert pw not in out and out.endswith("Unicode strings")
    key = "NRAK-" + r(LOWER_ALNUM, 27)  # a random lower-case body makes 'words': still a key
    assert key not in scrub(f'newRelicToken = "{key}"')


def test_a_public_key_is_left_alone_and_a_private_one_is_not():
    """DER in base64: SubjectPublicKeyInfo opens SEQUENCE{SEQUENCE{OID…} BIT STRING}, PKCS#8 an INTEGER."""
    public = base64.b64encode(bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")
                              + _rng.randbytes(65)).decode()
    private = base64.b64encode(bytes.fromhex("308187020100301306072a8648ce3d020106082a8648ce3d030107046d306b0201010420")
                               + _rng.randbytes(32)).decode()
    text = f'keys: [\n  {{ keyid: "npm-2023", key: "{public}" }}\n]'
    assert scrub(text) == text
    assert private not in scrub(f'signing key: "{private}"')


@pytest.mark.parametrize("text", [
    '"AllowCredentials": "Boolean indicating whether request is allowed to contain credentials."',
    "the part of the event to pass.  *Type*: String  *Required*: No",  # a sentence ends on 'pass.'
    "**To set a user password as an administrator**",  # Markdown bold
    "**To force a password change**",
    "aws cognito-idp admin-set-user-password --username diego --password MyExamplePassword1!",
    '"lastModifiedSecret": 1596573346.171,',  # a time
    '"RequestToken": "' + str(__import__("uuid").UUID(int=_rng.getrandbits(128))) + '",',
    'aws cloudformation describe-publisher\n"PublisherId": "' + r(HEX, 40) + '",',  # hex is not an AWS key
    "        self._retrieve_k8s_aws_id(sts) # the token",
    "        if self.credentials.token is not None:\n            fields['X-Amz-S3session-Token'] = self.credentials.token",
    '    "Query": {\n      "input_token": "ExclusiveStartKey",\n      "output_token": "LastEvaluatedKey",',
    "    ACCESS_KEY = 'aws_access_key_id'\n    SECRET_KEY = 'aws_secret_access_key'",
    '            "DkimTokens": [\n                "EXAMPLEq76owjnks3lnluwg65scbemvhw",',
])
def test_aws_cli_examples_and_documentation_json_are_left_alone(text):
    assert scrub(text) == text


# ------------------------------------------------------------------------------------------------
# issue 15, continued: shapes from Nosey Parker's rule examples (values generated here)
# ------------------------------------------------------------------------------------------------
def _nosey_cases():
    unseal, pw = r(B64, 44), r(ALNUM, 12)
    pem_b64 = base64.b64encode(("-----BEGIN RSA PRIVATE KEY-----\n" + r(B64, 64) + "\n").encode()).decode()
    ghs, tk = "ghs_" + r(ALNUM, 36), "tk.eyJ" + r(URLSAFE, 40) + "." + r(URLSAFE, 22)
    nraa, doppler = "NRAA-" + r(HEX, 27), "dp.audit." + r(ALNUM, 43)
    return {
        "vault-unseal-key": (f"Unseal Key 2: {unseal}", [unseal]),
        "vault-operator-unseal": (f"kubectl exec -ti vault-0 -- vault operator unseal {unseal}", [unseal]),
        "pem-in-base64": (f"PRIVATE_KEY_B64={pem_b64}", [pem_b64]),
        "dotnet-network-credential": (f'c.Credentials = new NetworkCredential("ops@corp.example", "{pw}");', [pw]),
        "dotnet-directory-entry": (f'new DirectoryEntry("LDAP://corp.example",\n  "svc@corp.example",\n  "{pw}");', [pw]),
        "token-as-url-user": (f"git clone https://{ghs}@github.com/acme/repo.git", [ghs]),
        "mapbox-temporary-token": (f"mapboxgl.accessToken = '{tk}';", [tk]),
        "new-relic-admin-key": (f"admin_access:{nraa}", [nraa]),
        "doppler-audit-token": (f"DOPPLER_AUDIT={doppler}", [doppler]),
        "quoted-default-password": ("The default password is 'blooberry'.", ["blooberry"]),
    }


def _config_cases():
    pw, tok, pat = "Hx7!" + r(ALNUM, 10), r(ALNUM, 32), r(LOWER_ALNUM, 52)
    conn = "Server=db;Pwd=" + r(ALNUM, 14)
    ovpn = [r(HEX, 32) for _ in range(16)]
    return {
        "openvpn-static-key": ("<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\n" + "\n".join(ovpn)
                               + "\n-----END OpenVPN Static key V1-----\n</tls-auth>\n", ovpn),
        "terraform-variable-default": (f'variable "db_password" {{\n  type    = string\n  default = "{pw}"\n}}\n', [pw]),
        "terraform-one-line-default": (f'variable "api_token" {{ default = "{tok}" }}', [tok]),
        "terraform-sensitive-default": (f'variable "conn" {{\n  sensitive = true\n  default   = "{conn}"\n}}', [conn]),
        "personal-access-token-label": (f"AZURE_DEVOPS_EXT_PAT={pat}", [pat]),
        "token-as-url-user-unknown-vendor": (f"git clone https://{pat}@dev.azure.com/acme/app/_git/app", [pat]),
        "login-pair-letters-and-digits": (f"Login for the router: admin / Hytta{r(string.digits, 4)}", ["Hytta"]),
        "password-typed-twice": (f'{{"password": "{pw}", "confirm": "{pw}"}}', [pw]),
        "password-repeated-under-a-plain-label": (f"new_pass: {tok}\nrepeat: {tok}", [tok]),
    }


def _vendor_cases():
    upper = string.ascii_uppercase + string.digits
    tokens = {
        "tailscale-auth-key": f"tskey-auth-{r(ALNUM, 12)}CNTRL-{r(ALNUM, 33)}",
        "adyen-api-key": f"AQEyhmfx.{r(ALNUM, 60)}",
        "octopus-deploy-api-key": f"API-{r(upper, 26)}",
        "scalingo-token": f"tk-us-{r(ALNUM, 48)}",
        "airtable-personal-access-token": f"pat{r(ALNUM, 14)}.{r(HEX, 64)}",
        "clickhouse-cloud-secret": f"4b1d{r(ALNUM, 38)}",
        "datafactory-integration-runtime-key": f"IR@{r(HEX, 8)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 4)}-{r(HEX, 12)}"
                                                f"@adf-app-001@we@{r(B64, 43)}=",
    }
    return {name: (f"pasted from the console:\n{tok}\n", [tok]) for name, tok in tokens.items()}


@pytest.mark.parametrize("text", [
    "see the API-REFERENCE-GUIDE-FOR-DEVELOPERS page",
    "pathologically_long_identifier_name = 3",
])
def test_words_that_open_like_a_vendor_prefix_stay(text):
    assert scrub(text) == text


@pytest.mark.parametrize("text", [
    'variable "region" {\n  default = "eu-west-1"\n}\nvariable "db_password" {\n  sensitive = true\n}',
    'variable "db_password" {\n  default = "${var.vault_password}"\n}',
    'variable "instance_type" {\n  sensitive = false\n  default = "t3.medium"\n}',
    'date_pat = "\\d{4}-\\d{2}-\\d{2}"',
    "ADO_PAT: ${{ secrets.ADO_PAT }}",
    "SENTRY_DSN=https://" + r(HEX, 32) + "@o4504.ingest.sentry.io/4504",  # a DSN's public key
    "git clone https://x-access-token@github.com/acme/app.git",
    "login page: GET / POST2, then the redirect",  # not a user and a password
    "test user: demo / demo1234",  # a demo account's documented login
    "    out.write('username={0}\\n'.format(username))\n    out.write('password={0}\\n'.format(signature))",
    "def f(\n    client_certificate_password: Callable[[], str] | None,\n    func: Callable[[Handler], None],\n) -> None: ...",
    "user account settings: see the docs / Chapter12",
])
def test_config_references_patterns_and_public_keys_stay(text):
    assert scrub(text) == text


@pytest.mark.parametrize("text", [
    "CA_B64=" + base64.b64encode(("-----BEGIN CERTIFICATE-----\n" + r(B64, 64) + "\n").encode()).decode(),
    "username: '', password: '', host: 'localhost', hostname: 'localhost'",
    "passphrase: 'sample',",
    'the password is "required"',
    'the password field is "hidden" by default',
    "PWD: '/Users/maciej', HOME: '/Users/maciej', LOGNAME: 'maciej'",
    "  put '/forgot-password' => \"cms/sites/passwords#update\", as: 'update_password'",
    '"/en/authentication/creating-a-strong-password":"/en/enterprise-server@3.0/auth"',
    "- echo 'export DATABASE_PASSWORD=\"'$PRECOMPILE_PASSWORD'\"' >> .env",
    '<add key="ConnectionString_B2B" value="Server=db;Database=B2B;Integrated Security=True" />',
    'export AUTH0_CLIENT_ID="' + r(ALNUM, 32) + '"',
])
def test_nosey_parker_negatives_and_neighbours_stay(text):
    assert scrub(text) == text


# ------------------------------------------------------------------------------------------------
# every recall class above (scanner fixtures, service labels, other languages and shells, Nosey
# Parker's shapes) through one test
# ------------------------------------------------------------------------------------------------
SCANNER_CASES = {**_recall_cases(), **_service_cases(), **_world_cases(), **_nosey_cases(), **_config_cases(),
                 **_vendor_cases()}


@pytest.mark.parametrize("name", sorted(SCANNER_CASES))
def test_scanner_fixture_classes_and_short_shapes_are_caught(name):
    text, secrets = SCANNER_CASES[name]
    out = scrub(text)
    for secret in secrets:
        assert not leaked(secret, out, text), f"leaked {secret[:6]}… in {out!r}"


# ------------------------------------------------------------------------------------------------
# real text nobody here wrote (installed packages' sources and docs): classes of wrong redactions
# ------------------------------------------------------------------------------------------------
_TOKEN = r(ALNUM, 32)
_HEX64 = r(HEX, 64)
MACHINE_NEGATIVES = {
    # a secret word that opens another name is no context: KeyError, keyDetails, a hasher, a spec
    "context-word-opens-a-name": f"except KeyError:\n    return {_TOKEN}",
    "context-word-camel-name": f"keyDetails === {_TOKEN}",
    "context-word-class-name": f"a tokenizer splits {_TOKEN}",
    "context-word-snake-name": f"elif key_spec == {_TOKEN}:",
    # names in code: a module's attribute, a call, a dotted return type, a generic shape made of words
    "module-attribute": "isinstance(key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey))",
    "module-attribute-type": "    Key: _win32typing.PyPROPERTYKEY, riid: _win32typing.PyIID, /",
    "called-name": 'the key:\n    DRAFT201909.optional_cases_of(name="anchor"),',
    "called-macro": "    PyObject *key, PyObject* value)\n{\n    Proxy__ENSURE_WRAPPED_OR_RETURN_MINUS1(self);",
    "dotted-return-type": "def pathing_grid(self, token) -> s2clientprotocol.common_pb2.ImageData:",
    "generic-shape-of-words": "int convert_datetime64_to_datetimestruct "
                              '"NpyDatetime_ConvertDatetime64ToDatetimeStruct" (',
    # a type or a setting that a label without a secret word holds too
    "type-annotation-shared": "def scrypt(password: ReadableBuffer, *, salt: ReadableBuffer, n: int) -> bytes: ...",
    "stub-attribute-shared": "class URL:\n    scheme: Incomplete\n    username: Incomplete\n    password: Incomplete\n",
    "mapping-shared": "FILTERS = {\n    'pass': 'bandpass',\n    'bp': 'bandpass',\n}",
    # code values: a cast, a sum of names, a generated name, a regular expression, an expression
    "cast-value": "  __pyx_v_bytes_key = ((PyObject*)__pyx_t_3);\n  __pyx_t_3 = 0;",
    "sum-of-names": "PyObject *key = NULL;\n__pyx_t_1 = __Pyx_PyObject_FastCall(f, __pyx_callargs+__pyx_t_4, 2);",
    "generated-name": "__pyx_n_u_keys, __pyx_mstate->__pyx_kp_b_iso88591_A_t9A, tuple_dedup_map);",
    "regex-class-value": 'region = re.sub(r".*Credential=[^/]+/[^/]+/([^/]+)/.*", r"\\1", auth)',
    "prose-word-in-expression": "    pw = Piecewise((1, And(1 <= n, n <= nmax)), (0, True))",
    "prose-word-in-regex": 'password_regex: str = "(?i)(?:password:)|(?:passphrase for key)",',
    "prose-emphasis": "You can pass *codec_errors* to control how errors in decoding are handled.",
    "authorization-variable": "self._expected_authorization = expected_authorization",
    "authorization-header-names": '_SIGNING_HEADERS = ("authorization", "x-amz-content-sha256", "x-amz-date")',
    "call-keyword-argument": 'password = click.prompt("Password", hide_input=True)',
    "one-case-name-of-words": '"Resources": [\n "token-vault",\n "oauth2credentialprovider"\n]',
    # labels and their values: a quoted key, a value spelling its label, a document's name, a path
    "quoted-id-label": '"Key": "a.txt",\n"Owner": {\n  "ID": "' + r(HEX, 64) + '",\n  "DisplayName": "webfile"\n}',
    "value-spells-label": '    "utf_8_sig": "UTF-8-SIG",\n    AttributeOID.CHALLENGE_PASSWORD: "challengePassword",',
    "value-names-the-field": "    ACCESS_KEY = 'AWSAccessKeyId'\n    SECRET_KEY = 'AWSSecretKey'",
    "value-is-a-reference": "      'opaquelocktoken': 'RFC 2518',",
    "value-is-a-setting-name": "EMRFS_CSE_KMS_KEY_ID_KEY = 'fs.s3.cse.kms.keyId'",
    "value-is-a-credential-scope": "Authorization: AWS4-HMAC-SHA256 Credential=mock_access_key/20220524/us-east-1/"
                                   "cognito-idp/aws4_request, SignedHeaders=host",
    "prose-default-password": "user = User(username='scolvin', password='password1')",
    # ids and encoded text: a request id, a GUID cut by a line break, words in hex or base64
    "request-id": "the API key worked; request id: req_" + r(HEX, 32),
    "guid-cut-by-a-line-break": '// the key is concatenated with "258EAFA5-\n//    E914-47DA-95CA-C5AB0DC85B11"',
    # a cloud's command-line manual: option values and fields named ids, cursors, locks and
    # idempotency tokens, object keys, a resource id, a sample in capitals, a document's name
    "option-named-id": "aws s3api list-parts --bucket b --key multipart/01 --upload-id " + r(ALNUM, 70)
                       + "\naws cognito-idp forgot-password --client-id " + r(LOWER_ALNUM, 26) + " --username jane",
    "option-change-token": "aws waf update-ip-set --ip-set-id " + r(HEX, 8) + " --change-token " + r(HEX, 7) + "-"
                           + r(HEX, 4) + "-" + r(HEX, 4) + "-" + r(HEX, 4) + "-" + r(HEX, 12),
    "field-named-id": '"JobRunId": "jr_' + r(HEX, 64) + '"',
    "id-field-in-aws-output": 'aws cloudformation describe-publisher\n{\n    "PublisherId": "' + r(ALNUM, 40) + '"\n}',
    "lock-and-client-tokens": '"LockToken":"' + _uuid() + '",\n"ClientToken": "' + _uuid()
                              + '",\n"nextForwardToken": "f/' + r(string.digits, 56) + '"',
    "object-keys": '"S3Key": "867139942017-PHIDetection-' + r(HEX, 32) + '"\n{"bucket": "b", "key": "'
                   + _uuid() + '"}\naws s3api put-object --bucket b --key my-dir/big-video-file.mp4',
    "id-spelling-its-label": '"ExportToken": "export-token-' + r(LOWER_ALNUM, 14) + '"',
    "resource-id-near-key": "removes the tag with the key ``Network`` from the device ``device-" + r(HEX, 17) + "``",
    "sample-in-capitals": '"SessionToken": "AQoEXAMPLEH4aoAH0gNCAPy' + r(B64, 200) + '"',
    "document-name-with-prefix": '"TaskArn": "AWS-DisableS3BucketPublicReadWrite"',
    "echo-into-a-script-not-sudo": "\t\t  echo 'q^Mq' | vim -e -s -c debuggreedy -c 'breakadd file script.vim' -S script.vim",
    "constant-name-near-key": "See private key [docs][3].\n    -   `OAUTH2CLIENT_TEST_P12_KEY_PATH`: The path to a key",
    # code and manuals: a call, markup and **kwargs after "password", an option after a rejected
    # value, a field's description, a variable used elsewhere, a stand-in named after its label,
    # an element, words then a UUID, a page token in prose, byte escapes, a path of ids and words
    "call-after-password": "class SHA224Password(Password):\n    hashfunc = hashlib.sha224\n\npassword = SHA224Password()",
    "markup-after-password": "exclude these characters from the password: <code>! \" # $ % &amp; </code>.",
    "kwargs-after-password": "r = _computeDigestResponse(auth_map, password, method = 'GET', A1 = None,**kwargs)",
    "option-after-a-placeholder": "$ cmd P --oracle-password=fakepassword --oracle-username=fakeuser "
                                  "--display-name=my-profile --oracle-hostname=35.188.150.50 --oracle-port=1521",
    "field-description": "  Fields:\n    password: Required. The password of the user.",
    "variable-used-elsewhere": "            username, password = ident.split(':', 1)\n        else:\n            password = ident",
    "stand-in-named-after-label": 'credentials = StaticCredentials(token="token123")\napi_key = "apikey1"',
    "google-p12-default": "GOOGLE_OAUTH2_DEFAULT_FILE_PASSWORD = 'notasecret'",
    "element-named-for-an-id": "<status>fulfilled</status>\n<clientToken>token-f5b56c05-09b0-4d17-8d8c-c75d8a67b806</clientToken>",
    "words-then-uuid": "the same token in the following format: <code>Console-CreateStack-7f59c3cf-00d2-40c7-b2ff-e75db0987002</code>",
    "page-token-in-prose": "    Items remaining: 0\n    Next page token: " + r(ALNUM, 25),
    "byte-escapes-near-token": '\\x12\\x12\\n\\npage_token\\x18\\x03 \\x01(\\t\\"m\\n\\x1bListServiceAccountsResponse',
    "path-of-ids-and-words": 'tag key, for example "123456789012/environment" : "production",\n "123456789013/costCenter"',
    "dotted-key-function": "return sorted(have_required, key=usage_text.GetArgSortKey)[0]",
    "help-tag-after-label": "CHANGING USERID AND PASSWORD\t\t*netrw-chgup* *netrw-userpass*",
    "hex-of-words": '["50755454592d55736572", 0, ".ppk", "", "PuTTY User Key File"],\n["'
                    + b"<<< Sun xVM VirtualBox Disk Image >>>".hex() + '", 0, ".vdi"],',
    "base64-of-words": "# secret token\n - " + base64.b64encode(b"some unknown data").decode() + " SigV4",
    "base64-of-a-placeholder": "  auth: '" + base64.b64encode(b"isaacs:not my real password").decode() + "',\n"
                               "  password: '" + base64.b64encode(b"not my real password").decode() + "',",
    "public-key-token": 'processorArchitecture="*" publicKeyToken="' + r(HEX, 16) + '"',
    # types and variables in code after a label, a mapping's key, a percent-encoded placeholder
    "type-union": "    transport: Transport\n    key: X25519PrivateKey | None\n",
    "type-parameter": "        private_key: PKCS7PrivateKeyTypes,\n        hash_algorithm: PKCS7HashTypes,",
    "type-default": "    password: FilterOrBool = False,",
    "type-forward-reference": '    private_key: "_RSAPrivateKey",\n    data: bytes,',
    "variable-in-a-sum": "kw = dict(sig=p0_type_char + (len(p)-1)*'d' + '->d')",
    "nested-list-value": "    key = [[i.n(2).as_real_imag()[0] for i in r.as_real_imag()] for r in roots]",
    "prose-arrow-to-a-type": "def PFXImportCertStore(PFX, Password, Flags) -> _win32typing.PyCERTSTORE: ...",
    "mapping-key": '      "input_token": "nextToken",\n    },\n    "ListPrincipalThingsV2": {',
    "percent-encoded-placeholder": 'url = httpx.URL("HTTPS://jo%40email.com:a%20secret@m\u00fcller.de:1234/pa%20th")',
    # a call's bare constant, an SSH key type after a weak vendor prefix, a manual page's markup
    "call-constant-argument": "      ctx->key = EC_KEY_new_by_curve_name (NID_X9_62_prime256v1);",
    "ssh-key-type": "HostKeyAlgorithms sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "roff-markup": ".RS 4\nNever issue a password prompt\\&. If the server requires password authentication",
    # manual pages: escaped flags and font changes; unzip's -p pipes; a DNSSEC public key
    "roff-flag-value": '\\-\\-page\\-size=3 \\-\\-page\\-token=\\-\\-token\\-format=full \\-\\-password=my\\-username',
    "roff-font-path": "the key moves \\fBarch/i386/Makefile\\fR to \\fBarch/x86/Makefile\\fR",
    "unzip-pipe": "unzip \\-p articles paper1.dvi | dvips\nunzip -p backup.zip notes.txt",
    "dnskey-record": ". IN DNSKEY 257 3 8 " + r(B64, 120),
    # C, C++, Perl: versions and hex numbers after a label, member paths, sums, macro names
    "version-after-a-label": "            'Test2::Event::Pass'    => '1.302103',\n"
                             "            'Test2::Event::Plan'    => '1.302103',",
    "hex-number-after-a-label": "use constant ZIP_LOCAL_HDR_SIG                 => 0x04034b50;",
    "member-path-call": "    my $pwd  = CPAN::anycwd();\n    Pass *ResultPass = Resolver->getAnalysisIfAvailable(PI);",
    "member-path-enum": "  MemDeallocPolicy MDP = MemDeallocPolicy::Standard;\n  _M_token = __it->second;",
    "value-spells-label-with-dash": " * @GNUTLS_KX_DHE_PSK: DHE-PSK key-exchange algorithm.",
    "sum-of-a-name-and-a-number": "/* the key */\n#define V4L2_CID_ZOOM_ABSOLUTE   (V4L2_CID_CAMERA_CLASS_BASE+13)",
    "declared-type-name": "/* a bag of secrets */\nstruct SEC_PKCS12SecretBagStr {\n    PLArenaPool *poolp;",
    "macro-name": '#define PEM_STRING_SM2PRIVATEKEY "SM2 PRIVATE KEY"\n#define PEM_STRING_SM2PARAMETERS "SM2 PARAMETERS"',
    "sops-ciphertext": "password: ENC[AES256_GCM,data:p673w==,iv:YY=,aad:UQ=,tag:A=]",
    # a secret flag's spec of fields names the secret; OpenSSL's ciphertext shown as an example
    "secret-flag-spec": "docker run --secret id=npm_token_2024,src=$HOME/.npmrc node:20",
    "openssl-ciphertext": "$ echo -n 'hello' | openssl enc -aes-256-cbc -a -salt -pass pass:$KEY\n"
                          + base64.b64encode(b"Salted__" + bytes(_rng.randrange(256) for _ in range(24))).decode(),
}
_UUIDS = [_uuid(), _uuid()]
_LOWER_TOKEN = r(LOWER_ALNUM, 60)
MACHINE_POSITIVES = {
    # ... while a word that ends its name, or a name that is a secret's label, still counts
    "context-word-ends-name": (f"the api_tokens: [{_TOKEN}]", [_TOKEN]),
    "context-word-versioned": (f"GITHUB_TOKEN_V2 {_TOKEN}", [_TOKEN]),
    "context-word-in-a-path": (f"<com.example.credentials.Impl>\n  <id>{{{_TOKEN}}}</id>", [_TOKEN]),
    "context-word-label-name": (f"secret_key_base {_TOKEN}", [_TOKEN]),
    "random-dotted-after-label": (f"auth token: {_TOKEN[:10]}.{_TOKEN[10:]}, next", [_TOKEN[10:]]),
    "token-after-arrow-in-prose": (f"rotated the token -> {_TOKEN}", [_TOKEN]),
    "generic-prefixed-random": (f"the build uses acme_{_TOKEN}", [_TOKEN]),
    # ... and beside those ids: a UUID key of a service, in a URL's query, a prefix named as the label
    "uuid-api-key": (f"HEROKU_API_KEY={_UUIDS[0]}\ncurl 'https://api.x.io/v1?key={_UUIDS[1]}'", _UUIDS),
    "vendor-prefix-is-the-label": (f'DNKEY_TOKEN = "dnkey-{_LOWER_TOKEN}"', [_LOWER_TOKEN]),
    "option-token": ("gh auth login --token " + _TOKEN, [_TOKEN]),
    "holder-element": (f"App token in XML: <token><version>1</version><data>{_TOKEN}</data></token>", [_TOKEN]),
    "spaced-api-token": (f"API token: {_TOKEN}\n<apiKey>{_TOKEN[::-1]}</apiKey>", [_TOKEN, _TOKEN[::-1]]),
    "password-confirmed": ("password: Vinter2026!x\npassword_confirmation: Vinter2026!x", ["Vinter2026!x"]),
    "password-with-parentheses": ("the wifi password is Welcome(2024)", ["Welcome(2024"]),
    "call-literal-argument": ("define('DB_PASSWORD', 'Vinter2026!x');", ["Vinter2026!x"]),
    "authorization-without-scheme": (f"Authorization: {_TOKEN}", [_TOKEN]),
    "quoted-fused-label": (f'  "querykey": "NRIQ-{_TOKEN}",', [_TOKEN]),
    "value-holds-a-word-and-digits": ('<add key="ClearTextPassword" value="TestSourcePassword1" />',
                                      ["TestSourcePassword1"]),
    "token-beside-a-secret-word": (f'"token": "{_TOKEN}"', [_TOKEN]),
    "base64-of-a-word": ("kind: Secret\ndata:\n  # base64 encoded password\n  key: "
                         + base64.b64encode(b"mypassword").decode(), [base64.b64encode(b"mypassword").decode()]),
    "base64-of-a-password": ("password: " + base64.b64encode(b"Vinter2026!x").decode(),
                             [base64.b64encode(b"Vinter2026!x").decode()]),
    "stripe-like-secret-id": (f"the secret is sess_{_TOKEN}", [_TOKEN]),
    "password-before-a-comma": ("password: SuperSecret2024,\n", ["SuperSecret2024"]),
    "password-in-a-table": ("| password: Sommer2024 | prod |", ["Sommer2024"]),
    "percent-encoded-password": ("https://user:he%2F%2Fo9Xq@pypi.company.com/simple", ["he%2F%2Fo9Xq"]),
    "call-literal-in-prose": (f"the token ({_TOKEN[:12]}_{_TOKEN[12:]})", [_TOKEN[12:]]),
    "openai-project-key": (f"OPENAI_API_KEY=sk-proj-{_TOKEN}", [_TOKEN]),
    "windows-path-password": ("psexec -u DOMAIN\\admin -p Vinter2026!x\\fx166 cmd", ["Vinter2026!x"]),
    "password-flag-with-equals": ("mysql --password id=Vinter2026x", ["id=Vinter2026x"]),
    "secret-flag-value": ("vault write --secret Vinter2026!x", ["Vinter2026!x"]),
    "zip-password": ("zip -P Vinter2026!x backup.zip notes.txt\nsshpass -p Vinter2026!y ssh host",
                     ["Vinter2026!y"]),
    "ethereum-private-key": (f"private_key: 0x{_HEX64}", [_HEX64]),
    "version-like-password": ("password: 1.302103abc", ["1.302103abc"]),
    "long-base64-sentence-head": ("secret: " + base64.b64encode(b"a b c " + bytes(range(256)) * 4).decode(),
                                  [base64.b64encode(b"a b c " + bytes(range(256)) * 4).decode()[200:260]]),
    "quoted-value-beside-a-secret-word": (f'"arn": "arn:aws:ivs:us-west-2:123456789012:stream-key/abc",\n'
                                          f'"value": "sk_us-west-2_{_TOKEN}"', [_TOKEN]),
    "value-holding-its-label": (f'SECRET_KEY = "secret_key={_TOKEN}"', [_TOKEN]),
    "password-held-far-away": ("password: Vinter2026!x\n" + "filler line\n" * 500 + "user: Vinter2026!x",
                               ["Vinter2026!x"]),
}


@pytest.mark.parametrize("name", sorted(MACHINE_NEGATIVES))
def test_real_text_on_this_machine_is_left_alone(name):
    text = MACHINE_NEGATIVES[name]
    assert scrub(text) == text


@pytest.mark.parametrize("name", sorted(MACHINE_POSITIVES))
def test_the_secrets_beside_those_classes_are_still_redacted(name):
    text, secrets = MACHINE_POSITIVES[name]
    out = scrub(text)
    for secret in secrets:
        assert not leaked(secret, out, text), f"leaked {secret[:6]}… in {out!r}"


# ------------------------------------------------------------------------------------------------
# personal notes: passwords of small letters alone, one opening with a brace, logins written as
# user / password, labels in Markdown emphasis, and password columns of tables and CSV exports
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,secret", [
    ("gmail app password: vkbq pmzt hxle wryd", "vkbq pmzt hxle wryd"),
    ("App password for Thunderbird: vkbq pmzt hxle wryd", "vkbq pmzt hxle wryd"),
    ("Google app password - vkbq pmzt hxle wryd", "vkbq pmzt hxle wryd"),
    ("App-specific password: vkbqpmzthxlewryd", "vkbqpmzthxlewryd"),
    ("EMAIL_HOST_PASSWORD = 'vkbqpmzthxlewryd'", "vkbqpmzthxlewryd"),
    ('token: "qmzvtrxkplwhdnbgsfyc"', "qmzvtrxkplwhdnbgsfyc"),
    ("password: {x9Fq2LmZ7", "{x9Fq2LmZ7"),
    ("password: '{x9Fq2LmZ7'", "{x9Fq2LmZ7"),
    ("my bank login is ola.nordmann / Fjord2024", "Fjord2024"),  # a login pair without a colon
    ("Netflix: ola@example.com / Solsikke88", "Solsikke88"),  # an e-mail address is the user
    ("- **Password**: Hytta2024", "Hytta2024"),  # a label in Markdown emphasis or code
    ("**Password:** Hytta2024", "Hytta2024"),
    ("`password`: Hytta2024", "Hytta2024"),
    ("**Password** Hytta2024", "Hytta2024"),
    ("Password — Hytta2024", "Hytta2024"),  # a dash between the word and the password
    ("wifi passord – Tyttebaer17", "Tyttebaer17"),
    ('var password = @"Zq8xLm2pWv";', "Zq8xLm2pWv"),  # C# and Objective-C strings
    ('NSString *password = @"Zq8xLm2pWv";', "Zq8xLm2pWv"),
    ('os.environ["DB_PASSWORD"] = "Zq8xLm2pWv"', "Zq8xLm2pWv"),  # a label closing a subscript
    ("$_ENV['DB_PASS'] = 'Zq8xLm2pWv';", "Zq8xLm2pWv"),
    ("password: !!str Zq8xLm2pWv", "Zq8xLm2pWv"),  # a YAML type tag before the value
    ('<entry key="password">Zq8xLm2pWv</entry>', "Zq8xLm2pWv"),  # an element named by its key
    ('<string name="api_key">Zq8xLm2pWvx9Q2w</string>', "Zq8xLm2pWvx9Q2w"),
    ("| Service | User | Password |\n|---|---|---|\n| NAS | admin | Hytta2024 |\n", "Hytta2024"),
    ("| Tjeneste | Passord |\n|:--|--:|\n| Ruter | `Fjell!99x` |\n", "Fjell!99x"),
    ("Service | Password\n--- | ---\nNAS | Hytta2024\n", "Hytta2024"),
    ("name,url,username,password\nNAS,http://nas,admin,Hytta2024\n", "Hytta2024"),  # a browser's export
    ('"Group","Title","Username","Password","URL","Notes"\n"Root","NAS","admin","Hytta,2024x","http://nas",""\n',
     "Hytta,2024x"),
    ("folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n"
     ",,login,NAS,,,0,http://nas,admin,Hytta2024,\n", "Hytta2024"),
    ("Wifi password:\nHytta2024\n", "Hytta2024"),  # the value alone on the line below its title
    ("**Password**\nHytta2024", "Hytta2024"),
    ("- **Password:**\n  `Fjell!99x`\n", "Fjell!99x"),
    ("## Router admin password:\r\n    Fjell!99x\r\n", "Fjell!99x"),
    ("api token:\nAbc123xyzQwe\n", "Abc123xyzQwe"),
    ("wifi password: Blaabaer2023", "Blaabaer2023"),  # doubled letters and a year are not filler
    ("password='1qay@WXS????'", "1qay@WXS????"),  # nor is a walk along the keyboard
    ("mailgun_token: 65ed7095ace4a6654adb8309177339ab-00001111-22223333",
     "65ed7095ace4a6654adb8309177339ab-00001111-22223333"),
    ('if password == "Zq8xLm2pWv":', "Zq8xLm2pWv"),  # a password compared with a literal is written down
    ('if form["password"] == "Zq8xLm2pWv":', "Zq8xLm2pWv"),
    ("if (user.password === 'Hunter2xyz') {", "Hunter2xyz"),
    ('if apiKey != "RxLVnOlvj3#V4bh4RBwOd" {', "RxLVnOlvj3#V4bh4RBwOd"),
    ('if ("Zr8qLm2Wx7Kp" == password) {', "Zr8qLm2Wx7Kp"),  # the literal on the left (Yoda style)
    ('if (!"Zr8qLm2Wx7Kp".equals(password)) return false;', "Zr8qLm2Wx7Kp"),
    ("git clone https://9f8e7d6c5b4a39281706f5e4d3c2b1a098765432:x-oauth-basic@github.com/o/r.git",
     "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"),  # GitHub's token as the URL's user
    ("API key: Qm7vX2pLz9Kw", "Qm7vX2pLz9Kw"),  # a key named by the word before it, written apart
    ("WPA2 key: hunter22", "hunter22"),  # a Wi-Fi network's key is its password
    ("Wi-Fi key: Qm7vX2pLz9Kw", "Qm7vX2pLz9Kw"),
    ("network key: Qm7vX2pLz9Kw", "Qm7vX2pLz9Kw"),
    ('requests.get(url, auth=("admin", "Qm7vX2pLz9Kw"))', "Qm7vX2pLz9Kw"),  # a call given user and password
    ("HTTPBasicAuth('admin', 'Qm7vX2pLz9Kw')", "Qm7vX2pLz9Kw"),
    ('smtp.login("me@x.io", "Qm7vX2pLz9Kw")', "Qm7vX2pLz9Kw"),
    ('server.login(cfg.user, "Qm7vX2pLz9Kw")', "Qm7vX2pLz9Kw"),
    ('new PasswordAuthentication("me", "Qm7vX2pLz9Kw".toCharArray())', "Qm7vX2pLz9Kw"),
    ("CREATE USER app IDENTIFIED BY 'Qm7vX2pLz9Kw';", "Qm7vX2pLz9Kw"),  # SQL
    ("ALTER USER app IDENTIFIED BY Qm7vX2pLz9Kw;", "Qm7vX2pLz9Kw"),
    ("CREATE USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY 'Qm7vX2pLz9Kw';", "Qm7vX2pLz9Kw"),
    ("Server=db;User ID=sa;Password=Xk9mQ2vLp8r!;Persist Security Info=true", "Xk9mQ2vLp8r!"),
    ('username, password = "admin", "Qm7vX2pLz9Kw"', "Qm7vX2pLz9Kw"),  # unpacked from literals
    ("password, user = 'Qm7vX2pLz9Kw', 'bob'", "Qm7vX2pLz9Kw"),
    ("mysql --password Qm7vX2pLz9Kw db", "Qm7vX2pLz9Kw"),
    ("password: str0ngPass1", "str0ngPass1"),  # (not a type)
])
def test_personal_passwords_are_redacted(text, secret):
    out = scrub(text)
    assert not leaked(secret, out, text), out
    assert "[REDACTED:" in out


def test_a_bare_value_stops_before_a_next_key_with_spaces():
    out = scrub("Server=db;User ID=sa;Password=Xk9mQ2vLp8r!;Persist Security Info=true")
    assert out.endswith("Password=[REDACTED:password];Persist Security Info=true")


@pytest.mark.parametrize("text", [
    "password: this must be long",  # four words of four letters are prose
    "the app password is same with this rule",
    "Applications passwords are stored in the keychain",
    "password = getpasswordfromkeychain",  # a name made of words, in one case
    "secret: mysupersecretvalue",
    'token: "thisisnotarealtoken"',
    "password: {password}",  # a format's field, a template, an object
    "password: {x9Fq2LmZ7}",
    "password = {token1: x}",
    "password: {{ vault_pw }}",
    "pwd: {pw1, pw2}",
    "contact ola@example.com / write2 more",
    "mail me at ola@example.com / Oslo2024 office",
    "the ratio is read / write2",
    "login is demo / demo1234",
    "**Password** is required",
    "password - the one from 2024",
    '<div class="password">Forgot password</div>',
    "**Password:** see the vault",
    "`password` is a `str`",
    "**Token:** ${{ secrets.TOKEN }}",
    "password: !secret db_password",  # a YAML tag says where the value comes from
    "password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6231",
    "password: !env_var DB_PASS",
    "| Service | User | Password |\n|---|---|---|\n| Mail | ola | see the vault |\n| NAS | admin | admin |\n",
    "| Key | Action |\n|---|---|\n| Ctrl+C | copy |\n",
    "| Option | Secret |\n|---|---|\n| verbose | no |\n| password | yes |\n",
    "| Name | Type | Description |\n|---|---|---|\n| password | str | The password |\n",
    "id,name,password_changed\n1,ola,2024-01-01\n",
    "the fields are name, password, and url\n",
    "Password:\nRequired.\n",  # below a title: a word, a sentence, masking, a list, a mapping, code
    "Password:\nHytta2024 is the one we use\n",
    "Password:\n********\n",
    "password:\n  - item1\n",
    "secret:\n  name: x1y2z3\n",
    "password:\n  $DB_PASS1\n",
    "password:\n  {{ vault_pw1 }}\n",
    "if not password:\n    abort401x\n",
    "if not password:\n    sys.exit(1)\n",
    "class Password:\n    pass\n",
    "Key:\nCtrl+Shift+P\n",
    "Password:\n2024-01-01\n",
    "secret: xxxxxxxxxxxxxxxx",  # filler stays filler
    "api_key: abcdefghijklmnop123",
    'if key == "Enter":',  # a comparison with a word, an empty string, a name or a default
    'if token == "EOF":',
    'if password == "":',
    "if secret == SECRET_VALUE:",
    'if password != "changeme":',
    'if api_key == "your-api-key-here":',
    'assert sig == "short_fun(a=1)"\ndef short_fun(a=1): pass',  # a call written out as text
    'if ("admin" == password) {',  # a literal on the left: a default, a name, a comparison elsewhere
    'if (a == "Zr8qLm2Wx7Kp" && b == password)',
    'x = "abc".equals(password)',
    '"repository": "git+https://github.com/o/r.git"',
    # JDBC pairs after a port are not 'user:password@host'
    'jdbc:sqlserver://localhost:1433;database=AdventureWorks;user=MyUserName@MyServer;password=*****;encrypt=true',
    'api_key = "ssk-ant-api04-NotARealKeyButLooksLikeOne"',  # a value that says it is not real
    "the api key: see the vault",  # a spaced label before a word, a default or a placeholder
    "Network key: password",
    "secret: my-k8s-secret-name",  # a name that says what it names
    "net use Z: \\\\srv\\s /user:alice * /persistent:yes",  # '*' asks for the password
    'requests.get(url, auth=("admin", "password"))',
    "auth=(user, pw)",
    "ALTER USER scott IDENTIFIED BY tiger;",
    "CREATE USER u IDENTIFIED BY '<password>';",
    "CREATE USER x IDENTIFIED BY VALUES 'S:AB12CD34EF56'",
    "Return the comment identified by `comment_id`, or None.",  # prose, not SQL
    "the group identified by group_id",
    # prose about a flag, and options listed; a signature, a subscript type, names unpacked in
    # code, a symbol in quotes, a secret manager's entry and its version
    "use the --password flag.",
    "information can be provided via the --username and --password options\ninstead of the URL.",
    "Command line keys: -quiet,-verbose,-fix,-f77,-f90,-show,-h <pyffilename>",
    'def generate_password_hash(\n    password: str, method: str = "scrypt", salt_length: int = 16\n) -> str:',
    "_assertion_pass: Callable[[int, str, str], None] | None = None",
    "            if len(split) == 2:\n                username, password = split\n",
    "user, password = admin, Qx7vLp9w2",  # (bare items are variables)
    '    "passwd:dir",\n    "passwd:gecos",\n    "passwd:shell",',
    "gcloud run deploy api --set-secrets=DB_PASS=db-pass:latest",
])
def test_words_closed_braces_and_slashes_in_prose_stay(text):
    assert scrub(text) == text

"""Secret scrubbing: the engine's behaviour (the interface and report, context kept, e-mails only
on request, never raising and idempotent on any text, a secret found once redacted everywhere,
the allow marker and patterns) and what no one rule owns. What each rule and filter does is in
its examples beside it in scrub/catalogue.py and scrub/filters.py, walked by
test_scrub_catalogue.py; linear time is measured in bench/scrub_linear.py.

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

from llm_secondbrain.scrub import catalogue
from llm_secondbrain.scrub import engine as scrub_mod
from llm_secondbrain.scrub import labels as scrub_labels
from llm_secondbrain.scrub import rules_identity, scrub, scrub_report

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
_FRAGMENTS = POSITIVES[::7] + [fill(t, t)[0] for t in catalogue.STAYS[::5]] + [
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






def test_a_password_after_a_closing_quote_is_still_redacted():
    pw = "Kq7" + r(ALNUM, 9) + "!"
    for text in (f'"password": "{pw}",', f"password = '{pw}'", f"the password is {pw} for now"):
        assert pw not in scrub(text)




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




# ------------------------------------------------------------------------------------------------
# issue 15, continued: classes of false positives found in software documentation (Node.js, pip,
# nettle, systemd) read as a user would ingest it
# ------------------------------------------------------------------------------------------------


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








# ------------------------------------------------------------------------------------------------
# every recall class above (scanner fixtures, service labels, other languages and shells, Nosey
# Parker's shapes) through one test
# ------------------------------------------------------------------------------------------------




# ------------------------------------------------------------------------------------------------
# real text nobody here wrote (installed packages' sources and docs): classes of wrong redactions
# ------------------------------------------------------------------------------------------------
_TOKEN = r(ALNUM, 32)
_HEX64 = r(HEX, 64)
_UUIDS = [_uuid(), _uuid()]
_LOWER_TOKEN = r(LOWER_ALNUM, 60)






# ------------------------------------------------------------------------------------------------
# personal notes: passwords of small letters alone, one opening with a brace, logins written as
# user / password, labels in Markdown emphasis, and password columns of tables and CSV exports
# ------------------------------------------------------------------------------------------------


def test_a_bare_value_stops_before_a_next_key_with_spaces():
    out = scrub("Server=db;User ID=sa;Password=Xk9mQ2vLp8r!;Persist Security Info=true")
    assert out.endswith("Password=[REDACTED:password];Persist Security Info=true")



def test_copies_of_a_secret_are_redacted_too():
    """Secrets no one rule owns: a copy of a value found elsewhere (typed twice, repeated under a
    plain label), and a token cut from its sentence's punctuation."""
    pw, tok = "Hx7!" + r(ALNUM, 10), r(ALNUM, 32)
    for text, secret in ((f'{{"password": "{pw}", "confirm": "{pw}"}}', pw),
                         (f"new_pass: {tok}\nrepeat: {tok}", tok),
                         (f"auth token: {tok}., next", tok),
                         (f"the token ({tok}_)", tok),
                         ("define('DB_PASSWORD', 'Vinter2026!x');", "Vinter2026!x")):
        out = scrub(text)
        assert not leaked(secret, out, text), out

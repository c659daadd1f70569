"""Redact secrets before anything is stored or printed.

Every replacement reads ``[REDACTED:<kind>]`` so a chunk still makes sense, and the report
names kinds and counts only, never values, so it can be printed and logged safely.

How it works (pure stdlib ``re``, linear time):

1. Cheap gates. ``text.lower()`` is computed once and plain substring tests decide which rule
   families can possibly fire; a text without any trigger costs a couple of scans.
2. Detectors collect ``(start, end, kind)`` spans on the *original* text:

   * private-key armour (PEM / OpenSSH / PGP / SSH2 / PuTTY, real or escaped newlines);
   * token candidates: one scan for runs of token characters, each run is classified by its
     first two characters against a table of documented vendor prefixes (cloud, source
     hosting, chat, payments, AI APIs, registries, observability, secret managers), then by
     a few structural shapes (JWT, Discord, Telegram, Azure, Mailchimp, AWS secret keys), then
     by a generic ``prefix_<high-entropy>`` shape, and finally as a high-entropy token that
     follows a secret word ("token", "key", "nøkkel", ...) in the nearby text;
   * labelled values: ``password=``, ``"api_key": "..."``, ``<password>..</password>``,
     ``--token X``, ``Password=...;`` and friends. The label must *end* in a secret word
     (``PASSWORD_MIN_LENGTH`` or ``token_uri`` are not labels), and the value must not be a
     reference or a placeholder (``${X}``, ``{{ x }}``, ``os.environ[...]``, ``getpass()``,
     ``<YOUR_KEY>``, ``xxxx``, ``changeme``...);
   * credentials in URLs, ``Authorization`` schemes, session cookies, CLI arguments
     (``mysql -p``, ``sshpass -p``, ``curl -u u:p``, ``openssl -passout pass:``...),
     Kubernetes ``Secret`` data, and passwords in prose in several languages
     ("passordet er Sommer2026!").
3. Spans are merged and replaced in one pass.

Bumping ``RULES_VERSION`` makes brains re-scrub chunks stored under older rules.
"""
from __future__ import annotations

import base64
import binascii
import re
from collections import Counter

# Bump when the rules change: brains remember the version they were filled with, and
# chunks stored under older rules are scrubbed again.
RULES_VERSION = 2

_MARK = "[REDACTED:"
_MAX_VALUE = 400

# --------------------------------------------------------------------------------------------
# vendor token table: (literal prefix, rest-of-token regex, kind, needs_entropy_check)
# Sources: the providers' own token-format documentation (GitHub, GitLab, Slack, Stripe,
# OpenAI, Anthropic, Google, AWS, npm, PyPI, Hugging Face, ...); the prefixes are public.
# --------------------------------------------------------------------------------------------
_AN = "A-Za-z0-9"
_VENDORS: list[tuple[str, str, str, bool]] = [
    # cloud
    *[(p, r"[A-Z0-9]{16}(?![A-Za-z0-9])", "aws_access_key_id", False) for p in ("AKIA", "ASIA", "ABIA", "ACCA")],
    ("AIza", r"[0-9A-Za-z_-]{35}", "google_api_key", False),
    ("GOCSPX-", r"[A-Za-z0-9_-]{24,40}", "google_oauth_client_secret", False),
    ("ya29.", r"[0-9A-Za-z_-]{20,}", "google_oauth_token", False),
    ("1//0", r"[0-9A-Za-z_-]{30,}", "google_refresh_token", False),
    ("dop_v1_", r"[a-f0-9]{64}", "digitalocean_token", False),
    ("doo_v1_", r"[a-f0-9]{64}", "digitalocean_token", False),
    ("dor_v1_", r"[a-f0-9]{64}", "digitalocean_token", False),
    ("HRKU-", r"[A-Za-z0-9_-]{30,}", "heroku_api_key", False),
    ("LTAI", r"[A-Za-z0-9]{12,24}(?![A-Za-z0-9])", "alibaba_access_key", True),
    ("AKID", r"[A-Za-z0-9]{32}(?![A-Za-z0-9])", "tencent_secret_id", True),
    ("fm2_", r"[A-Za-z0-9+/=_-]{40,}", "flyio_token", False),
    ("fo1_", r"[A-Za-z0-9_-]{30,}", "flyio_token", False),
    ("sbp_", r"[a-f0-9]{40}", "supabase_token", False),
    ("sb_secret_", r"[A-Za-z0-9_-]{20,}", "supabase_secret_key", False),
    ("dapi", r"[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", "databricks_token", False),
    # source hosting / CI
    *[(p, r"[A-Za-z0-9]{30,255}", "github_token", False) for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")],
    ("github_pat_", r"[A-Za-z0-9_]{22,255}", "github_token", False),
    *[(p, r"[A-Za-z0-9_-]{20,}", "gitlab_token", False) for p in (
        "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "glcbt-", "glsoat-", "gloas-",
        "glagent-", "glffct-", "glwt-", "GR1348941")],
    ("ATBB", r"[A-Za-z0-9_=.-]{28,}", "bitbucket_app_password", True),
    ("ATATT3", r"[A-Za-z0-9_=-]{40,}", "atlassian_api_token", False),
    ("ATCTT3", r"[A-Za-z0-9_=-]{40,}", "atlassian_api_token", False),
    ("CCIPAT_", r"[A-Za-z0-9]{20,}_[a-f0-9]{40}", "circleci_token", False),
    ("bkua_", r"[a-f0-9]{40}", "buildkite_token", False),
    ("squ_", r"[a-f0-9]{40}", "sonarqube_token", False),
    ("sqp_", r"[a-f0-9]{40}", "sonarqube_token", False),
    ("sqa_", r"[a-f0-9]{40}", "sonarqube_token", False),
    ("nfp_", r"[A-Za-z0-9]{36}", "netlify_token", False),
    ("vcp_", r"[A-Za-z0-9]{24,}", "vercel_token", True),
    # chat
    *[(p, r"[0-9A-Za-z-]{20,}", "slack_token", False) for p in ("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xoxe.xox")],
    ("xapp-", r"\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+", "slack_token", False),
    ("//hooks.slack.com/", r"(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}", "slack_webhook", False),
    ("//discord.com/api/webhooks/", r"\d+/[A-Za-z0-9_-]{30,}", "discord_webhook", False),
    ("//discordapp.com/api/webhooks/", r"\d+/[A-Za-z0-9_-]{30,}", "discord_webhook", False),
    ("//hooks.zapier.com/hooks/catch/", r"\d+/[A-Za-z0-9]+", "zapier_webhook", False),
    ("SK", r"[0-9a-fA-F]{32}(?![A-Za-z0-9])", "twilio_api_key", False),
    ("SG.", r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}", "sendgrid_api_key", False),
    ("xkeysib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}", "brevo_api_key", False),
    ("xsmtpsib-", r"[a-f0-9]{64}-[A-Za-z0-9]{16}", "brevo_api_key", False),
    ("key-", r"[0-9a-f]{32}(?![A-Za-z0-9])", "mailgun_key", False),
    # payments
    *[(p, r"[A-Za-z0-9]{10,}", "stripe_key", False) for p in ("sk_live_", "sk_test_", "rk_live_", "rk_test_")],
    ("whsec_", r"[A-Za-z0-9+/=]{20,}", "stripe_webhook_secret", False),
    ("sq0atp-", r"[0-9A-Za-z_-]{22,}", "square_token", False),
    ("sq0csp-", r"[0-9A-Za-z_-]{40,}", "square_token", False),
    ("EAAA", r"[A-Za-z0-9_-]{60,}", "square_token", False),
    ("EAA", r"[A-Za-z0-9]{90,}", "facebook_token", False),
    ("FLWSECK-", r"[a-f0-9]{32}-X", "flutterwave_secret_key", False),
    ("shippo_live_", r"[a-f0-9]{40}", "shippo_token", False),
    ("EZAK", r"[a-f0-9]{54}", "easypost_key", False),
    ("live_", r"[A-Za-z0-9]{30}(?![A-Za-z0-9])", "mollie_api_key", True),
    # AI APIs
    ("sk-ant-", r"(?:api|admin|sid|oat)\d\d-[A-Za-z0-9_-]{40,}", "anthropic_api_key", False),
    ("sk-", r"[A-Za-z0-9_-]{20,}", "openai_api_key", True),
    ("sk_", r"[a-f0-9]{48}(?![A-Za-z0-9])", "elevenlabs_api_key", False),
    ("sk.eyJ", r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}", "mapbox_secret_token", False),
    ("hf_", r"[A-Za-z0-9]{30,40}(?![A-Za-z0-9])", "huggingface_token", True),
    ("api_org_", r"[A-Za-z]{30,40}", "huggingface_token", False),
    ("gsk_", r"[A-Za-z0-9]{40,}", "groq_api_key", False),
    ("pplx-", r"[A-Za-z0-9]{40,}", "perplexity_api_key", False),
    ("r8_", r"[A-Za-z0-9]{30,}", "replicate_token", True),
    ("xai-", r"[A-Za-z0-9]{60,}", "xai_api_key", False),
    ("nvapi-", r"[A-Za-z0-9_-]{50,}", "nvidia_api_key", False),
    ("lsv2_", r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{8,12}", "langsmith_api_key", False),
    ("pcsk_", r"[A-Za-z0-9_]{40,}", "pinecone_api_key", False),
    ("tvly-", r"[A-Za-z0-9_-]{20,}", "tavily_api_key", True),
    ("fc-", r"[a-f0-9]{32}(?![A-Za-z0-9])", "firecrawl_api_key", False),
    ("csk-", r"[a-z0-9]{40,}", "cerebras_api_key", False),
    ("fw_", r"[A-Za-z0-9]{20,}", "fireworks_api_key", True),
    ("jina_", r"[a-f0-9]{32}[A-Za-z0-9_-]{20,}", "jina_api_key", False),
    # package registries
    ("npm_", r"[A-Za-z0-9]{36}(?![A-Za-z0-9])", "npm_token", False),
    ("pypi-", r"AgE[A-Za-z0-9_-]{50,}", "pypi_token", False),
    ("rubygems_", r"[a-f0-9]{48}", "rubygems_token", False),
    ("oy2", r"[a-z0-9]{43}(?![A-Za-z0-9])", "nuget_api_key", False),
    ("dckr_pat_", r"[A-Za-z0-9_-]{20,}", "docker_hub_token", False),
    ("dckr_oat_", r"[A-Za-z0-9_-]{20,}", "docker_hub_token", False),
    ("AKCp", r"[A-Za-z0-9]{60,}", "jfrog_api_key", False),
    ("cmVmdGtuOjAxOj", r"[A-Za-z0-9]{40,}", "jfrog_token", False),
    ("CLOJARS_", r"[a-z0-9]{60}", "clojars_token", False),
    ("pul-", r"[a-f0-9]{40}", "pulumi_token", False),
    # observability / productivity
    ("sntryu_", r"[a-f0-9]{64}", "sentry_token", False),
    ("sntrys_", r"eyJ[A-Za-z0-9_=+/-]{20,}", "sentry_token", False),
    ("glsa_", r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "grafana_token", False),
    ("glc_", r"[A-Za-z0-9+/]{32,}={0,2}", "grafana_token", False),
    ("NRAK-", r"[A-Z0-9]{27}", "newrelic_key", False),
    ("NRJS-", r"[a-f0-9]{19}", "newrelic_key", False),
    ("NRII-", r"[A-Za-z0-9_-]{32}", "newrelic_key", False),
    ("dt0c01.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}", "dynatrace_token", False),
    ("PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}", "postman_api_key", False),
    ("pnu_", r"[A-Za-z0-9]{36}", "prefect_token", False),
    ("lin_api_", r"[A-Za-z0-9]{40}", "linear_api_key", False),
    ("lin_oauth_", r"[a-f0-9]{64}", "linear_api_key", False),
    ("ntn_", r"[A-Za-z0-9]{40,}", "notion_token", False),
    ("secret_", r"[A-Za-z0-9]{43}(?![A-Za-z0-9])", "notion_token", False),
    ("figd_", r"[A-Za-z0-9_-]{40}", "figma_token", False),
    ("CFPAT-", r"[A-Za-z0-9_-]{43}", "contentful_token", False),
    ("shpat_", r"[a-fA-F0-9]{32}", "shopify_token", False),
    ("shpca_", r"[a-fA-F0-9]{32}", "shopify_token", False),
    ("shppa_", r"[a-fA-F0-9]{32}", "shopify_token", False),
    ("shpss_", r"[a-fA-F0-9]{32}", "shopify_token", False),
    ("rdme_", r"[a-z0-9]{70}", "readme_api_key", False),
    ("tfp_", r"[A-Za-z0-9_-]{40,}", "typeform_token", False),
    ("pat-na1-", r"[a-f0-9-]{36}", "hubspot_token", False),
    ("pat-eu1-", r"[a-f0-9-]{36}", "hubspot_token", False),
    ("AAAAAAAAAAAAAAAAAAAAA", r"[A-Za-z0-9%]{30,}", "twitter_bearer_token", False),
    # secret managers
    ("hvs.", r"[A-Za-z0-9_-]{24,}", "vault_token", False),
    ("hvb.", r"[A-Za-z0-9_-]{24,}", "vault_token", False),
    ("hvr.", r"[A-Za-z0-9_-]{24,}", "vault_token", False),
    ("s.", r"[A-Za-z0-9]{24}(?![A-Za-z0-9.])", "vault_token", True),
    ("dp.pt.", r"[A-Za-z0-9]{40,}", "doppler_token", False),
    ("dp.st.", r"[A-Za-z0-9_.-]{40,}", "doppler_token", False),
    ("dp.ct.", r"[A-Za-z0-9]{40,}", "doppler_token", False),
    ("dp.sa.", r"[A-Za-z0-9]{40,}", "doppler_token", False),
    ("dp.scim.", r"[A-Za-z0-9]{40,}", "doppler_token", False),
    ("ops_eyJ", r"[A-Za-z0-9+/=_-]{50,}", "onepassword_token", False),
    ("AGE-SECRET-KEY-1", r"[0-9A-Z]{50,}", "age_secret_key", False),
    # JSON Web Tokens (header.payload.signature; JWE has five parts)
    ("eyJ", r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?", "jwt", False),
]


def _build_dispatch():
    table: dict[str, list[tuple[re.Pattern, str, bool]]] = {}
    for prefix, rest, kind, check in _VENDORS:
        rx = re.compile(re.escape(prefix) + rest)
        table.setdefault(prefix[:2], []).append((rx, kind, check))
    # longer prefixes first, so "sk-ant-" wins over "sk-"
    order = {p: len(p) for p, *_ in _VENDORS}
    for key, rules in table.items():
        rules.sort(key=lambda r: -len(r[0].pattern))
    del order
    return table


_DISPATCH = _build_dispatch()

# runs of token characters worth classifying (no '=' / ':' so that "key=value" splits)
_CAND = re.compile(r"[A-Za-z0-9_\-.~+/]{16,}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DISCORD = re.compile(r"[MNO][A-Za-z0-9_-]{22,28}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}")
_AZURE_SECRET = re.compile(r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")
_MAILCHIMP = re.compile(r"[0-9a-f]{32}-us\d{1,2}")
_ATLAS = re.compile(r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}")
_TELEGRAM = re.compile(r"\d{6,12}:AA[A-Za-z0-9_-]{30,40}")
_GENERIC_PREFIXED = re.compile(
    r"([A-Za-z][A-Za-z0-9]{1,11})[_-](?:[A-Za-z0-9]{1,10}[_-]){0,2}([A-Za-z0-9]{30,}[A-Za-z0-9_-]*)")
_ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}")
_B64ISH = re.compile(r"[A-Za-z0-9+/]{40}")

# words that make a nearby high-entropy token a secret ("here is the Acme API token: ...")
_CTX_WORDS = re.compile(
    r"token|secret|passw|passord|kennwort|api[ _-]?key|apikey|access[ _-]?key|private[ _-]?key|"
    r"signing[ _-]?key|license[ _-]?key|\bkey\b|credential|nøkkel|nokkel|schlüssel|clé|clave|"
    r"nyckel|sleutel|nøgle|\bpat\b|bearer|webhook|\bdsn\b")
# words that say "this long string is a hash / id / public thing"
_CTX_BENIGN = re.compile(
    r"public|publishable|fingerprint|sha\d|md5|checksum|digest|integrity|commit|\bhash|"
    r"\bcert|request[_ -]?id|trace|\buuid|\betag\b|revision|\brev\b")


def _classes(s: str) -> tuple[bool, bool, bool]:
    up = lo = dg = False
    for ch in s:
        if "a" <= ch <= "z":
            lo = True
        elif "A" <= ch <= "Z":
            up = True
        elif "0" <= ch <= "9":
            dg = True
        if up and lo and dg:
            break
    return up, lo, dg


def _entropy_ok(s: str, min_len: int = 16) -> bool:
    """Random-looking: long enough and mixes letters with digits (and usually case)."""
    if len(s) < min_len:
        return False
    up, lo, dg = _classes(s)
    if not dg or not (up or lo):
        return False
    if up and lo:
        return True
    # single-case: accept hex-ish / long base32-ish strings only
    return len(s) >= 24


# --------------------------------------------------------------------------------------------
# labels
# --------------------------------------------------------------------------------------------
_PW_WORDS = frozenset(
    "password passwd passwort passord passordet pwd pass pw passphrase passcode kennwort "
    "lösenord losenord lösenordet wachtwoord contraseña contrasena adgangskode adgangskoden "
    "kodeord kodeordet senha salasana hasło haslo heslo jelszó jelszo psk mdp motdepasse "
    "passin passout storepass keypass srcstorepass deststorepass srckeypass destkeypass "
    "kspass tspass".split())
_SECRET_WORDS = frozenset(
    "secret token apikey credential credentials creds authorization auth authtoken "
    "accesstoken refreshtoken idtoken sessiontoken privatekey secretkey accesskey accountkey "
    "sharedaccesskey appkey masterkey dockerconfigjson dockercfg appid sig clientsecret "
    "passkey".split())
# qualifiers that turn a bare "key" into a secret key
_KEY_QUALIFIERS = frozenset(
    "api secret private access account app application master encryption enc signing sign "
    "client auth license licence subscription shared service webhook hmac jwt session storage "
    "admin write deploy ssh gpg pgp root management mgmt cipher crypt crypto aes x ingest "
    "ingestion instrumentation sdk server rest consumer aws azure gcp s3 openai anthropic "
    "mistral cohere groq gemini stripe twilio sendgrid mailgun datadog dd sentry algolia "
    "mapbox pusher firebase recaptcha live prod production test dev user personal "
    "nøkkel".split())
# allowed words *after* the secret word ("secret_key_base", "password2", "token_value")
_TRAILERS = frozenset("value val base str b64 base64 hex raw plain clear cleartext encoded literal key".split())
# a label ending in one of these names something about a secret, not the secret itself
_FUSED_PASS_PREFIX = ("store", "key", "srcstore", "deststore", "srckey", "destkey", "become",
                      "ssh", "sudo", "db", "root", "admin", "user", "ks", "ts", "ansible")

_COMP_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-zäöüåøæéñß]+|[äöüåøæéñß]+")

# class of a label: 0 = not a label, 1 = password, 2 = secret/token, 3 = weak ("key")
_NOT, _PWD, _SEC, _WEAK = 0, 1, 2, 3


def _label_class(ident: str) -> int:
    comps = [c.lower() for c in _COMP_RE.findall(ident)]
    if not comps:
        return _NOT
    # drop trailing harmless words: "secret_key_base" -> secret key, "token_value" -> token
    while len(comps) > 1 and comps[-1] in _TRAILERS and comps[-1] != "key":
        comps.pop()
    last = comps[-1]
    prev = comps[-2] if len(comps) > 1 else ""
    if last in _PW_WORDS:
        return _PWD
    if last in _SECRET_WORDS:
        if last == "auth" and prev in ("o", "basic", "http", "no"):
            return _WEAK
        return _SEC
    if last == "key" or last == "keys":
        if prev in ("public", "publishable", "primary", "foreign", "cache", "sort", "partition",
                    "hot", "short", "lookup", "map", "dict", "host", "unique", "composite",
                    "idempotency", "i18n", "translation", "object", "s3", "file", "ssh"):
            return _NOT if prev != "ssh" else _WEAK
        if prev in _KEY_QUALIFIERS or prev in _PW_WORDS or prev in _SECRET_WORDS or prev == "token":
            return _SEC
        return _WEAK
    # fused words: PGPASSWORD, MYSQL_PWD(covered), storepass, apikey, authtoken, xsrftoken
    for w in ("password", "passwd", "passwort", "passord", "kennwort"):
        if last.endswith(w):
            return _PWD
    if last.endswith("pass") and last.startswith(_FUSED_PASS_PREFIX):
        return _PWD
    if last.endswith("token") or last.endswith("secret"):
        return _SEC
    if last.endswith("key") and len(last) > 3 and last[:-3] in _KEY_QUALIFIERS:
        return _SEC
    if last in ("nøkkel", "nokkel", "schlüssel", "schluessel", "nyckel", "sleutel", "nøgle"):
        return _WEAK
    return _NOT


_LABEL_HIT = re.compile(
    r"pass|pw|secret|token|key|auth|cred|psk|kennwort|l[öo]senord|wachtwoord|contrase|"
    r"adgangskode|kodeord|senha|salasana|has[łl]o|heslo|jelsz|n[øo]kkel|schl[üu]ssel|nyckel|"
    r"sleutel|n[øo]gle|mdp|appid|sig|dockerc|cookie|bearer|basic")
_IDCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-äöüåøæéñßÄÖÜÅØÆ")

# separator after a label
_ASSIGN = re.compile(r"""(?:\\?["'])?[ \t]*(:=|=>|=(?!=)|:(?!:)|->)[ \t]*""")
_XML_VALUE = re.compile(r"""["']\s+value\s*=\s*""")
_VALUE = re.compile(
    r"""\\(["'])((?:(?!\\["']).){1,400}?)\\\1"""     # \"value\" inside a JSON string
    r"""|"([^"\n]{0,400})\"|'([^'\n]{0,400})'|`([^`\n]{0,400})`"""  # quoted
    r"""|([^\s"'`<]{1,400})""")                   # bare

# values that are references, code or placeholders, never secrets
_REF_PREFIX = ("$", "%(", "{{", "{%", "<%", "#{", "@{", "<", "[redacted", "-----", "env:",
               "file:", "fd:", "vault:", "op://", "!vault", "!ref", "ref+", "arn:", "secretref",
               "process.env", "os.environ", "os.getenv", "getenv(", "env(", "env[", "env.",
               "secrets.", "settings.", "config.", "import.meta", "request.", "self.", "this.",
               "args.", "params.", "options.", "opts.", "cfg.", "conf.", "props.", "sys.argv",
               "input(", "getpass", "prompt(", "read(", "keyring.", "vars.", "var.", "local.",
               "data.", "module.", "lookup(", "{", "(", "[", "%")
_PLACEHOLDER_WORDS = frozenset(
    "password passwd passwort passord secret secrets token apikey api_key key changeme change_me "
    "changeit example examples sample redacted removed hidden masked none null nil undefined true "
    "false yes no required optional string str text int integer bool boolean bytes any object dict "
    "list value default empty placeholder todo tbd fixme dummy fake test testing foo bar baz qux "
    "foobar foobared hunter2 letmein admin root user username guest demo mypassword mysecret "
    "mytoken yourpassword yoursecret yourtoken pass pwd na n/a xxx unset unknown notset "
    "set missing omitted private public same_as_above see_above secure supersecret "
    "correcthorsebatterystaple geheim hemmelig passord123 password123 sensitive confidential "
    "auto generated random".split())
_PLACEHOLDER_RE = re.compile(
    r"(?i)^(?:your|my|insert|enter|replace|put|paste|add|fill|some|the|a|an|example|sample|dummy|fake|test)"
    r"[-_ .]?(?:[a-z]+[-_ .]?){0,4}(?:here|key|token|secret|password|pass|pwd|value|id)?$"
    r"|x{4,}|\*{3,}|\.{3}|•{3,}|_{4,}|(?:here|goes[-_]here)$|example|placeholder|redacted|changeme|"
    r"^<.*>$|^\[.*\]$|^\{.*\}$|^%\w+%$|^[A-Z][A-Z0-9_]*[A-Z]$")
_CODEISH = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\(|\[[\"'A-Za-z_]|\.[A-Za-z_][A-Za-z0-9_]*$)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATHISH = re.compile(r"^(?:~|\.{1,2})?/|\.(?:pem|key|json|txt|crt|cer|p12|pfx|jks|gpg|asc|env|ya?ml|ini|conf|cfg|toml)$", re.I)
_NUMBER = re.compile(r"[+-]?\d+(?:[.,]\d+)?(?:ms|s|m|h|d|kb|mb|gb)?")
_TYPEISH = re.compile(r"^(?:Optional|List|Dict|Union|str|int|bytes|SecretStr|Secret|String|number|boolean)\b")


def _is_reference(v: str, quoted: bool) -> bool:
    lv = v.lower()
    if lv.startswith(_REF_PREFIX):
        # a leading "{" / "(" / "[" / "%" / "<" only means code when it is not part of a password
        # like "{x9Fq..." — require something identifier-like right after.
        first = v[0]
        if first in "{([%<" and len(v) > 1 and not (v[1].isalpha() or v[1] in "{%$_'\" ") and not lv.startswith(("[redacted", "<%", "{%", "{{", "%(")):
            return False
        return True
    if lv in _PLACEHOLDER_WORDS:
        return True
    if _PLACEHOLDER_RE.search(v):
        return True
    if len(set(v)) <= 2 and len(v) >= 3:
        return True
    if not quoted:
        if _CODEISH.match(v):
            return True
        if _IDENTIFIER.fullmatch(v):
            # bare identifiers: variables unless they look like a made-up word with digits
            if not any(c.isdigit() for c in v):
                if "_" in v or (v[0].islower() and any(c.isupper() for c in v)):
                    return True
                for w in ("pass", "secret", "token", "key", "auth", "pwd"):
                    if w in lv:
                        return True
    if _TYPEISH.match(v):
        return True
    return False


def _value_ok(v: str, cls: int, quoted: bool) -> bool:
    n = len(v)
    if n < 4 or n > _MAX_VALUE:
        return False
    if _MARK in v:
        return False
    if _is_reference(v, quoted):
        return False
    if _PATHISH.search(v) and not _entropy_ok(v, 20):
        return False
    if "://" in v:  # URLs are handled by the URL rule
        return False
    if _NUMBER.fullmatch(v):
        return cls == _PWD and n >= 6 and not quoted is None
    up, lo, dg = _classes(v)
    if cls == _PWD:
        if n < 5:
            return False
        return True
    if cls == _SEC:
        if n < 8:
            return False
        if not dg and not (up and lo) and v.isalpha():
            return False
        if n < 12 and not dg:
            return False
        return True
    # weak label: only clearly random values
    return _entropy_ok(v, 16) and ":" not in v


def _b64_creds(v: str) -> bool:
    """True if v is base64 of 'user:password' (Basic auth, docker config 'auth')."""
    if len(v) < 8 or len(v) > 400:
        return False
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), validate=True)
        s = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    if ":" not in s or not s.isprintable():
        return False
    user, _, pw = s.partition(":")
    return bool(pw) and len(pw) >= 3 and " " not in user


# --------------------------------------------------------------------------------------------
# the scrubber
# --------------------------------------------------------------------------------------------
class _Spans:
    __slots__ = ("items",)

    def __init__(self):
        self.items: list[tuple[int, int, str]] = []

    def add(self, s: int, e: int, kind: str, text: str) -> None:
        if e <= s:
            return
        if _MARK in text[s:e]:
            return
        self.items.append((s, e, kind))


def _lower(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a few code points change length when lower-cased
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low


# ---- private keys ---------------------------------------------------------------------------
_PEM_BEGIN = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----|---- BEGIN (SSH2 (?:ENCRYPTED )?PRIVATE KEY) ----")
_PEM_BODY = re.compile(r"(?:\\[nr]|[A-Za-z0-9+/=:,\- \t\r\n]){0,20000}")
_PEM_TRIM = re.compile(r"^(?:\\[nr]|\s)+|(?:\\[nr]|\s)+$")
_PUTTY = re.compile(r"Private-Lines:\s*(\d+)[ \t]*(?:\\r|\r)?(?:\\n|\n)")
_B64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*(?:\\r|\r)?(?:\\n|\n|$)")


def _private_keys(text: str, spans: _Spans) -> None:
    for m in _PEM_BEGIN.finditer(text):
        label = m.group(1) or m.group(2)
        start = m.end()
        end_marker = ("-----END " + label + "-----") if m.group(1) else ("---- END " + label.replace("ENCRYPTED ", "") + " ----")
        stop = text.find(end_marker, start, start + 40000)
        if stop < 0 and m.group(2):
            stop = text.find("---- END SSH2", start, start + 40000)
        if stop < 0:
            # truncated paste: take the base64-looking lines that follow
            bm = _PEM_BODY.match(text, start)
            stop = bm.end() if bm else start
            # give back trailing words of prose: stop at the last base64 line
            body = text[start:stop]
            cut = max(body.rfind("\n\n"), -1)
            if cut > 0:
                stop = start + cut
        body = text[start:stop]
        inner = _PEM_TRIM.sub("", body)
        if not inner or inner.startswith(_MARK):
            continue
        lead = len(body) - len(body.lstrip(" \t\r\n")) if not body.startswith("\\") else 0
        # find exact offsets of the trimmed body
        off = body.find(inner)
        spans.add(start + off, start + off + len(inner), "private_key", text)
        del lead
    if "PuTTY-User-Key-File" in text:
        for m in _PUTTY.finditer(text):
            pos = m.end()
            n = min(int(m.group(1)), 200)
            s = pos
            for _ in range(n):
                lm = _B64_LINE.match(text, pos)
                if not lm:
                    break
                pos = lm.end()
            if pos > s:
                e = pos
                while e > s and text[e - 1] in "\r\n":
                    e -= 1
                if text[e - 2:e] == "\\n":
                    e -= 2
                spans.add(s, e, "private_key", text)


# ---- token candidates -----------------------------------------------------------------------
def _tokens(text: str, low: str, spans: _Spans, has_aws: bool) -> None:
    dispatch = _DISPATCH
    for m in _CAND.finditer(text):
        s, e = m.span()
        tok = m.group()
        rules = dispatch.get(tok[:2])
        if rules is not None:
            hit = False
            for rx, kind, check in rules:
                vm = rx.match(text, s)
                if vm is None:
                    continue
                ve = vm.end()
                if check and not _entropy_ok(text[s:ve], 20):
                    continue
                # part of the same token: redact to its end
                ce = e
                while ce > ve and text[ce - 1] in ".-/~":
                    ce -= 1
                if kind == "aws_access_key_id" and tok[4:ve - s].endswith("EXAMPLE"):
                    hit = True
                    break
                if "EXAMPLE" in tok or "XXXXXXXX" in tok or "xxxxxxxx" in tok:
                    hit = True
                    break
                spans.add(s, max(ve, ce), kind, text)
                hit = True
                break
            if hit:
                continue
        n = e - s
        if n < 20:
            continue
        _shapes(text, low, s, e, tok, spans, has_aws)


def _shapes(text, low, s, e, tok, spans, has_aws) -> None:
    # trim sentence punctuation
    while e > s and text[e - 1] in ".-/~":
        e -= 1
    tok = text[s:e]
    n = len(tok)
    if n < 20:
        return
    if "Q~" in tok:
        am = _AZURE_SECRET.search(tok)
        if am:
            spans.add(s + am.start(), s + am.end(), "azure_client_secret", text)
            return
    if tok.count(".") == 2 and tok[0] in "MNO" and _DISCORD.fullmatch(tok):
        spans.add(s, e, "discord_bot_token", text)
        return
    if ".atlasv1." in tok and _ATLAS.search(tok):
        spans.add(s, e, "terraform_cloud_token", text)
        return
    if tok.startswith("AA") and s > 0 and text[s - 1] == ":":
        b = s - 1
        while b > 0 and text[b - 1].isdigit() and s - b < 14:
            b -= 1
        if _TELEGRAM.fullmatch(text, b, e):
            spans.add(b, e, "telegram_bot_token", text)
            return
    if n >= 35 and tok[32:35] == "-us" and _MAILCHIMP.fullmatch(tok):
        spans.add(s, e, "mailchimp_key", text)
        return
    # AWS secret access key next to an access key id
    if has_aws and n == 40 and _B64ISH.fullmatch(tok) and _entropy_ok(tok, 40):
        w = text[max(0, s - 400):e + 400]
        if "AKIA" in w or "ASIA" in w or "aws" in low[max(0, s - 200):s]:
            spans.add(s, e, "aws_secret_access_key", text)
            return
    c0 = tok[0]
    if c0 in "/.~-+":
        return
    # generic vendor shape: short lowercase/uppercase prefix, separator, long random body
    gm = _GENERIC_PREFIXED.fullmatch(tok)
    if gm is not None:
        pre, body = gm.group(1), gm.group(2)
        lp = pre.lower()
        if not lp.startswith(("sha", "md5", "blake", "crc", "node", "python", "linux", "release", "build", "commit", "data", "image")):
            up, lo, dg = _classes(body)
            if dg and ((up and lo) or (_HEX.fullmatch(body) and len(body) >= 32)):
                spans.add(s, e, "api_token", text)
                return
    # context: a secret word shortly before, no hash / id / public word
    _contextual(text, low, s, e, tok, spans)


def _contextual(text, low, s, e, tok, spans) -> None:
    n = len(tok)
    up, lo, dg = _classes(tok)
    if not dg or not (up or lo):
        return
    if "/" in tok and ("." in tok or not (up and lo)):
        return  # path / URL
    if tok.count(".") >= 2 and not (up and lo):
        return  # domain / version
    if _UUID.search(tok) or _ULID.fullmatch(tok):
        return
    is_hex = _HEX.fullmatch(tok) is not None
    if not (up and lo) and not is_hex and n < 24:
        return
    if is_hex and n < 32:
        return
    prev = text[s - 1] if s else " "
    if prev in "@#:" or text[max(0, s - 7):s].lower().endswith(("base64,", "sha256:", "sha512-", "sha384-", "sha1:")):
        return
    a = max(0, s - 160)
    # stay within the last three lines
    nl = low.rfind("\n", a, s)
    if nl >= 0:
        nl2 = low.rfind("\n", a, nl)
        if nl2 >= 0:
            nl3 = low.rfind("\n", a, nl2)
            if nl3 >= 0:
                a = nl3
    window = low[a:s]
    if not _CTX_WORDS.search(window):
        return
    if _CTX_BENIGN.search(window):
        return
    # a value of a non-secret label right before ("client_id=...", "trace_id: ...")
    lm = _PRE_LABEL.search(window[-48:])
    if lm and _label_class(lm.group(1)) == _NOT:
        return
    if is_hex and not _HEXCTX.search(window[-80:]):
        return
    spans.add(s, e, "secret", text)


_PRE_LABEL = re.compile(r"([A-Za-z0-9_.-]+)[\"']?\s*[:=]\s*[\"'`]?$")
_HEXCTX = re.compile(r"token|secret|key|passw|credential|nøkkel|schlüssel")


# ---- labelled values ------------------------------------------------------------------------
def _labelled(text: str, low: str, spans: _Spans) -> None:
    n = len(text)
    last_end = -1
    for m in _LABEL_HIT.finditer(low):
        i = m.start()
        if i < last_end:
            continue
        # expand to the whole identifier
        a = i
        while a > 0 and text[a - 1] in _IDCHARS and i - a < 64:
            a -= 1
        b = m.end()
        while b < n and text[b] in _IDCHARS and b - i < 64:
            b += 1
        last_end = b
        # strip surrounding dots/dashes except leading dashes of a CLI flag
        ident = text[a:b]
        flag = ident.startswith("-")
        ident_core = ident.strip(".-")
        if not ident_core:
            continue
        cls = _label_class(ident_core)
        if cls == _NOT:
            continue
        kind = "password" if cls == _PWD else "secret"
        _value_after(text, low, a, b, cls, kind, flag, ident_core, spans)


def _value_after(text, low, a, b, cls, kind, flag, ident, spans) -> None:
    n = len(text)
    pos = b
    sep = None
    am = _ASSIGN.match(text, pos)
    if am is not None:
        sep = am.group(1)
        pos = am.end()
    else:
        # XML element <password>...</password>
        if a > 0 and text[a - 1] == "<" and pos < n and text[pos] == ">":
            end = text.find("<", pos + 1, pos + 1 + _MAX_VALUE)
            if end > pos + 1:
                v = text[pos + 1:end].strip()
                if v and _value_ok(v, cls, True):
                    off = text.find(v, pos + 1, end)
                    spans.add(off, off + len(v), kind, text)
            return
        # <add key="ClearTextPassword" value="..."/>
        if a > 0 and text[a - 1] in "\"'":
            xm = _XML_VALUE.match(text, pos)
            if xm is not None:
                pos = xm.end()
                sep = "="
        if sep is None:
            if flag or ident.lower() in ("password", "passwd", "pass"):
                # "--password X", netrc "password X"
                j = pos
                while j < n and text[j] in " \t":
                    j += 1
                if j == pos or j >= n:
                    return
                pos = j
                sep = " "
            else:
                return
    if pos >= n:
        return
    if sep == ":" and text[b - 1:b] == "/" :
        return
    vm = _VALUE.match(text, pos)
    if vm is None:
        return
    g = vm.lastindex
    quoted = g != 6
    v = vm.group(g)
    vs = vm.start(g)
    if g == 1:
        v = vm.group(2)
        vs = vm.start(2)
    if not quoted:
        # connection strings / query strings: stop at the next "; key=" or "& key="
        if ";" in v or "&" in v or "," in v:
            cm = _NEXT_PAIR.search(v)
            if cm:
                v = v[:cm.start()]
        v = v.rstrip(",;)]}>")
        if sep == ":" and v.endswith(":"):
            return
    # Authorization: <scheme> <credentials>
    if ident.lower().endswith("authorization") or (cls == _SEC and v.lower() in _SCHEMES):
        return _auth_value(text, vs, spans)
    vl = v.lower()
    if vl.startswith("pass:") and len(v) > 5:
        v = v[5:]
        vs += 5
    if not quoted and sep == " " and v.startswith("-"):
        return
    if ident.lower().endswith("auth") and cls != _PWD:
        if not (_b64_creds(v) or _entropy_ok(v, 20)):
            return
    if not _value_ok(v, cls, quoted):
        return
    spans.add(vs, vs + len(v), kind, text)


_NEXT_PAIR = re.compile(r"[;&,][A-Za-z_][A-Za-z0-9_ .-]{0,40}=")
_SCHEMES = frozenset("bearer basic token bot ssws digest negotiate ntlm apikey api-key sso-key oauth splunk geniekey".split())
_AUTH_VALUE = re.compile(r"(?:([A-Za-z][A-Za-z-]{1,20})[ \t]+)?([A-Za-z0-9._~+/=:\-]{8,})")


def _auth_value(text: str, pos: int, spans: _Spans) -> None:
    m = _AUTH_VALUE.match(text, pos)
    if m is None:
        return
    scheme = (m.group(1) or "").lower()
    v = m.group(2)
    if scheme and scheme not in _SCHEMES and scheme not in ("sharedkey", "hmac", "aws4-hmac-sha256", "zoho-oauthtoken", "klaviyo-api-key"):
        return
    _credential_token(text, m.start(2), v, scheme, spans)


def _credential_token(text, s, v, scheme, spans) -> None:
    v = v.rstrip(".,;")
    if _MARK in v or v.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_RE.search(v):
        return
    if scheme == "basic":
        if _b64_creds(v) or _entropy_ok(v, 16):
            spans.add(s, s + len(v), "basic_auth", text)
        return
    if _entropy_ok(v, 12) or (len(v) >= 20 and not v.isalpha()):
        spans.add(s, s + len(v), "bearer_token", text)


_AUTH_SCHEME = re.compile(r"(?<![a-z0-9_-])(bearer|basic|token|ssws|bot)[ \t]+")


def _auth_headers(text: str, low: str, spans: _Spans) -> None:
    for m in _AUTH_SCHEME.finditer(low):
        scheme = m.group(1)
        if scheme in ("token", "bot", "ssws"):
            # only as an Authorization scheme: "Authorization: token X"
            if "authorization" not in low[max(0, m.start() - 30):m.start()]:
                continue
        vm = _CRED_CHARS.match(text, m.end())
        if vm is None:
            continue
        _credential_token(text, vm.start(), vm.group(), scheme, spans)


_CRED_CHARS = re.compile(r"[A-Za-z0-9._~+/=\-]{8,}")


# ---- URLs and connection strings -------------------------------------------------------------
_URL_CRED = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,30})://([^\s:/?#@\"'`<>\[\]]{0,128}):([^\s/?#\"'`<>]{1,256})@(?=[\w\[.-])")
_ORACLE = re.compile(r"(?:thin:@?|sqlplus\s+|(?<![\w/])[A-Za-z_][A-Za-z0-9_]{0,30}/)([^\s/@\"']{1,128})@(?=[\w\[.-])")


def _url_creds(text: str, spans: _Spans) -> None:
    for m in _URL_CRED.finditer(text):
        pw = m.group(3)
        scheme = m.group(1).lower()
        if _url_placeholder(pw):
            continue
        kind = "connection_string" if scheme not in ("http", "https", "ftp", "ftps", "sftp", "ws", "wss", "git", "ssh", "smtp", "smtps", "imap", "imaps") else "url_credentials"
        spans.add(m.start(3), m.end(3), kind, text)


def _url_placeholder(pw: str) -> bool:
    lp = pw.lower()
    if lp in _PLACEHOLDER_WORDS or lp in ("pass", "pw", "pwd", "passwd", "password", "secret", "foobared", "example", "changeme", "xxx"):
        return True
    if pw.startswith(("$", "{", "<", "%(", "[REDACTED", "*")) or _PLACEHOLDER_RE.search(pw):
        return True
    if len(set(pw)) <= 1:
        return True
    return False


def _oracle(text: str, spans: _Spans) -> None:
    for m in _ORACLE.finditer(text):
        pre = text[max(0, m.start() - 40):m.start()].lower()
        if "jdbc:oracle" not in pre and "sqlplus" not in pre and "thin:" not in m.group(0) and "sqlplus" not in m.group(0):
            continue
        pw = m.group(1)
        if not _url_placeholder(pw) and len(pw) >= 3:
            spans.add(m.start(1), m.end(1), "connection_string", text)


# ---- CLI arguments -------------------------------------------------------------------------
_CLI_P = re.compile(r"(?<![\w-])-p(?:[ \t]+|(?=['\"])|(?=[^\s-]))(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_TOOLS_GLUED = ("mysql", "mysqldump", "mariadb", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "7z", "7za", "rar", "unrar")
_CLI_TOOLS_SPACED = ("sshpass", "login", "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "sqlcmd", "bcp", "az", "zip", "unzip", "ldapsearch", "ldapmodify", "ldapadd", "smbclient", "mount", "cifs")
_CLI_USERPASS = re.compile(r"(?<![\w-])(?:-u|--user|-U)(?:[ \t]+|=)(['\"]?)([^\s:'\"%]{1,64})([:%])(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_REDIS = re.compile(r"(?<![\w-])(?:-a|--pass)[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_ECHO = re.compile(r"\becho[ \t]+(?:-n[ \t]+)?(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"|]{1,200})[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\w+[ \t]+)*-S\b|[^\n|]*--password-stdin|passwd\b|chpasswd|[^\n|]*-S\b)")
_CLI_HTPASSWD = re.compile(r"\bhtpasswd[ \t]+(?:-\w+[ \t]+)*-\w*b\w*[ \t]+(?:-\w+[ \t]+)*\S+[ \t]+\S+[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_NETUSER = re.compile(r"\bnet[ \t]+user[ \t]+(\"[^\"\n]+\"|\S+)[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"/*]{1,200})")


def _unquote(v: str, s: int) -> tuple[str, int]:
    if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
        return v[1:-1], s + 1
    return v, s


def _line_of(text: str, pos: int) -> str:
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return text[a:b if b >= 0 else len(text)]


def _cli(text: str, low: str, spans: _Spans) -> None:
    if "-p" in text or "-P" in text:
        for m in _CLI_P.finditer(text):
            line = _line_of(low, m.start())
            glued = text[m.start() + 2] not in " \t"
            head = line.split("|")[0]
            words = set(re.split(r"[\s/]+", head))
            ok = False
            if glued and words.intersection(_CLI_TOOLS_GLUED):
                ok = True
            elif not glued and (words.intersection(_CLI_TOOLS_SPACED) or re.search(r"(?<![\w-])(?:-u|--user(?:name)?|-U)[ \t=]", head)):
                ok = True
            if not ok:
                continue
            v, s = _unquote(m.group(1), m.start(1))
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text)
    if "-u" in text or "--user" in text or "-U" in text:
        for m in _CLI_USERPASS.finditer(text):
            v, s = _unquote(m.group(4), m.start(4))
            if m.group(3) == "%" and "smbclient" not in _line_of(low, m.start()) and "rpcclient" not in _line_of(low, m.start()):
                continue
            if _cli_value_ok(v) and not _url_placeholder(v):
                spans.add(s, s + len(v), "cli_password", text)
    if "-a " in text or "--pass " in text:
        for m in _CLI_REDIS.finditer(text):
            line = _line_of(low, m.start())
            if "redis-cli" not in line and "keydb-cli" not in line and "--pass " not in m.group(0):
                continue
            v, s = _unquote(m.group(1), m.start(1))
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text)
    if "echo" in text:
        for m in _CLI_ECHO.finditer(text):
            v, s = _unquote(m.group(1), m.start(1))
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text)
    if "htpasswd" in text:
        for m in _CLI_HTPASSWD.finditer(text):
            v, s = _unquote(m.group(1), m.start(1))
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text)
    if "net user" in low:
        for m in _CLI_NETUSER.finditer(text):
            v, s = _unquote(m.group(2), m.start(2))
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text)


def _cli_value_ok(v: str) -> bool:
    if len(v) < 3 or _MARK in v:
        return False
    lv = v.lower()
    if v.startswith(("$", "%", "<", "{", "-")) or lv in _PLACEHOLDER_WORDS:
        return False
    if _PLACEHOLDER_RE.search(v):
        return False
    if v.isdigit() and len(v) < 6:
        return False
    return True


# ---- cookies ----------------------------------------------------------------------------------
_COOKIE_LINE = re.compile(r"(?i)(?:set-)?cookie[\"']?\s*[:=]\s*|--cookie[ \t=]+|(?<![\w-])-b[ \t]+['\"]")
_COOKIE_PAIR = re.compile(r"[ \t]*([A-Za-z0-9_.\-!#$%&*+^|~]{1,64})=([^;\s\"',]{1,2000})")
_SESSIONISH = re.compile(r"(?i)sess|sid$|^sid|token|auth|jwt|remember|login|csrf|xsrf|secret|ident|^_?sso|api_?key|credential|^__(?:secure|host)-")


def _cookies(text: str, spans: _Spans) -> None:
    for m in _COOKIE_LINE.finditer(text):
        pos = m.end()
        for _ in range(50):
            pm = _COOKIE_PAIR.match(text, pos)
            if pm is None:
                break
            name, v = pm.group(1), pm.group(2)
            if _SESSIONISH.search(name) and len(v) >= 8 and not _is_reference(v, True) and _MARK not in v:
                spans.add(pm.start(2), pm.end(2), "session_cookie", text)
            pos = pm.end()
            if pos < len(text) and text[pos] == ";":
                pos += 1
            else:
                break


# ---- Kubernetes Secret manifests ------------------------------------------------------------------
_K8S_DATA = re.compile(r"(?m)^([ \t]*)(?:data|stringData):[ \t]*\r?\n")
_K8S_ITEM = re.compile(r"([ \t]+)[\"']?[A-Za-z0-9_.\-]+[\"']?:[ \t]*([^\s#][^\r\n]*?)[ \t]*\r?(?:\n|$)")
_K8S_JSON = re.compile(r"\"(?:data|stringData)\"\s*:\s*\{([^{}]{0,20000})\}")
_JSON_VAL = re.compile(r"\"[^\"]{1,200}\"\s*:\s*\"([^\"]{1,10000})\"")


def _k8s(text: str, spans: _Spans) -> None:
    for m in _K8S_DATA.finditer(text):
        indent = len(m.group(1))
        pos = m.end()
        for _ in range(500):
            im = _K8S_ITEM.match(text, pos)
            if im is None or len(im.group(1)) <= indent:
                break
            v = im.group(2).strip("\"'")
            if len(v) >= 4 and v not in ("|", ">", "|-", ">-") and not _is_reference(v, True):
                off = text.find(v, im.start(2))
                spans.add(off, off + len(v), "k8s_secret", text)
            pos = im.end()
    for m in _K8S_JSON.finditer(text):
        for vm in _JSON_VAL.finditer(m.group(1)):
            v = vm.group(1)
            if len(v) >= 4 and not _is_reference(v, True):
                s = m.start(1) + vm.start(1)
                spans.add(s, s + len(v), "k8s_secret", text)


# ---- passwords in prose -----------------------------------------------------------------------
_PROSE_KW = re.compile(
    r"(?<![a-z0-9_])(?:passwords?|passwort(?:e|s)?|passord(?:et)?|kennwort|pw|pwd|pass|passphrase|passcode|"
    r"mot de passe|mdp|contraseña|contrasena|clave|lösenord(?:et)?|losenord(?:et)?|adgangskode(?:n)?|"
    r"kodeord(?:et)?|wachtwoord|senha|salasana|hasło|haslo|heslo)(?![a-z0-9_])")
_PAIR_KW = re.compile(r"(?<![a-z0-9_])(?:login|logon|wi-?fi|wlan|vpn|creds|credentials|zugang(?:sdaten)?|innlogging|pålogging|brukernavn|benutzer(?:name)?|username|user|bruker|nas|router|account|konto|identifiants|usuario)(?![a-z0-9_])")
_CONNECT = frozenset(
    "is er ist est es är er lautet was war var blev wurde = : to til på på: now nå jetzt ahora "
    "maintenant nu changed set reset new nytt neues nouveau nuevo nya nye temp temporary "
    "midlertidig vorläufiges provisoire default -> =>".split())
_STOP_AFTER = frozenset("like such e.g. eg. example z.b. zb som wie comme como zoals".split())
_STRONG_SYM = frozenset("!@#$%^&*?~+=|{}[]()<>;,")


def _pw_shape(tok: str) -> int:
    """0 = not a password, 1 = letters+digits, 2 = letters+digits+symbols / passphrase."""
    n = len(tok)
    if n < 6 or n > 64:
        return 0
    if "://" in tok or "@" in tok[1:-1] and "." in tok.split("@")[-1] or tok.endswith(":"):
        return 0
    if tok.startswith(("#", "@", "/", "~/", "./", "$", "%", "<", "{{", "[REDACTED", "http")):
        return 0
    if _DATEISH.match(tok):
        return 0
    letters = digits = syms = 0
    for ch in tok:
        if ch.isalpha():
            letters += 1
        elif ch.isdigit():
            digits += 1
        elif ch in _STRONG_SYM:
            syms += 1
    if not letters:
        return 0
    if "=" in tok and _IDENTIFIER.match(tok) and tok[_IDENTIFIER.match(tok).end():].startswith("="):
        return 0
    if "/" in tok and not syms:
        return 0
    if tok.count("-") >= 3 and digits and letters >= 12:
        return 2  # diceware passphrase
    if digits and syms:
        return 2
    if syms >= 1 and letters >= 4 and not tok.isalpha():
        return 2 if any(c in "!@#$%^&*?~" for c in tok) else 0
    if digits:
        return 1
    return 0


_DATEISH = re.compile(r"^(?:\d{1,4}[-./:]\d{1,2}[-./:]\d{1,4}|v?\d+(?:\.\d+)+|\d+(?:[.,]\d+)*%?$|[A-Z]{2,}-\d+$)")
_WORD = re.compile(r"\S+")
_TRIM_L = "([\"'`<*_"
_TRIM_R = ")]\"'`>*_.,:;"


def _prose(text: str, low: str, spans: _Spans) -> None:
    for m in _PROSE_KW.finditer(low):
        _prose_after(text, low, m.end(), spans, strict=False)
    if " / " in text or ", pass" in low:
        for m in _PAIR_KW.finditer(low):
            eol = low.find("\n", m.end())
            eol = len(low) if eol < 0 else eol
            j = low.find(" / ", m.end(), min(eol, m.end() + 80))
            if j < 0:
                continue
            wm = _WORD.match(text, j + 3)
            if wm is None:
                continue
            tok, s = _trim(wm.group(), wm.start())
            if _pw_shape(tok) == 2:
                spans.add(s, s + len(tok), "password", text)


def _trim(tok: str, s: int) -> tuple[str, int]:
    while tok and tok[0] in _TRIM_L:
        tok = tok[1:]
        s += 1
    # keep symbols that belong to the password; drop sentence punctuation
    while tok and tok[-1] in _TRIM_R:
        if tok[-1] in ".,:;" and len(tok) > 1 and tok[-2] in "!?#$%&*@":
            tok = tok[:-1]
            continue
        tok = tok[:-1]
    return tok, s


def _prose_after(text, low, pos, spans, strict) -> None:
    eol = low.find("\n", pos)
    eol = len(low) if eol < 0 else eol
    end = min(eol, pos + 90)
    after_connector = True  # right after the keyword counts as a connector
    words = 0
    for wm in _WORD.finditer(text, pos, end):
        raw = wm.group()
        lw = raw.lower().strip("\"'`*_")
        if lw in _STOP_AFTER:
            return
        tok, s = _trim(raw, wm.start())
        shape = _pw_shape(tok) if tok else 0
        if shape == 2 or (shape == 1 and after_connector):
            if not _PROSE_BAD.search(tok):
                spans.add(s, s + len(tok), "password", text)
            return
        words += 1
        if words > 8:
            return
        after_connector = lw in _CONNECT or lw.endswith(":") or raw.endswith(":") or lw in ("=", ":")


_PROSE_BAD = re.compile(r"^\w+=|^\d+(?:[.,:]\d+)+$|\.(?:com|org|net|io|no|de|txt|md|py|json)$")


# ---- e-mail ---------------------------------------------------------------------------------
_EMAIL_RIGHT = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")


def _emails(text: str, spans: _Spans) -> None:
    pos = text.find("@")
    while pos >= 0:
        a = pos
        while a > 0 and text[a - 1] in _EMAIL_LOCAL and pos - a < 64:
            a -= 1
        while a < pos and text[a] in ".-":
            a += 1
        if a < pos:
            m = _EMAIL_RIGHT.match(text, pos)
            if m is not None:
                spans.add(a, m.end(), "email", text)
                pos = text.find("@", m.end())
                continue
        pos = text.find("@", pos + 1)


# ---- driver -----------------------------------------------------------------------------------
_LABEL_GATE = ("pass", "pw", "secret", "token", "key", "auth", "cred", "psk", "kennwort", "senord",
               "wachtwoord", "contrase", "kode", "senha", "salasana", "has", "heslo", "jelsz",
               "kkel", "ssel", "nyckel", "sleutel", "gle", "mdp", "appid", "sig", "docker")


def _collect(text: str, strip_emails: bool) -> list[tuple[int, int, str]]:
    spans = _Spans()
    low = _lower(text)
    if "PRIVATE KEY" in text or "PuTTY-User-Key-File" in text:
        _private_keys(text, spans)
    has_aws = "AKIA" in text or "ASIA" in text or "aws" in low
    _tokens(text, low, spans, has_aws)
    if any(w in low for w in _LABEL_GATE):
        _labelled(text, low, spans)
        _prose(text, low, spans)
    if "bearer" in low or "basic" in low or "authorization" in low:
        _auth_headers(text, low, spans)
    if "://" in text and "@" in text:
        _url_creds(text, spans)
    if ("jdbc:oracle" in low or "sqlplus" in low) and "@" in text:
        _oracle(text, spans)
    if " -" in text:
        _cli(text, low, spans)
    if "cookie" in low or " -b " in text:
        _cookies(text, spans)
    if "Secret" in text and ("kind: Secret" in text or '"kind": "Secret"' in text or "kind: secret" in low):
        _k8s(text, spans)
    if strip_emails and "@" in text:
        _emails(text, spans)
    return spans.items


def _apply(text: str, items, counts) -> str:
    items.sort()
    out = []
    last = 0
    cur_s, cur_e, cur_k = items[0]
    merged = []
    for s, e, k in items[1:]:
        if s <= cur_e:
            if e > cur_e:
                cur_e = e
        else:
            merged.append((cur_s, cur_e, cur_k))
            cur_s, cur_e, cur_k = s, e, k
    merged.append((cur_s, cur_e, cur_k))
    for s, e, k in merged:
        out.append(text[last:s])
        out.append("[REDACTED:" + k + "]")
        last = e
        if counts is not None:
            counts[k] += 1
    out.append(text[last:])
    return "".join(out)


def scrub_report(text: str, *, strip_emails: bool = False) -> tuple[str, Counter]:
    """Return the scrubbed text and a Counter of redacted kinds (never the values)."""
    counts: Counter = Counter()
    if not isinstance(text, str) or not text:
        return text, counts
    items = _collect(text, strip_emails)
    if not items:
        return text, counts
    return _apply(text, items, counts), counts


def scrub(text: str, *, strip_emails: bool = False) -> str:
    """Redact every secret the rules know; idempotent, never raises on any str."""
    if not text:
        return text
    items = _collect(text, strip_emails)
    if not items:
        return text
    return _apply(text, items, None)

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
     follows a secret word ("token", "key", "nøkkel", ...) in the nearby text, or has a known
     service's name as its label ("cloudflare: '…'", "mixpanel …"; not a digest-length hex,
     which beside "github" is a commit);
   * shapes shorter than the token scan's 20 characters (legacy Slack, Sumo Logic access ids),
     Jenkins' encrypted ``{AQAAAB…}`` secrets and the random segments of webhook URLs;
   * labelled values: ``password=``, ``"api_key": "..."``, ``<password>..</password>``,
     ``--token X``, ``Password=...;``, ``password == "..."``, a password alone on the line
     below its title ("Wifi password:" then "Hytta2024") and friends. The label must *end* in a secret word
     (``PASSWORD_MIN_LENGTH`` or ``token_uri`` are not labels), and the value must not be a
     reference or a placeholder (``${X}``, ``{{ x }}``, ``os.environ[...]``, ``getpass()``,
     ``<YOUR_KEY>``, ``xxxx``, ``changeme``...);
   * credentials in URLs, ``Authorization`` schemes, session cookies, CLI arguments
     (``mysql -p``, ``sshpass -p``, ``curl -u u:p``, ``openssl -passout pass:``...),
     Kubernetes ``Secret`` data, and passwords in prose in several languages
     ("passordet er Sommer2026!");
   * what personal notes keep: the secret columns of Markdown tables and CSV exports, each cell
     judged as its header's value (``scrub_tables`` reads the layout), app passwords of small
     letters, and, in ``scrub_personal``, wallet seed phrases, two-factor backup codes, PINs and
     door codes after a label that says what they open, and BitLocker recovery keys.
3. No span is kept whose value is filler or counting ('xxxx…', 'AIzaaaa…', 'abcdef…123',
   '…EXAMPLE'): scanners' own fixtures and real notes are full of such placeholders. A
   position counts as predictable once, however many ways it repeats what came before.
4. A value found once is redacted everywhere in the document (whole-token copies, and copies
   glued inside a longer word for values of 12 characters or more with a digit), unless it is
   a lower-case word or a documented default password ('postgres', 'changeme').
5. A way out of a false positive: a line holding ``secondbrain:allow`` keeps its values, and
   ``allow`` patterns (``load_allow_patterns``, one regex a line) keep values found by labels,
   context or prose, never a vendor-shaped or private key. Every kept value is counted under
   "allowed" in the report, so nothing is let through silently.
6. Spans are merged and replaced in one pass.

Brains remember the identity of the rules each file was scrubbed under (``rules_identity()`` in
this package: a hash of its files, computed, never typed), and re-scrub when it changes.
"""
from __future__ import annotations

import base64
import binascii
import re
import threading
from collections import Counter
from collections.abc import Sequence
from urllib.parse import unquote

from .release import NAME_PIECE, code_expression, encoded_sentence, in_code_position, module_attribute
from .personal import bitlocker_key, personal
from .tables import csv_cells, markdown_cells

# --------------------------------------------------------------------------------------------
# Patterns are compiled once, on first use: importing this module (which the plugin does for
# every `llm` invocation that loads it) must stay cheap, while scrubbing reuses compiled code.
# --------------------------------------------------------------------------------------------
class _LazyPattern:
    __slots__ = ("src", "flags")

    def __init__(self, src: str, flags: int = 0):
        self.src, self.flags = src, flags


def _lazy(src: str, flags: int = 0):
    return _LazyPattern(src, flags)


_READY = False
_INIT_LOCK = threading.Lock()


def _init() -> None:
    global _READY, _DISPATCH
    with _INIT_LOCK:
        if _READY:
            return
        g = globals()
        for name, value in list(g.items()):
            if isinstance(value, _LazyPattern):
                g[name] = re.compile(value.src, value.flags)
        _DISPATCH = _build_dispatch()
        _READY = True


_MARK = "[REDACTED:"
_MAX_VALUE = 400

# --------------------------------------------------------------------------------------------
# vendor token table: (literal prefix, rest-of-token regex, kind, needs_entropy_check)
# Sources: the providers' own token-format documentation (GitHub, GitLab, Slack, Stripe,
# OpenAI, Anthropic, Google, AWS, npm, PyPI, Hugging Face, ...); the prefixes are public.
# --------------------------------------------------------------------------------------------
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
    *[(p, r"[A-Za-z0-9+/=_-]{40,}", "flyio_token", False) for p in ("fm2_", "fm1a_", "fm1r_")],
    ("fo1_", r"[A-Za-z0-9_-]{30,}", "flyio_token", False),
    ("sbp_", r"[a-f0-9]{40}", "supabase_token", False),
    ("sb_secret_", r"[A-Za-z0-9_-]{20,}", "supabase_secret_key", False),
    ("dapi", r"[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])", "databricks_token", False),
    ("4b1d", r"[A-Za-z0-9]{38}(?![A-Za-z0-9])", "clickhouse_secret", True),
    ("tk-us-", r"[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])", "scalingo_token", False),
    ("tskey-", r"[a-z]{3,10}-[A-Za-z0-9_-]{20,}", "tailscale_key", False),
    ("CCDB1_", r"[A-Za-z0-9]{22}_[A-Za-z0-9]{40}", "cockroachdb_api_key", False),
    ("napi_", r"[A-Za-z0-9]{64}(?![A-Za-z0-9])", "neon_api_key", False),
    ("mdb_sa_sk_", r"[0-9A-Za-z_-]{40}", "mongodb_atlas_key", False),
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
    ("CCIPRJ_", r"[A-Za-z0-9]{20,}_[a-f0-9]{40}", "circleci_token", False),
    ("PMAT-", r"[A-Za-z0-9]{26}(?![A-Za-z0-9])", "postman_api_key", False),
    ("ovsxat_", r"[A-Za-z0-9-]{36}(?![A-Za-z0-9-])", "openvsx_token", False),
    ("tgpat_", r"[a-z0-9]{48,64}(?![A-Za-z0-9])", "tolgee_token", False),
    ("dvc_server_", r"[A-Za-z0-9_]{8,}", "devcycle_server_key", True),
    ("bkua_", r"[a-f0-9]{40}", "buildkite_token", False),
    ("squ_", r"[a-f0-9]{40}", "sonarqube_token", False),
    ("sqp_", r"[a-f0-9]{40}", "sonarqube_token", False),
    ("sqa_", r"[a-f0-9]{40}", "sonarqube_token", False),
    ("nfp_", r"[A-Za-z0-9]{36}", "netlify_token", False),
    ("API-", r"[A-Z0-9]{26}(?![A-Za-z0-9])", "octopus_api_key", True),
    ("vcp_", r"[A-Za-z0-9]{24,}", "vercel_token", True),
    # chat
    *[(p, r"[0-9A-Za-z-]{20,}", "slack_token", False) for p in ("xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxe-", "xoxe.xox")],
    ("xoxc-", r"\d{9,15}-\d{9,15}-\d{9,15}-[a-fA-F0-9]{64}", "slack_token", False),  # a browser session's
    # workspace-app (xoxa-2-…) and refresh (xoxr-…) tokens are dash-grouped like the ones above;
    # the short legacy shape (xoxa-<8..48>) has its own gate below
    *[(p, r"(?:\d-)?[0-9A-Za-z]{4,}-[0-9A-Za-z-]{14,}", "slack_token", False) for p in ("xoxa-", "xoxr-")],
    *[(p, r"(?:\d-)?[0-9A-Za-z]{8,48}", "slack_token", False) for p in ("xoxa-", "xoxr-")],  # legacy
    ("hooks.slack.com/", r"(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}", "slack_webhook", False),
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
    ("rzp_live_", r"[A-Za-z0-9]{14}(?![A-Za-z0-9])", "razorpay_key", True),
    ("AQE", r"[a-z0-9]{5,}\.[A-Za-z0-9_=-]{50,80}", "adyen_api_key", True),
    ("sq0atp-", r"[0-9A-Za-z_-]{22,}", "square_token", False),
    ("sq0csp-", r"[0-9A-Za-z_-]{40,}", "square_token", False),
    ("EAAA", r"[A-Za-z0-9_-]{60,}", "square_token", False),
    ("EAA", r"[A-Za-z0-9]{90,}", "facebook_token", False),
    ("FLWSECK-", r"[a-f0-9]{32}-X", "flutterwave_secret_key", False),
    ("shippo_live_", r"[a-f0-9]{40}", "shippo_token", False),
    ("EZAK", r"[A-Za-z0-9]{54}", "easypost_key", False),
    ("EZTK", r"[A-Za-z0-9]{54}", "easypost_key", False),
    *[(p, r"[a-f0-9]{31,35}(?![A-Za-z0-9])", "lob_api_key", False) for p in ("live_pub_", "test_pub_")],
    ("live_", r"[A-Za-z0-9]{30}(?![A-Za-z0-9])", "mollie_api_key", True),
    # AI APIs
    ("sk-ant-", r"(?:api|admin|sid|oat)\d\d-[A-Za-z0-9_-]{40,}", "anthropic_api_key", False),
    ("sk-", r"[A-Za-z0-9_-]{20,}", "openai_api_key", True),
    ("sk_", r"[a-f0-9]{48}(?![A-Za-z0-9])", "elevenlabs_api_key", False),
    ("sk.eyJ", r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}", "mapbox_secret_token", False),
    ("tk.eyJ", r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}", "mapbox_secret_token", False),  # temporary
    ("hf_", r"[A-Za-z0-9]{30,40}(?![A-Za-z0-9])", "huggingface_token", False),
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
    ("tgp_v1_", r"[A-Za-z0-9_-]{40,}", "together_api_key", False),
    ("jina_", r"[a-f0-9]{32}[A-Za-z0-9_-]{20,}", "jina_api_key", False),
    ("wandb_v1_", r"[A-Za-z0-9_]{77}", "wandb_api_key", False),
    ("cog_", r"[a-z2-7]{52}(?![A-Za-z0-9])", "devin_api_key", False),
    ("RGAPI-", r"[A-Za-z0-9-]{36}(?![A-Za-z0-9-])", "riot_api_key", False),
    ("dub_", r"[A-Za-z0-9]{24}(?![A-Za-z0-9])", "dub_api_key", True),
    ("zpka_", r"[A-Za-z0-9]{32}_[a-fA-F0-9]{8}", "zuplo_api_key", False),
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
    ("NRAA-", r"[a-f0-9]{27}", "newrelic_key", False),  # admin API key
    ("NRJS-", r"[a-f0-9]{19}", "newrelic_key", False),
    ("NRII-", r"[A-Za-z0-9_-]{32}", "newrelic_key", False),
    ("dt0c01.", r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dynatrace_token", False),
    ("sgp_", r"(?:[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}", "sourcegraph_token", False),
    *[(p, r"[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}", "harness_token", False) for p in ("pat.", "sat.")],
    *[(p, r"[A-Za-z0-9]{16}(?![A-Za-z0-9])", "settlemint_token", False) for p in ("sm_pat_", "sm_aat_", "sm_sat_")],
    *[(p, r"[a-f0-9]{64}", "intra42_secret", False) for p in ("s-s4t2ud-", "s-s4t2af-")],
    ("v1.0-", r"[a-f0-9]{24}-[a-f0-9]{146}", "cloudflare_origin_ca_key", False),
    ("A3-", r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
     "onepassword_secret_key", False),
    ("PMAK-", r"[a-f0-9]{24}-[a-f0-9]{34}", "postman_api_key", False),
    ("pnu_", r"[A-Za-z0-9]{36}", "prefect_token", False),
    ("sl.", r"(?:u\.)?[A-Za-z0-9_=-]{130,}", "dropbox_token", False),
    ("re_", r"[A-Za-z0-9]{8}_[A-Za-z0-9]{24,}(?![A-Za-z0-9_])", "resend_api_key", True),
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
    ("tfp_", r"[A-Za-z0-9_=.-]{40,}", "typeform_token", False),
    ("pat", r"[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])", "airtable_token", False),
    *[(p, r"[A-Za-z0-9=_.-]{32,64}", "planetscale_token", False) for p in ("pscale_tkn_", "pscale_pw_", "pscale_oauth_")],
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
    ("dp.audit.", r"[A-Za-z0-9]{40,}", "doppler_token", False),
    ("ops_eyJ", r"[A-Za-z0-9+/=_-]{50,}", "onepassword_token", False),
    ("AGE-SECRET-KEY-1", r"[0-9A-Z]{50,}", "age_secret_key", False),
    # Aiven service passwords and tokens: 'AVNS_' and about 19 random characters
    ("AVNS_", r"[A-Za-z0-9_-]{15,}", "aiven_password", False),
    # Grafana's older API keys are base64 of '{"k":"…","n":"…","id":…}', so they open 'eyJrIjoi'
    ("eyJrIjoi", r"[A-Za-z0-9+/]{50,}={0,2}", "grafana_api_key", False),
    # JSON Web Tokens (header.payload.signature; JWE has five parts). An unsigned token
    # (alg "none", or a signature cut off) is header.payload: both halves are base64 JSON ('eyJ').
    ("eyJ", r"[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?"
            r"|eyJ[A-Za-z0-9_-]{14,}(?![A-Za-z0-9_.-]))", "jwt", False),
]


def _build_dispatch():
    table: dict[str, list[tuple[str, re.Pattern, str, bool, int]]] = {}
    for prefix, rest, kind, check in _VENDORS:
        rx = re.compile(re.escape(prefix) + rest)
        table.setdefault(prefix[:2], []).append((prefix, rx, kind, check, len(prefix)))
    # longer prefixes first, so "sk-ant-" wins over "sk-"
    for rules in table.values():
        rules.sort(key=lambda r: -len(r[1].pattern))
    return table


_DISPATCH: dict = {}

# runs of token characters worth classifying (no '=' / ':' so that "key=value" splits)
_CAND = _lazy(r"[A-Za-z0-9_\-.~+/]{20,}")
_HEX = _lazy(r"[0-9a-fA-F]+")
_HAS_DIGIT = _lazy(r"\d")
_CERT_BLOCK = _lazy(r"-----BEGIN ([A-Z0-9 ]*(?:CERTIFICATE|PUBLIC KEY|PUBLIC KEY BLOCK|CERTIFICATE REQUEST|X509 CRL|DH PARAMETERS|EC PARAMETERS))-----")
_DISCORD = _lazy(r"[MNO][A-Za-z0-9_-]{22,28}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}")
_AZURE_SECRET = _lazy(r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}")
_AZURE_REFRESH = _lazy(r"[01]\.A[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_.*-]{20,}")  # Microsoft identity platform
_SALESFORCE = _lazy(r"(?<![A-Za-z0-9])00D[A-Za-z0-9]{12}![A-Za-z0-9._]{79,}[A-Za-z0-9_]")
_MAILCHIMP = _lazy(r"[0-9a-f]{32}-us\d{1,2}")
_ATLAS = _lazy(r"[a-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}")
_TELEGRAM = _lazy(r"\d{5,16}:A[A-Za-z0-9_-]{32,40}(?![A-Za-z0-9_-])")
_FACEBOOK_APP = _lazy(r"\d{15,16}\|[A-Za-z0-9_-]{27}(?![A-Za-z0-9_-])")
_GENERIC_PREFIXED = _lazy(
    r"([A-Za-z][A-Za-z0-9]{1,11})[_-](?:[A-Za-z0-9]{1,10}[_-]){0,2}([A-Za-z0-9]{30,}[A-Za-z0-9_-]*)")
_B64ISH = _lazy(r"[A-Za-z0-9+/]{40}")


def _low_information(v: str) -> bool:
    """Filler, counting or repeating runs: 'xxxx…', 'AIzaaaaa…', 'abcdefgh…123', '1111…'.

    A position is predictable when its character repeats one of the three before it or counts
    up from the one before (case-insensitive). In random text that happens at about a quarter
    of positions even over hex digits; placeholders typed by hand are mostly predictable.
    """
    s = v[:64].lower()  # the whole of most values; bounded cost
    n = len(s)
    if n < 8:
        return False
    o = s.encode("utf-8", "replace")
    # A step of 0 or +1 from the character before, or a repeat of the second or third before,
    # found at C speed: read the bytes as one big integer, shift it by one, two and three bytes
    # and XOR each with the current bytes; a zero byte is a hit. Adding 0x0101…01 (ones) adds 1
    # to every byte and never carries: 0xff never occurs in UTF-8. A position counts once
    # however many of the four relations hold ('aaaa' is not four times as predictable as
    # 'Blaabaer2023'): each XOR's zero bytes become its 0x80 bits, and the four are ORed.
    size = len(o) - 3
    mask = (1 << 8 * size) - 1
    ones = mask // 255
    low7 = ones * 0x7F
    word = int.from_bytes(o, "big")
    cur, prev = word & mask, (word >> 8) & mask
    hit = 0
    for x in (cur ^ prev, cur ^ (prev + ones), cur ^ ((word >> 16) & mask), cur ^ (word >> 24)):
        hit |= (((x & low7) + low7) | x | low7) ^ mask  # 0x80 where a byte of x is zero, else 0
    hits = hit.bit_count()
    # digits alone, or a short value (a human password "Troll444!!"), repeat more by chance
    if hits < (0.85 if n < 12 or s.isdigit() else 0.6) * (n - 3):
        return False
    # a long token is filler only if its end is too: a placeholder head on a random body is a
    # key (Twitter's bearer tokens open with 22 'A's)
    return len(v) <= 64 or _low_information(v[-32:])


_CAMEL_WORD = _lazy(r"[A-Z][a-z]{3,}|[a-z]{4,}|[A-Z]{4,}(?![a-z])")
_DIGITS = _lazy(r"\d")
_THREE_DIGITS = _lazy(r"\d\D*\d\D*\d")
_FILLER_WORD = _lazy(r"(?i)here|your|example|sample|dummy|fake|random|placeholder|insert|replace|"
                     r"redacted|xxxx|string|changeme")


_CONSONANTS4 = _lazy(r"[b-df-hj-np-tv-xz]{4}")


def _wordy(v: str) -> float:
    """Share of v made of pronounceable words ('SalesResults', 'jetbrains.mps'): names, not keys.

    A letter run counts as a word when it has vowels in a natural share and no four consonants
    in a row; random letters ('luvzktoohjauwtjv') fail one or the other.
    """
    words = 0
    for run in _CAMEL_WORD.findall(v):
        w = run.lower()
        if sum(map(w.count, "aeiouy")) >= 0.25 * len(w) and _CONSONANTS4.search(w) is None:
            words += len(w)
    return words / max(1, len(v))


# The letter pairs that make 97 % of the pairs inside words of English technical text (this
# machine's /usr/share/doc Markdown and the Python standard library, counted once): a name made of
# words is almost all of these; letters drawn at random are not (about 2 pairs in 3 are rare).
_COMMON_PAIRS = frozenset(re.findall("..", (
    "aaabacadaeafagaiakalamanaparasatauavaybabcbdbebibjblbobrbubycacbcccdcecfchcickclcocrctcudadbdcdd"
    "dedfdidldodrdsdueaebecedeeefegeiejelemeneoepeqeresetevewexeyfafcfdfefffiflfofrfsfugegigngrgsguha"
    "hehihohrhthuiaibicidieifigiliminioipirisitivixizjajejojskekikslaldlelflilllolsltlulymambmdmemiml"
    "mmmompmsmumvnancndnenfngninknlnnnonsntnunvobocodofogoiokolomonoooporosotouovowpapdpepiplpoppprps"
    "ptpupyqurarcrdrergrirkrlrmrnrorrrsrtrurvrysascseshsislsospsrssstsusytatctdtethtitltotptrtstttuty"
    "uaubucueufuiulumunupurusutvaveviwawewhwiwowrxcxpxtyayeynypysytze")))


def _random_letters(v: str) -> bool:
    """Letters drawn at random ('uNaWuEQWGjMPMf', 'vkbqpmzthxlewryd'), not a name made of words
    ('newPassword', 'getpasswordfromkeychain').

    A password or key without a digit is rarer than one with, but real: its case flips every
    few letters and its letters do not make words (no vowels in a natural share, runs of four
    consonants), where camelCase names flip case only at word boundaries. In one case (a Google
    app password is sixteen small letters) only the letters can tell: three pairs in ten that
    words seldom hold catch 94 % of random runs of twelve and 97 % of sixteen.
    """
    n = len(v)
    if n < 10 or not v.isalpha():
        return False
    if v.islower():
        return n >= 12 and v.isascii() and sum(v[i:i + 2] not in _COMMON_PAIRS for i in range(n - 1)) >= 0.3 * (n - 1)
    if v.isupper():
        return False
    flips = sum(a.isupper() != b.isupper() for a, b in zip(v, v[1:]))
    if flips < max(4, n // 4):
        return False
    low = v.lower()
    sparse = sum(map(low.count, "aeiou")) < 0.25 * n
    return (sparse or _CONSONANTS4.search(low) is not None) and _wordy(v) < 0.3


def _placeholder_body(body: str) -> bool:
    """The part after a vendor prefix is made of words ('xoxe.xoxp-1-RANDOMSTRINGHERE').

    (Filler such as 'AIzaaaa…' is refused for every rule when a span is added.)
    """
    return _THREE_DIGITS.search(body) is None and _FILLER_WORD.search(body) is not None


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
    "kspass tspass requirepass masterauth masterpass".split())
_SECRET_WORDS = frozenset(
    "secret token apikey credential credentials creds authorization auth authtoken "
    "accesstoken refreshtoken idtoken sessiontoken privatekey secretkey accesskey accountkey "
    "sharedaccesskey appkey masterkey dockerconfigjson dockercfg appid sig clientsecret "
    "passkey skey".split())  # skey: Duo's secret key
# qualifiers that turn a bare "key" into a secret key
_KEY_QUALIFIERS = frozenset(
    "api secret private access account app application master encryption enc signing sign "
    "client auth license licence subscription shared service webhook hmac jwt session storage "
    "admin write deploy ssh gpg pgp root management mgmt cipher crypt crypto aes x ingest "
    "ingestion instrumentation sdk server rest consumer aws azure gcp s3 openai anthropic "
    "mistral cohere groq gemini stripe twilio sendgrid mailgun datadog dd sentry algolia "
    "mapbox pusher firebase recaptcha live prod production test dev user personal "
    "nøkkel".split())
# what names a wireless network's key ("WPA2 key", "Wi-Fi key", "network key")
_WIFI_WORDS = frozenset("wifi wlan wpa wpa2 wpa3 wep network".split())
# "pat" is a personal access token only beside the name of a service that issues them
_PAT_OWNERS = frozenset("github gh gitlab gl azure devops ado vsts bitbucket atlassian jira confluence "
                        "huggingface hf personal access".split())
# allowed words *after* the secret word ("secret_key_base", "password2", "token_value")
_TRAILERS = frozenset("value val base str string b64 base64 hex raw plain clear cleartext encoded literal key".split())
# a label ending in one of these names something about a secret, not the secret itself
_FUSED_PASS_PREFIX = ("store", "key", "srcstore", "deststore", "srckey", "destkey", "become",
                      "ssh", "sudo", "db", "root", "admin", "user", "ks", "ts", "ansible")

_COMP_RE = _lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-zäöüåøæéñßłóąęśćźżń]+|[äöüåøæéñßłóąęśćźżń]+")

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
        if prev in ("public", "publishable") or (prev == "key" and len(comps) > 2 and comps[-3] == "public"):
            return _NOT  # publicToken, publishable_key, .NET's publicKeyToken: meant to be shown
        if last == "token" and prev in _PAGING:
            return _NOT  # NextToken, page_token, IdempotencyToken: a cursor or a request's id
        if last == "auth" and prev in ("o", "basic", "http", "no"):
            return _WEAK
        return _SEC
    if last == "key" or last == "keys":
        if prev == "s" and ident[-5:-3].lower() == "s3":
            return _NOT  # S3Key: an object's name in a bucket
        if prev in ("public", "publishable", "primary", "foreign", "cache", "sort", "partition",
                    "hot", "short", "lookup", "map", "dict", "host", "unique", "composite",
                    "idempotency", "i18n", "translation", "object", "s3", "file", "ssh"):
            return _NOT if prev != "ssh" else _WEAK
        if prev in _WIFI_WORDS:
            return _PWD  # a Wi-Fi network's key is its password: 'hunter22' counts
        if prev in _KEY_QUALIFIERS or prev in _PW_WORDS or prev in _SECRET_WORDS or prev == "token":
            return _SEC
        return _WEAK
    if last == "pat" and not _PAT_OWNERS.isdisjoint(comps):
        return _SEC  # a personal access token (GITHUB_PAT, AZURE_DEVOPS_EXT_PAT), not a pattern (date_pat)
    # fused words: PGPASSWORD, MYSQL_PWD(covered), storepass, apikey, authtoken, xsrftoken
    for w in ("password", "passwd", "passwort", "passord", "kennwort", "pwd"):
        if last.endswith(w):
            return _PWD
    if last.endswith("pass") and last.startswith(_FUSED_PASS_PREFIX):
        return _PWD
    if last.endswith("token") or last.endswith("secret"):
        return _SEC
    if last.endswith("key") and len(last) > 3 and last[:-3] in _KEY_QUALIFIERS:
        return _SEC
    # a service name fused before 'apikey' (IBMCLOUDIAMAPIKEY, googleapikey) still names an API key
    if last.endswith("apikey"):
        return _SEC
    if last in ("nøkkel", "nokkel", "schlüssel", "schluessel", "nyckel", "sleutel", "nøgle"):
        return _WEAK
    return _NOT


_IDCHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-äöüåøæéñßÄÖÜÅØÆ")

# the operator between a label and its value: "=", ":", "=>", "->", ":=", "::=", "?=", PHP ".=", "+=",
# "||=", an optional type first ("var apiToken string = ", "token: str = ") and, before a quoted
# value only, a spaced dash ("api token - '...'")
_OP = (r"""(?:[ \t]*(?::[ \t]*)?(?:string|String|str|&str|\[\]byte|CharSequence)(?![\w\[]))?[ \t]*"""
       r"""(:{1,3}=|\.=|\?\??=|\|\|=|\+=|=>|[!=]==?(?=[ \t]*["'`])|=(?!=)|:(?!:)|->|(?<=[ \t])-(?=[ \t]+["'`]))""")
_ASSIGN = _lazy(r"""(?:\\?["']\]?)?""" + _OP + r"""[ \t]*""")
# the characters _ASSIGN and _ASSIGN_VALUE can start with (a quote, a space, a type's ":" or first
# letter, an operator's first character): after any other, neither is tried
_OP_START = frozenset("\\\"' \t:sS&[C.?|+=!-")
# after blanks, the character _ASSIGN needs next: a type's ":" or first letter, an operator's first
# character (fewer blanks never help: the next character would be a blank)
_OP_AFTER_BLANKS = frozenset(":sS&[C.?|+=!-")
_BLANKS = _lazy(r"[ \t]*")
_PHP_DEFINE = _lazy(r"""["']\s*,\s*""")
_XML_VALUE = _lazy(r"""["']\s+value\s*=\s*""")
# (the label may close a subscript: os.environ["DB_PASSWORD"] = "…"; a YAML type tag may stand
# before the value: "password: !!str …"; a string may be C#'s or Objective-C's: @"…")
_ASSIGN_VALUE = _lazy(
    r"""(?:\\?["']\]?)?""" + _OP + r"""[ \t]*(?:!![A-Za-z_]{1,20}[ \t]+)?"""
    r"""(?:\\(["'])((?:(?!\\["']).){1,400}?)\\\2"""
    r"""|@?"([^"\n]{0,400})\"|'([^'\n]{0,400})'|`([^`\n]{0,400})`"""
    r"""|([^\s"'`<]{1,400}))""")
_VALUE = _lazy(
    r"""\\(["'])((?:(?!\\["']).){1,400}?)\\\1"""     # \"value\" inside a JSON string
    r"""|"([^"\n]{0,400})\"|'([^'\n]{0,400})'|`([^`\n]{0,400})`"""  # quoted
    r"""|([^\s"'`<]{1,400})""")                   # bare

# values that are references, code or placeholders, never secrets
_REF_FIRST = frozenset("$%{<[(")
_REF_HINT = _lazy(r"[.(:\[+!{/-]")
_REF_PREFIX = ("#{", "@{", "-----", "env:", "enc[",  # (SOPS ciphertext: 'ENC[AES256_GCM,data:…]')
               "file:", "fd:", "vault:", "op://", "!vault", "!ref", "ref+", "arn:", "secretref",
               "process.env", "os.environ", "os.getenv", "getenv(", "env(", "env[", "env.",
               "secrets.", "settings.", "config.", "import.meta", "request.", "self.", "this.",
               "args.", "params.", "options.", "opts.", "cfg.", "conf.", "props.", "sys.argv",
               "input(", "getpass", "prompt(", "read(", "keyring.", "vars.", "var.", "local.",
               "data.", "module.", "lookup(")
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
# documented defaults of servers and images: not a secret of the user's
_DEFAULT_PASSWORDS = frozenset(
    "postgres mysql mariadb root admin changeme changeit password secret guest oracle tiger "
    "manager sa redis rabbitmq minioadmin minio elastic neo4j mongo mongodb toor raspberry "
    "ubuntu vagrant docker jenkins sonar nexus keycloak airflow grafana prom-operator "
    "admin123 password1 123456 12345678 qwerty letmein welcome anonymous anonymous@ "
    "notasecret".split())  # (Google's P12 key files all open with 'notasecret')
# a name, its members ('.', and '::' or '->' in C++, Rust and Perl), then a call, an index or a member
_CODEISH = _lazy(
    r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*)*"
    r"(?:\(|\[(?:[\"':A-Za-z_0-9\[-]|$)|(?:\.|::|->)[A-Za-z_][A-Za-z0-9_]*(?:$|\)))")  # (Callable[[int, key=mod.attr)[0
_IDENTIFIER = _lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_TYPEISH = _lazy(r"^(?:Optional|List|Dict|Union|str|int|bytes|SecretStr|Secret|String|number|boolean)\b")


_PH_PREFIX = ("your", "my", "insert", "enter", "replace", "put", "paste", "fill", "add")
_PH_SUFFIX = ("_here", "-here", " here", ".here")
_PH_INNER = ("xxxx", "***", "...", "\u2026", "\u2022\u2022\u2022", "____", "example", "placeholder",
             "redacted", "changeme", "change_me", "change-me", "dummy", "fake", "notareal",
             "not_a_real", "not-a-real", "notreal")
_PH_INNER_RE = _lazy("|".join(map(re.escape, _PH_INNER)))  # one scan, not one per word
_PH_WORDY = _lazy(r"[a-z_ .-]+")
# kinds of file no secret is named after (a key's own files are in _PATH_EXT: "key: id_rsa.pem" is a
# path, and a value ending in them is judged as one)
_FILE_TYPES = frozenset("""mp4 mp3 m4a wav flac ogg mov avi mkv webm webp png jpg jpeg gif svg ico bmp tif tiff heic
pdf doc docx xls xlsx ppt pptx odt ods csv tsv xml html htm md rst tex zip gz tgz bz2 xz zst 7z rar tar jar war
whl deb rpm dmg iso img exe dll so dylib py js mjs ts tsx jsx go rs java rb php sh sql log bak db sqlite
parquet avro ipynb""".split())
_EMPHASIS = _lazy(r"\*{1,2}[A-Za-z][A-Za-z_-]*\*{1,2}")
_PATH_EXT = (".pem", ".key", ".json", ".txt", ".crt", ".cer", ".p12", ".pfx", ".jks", ".gpg", ".asc",
             ".env", ".yml", ".yaml", ".ini", ".conf", ".cfg", ".toml")


def _placeholder(v: str, lv: str) -> bool:
    """<YOUR_API_KEY>, your-api-key-here, xxxx, ***, sk-ant-..., changeme, DB_PASSWORD."""
    if lv in _PLACEHOLDER_WORDS:
        return True
    f, l = v[0], v[-1]
    if f == "&" and _ESCAPED_PH.fullmatch(lv):
        return True  # <YOUR_PASSWORD> written HTML-escaped
    if (f == "<" and l == ">") or (f == "[" and l == "]") or (f == "{" and l == "}") or (f == "%" and l == "%"):
        return True
    if lv.startswith(_PH_PREFIX) and _PH_WORDY.fullmatch(lv):
        return True
    if lv.endswith(_PH_SUFFIX):
        return True
    if v.strip(f + l) == "":
        return True  # one or two repeated characters
    if len(lv) <= 120 and _PH_INNER_RE.search(lv) is not None:
        return True
    if "EXAMPLE" in v:
        return True  # a manual's sample says so in capitals, however long: 'AQoEXAMPLEH4aoAH0gNCAP…'
        # (seven given letters never occur in a random key by chance)
    if v.isupper() and len(v) > 1 and (v.replace("_", "").isalpha() or _CONST_NAME.fullmatch(v)):
        return True  # an environment variable or constant name (SOCKS5_CUSTOM_AUTH_END), a PLACEHOLDER
    if (" " in v or _NAME_SLUG.fullmatch(v)) and _SELF_NAMED.search(lv) is not None:
        return True  # words naming what belongs there: 'Password used to generate key', 'i-am-a-token'
    return False


_VERSION = _lazy(r"v?\d+(?:\.\d+)+")
_SMALL_HEX = _lazy(r"0[xX][0-9A-Fa-f]{1,16}")  # (an Ethereum private key is 0x and 64 hex digits)
# a dotted name of short words: a setting's or a property's name, never a generated token
_PROPERTY_NAME = _lazy(r"[A-Za-z_][A-Za-z0-9_]{0,15}(?:\.[A-Za-z_][A-Za-z0-9_]{0,15}){2,}")
_ESCAPED_PH = _lazy(r"&(?:lt|#x3c|#60);[\w|. -]{1,60}(?:&(?:gt|#x3e|#62);|>)?")
_JOINED_WORDS = _lazy(r"[a-z]+(?:[-_][a-z]+)+")
# a name of joined words, some with a digit inside ("my-k8s-secret-name", "db_password_v2")
_NAME_SLUG = _lazy(r"[a-z][a-z0-9]{0,11}(?:[-_][a-z][a-z0-9]{0,11})+")
_CONST_NAME = _lazy(r"[A-Z]{3}[A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+")
_SELF_NAMED = _lazy(r"(?<![a-z])(?:password|passphrase|passwort|pass|secret|token|api key|key)(?![a-z])")
# a format string: "from %d to %d", "{}:{}", "Bearer {token}"
_FORMAT_SPEC = _lazy(r"%[-+ 0#]?\d*(?:\.\d+)?[sdifr](?![A-Za-z0-9])|\{\d*\}|\{[a-z_]+\}|\$\{")


def _is_reference(v: str, quoted: bool) -> bool:
    lv = v.lower()
    first = v[0]
    if first in "{%" and (fm := _FORMAT_SPEC.match(v)) and _ALNUM_RUN.search(v, fm.end()) is None:
        return True  # a format's field, alone or before an escape: "'password={0}\\n'.format(signature)"
    if first in _REF_FIRST:
        # a leading "{" / "(" / "[" / "%" / "<" only means code when it is not part of a password
        # like "{x9Fq..." — require something identifier-like right after.
        # ("((PyObject*)__pyx_t_3": a cast inside parentheses, "[[i.n(2)": a nested list; "[^/]+/": a
        # regular expression's class)
        nxt = v.lstrip("([")[:1] if first in "([" and v[1:2] in "([" else v[1:2]
        if first in "{([%<" and len(v) > 1 and not (nxt.isalpha() or nxt in "{%$_'\" " or (first == "[" and nxt == "^")) and not lv.startswith(("[redacted", "<%", "{%", "{{", "%(")):
            return False
        if first == "{" and _OPEN_BRACE_WORD.fullmatch(v) and _HAS_DIGIT.search(v) is not None:
            return False  # a field or a template closes its brace; "{x9Fq2LmZ7" never does
        if first == "%" and _PERCENT_REF.match(v) is None:
            return False  # not %APPDATA% / %(name)s / %s: a key that happens to open with '%'
        return True
    if first in "'\"" and v[1:2] in ("$", "%"):
        return True  # a shell splice: "'$PRECOMPILE_PASSWORD'"
    if first == "!" and len(v) > 2 and (v[1] == "(" or _CODEISH.match(v, 1) or _yaml_tag(v)):
        return True  # a negated expression: "!(creds.token || creds.username"; a YAML tag: "!secret db_pw"
    if _REF_HINT.search(v, 0, 24) is not None and lv.startswith(_REF_PREFIX):
        return True
    if _placeholder(v, lv):
        return True
    if not quoted:
        if ("(" in v or "[" in v or "." in v or ":" in v or ">" in v) and _CODEISH.match(v):
            return True
        if _IDENTIFIER.fullmatch(v):
            # bare identifiers: variables unless they look like a made-up word with digits
            if _HAS_DIGIT.search(v) is None and not _random_letters(v):
                if "_" in v or (v[0].islower() and not v.islower()):
                    return True
                for w in ("pass", "secret", "token", "key", "auth", "pwd", "cred"):
                    if w in lv:
                        return True
    if v[0] in "OLDSUsibn" and _TYPEISH.match(v):
        return True
    if lv.endswith(":latest"):
        return True  # a secret manager's entry and version: --set-secrets=DB_PASS=db-pass:latest
    if "-" in v and _CMDLET.match(v):
        return True  # $pw = Read-Host -AsSecureString / ConvertTo-SecureString …: a call
    if quoted and (_STRING_GAP.match(v) or v[0] in " \t" or _FORMAT_SPEC.search(v)):
        return True  # code between two strings ('"passwd:" and "group:"'), a piece of a string being built
    if v[0] in "\\#." and _ESCAPED_OR_SELECTOR.match(v):
        return True
    return False


_ALNUM_RUN = _lazy(r"[A-Za-z0-9]{4}")
_OPEN_BRACE_WORD = _lazy(r"\{[A-Za-z0-9!@#$%^&*_+=.~-]{5,}")  # (no closing brace, no ':' or ',' of an object)
_PERCENT_REF = _lazy(r"%(?:[\w.-]+%|[({]|[sdrif](?!\w))")
_CMDLET = _lazy(r"(?:Get|Set|New|Read|ConvertTo|ConvertFrom|Import|Export|Invoke|Protect|Unprotect|Join|"
               r"Select|Format)-[A-Z][A-Za-z]+(?![\w-])")


# The "value" between a label's closing quote and the next opening quote is code, not a string:
# "MasterUserPassword: " + get() + ",", 'password = '.$p['config'], passwordLabel:"Password:",x:"…".
# It starts with a concatenation or separator and ends where the next literal or call begins.
# \$_POST[...] / \${VAR}: an escaped variable inside a quoted script; "#add-password",
# ".login-form": a CSS selector or a page anchor made of words, what the UI code calls a field
_ESCAPED_OR_SELECTOR = _lazy(r"\\[$%]|[#.][a-z]+(?:[-_][a-z]+)+$")
_STRING_GAP = _lazy(r"[ \t]*[+.,;)][^\n]*[ \t(\[:+,.=]$|[ \t]+[+.,;)]")


def _classes(s: str) -> tuple[bool, bool, bool]:
    return s.lower() != s, s.upper() != s, _HAS_DIGIT.search(s) is not None


_CALL_VALUE = _lazy(r"[a-z_][A-Za-z0-9_.]*\([^()]*\)")


def _value_ok(v: str, cls: int, quoted: bool) -> bool:
    n = len(v)
    if n < 4 or n > _MAX_VALUE:
        return False
    if _MARK in v:
        return False
    if "\\" in v and _ROFF.search(v):
        return False  # a manual page's markup: "\\-\\-token\\-format=full", "my\\-username"
    if _is_reference(v, quoted):
        return False
    if v[-1] == ")" and _CALL_VALUE.fullmatch(v):
        return False  # a call written out as text: assert sig == "short_fun(a=1)"
    if (v[0] in "/~." or v.lower().endswith(_PATH_EXT)) and (not _entropy_ok(v, 20) or _wordy(v) >= 0.4):
        return False  # a path: "/en/enterprise-server@3.0/auth"
    if v.count("/") >= 2 and _wordy(v) >= 0.4:
        return False  # a path of words: "mock_access_key/20220524/us-east-1/cognito-idp/aws4_request"
    if "://" in v:  # URLs are handled by the URL rule
        return False
    if v[0] == "*" and _EMPHASIS.fullmatch(v):
        return False  # a word in emphasis or a help file's tag: "PASSWORD  *netrw-passwd*"
    if "." in v and v.rpartition(".")[2].lower() in _FILE_TYPES:
        return False  # a file's name: "my-dir/big-video-file.mp4", "WordPress_App_2-0.zip"
    if v.lower() in _DEFAULT_PASSWORDS:
        return False  # (filler is refused for every rule when a span is added)
    if " " in v and (v.count(" ") >= (5 if cls == _PWD else 2) or ". " in v):
        return False  # a sentence ("Boolean indicating whether …"): keys have no spaces, passphrases few
    if cls != _PWD and _public_der(v):
        return False  # key: "MFkwEwYHKoZIzj0CAQY…": a public key
    if _b64_placeholder(v) or (cls != _PWD and _encoded_text(v)):
        return False  # base64 of 'not my real password', of 'isaacs:<placeholder>', of a sentence, a ciphertext
    if cls != _PWD and _PROPERTY_NAME.fullmatch(v):
        return False  # a setting's name: "fs.s3.cse.kms.keyId"
    if _VERSION.fullmatch(v):
        return False  # a version: 'Test2::Event::Pass' => '1.302103'
    if cls != _PWD and _SMALL_HEX.fullmatch(v):
        return False  # a number written in hex: ZIP_LOCAL_HDR_SIG => 0x04034b50
    if cls != _PWD and _DECIMAL.fullmatch(v):
        return False  # "lastModifiedSecret": 1596573346.171 is a time
    if v.isdigit():  # a PIN-like password, or a long numeric token
        return (cls == _PWD and n >= 6) or (cls == _SEC and n >= 16)
    if cls == _PWD:
        return n >= 5
    up, lo, dg = _classes(v)
    if cls == _SEC:
        if n < 8:
            return False
        if not dg and not (up and lo) and (v.isalpha() or _JOINED_WORDS.fullmatch(v.lower())) and not _random_letters(v):
            return False  # one case, no digit: a word or a slug ('i-am-the-worst'), not random letters
        if n < 12 and not dg:
            return False
        if " " in v and max(map(len, v.split())) < 12:
            return False  # a token is one unbroken run: "RFC 2518" names a document
        return _wordy(v) < 0.7  # "AgencyIdentificationCodeContentType" names something
    # weak label ("key", "bucket_key"): only clearly random values, not names made of words
    # (a quoted UUID after a bare "key" is an object's or a record's id: '"bucket": "b", "key": "48c6…"';
    # "?key=<uuid>" in a URL is an API key)
    return _entropy_ok(v, 16) and ":" not in v and _wordy(v) < 0.5 and not (quoted and n == 36 and _UUID.fullmatch(v))


def _public_der(v: str) -> bool:
    """Base64 of a SubjectPublicKeyInfo ('MFkwEwYHKoZIzj0CAQY…', 'MCowBQYDK2VwAyEA…'): a public key.

    Its DER is SEQUENCE { AlgorithmIdentifier SEQUENCE, BIT STRING }; a private key's (PKCS#8,
    PKCS#1) opens with an INTEGER and an encrypted one's carries an OCTET STRING, so both stay
    secret. Only the first 48 bytes are decoded.
    """
    if len(v) < 60 or v[0] != "M":
        return False
    der = _b64_head(v)
    if len(der) < 8 or der[0] != 0x30:
        return False
    i = 2 if der[1] < 0x80 else 2 + (der[1] & 0x7F)
    if i + 2 > len(der) or der[i] != 0x30 or der[i + 1] >= 0x80:
        return False
    j = i + 2 + der[i + 1]
    return j < len(der) and der[j] == 0x03


_SALTED = b"Salted__"  # what `openssl enc -a` output opens with: a ciphertext shown, not its key


def _encoded_text(v: str) -> bool:
    """Hex or base64 of a sentence, or OpenSSL's salted ciphertext: something shown encoded, not a key."""
    return encoded_sentence(v) or _b64_head(v).startswith(_SALTED)


def _b64_head(v: str) -> bytes:
    """The first bytes of base64 text, decoded ('' when it is not base64)."""
    head = v[:64]
    try:
        return base64.b64decode(head[:len(head) - len(head) % 4], validate=True)
    except (binascii.Error, ValueError):
        return b""


def _b64_placeholder(v: str) -> bool:
    """Base64 of a placeholder pair such as 'username:password' (curl's own docs), or of a
    placeholder alone ('bm90IG15IHJlYWwgcGFzc3dvcmQ=' is 'not my real password')."""
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), validate=True).decode("utf-8").strip()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    user, _, pw = raw.partition(":")
    if not pw:  # (a phrase: base64 of a lone word, even 'mypassword', may be what a Secret holds)
        return " " in raw and raw.isprintable() and _placeholder(raw, raw.lower())
    return _url_placeholder(pw) or pw.lower() == user.lower()


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
    """The spans found in one document, and the verdicts on its values.

    A document that repeats a line ("password: X" a thousand times) repeats its values: each
    verdict that depends on the value alone (or on a token and the text of its context window)
    is reached once per document (and forgotten with it).
    """
    __slots__ = ("items", "filler", "value_ok", "verdicts", "context", "shared", "searched")

    def __init__(self):
        self.items: list[tuple[int, int, str]] = []
        self.filler: dict[str, bool] = {}
        self.value_ok: dict[tuple, bool] = {}
        self.verdicts: dict[tuple, tuple] = {}  # _value_verdict, by value, separator and label
        self.context: dict[tuple, bool] = {}  # _secret_context, by token and context window
        self.shared: dict[str, bool] = {}  # _plain_label_holds, by value
        self.searched = 0  # values _plain_label_holds looked for in the text (at most _MAX_SHARED)

    def add(self, s: int, e: int, kind: str, text: str) -> None:
        if e <= s:
            return
        v = text[s:e]
        if _MARK in v:
            return
        if kind != "private_key":
            filler = self.filler.get(v)
            if filler is None:
                filler = self.filler[v] = _low_information(v) or _placeholder_token(v)
            if filler:
                return  # filler and placeholders ("xxxx…", "AIzaaaa…", "…EXAMPLE") are no secret
        self.items.append((s, e, kind))

    def value_fits(self, v: str, cls: int, quoted: bool) -> bool:
        """_value_ok, once per distinct (value, label class, quoted) in the document."""
        key = (v, cls, quoted)
        ok = self.value_ok.get(key)
        if ok is None:
            ok = self.value_ok[key] = _value_ok(v, cls, quoted)
        return ok


def _lower(text: str) -> str:
    low = text.lower()
    if len(low) != len(text):  # a few code points change length when lower-cased
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low


# ---- private keys ---------------------------------------------------------------------------
# (an OpenVPN static key, the shared secret behind tls-auth, comes in the same armour)
_PEM_BEGIN = _lazy(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?|OpenVPN Static key V1)-----|---- BEGIN (SSH2 (?:ENCRYPTED )?PRIVATE KEY) ----")
_PEM_BODY = _lazy(r"(?:\\[nr]|[A-Za-z0-9+/=:,\- \t\r\n])*")
_PEM_PLAIN = _lazy(r"[A-Za-z0-9+/=:,\- \t\r\n]*")  # _PEM_BODY without escaped newlines: one tight loop
_PEM_JUDGED = 40000
_PUTTY = _lazy(r"Private-Lines:\s*(\d+)[ \t]*(?:\\r|\r)?(?:\\n|\n)")
_B64_LINE = _lazy(r"[ \t]*[A-Za-z0-9+/=]{4,}[ \t]*(?:\\r|\r)?(?:\\n|\n|$)")


def _public_blocks(text: str, skip: list) -> None:
    """Certificates and public keys are not secrets: keep token rules out of them."""
    for m in _CERT_BLOCK.finditer(text):
        end = text.find("-----END " + m.group(1) + "-----", m.end(), m.end() + 40000)
        skip.append((m.start(), end if end > 0 else min(len(text), m.end() + 4000)))


def _key_material(body: str) -> bool:
    """Base64 lines, not prose: an armour around 'anything' or a sentence is an example."""
    pieces = body.replace("\\n", "\n").split()
    if ":" in body:
        pieces = [p for p in pieces if ":" not in p]  # skip Proc-Type: …
    chars = sum(map(len, pieces))
    return chars >= 32 and chars >= 12 * len(pieces)


def _private_keys(text: str, spans: _Spans) -> None:
    ends: dict[str, int] = {}  # END marker -> next position (or -1): one search per marker
    consumed = -1
    for m in _PEM_BEGIN.finditer(text):
        if m.start() < consumed:
            continue
        label = m.group(1) or m.group(2)
        start = m.end()
        end_marker = ("-----END " + label + "-----") if m.group(1) else "---- END SSH2"
        stop = ends.get(end_marker, -2)
        if stop != -1 and stop < start:
            stop = ends[end_marker] = text.find(end_marker, start)
        if stop < 0 or not _key_material(text[start:min(stop, start + _PEM_JUDGED)]):
            # a truncated paste, or an END behind prose: take the base64-looking lines that
            # follow, however many. (An armour that opens as key material is redacted whole to
            # its END, however long: its first _PEM_JUDGED characters decide.)
            stop = _PEM_PLAIN.match(text, start).end()
            if text.startswith("\\", stop):
                stop = _PEM_BODY.match(text, start).end()  # escaped newlines ("\\n"): the slower loop
            # give back trailing words of prose: stop at the last base64 line
            cut = text.rfind("\n\n", start, stop)
            if cut > start:
                stop = cut
        consumed = stop
        body = text[start:stop]
        # trim whitespace and escaped newlines around the body
        i, j = 0, len(body)
        while True:
            while i < j and body[i] in " \t\r\n":
                i += 1
            if body.startswith(("\\n", "\\r"), i):
                i += 2
                continue
            break
        while True:
            while j > i and body[j - 1] in " \t\r\n":
                j -= 1
            if j - 2 >= i and body[j - 2:j] in ("\\n", "\\r"):
                j -= 2
                continue
            break
        if j <= i or body.startswith(_MARK, i) or not _key_material(body[i:j]):
            continue
        spans.add(start + i, start + j, "private_key", text)
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
def _tokens(text: str, low: str, spans: _Spans, skip: list) -> None:
    dispatch = _DISPATCH
    has_digit = _HAS_DIGIT.search
    if skip:
        it = _skipping(_CAND, text, skip)
    else:
        it = _CAND.finditer(text)
    for m in it:
        s, e = m.span()
        tok = m.group()
        url_user = False
        if tok[0] == "/" and tok[1:2] == "/" and s > 0 and text[s - 1] == ":" and "." not in tok:
            s += 2  # "https://ghp_…@github.com": a token as the URL's user (not a host) starts after the slashes
            tok = tok[2:]
            url_user = text.startswith("@", e)
        rules = dispatch.get(tok[:2])
        if rules is not None:
            hit = False
            for prefix, rx, kind, check, plen in rules:
                if not text.startswith(prefix, s):
                    continue  # (a plain comparison first: most rules of a bucket differ in the prefix)
                vm = rx.match(text, s)
                if vm is None:
                    continue
                ve = vm.end()
                if check and (not _entropy_ok(text[s:ve], 20) or _is_compound_name(text[s + plen:ve])):
                    continue  # (a short, common prefix: "sk-ecdsa-sha2-nistp256-cert-v01" is an SSH key type)
                hit = True
                if _placeholder_body(text[s + plen:ve]):
                    break
                # part of the same token: redact to its end
                ce = e
                while ce > ve and text[ce - 1] in ".-/~":
                    ce -= 1
                spans.add(s, max(ve, ce), kind, text)
                break
            if hit:
                continue
        if has_digit(tok) is None:
            continue
        if url_user:
            _url_user(text, s, e, tok, spans)
            continue
        _shapes(text, low, s, e, tok, spans)


def _url_user(text: str, s: int, e: int, tok: str, spans: _Spans) -> None:
    """A long random user name in a URL is a token standing in for user and password (git clone
    https://<PAT>@dev.azure.com/…). 32 hex digits are left: that is how Sentry writes the public
    key of a DSN, which is meant to be shipped inside apps."""
    if _entropy_ok(tok, 20) and not (len(tok) < 40 and _HEX.fullmatch(tok)) and not _code_name(tok):
        spans.add(s, e, "url_credentials", text)


def _skipping(rx, text: str, skip: list):
    """finditer that jumps over the (sorted) skip ranges: key bodies, certificates."""
    pos = 0
    for a, b in skip:
        if b <= pos:
            continue
        if a > pos:
            yield from rx.finditer(text, pos, a)
        pos = b
    yield from rx.finditer(text, pos)


def _placeholder_token(tok: str) -> bool:
    return tok.endswith("EXAMPLE") or "XXXXXXXX" in tok or "xxxxxxxx" in tok or "EXAMPLEKEY" in tok


def _shapes(text, low, s, e, tok, spans) -> None:
    # trim sentence punctuation
    while e > s and text[e - 1] in ".-/~":
        e -= 1
    n = e - s
    if n < 20:
        return
    if n != len(tok):
        tok = text[s:e]
    if n == 55 and tok[6] == "-" and bitlocker_key(tok):  # (the shape needs no label: here, not in personal)
        spans.add(s, e, "bitlocker_key", text)
        return
    if "Q~" in tok:
        am = _AZURE_SECRET.search(tok)
        if am:
            spans.add(s + am.start(), s + am.end(), "azure_client_secret", text)
            return
    c0 = tok[0]
    if c0 in "MNO" and tok.count(".") == 2 and _DISCORD.fullmatch(tok):
        spans.add(s, e, "discord_bot_token", text)
        return
    if ".atlasv1." in tok and _ATLAS.search(tok):
        spans.add(s, e, "terraform_cloud_token", text)
        return
    if s > 0 and text[s - 1] == "|":
        fm = _FACEBOOK_APP.match(text, max(0, s - 17))
        if fm is None:
            fm = _FACEBOOK_APP.match(text, max(0, s - 16))
        if fm is not None and fm.end() >= e:
            spans.add(fm.start(), fm.end(), "facebook_app_token", text)  # app id|app secret
            return
    if s >= 16 and text[s - 1] == "!":
        # Salesforce access token / session id: the 15-character org id ("00D…"), "!", the
        # opaque token; the token scan starts after the "!", so the org id is looked for before it
        sm = _SALESFORCE.match(text, s - 16)
        if sm is not None and sm.end() >= e:
            spans.add(sm.start(), sm.end(), "salesforce_token", text)
            return
    if c0 == "A" and s > 0 and text[s - 1] == ":":
        b = s - 1
        while b > 0 and text[b - 1].isdigit() and s - b < 18:
            b -= 1
        tm = _TELEGRAM.match(text, b)
        if tm is not None and tm.end() > s:
            spans.add(b, tm.end(), "telegram_bot_token", text)
            return
    if spans.filler.get(tok):
        return  # a filler value seen before: every rule below would add it as [s, e), which add() refuses
    if c0 in "01" and tok[1:3] == ".A" and _AZURE_REFRESH.fullmatch(tok):
        spans.add(s, e, "azure_refresh_token", text)
        return
    if n >= 35 and tok[32:35] == "-us" and _MAILCHIMP.fullmatch(tok):
        spans.add(s, e, "mailchimp_key", text)
        return
    if "/" in tok and "." in tok:
        return  # path or URL
    # AWS secret access key next to an access key id
    if n == 40 and _B64ISH.fullmatch(tok) and _entropy_ok(tok, 40) and not tok.islower() and _wordy(tok) < 0.4:
        w = text[max(0, s - 400):e + 400]
        if ("AKIA" in w or "ASIA" in w or "aws" in low[max(0, s - 200):s]) and not _id_valued(text, low, s):
            spans.add(s, e, "aws_secret_access_key", text)
            return
    c0 = tok[0]
    if c0 in "/.~-+":
        return
    # generic vendor shape: short lowercase/uppercase prefix, separator, long random body
    prev = text[s - 1] if s else " "
    if prev in _REF_BEFORE:
        return  # a URL anchor or path segment, a variable, a crypt hash ("$2a$06$…"), a handle
    gm = _GENERIC_PREFIXED.fullmatch(tok)
    if gm is not None and not low.endswith(_DIGEST_BEFORE, max(0, s - 8), s):
        pre, body = gm.group(1), gm.group(2)
        lp = pre.lower()
        if lp not in _ID_PREFIXES and not lp.startswith(("sha", "md5", "blake", "crc", "node", "python", "linux", "release", "build", "commit", "data", "image")):
            up, lo, dg = _classes(body)
            if dg and ((up and lo) or (_HEX.fullmatch(body) and len(body) >= 32)) and _wordy(body) < 0.5 and "EXAMPLE" not in body and not (
                    _code_name(tok) or in_code_position(text, s, e, tok) or _id_valued(text, low, s)):
                spans.add(s, e, "api_token", text)  # (not a name in code: "NpyDatetime_ConvertDatetime64ToDatetimeStruct")
                return
    # context: a secret word shortly before, no hash / id / public word
    _contextual(text, low, s, e, tok, spans)


def _id_valued(text: str, low: str, s: int) -> bool:
    """Is the token at s the value of an id's label ('"JobRunId": "jr_…"', '--request-id …')?
    A service's object and request ids look random and are shown in every answer: not secrets."""
    lab = _label_before(text, low, max(0, s - 80), s)
    return bool(lab) and _ID_LABEL.search(lab) is not None


_WINDOW = 160
# an API's object and request ids ("req_…", "evt_…", "chatcmpl-…"): shown in logs and answers, no secret
_ID_PREFIXES = frozenset("req request trace span evt event msg txn run thread asst chatcmpl batch job "
                         "cus ch pi py sub in prod price acct file".split())


def _window_start(s: int, items: list) -> int:
    """Where the context before s starts: 160 characters, a redacted value counting as its marker.

    A second pass sees "[REDACTED:jwt]" where the first saw a 300-character token; measuring both
    alike keeps a word that was out of reach out of reach, so scrubbing stays idempotent.
    """
    budget, pos = _WINDOW, s
    for a, b, kind in reversed(items):
        if b > pos:
            continue
        if pos - b >= budget:
            break
        budget -= pos - b
        budget -= len(kind) + 11  # "[REDACTED:" + kind + "]": what the next pass reads there
        pos = a
        if budget <= 0:
            return a
    return max(0, pos - budget)


def _contextual(text, low, s, e, tok, spans) -> None:
    n = len(tok)
    up, lo, dg = _classes(tok)
    if not dg:
        return
    if "/" in tok and ("." in tok or not (up and lo) or _PATH_HEAD.match(tok) or _WORDS_AND_NUMBERS.fullmatch(tok)):
        return  # path / URL / "rsa4096/1A86…" (a key's listing) / "123456789013/costCenter", "tagKeys/1234…"
    if "." in tok and (tok.count(".") >= 2 or not (up and lo)) and not _RANDOM_DOTTED.fullmatch(tok):
        return  # domain / version / dotted.name
    if (n == 36 and tok[8] == "-" and tok[13] == "-") or (n == 26 and tok.isupper() and tok.isalnum()):
        return  # UUID / ULID
    if "-" in tok and (_HEX_GROUPS.fullmatch(tok) or _RESOURCE_ID.fullmatch(tok) or _WORDS_THEN_HEX.fullmatch(tok)):
        return  # groups of hex digits: a GUID cut by a line break ("E914-47DA-95CA-C5AB0DC85B11"), a MAC;
        # a cloud resource's id ("device-07f6fd08867abc123"); a name and a UUID ("Console-CreateStack-7f59…")
    if "_" in tok and tok.isupper() and _CONST_NAME.fullmatch(tok) and _wordy(tok) >= 0.4:
        return  # a constant's or an environment variable's name: "OAUTH2CLIENT_TEST_P12_KEY_PATH"
    if ("-" in tok or "_" in tok) and _WORDY_SEGMENTS.fullmatch(tok):
        return  # "PuTTY-User-Key-File-3", "claude-3-5-sonnet-20241022", "Some_Var_Name_2"
    if _is_compound_name(tok):
        return  # "phosphatidylinositol-3-kinase", "TLR4-TRIF-RIPK1-FADD-CASP8", "A/Netherlands/602/2009"
    is_hex = _HEX.fullmatch(tok) is not None
    if is_hex:
        if n < 32:
            return
    elif not (up and lo) and n < 24:
        return
    prev = text[s - 1] if s else " "
    if prev == ":":
        # the second half of 'id==:secret' (a Tableau token) whose first half was just redacted
        last = spans.items[-1] if spans.items else None
        if last is not None and s - 4 < last[1] < s and not text[last[1]:s - 1].strip("="):
            spans.add(s, e, "secret", text)
        return
    if prev in _REF_BEFORE or low.endswith(_BENIGN_BEFORE, max(0, s - 8), s):
        return
    if prev == "\\" and ((tok[0] == "f" and tok[1:2] in ("B", "I", "R", "P", "5")) or (tok[0] == "x" and _HEX2.match(tok, 1))):
        return  # a manual page's font change glued to a word: "\\fBarch/i386/Makefile"; a byte escape: "\\x1bListResponse"
    a = _window_start(s, spans.items)
    # stay within the last three lines
    nl = low.rfind("\n", a, s)
    if nl >= 0:
        nl2 = low.rfind("\n", a, nl)
        if nl2 >= 0:
            nl3 = low.rfind("\n", a, nl2)
            if nl3 >= 0:
                a = nl3
    # A document that repeats a line repeats its tokens in the same context: the verdict depends
    # on the token and on the window's text alone, so each distinct pair is judged once.
    key = (tok, low[a:s], text[a:s])
    secret = spans.context.get(key)
    if secret is None:
        secret = spans.context[key] = _secret_context(text, low, a, s, tok, is_hex, up and lo) and not (
            _code_name(tok) or _b64_placeholder(tok) or _public_der(tok) or _PH_INNER_RE.search(tok.lower()) is not None
            or code_expression(tok) or (not (up and lo) and _wordy(tok) >= 0.8) or _encoded_text(tok))
    # (not a name in code or a sum of names, base64 of 'username:password', a public key, an
    # EXAMPLE or other filler word ('NotARealKey', 'dummy'), a name of words in one case ("oauth2credentialprovider"), words in hex or base64,
    # OpenSSL's ciphertext ("U2FsdGVkX1…"); and, read
    # outside the memo as it looks past the token, not a name called or typed in code)
    if secret and not in_code_position(text, s, e, tok):
        spans.add(s, e, "secret", text)


def _secret_context(text: str, low: str, a: int, s: int, tok: str, is_hex: bool, mixed_case: bool) -> bool:
    """Does the window low[a:s] before the token make it a secret: a secret word (not a hash or
    id word), or a service's name as its label? Reads nothing outside [a, s) but the token."""
    # words only: neither a marker nor another long token (whose letters may spell "sha" or
    # "key" by chance, and which a second pass sees as a marker) counts as context
    window = low[a:s]
    if "[redacted:" in window:
        window = _MARK_RE.sub(" ", window)
    window = _without_random_runs(window)
    if _CTX_BAD_RE.search(window) is not None:
        return False  # "sha256", "commit", "fingerprint", ...: a hash or an id
    vendor = not _names_a_secret(window)
    if vendor and not _vendor_label(low, a, s, tok, is_hex, mixed_case):
        return False  # no secret word nor a service's name as the label; or "sha256", "commit", ...
    # a value of a non-secret label right before ("client_id=...", "trace_id: ..."): an id, even
    # beside a service's name ("AUTH0_CLIENT_ID=…"), where a service's own name labels its key
    lab = _label_before(text, low, a, s)
    if vendor:
        return not (lab and _ID_LABEL.search(lab))
    if lab and (_label_class(lab) == _NOT or ("-" in tok and _named_id(tok, lab))):
        return False
    if is_hex:
        tail = window[-80:]
        return any(w in tail for w in _HEX_GOOD)
    return True


def _label_before(text: str, low: str, a: int, s: int) -> str:
    """The label of the pair whose value starts at s ("client_id=", "NextToken": ), or "".

    A plain word before ':' is left out: in a chat log it is the speaker ("Ola: …"); a quoted one
    is a key of JSON or YAML ('"ID": …', '"Sid": …'), never a speaker."""
    j = s
    while j > a and low[j - 1] in " \t\"'`\n":  # (the value may open the next line)
        j -= 1
    if j > a and low[j - 1] == ">":
        tm = _TAG_BEFORE.search(low, a, j)  # an element: "<clientToken>…" (not one that only holds or marks up)
        return text[tm.start(1):tm.end(1)] if tm is not None and tm.group(1) not in _TAG_HOLDERS else ""
    if j <= a or low[j - 1] not in ":=":
        fm = _FLAG_BEFORE.search(low, a, j) if j < s else None
        return fm.group(1) if fm is not None else ""  # a command's option: "--change-token …"
    k = j - 1
    while k > a and low[k - 1] in " \t\"'":
        k -= 1
    b = k
    while k > a and low[k - 1] in _IDCHARS:
        k -= 1
    lab = text[k:b]
    if b > k and (low[j - 1] == "=" or not lab.isalpha() or _CASE_HUMP.search(lab)):
        return lab
    if b > k and low[b:b + 1] in "\"'" and not low.endswith(_FUSED_SECRET, k, b) and low[k:b] not in _HOLDERS:
        return lab  # (a fused "querykey" is a secret's label the table does not know; a "value"
        # holds whatever its neighbours name: '"arn": "…:stream-key/…", "value": "sk_…"')
    return ""


_FUSED_SECRET = ("key", "keys", "token", "tokens", "secret", "secrets")
_TAG_BEFORE = _lazy(r"<([a-z_][\w.-]{0,60})(?:\s[^<>]{0,200})?>$")
_FLAG_BEFORE = _lazy(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)$")
_HOLDERS = frozenset("value val data content body payload result text".split())
_TAG_HOLDERS = _HOLDERS | frozenset("member item entry string element code pre kbd samp tt span div p li td th b i em strong".split())
_ID_LABEL = _lazy(r"(?i:^id$|[_.-](?:id|ids|url|uri|name|host|domain|region|user|username|email|account))$|"
                  r"[a-z0-9](?:Id|ID|Ids|Url|URL|Uri|Name|Host|Domain|Region|User|Email)$")


# Services whose keys scanners find by the service's name as the label ("cloudflare: '…'",
# "mixpanel …", "'artifactory', '…'"): the name alone says what a random token beside it is.
_SERVICES = frozenset("""
airtable algolia amplitude artifactory asana atlassian auth0 bitbucket bitly braintree browserstack
buildkite circleci clickup cloudflare cloudinary cloudimage codecov confluent contentful coveralls
datadog digitalocean discord docusign doppler dropbox dynatrace elastic fastly figma firebase
freshdesk freshworks github gitlab grafana heroku honeycomb hubspot intercom jfrog jira keenio
kraken kucoin launchdarkly linear linode loggly mailchimp mailgun mailjet mapbox mattermost
metabase mixpanel mongodb netlify newrelic ngrok notion npm okta onesignal openai opsgenie
pagerduty paypal pinecone planetscale plaid postman pulumi pusher railway readme rollbar
salesforce segment sendgrid sendinblue sentry shopify slack snyk sonarcloud sourcegraph splunk
square stripe sumologic supabase telegram terraform textmagic travis trello twilio twitch
typeform vercel vonage webex wistia zapier zendesk zoom mux backblaze coinbase binance bitfinex
dockerhub quay rapidapi sendbird pubnub ably agora imgur giphy unsplash spotify smartsheet toggl
clockify calendly eventbrite openweathermap ipstack ipinfo scraperapi apify huggingface replicate
cohere anthropic deepgram assemblyai elevenlabs pinata infura alchemy etherscan moralis nylas
postmark sparkpost mandrill mailerlite klaviyo braze iterable customerio mparticle heap fullstory
hotjar logrocket bugsnag raygun airbrake honeybadger papertrail logdna sematext scalyr statuspage
""".split())
_SERVICE_TUPLE = tuple(_SERVICES)
_SERVICE_HEADS = frozenset(n[:5] for n in _SERVICES if len(n) >= 5)
_VENDOR_SEP = " \t\"'`:=,("
_DIGEST_LENGTHS = frozenset((32, 40, 56, 64, 96, 128))  # md5, sha1, sha224, sha256, sha384, sha512


def _vendor_label(low: str, a: int, s: int, tok: str, is_hex: bool, mixed_case: bool) -> bool:
    """Is the token right after a service's name, as its label or first argument? A hex token
    of a digest's length in one case is a hash (`github: <commit>`), not a key."""
    j = s
    while j > a and s - j <= 6 and low[j - 1] in _VENDOR_SEP:
        j -= 1
    if j == s or s - j > 6:
        return False
    # the identifier that ends at j (at most 41 characters, not before a): one match of the
    # reversed text instead of a step per character
    k = j - _IDENT_REVERSED.match(low[max(a, j - 41):j][::-1]).end()
    ident = low[k:j]
    # the name, or a name that starts with it ("webexbot", "mailgun_eu")
    if not ident or not any(part in _SERVICES or (len(part) > 5 and part[:5] in _SERVICE_HEADS
                                                  and part.startswith(_SERVICE_TUPLE))
                            for part in _IDENT_PARTS.split(ident)):
        return False
    return not (is_hex and not mixed_case and len(tok) in _DIGEST_LENGTHS)


_IDENT_PARTS = _lazy(r"[_.\-]")
_IDENT_REVERSED = _lazy(r"[\w.\-]*")  # \w is exactly str.isalnum() or "_"
_TOKEN_RUN = _lazy(r"[a-z0-9_\-.~+/]{20,}")  # in the lower-cased window
_ASCII_DIGIT = _lazy(r"[0-9]")


def _without_random_runs(window: str) -> str:
    """The window with each long run of token characters that holds a digit blanked (a token,
    whose letters may spell "key" or "sha" by chance). One pass over maximal runs: a lookahead
    for the digit at every position would rescan a digitless run once per character."""
    def blank(m) -> str:
        e = m.end()
        if _ASCII_DIGIT.search(m.group()) or (e < len(window) and window[e].isdecimal()):
            return " "
        return m.group()

    return _TOKEN_RUN.sub(blank, window)
_REF_BEFORE = "#/$@%"  # (after '%': the rest of a percent-encoded URL, "Diffie%E2%80%93Hellman_key")
_UUID = _lazy(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
# a cloud resource's id: its type in words and 8 or 17 hex digits ("device-07f6fd08867abc123", "i-0a1b…")
_RESOURCE_ID = _lazy(r"[a-z]+(?:-[a-z]+)*-[0-9a-f]{8}(?:[0-9a-f]{9})?")
_HEX_GROUPS = _lazy(r"[0-9A-Fa-f]{1,12}(?:-[0-9A-Fa-f]{1,12})+")
_HEX2 = _lazy(r"[0-9a-fA-F]{2}")
_WORDS_THEN_HEX = _lazy(r"[A-Za-z]+(?:-[A-Za-z]+)*-[0-9A-Fa-f]{1,12}(?:-[0-9A-Fa-f]{1,12}){2,}")
# segments that are numbers or names in camel case: a path of ids and words, not a key
_WORDS_AND_NUMBERS = _lazy(r"(?:[\d-]+|[A-Za-z][a-z]+(?:[A-Z][a-z]+)*)(?:/(?:[\d-]+|[A-Za-z][a-z]+(?:[A-Z][a-z]+)*))+")
_PATH_HEAD = _lazy(r"[a-z][a-z0-9_-]{0,11}/")
# a segment is letters, optionally a number and a lower-case tail ("S3session", "k8s"); the tail only
# after digits, so a run of letters splits one way only (two adjacent letter runs backtrack
# exponentially over many segments)
_WORDY_SEGMENTS = _lazy(r"_*(?:[A-Za-z]{1,12}(?:\d{1,3}[a-z]{0,10})?|\d+)(?:[-_.](?:[A-Za-z]{1,12}(?:\d{1,3}[a-z]{0,10})?|\d+))+")
_COMPOUND_PART = _lazy(r"[A-Za-z]+|\d+|[A-Za-z0-9]{1,8}")
_COMPOUND_SEP = _lazy(r"[-_./]")
_CASE_FLIP = _lazy(r"[a-z][0-9]*[A-Z]")


def _is_compound_name(tok: str) -> bool:
    """A name built of words, numbers and short codes joined by - _ . / (a chemical, a gene
    pathway, a strain: "3-hydroxy-3-methylglutaryl", "GEP100-Arf6-AMAP1-cortactin") is not a
    random token: a generated secret's parts between separators are long runs of mixed
    characters, and their case changes at random ("SEeNW8bM_Rref-UFdiBKio"): no part of a
    name has a capital after a small letter. One part must be a word of four letters or more."""
    parts = _COMPOUND_SEP.split(tok)
    return (len(parts) > 1 and all(_COMPOUND_PART.fullmatch(p) and not _CASE_FLIP.search(p) for p in parts)
            and any(len(p) >= 4 and p.isalpha() for p in parts))


_MARK_RE = _lazy(r"\[redacted:[a-z0-9_]*\]")
_BENIGN_BEFORE = ("base64,", "sha256:", "sha512-", "sha384-", "sha1:", "md5:", "h1:", 'key="', "key='")
_DECIMAL = _lazy(r"\d+\.\d+")
_PAGING = frozenset(("next", "page", "continuation", "pagination", "idempotency", "cursor", "sync",
                     "resume", "purchase", "action", "request", "input", "output", "change",
                     "lock", "sequence", "forward", "backward", "starting", "marker", "client", "update", "synced"))
_DIGEST_BEFORE = ("sha256=", "sha256:", "sha384=", "sha512=", "sha512-", "sha384-", "sha1=", "md5=")  # a wheel's RECORD
_CAMEL_NAME = _lazy(r"[a-z]+(?:[A-Z][a-z0-9]+){3,}")
_HUMP = _lazy(r"[A-Z][a-z0-9]+")
_VOWEL = _lazy(r"[aeiou]")
_DOTTED_NAME = _lazy(r"\.[a-z]+(?:[A-Z][a-z]+){2,}$")
_NAME_CHARS = _lazy(r"[A-Za-z0-9_.]+")
_CASE_HUMP = _lazy(r"[a-z0-9][A-Z]")
_LETTER_NUMBER = _lazy(r"(?:^|(?<=[._]))[A-Za-z]\d+(?=[A-Z._]|$)")  # x25519, v8, s3 opening a segment
_NAME_PIECE = _lazy(NAME_PIECE)


def _name_word(piece: str) -> bool:
    w = piece.lower()
    return (len(w) >= 3 and piece[-1].islower() and sum(map(w.count, "aeiouy")) >= 0.2 * len(w)
            and _CONSONANTS4.search(w) is None)


def _code_name(tok: str) -> bool:
    """A name in code, not a key: "ed25519.Ed25519PrivateKey", "TerminalTrueColorFormatter",
    "sodium_crypto_aead_chacha20poly1305_ietf_keygen", "v8.setFlagsFromString".

    Cut at case changes, digits and separators, a name is mostly pronounceable words; a random
    token is mostly single letters and short runs (about 1 in 300 random 20-character base62
    tokens pass, 1 in 1,000 at 32; at 12 characters 1 in 80, so labelled values, which are
    often short, are not judged by this). A name has camelCase humps or snake_case joints;
    without them the runs of a random lower-case body make words too often.
    """
    if "." in tok and (_wordy(tok) >= 0.7 or _DOTTED_NAME.search(tok) or module_attribute(tok)):
        return True  # a module's attribute: "http2.sensitiveHeaders", "ed25519.Ed25519PublicKey"
    if tok[0].islower() and _CAMEL_NAME.fullmatch(tok) and sum(
            len(h) > 2 and _VOWEL.search(h) is not None for h in _HUMP.findall(tok)) >= 3:
        return True  # camelCase: "xmlSecTransformRsaPkcs1Id"
    if _NAME_CHARS.fullmatch(tok) is None:
        return False  # a name is letters, digits, '_' and '.': no '=', '-', '+' or '/'
    if _CASE_HUMP.search(tok) is None and tok.count("_") + tok.count(".") < 2:
        return False  # no camelCase hump, no snake_case: 'NRAK-i5basoqzasyr8lurozafmt2ts29' is a key
    pieces = _NAME_PIECE.findall(tok)
    singles = sum(len(p) == 1 and p.isalpha() for p in pieces)
    if singles > 1 and singles - len(_LETTER_NUMBER.findall(tok)) > 1:
        return False  # random case flips leave single letters between the runs (not 'x25519.X25519')
    letters = sum(len(p) for p in pieces if not p.isdigit())
    need = max(8, 0.7 * letters)
    # a word is a run of three letters or more ending in a small one: when those runs alone fall
    # short, no vowels need counting (a random token's runs are short, so most end here)
    runs = [p for p in pieces if len(p) >= 3 and p[-1].islower()]
    if len(runs) < 2 or sum(map(len, runs)) < need:
        return False
    words = [p for p in runs if _name_word(p)]
    return len(words) >= 2 and sum(map(len, words)) >= need
_RANDOM_DOTTED = _lazy(r"[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]{6,}){1,4}")
# words that make a nearby high-entropy token a secret ("here is the Acme API token: ...")
_CTX_GOOD = ("token", "secret", "key", "passw", "passord", "kennwort", "credential", "nøkkel",
             "nokkel", "schlüssel", "clé", "clave", "nyckel", "sleutel", "nøgle", "bearer",
             "webhook", "dsn", " pat")
# words that say "this long string is a hash / id / public thing"
_CTX_BAD = ("public", "fingerprint", "gpg", "pgp", "keyserver", "keybase", "signingkey", "rsa key", "key id", "keyid", "signature", "sha1", "sha2", "sha3", "sha5", "md5", "checksum", "digest",
            "integrity", "commit", "hash", "cert", "request_id", "request-id", "request id", "trace", "uuid",
            "etag", "revision", "rev=", "serial", "ciphervalue", "ciphertext", "cipherdata", "dnskey",
            "page token", "page_token", "pagetoken", "next token", "next_token", "nexttoken")
_HEX_GOOD = ("token", "secret", "key", "passw", "credential", "nøkkel", "schlüssel")
_CTX_GOOD_RE = _lazy("|".join(map(re.escape, _CTX_GOOD)))  # one scan instead of a word at a time
_CTX_BAD_RE = _lazy("|".join(map(re.escape, _CTX_BAD)))
# the context words a label can end in: inside a longer name they may name something else
_CTX_LABEL_WORDS = frozenset(("token", "secret", "key", "passw", "credential"))
_VERSION_TAIL = _lazy(r"[_-]*v?\d+$")
_PASSWORD_REST = _lazy(r"ord|d|ort")


def _names_a_secret(window: str) -> bool:
    """Does a secret word in the lower-cased window name a secret, not open another name?

    "token", "key", "secret" also open names that are no secret's label: PyExc_KeyError,
    keyDetails, tokenizer, PBKDF2PasswordHasher, key_spec. A word that ends its name (a bare
    "key", "apiKey", "scalewaykey", "api_tokens", "GITHUB_TOKEN_V2", "com.x.credentials.y")
    counts; one followed by more of the name counts only when the whole name is a secret's
    label, judged as the label rules judge one ("secret_key_base", "secretkey").
    """
    for m in _CTX_GOOD_RE.finditer(window):
        word = m.group()
        if word not in _CTX_LABEL_WORDS:
            return True  # "bearer", "webhook", "dsn", "nøkkel", ...
        a, b, n = m.start(), m.end(), len(window)
        while a > 0 and window[a - 1] in _IDCHARS and window[a - 1] != ".":
            a -= 1
        if word == "passw":
            b = _PASSWORD_REST.match(window, b).end()  # "password", "passwd", "passwort"
        e = b
        while e < n and window[e] in _IDCHARS and window[e] != ".":
            e += 1
        rest = _VERSION_TAIL.sub("", window[b:e])
        if rest in ("", "s") or _label_info(window[a:e])[0] != _NOT:
            return True
    return False


# ---- labelled values ------------------------------------------------------------------------
# One scan of the lower-cased text for the stems a label can contain ("pass", "token", "key",
# "kennwort", ...); each hit is widened to its identifier, classified (memoised) and, if it is a
# secret label, the value after the separator is checked and redacted.
_LABEL_CACHE: dict[str, tuple] = {}


def _keywords(text: str, low: str, spans: _Spans, skip: list) -> None:
    covered = {it[0]: it[1] for it in spans.items}  # values already redacted by the token rules
    words: dict = {}  # each word after a password word is judged once, however many precede it
    idchars = _IDCHARS
    cache = _LABEL_CACHE
    last = -1
    repeat = ("", -1)  # the last label whose value was redacted, and where that value ends
    pw_char = -1  # the next character a password needs (_PW_CHAR): one search, reused while ahead
    for m in (_skipping(_STEM, low, skip) if skip else _STEM.finditer(low)):
        i = m.start()
        if i < last:
            continue
        a = i
        while a > 0 and text[a - 1] in idchars:
            a -= 1
            if i - a > 48:
                break
        b = _IDRUN.match(text, i).end()
        last = b
        if b - a > 48 or (a > 0 and text[a - 1] == "/" and text[a - 2:a] != "//"):
            continue  # inside a long token (base64, key material) or a path ('/forgot-password'), not a label
        ident = text[a:b]
        if ident == repeat[0] and a < repeat[1]:
            continue  # the same label inside its own bare value just redacted ("key=key=key…")
        info = cache.get(ident)  # (_label_info's own memo, read inline: no call per label when known)
        if info is None:
            info = _label_info(ident)
        if a > 1 and text[a - 1] == " " and text[a - 2].isalnum() and (info[0] == _WEAK or (info[0] == _SEC and ident in _TOKEN_WORDS)):
            info = _spaced_key(text, a, ident, info)  # "API key: …", "WPA2 key: …", "Next page token: …"
        done = False
        if info[0] != _NOT:
            n = len(spans.items)
            if a > 0 and (text[a - 1] == "*" or text[a - 1] == "`"):
                done = _emphasised(text, low, a, b, info, spans, covered)
            else:
                done = _value_after(text, low, a, b, info, spans, covered)
                if not done and a > 4 and text[a - 1] in " =(" and (info[0] == _PWD or info[0] == _SEC):
                    done = _value_before(text, a, info, spans)
                if not done and (text[b:b + 1] == "," or text[a - 2:a] == ", ") and (info[0] == _PWD or info[0] == _SEC):
                    done = _unpacked(text, a, b, info, spans)
            if len(spans.items) > n and text[spans.items[-1][0] - 1] not in "\"'`":
                repeat = (ident, spans.items[-1][1])  # a bare value: it runs on over what follows
        if not done and m.group() in _PW_STEMS:
            if pw_char < i:
                pm = _PW_CHAR.search(text, i)
                pw_char = pm.start() if pm is not None else len(text)
            if pw_char < i + _PROSE_REACH:  # else no word after it can be a password
                _prose_kw(text, low, i, spans, words)


_WORD_BEFORE = _lazy(r"[A-Za-z0-9-]{1,14}$")
_TOKEN_WORDS = frozenset(("token", "Token", "TOKEN"))
# names unpacked on the left of an assignment, up to its "=": "username, password = " (Go's ":=")
_NAMES = _lazy(r"[ \t]*[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)+[ \t]*:?")
_ITEM = _lazy(r"""[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|[^\s,"']+)[ \t]*(?:,|$)""")


def _unpacked(text: str, a: int, b: int, info: tuple, spans: _Spans) -> bool:
    """A label among names unpacked from literals: 'user, password = "admin", "S3cret!"' gives
    the label the literal in its place; a bare item there is a variable and stays."""
    bol = text.rfind("\n", 0, a) + 1
    eol = text.find("\n", b)
    if eol < 0:
        eol = len(text)
    eq = text.find("=", b, eol)
    if eq < 0 or text[eq + 1:eq + 2] == "=" or _NAMES.fullmatch(text, bol, eq) is None:
        return False
    k = text.count(",", bol, a)
    pos = eq + 1
    for _ in range(k + 1):
        im = _ITEM.match(text, pos, eol)
        if im is None:
            return False
        pos = im.end()
    if text.count(",", bol, eq) != text.count(",", eq, eol) or im.lastindex is None:
        return False  # as many items as names, and the label's is a literal
    g = im.lastindex
    return _check_value(text, info, "=", True, im.group(g), im.start(g), spans)


def _unpacked_into(text: str, vs: int) -> bool:
    """Is the value at vs the right side of names unpacked on a line of their own (within 160
    characters): "username, password = split"?"""
    bol = text.rfind("\n", 0, vs) + 1
    eq = text.rfind("=", bol, vs)
    return (bol >= vs - 160 and eq > bol and not text[eq + 1:vs].strip(" \t")
            and _NAMES.fullmatch(text, bol, eq) is not None)


def _spaced_key(text: str, a: int, ident: str, info: tuple) -> tuple:
    """A bare "key" or "token" whose word before it, written apart, says what it is ("API key",
    "secret key", "WPA2 key", "Wi-Fi key"; "page token", "next token"): judged as the joined label
    (api_key; wpa2_key, a password; page_token, a cursor), not as the bare word."""
    wm = _WORD_BEFORE.search(text, max(0, a - 15), a - 1)
    if wm is None:
        return info
    word = wm.group().replace("-", "").lower()
    if word in _KEY_QUALIFIERS or word in _WIFI_WORDS or (info[0] == _SEC and word in _PAGING):
        return _label_info(word + "_" + ident)
    return info


_STEM = _lazy(r"p(?:ass|w|sk|at(?![a-z]))|s(?:ecret|ig|leutel|chl[üu]ssel|enha|alasana)|token|k(?:ey|ennwort|odeord)|"
              r"a(?:uth|ppid|dgangskode)|c(?:red|ontrase|lave)|dockerc|l[öo]senord|wachtwoord|mdp|"
              r"n(?:[øo]kkel|yckel|[øo]gle)|h(?:as[łl]o|eslo)|jelsz[óo]")


def _label_info(ident: str) -> tuple:
    """(class, kind, core, is_flag, lower-cased core) for an identifier, memoised."""
    info = _LABEL_CACHE.get(ident)
    if info is not None:
        return info
    if len(_LABEL_CACHE) > 4096:
        _LABEL_CACHE.clear()
    core = ident.strip(".-")
    cls = _label_class(core) if core else _NOT
    info = (cls, "password" if cls == _PWD else "secret", core, ident[:1] == "-", core.lower())
    _LABEL_CACHE[ident] = info
    return info


# _pw_shape is 0 for a word without a digit (str.isdigit, which some non-ASCII characters pass)
# or one of "!@#$%^&*?~": where none follows a password word within the reach of _prose_after
# (a keyword of at most 12 characters, then 90), runs of plain words ("password: " x N) are
# not judged one by one.
_PW_CHAR = _lazy(r"[0-9!#$%&*?@^~\x80-\U0010ffff]")
_PROSE_REACH = 12 + 90
_PW_STEMS = frozenset(("pass", "pw", "kennwort", "lösenord", "losenord", "wachtwoord", "contrase",
                       "kodeord", "adgangskode", "mdp", "clave", "senha", "salasana", "hasło", "haslo",
                       "heslo", "jelszó", "jelszo"))


_IDRUN = _lazy(r"[\w.\-]{0,49}")
_NAME_BEFORE = _lazy(r"(?:key|name|id)[\"']?\s*[:=]\s*[\"']?$", re.I)
# (the blanks around the comma are one run when there is no comma: "\s*,?\s*" would split a run of
# blanks in two every way there is, quadratic in its length when no "value" follows)
_VALUE_FIELD = _lazy(r"""[\"']?\s*(?:,\s*)?(?:\r?\n[ \t-]*)?[\"']?value[\"']?\s*[:=]\s*""")


def _name_before(text: str, a: int) -> bool:
    """`key: "` / `name=` right before a: the label is the *name* of a pair ({"key": "token", ...}).
    A plain look at the last characters rules out most labels before the regex runs."""
    lo = max(0, a - 24)
    j = a - 1  # the last character before a, past spaces, quotes and spaces
    while j >= lo and text[j].isspace():
        j -= 1
    while j >= lo and text[j] in "\"'":
        j -= 1
    while j >= lo and text[j].isspace():
        j -= 1
    return j >= lo and text[j] in ":=" and _NAME_BEFORE.search(text, lo, a) is not None


# a quoted literal compared with the label that follows: '"…" == password', '"…".equals(token)'
_VALUE_FIRST = _lazy(r"""(["'])([^"'\s\\]{4,128})\1(?:[ \t]*[!=]==?[ \t]*|\.equals(?:IgnoreCase)?\()$""")


def _value_before(text: str, a: int, info: tuple, spans: _Spans) -> bool:
    """The literal on the left of a comparison whose right side is the label ('if ("…" ==
    password)', Yoda style, or Java's '"…".equals(password)'): the same value as 'password == "…"'."""
    j = a - 1
    while j > 0 and text[j] == " ":
        j -= 1
    if text[j] != "=" and not (text[j] == "(" and text.endswith(("equals(", "IgnoreCase("), 0, j + 1)):
        return False
    m = _VALUE_FIRST.search(text, max(0, a - 150), a)
    return m is not None and _check_value(text, info, "=", True, m.group(2), m.start(2), spans)


def _value_after(text, low, a, b, info, spans, covered=None) -> bool:
    cls, kind, ident, flag, lident = info
    c = text[b:b + 1]
    if c == " " or c == "\t":
        # a label, blanks and a word ("token is …", "token ABCD…"): one look past the blanks instead
        # of two regular expressions that fail
        j = b + 1
        if text[j:j + 1] in (" ", "\t"):
            j = _BLANKS.match(text, j).end()  # (a long run is skipped in C, not a blank at a time)
        op = text[j:j + 1] in _OP_AFTER_BLANKS
    else:
        op = c in _OP_START
    fm = _ASSIGN_VALUE.match(text, b) if op else None
    if fm is not None:  # fast path: label, separator and value in one match
        sep = fm.group(1)
        g = fm.lastindex
        if sep == ":" and ((a > 0 and text[a - 1] == ":") or ("." in ident and fm.end(1) == fm.start(g))):
            return False  # arn:aws:...:secret:name, urn:..., io.jsonwebtoken:jjwt (Maven)
        if g == 6 and " " in fm.group(6):
            return False  # `command substitution`: the value is produced elsewhere
        if g == 7 and sep == ":" and fm.end(1) == fm.start(7) and _glued_name(text, a, fm.group(7), fm.end(7)):
            return False
        if g == 2:
            g = 3
        if covered and covered.get(fm.start(g), -1) >= fm.end(g):
            return True  # a vendor token, already redacted
        quoted = g != 7
        return _check_value(text, info, sep, quoted, fm.group(g), fm.start(g), spans)
    if op:
        am = _ASSIGN.match(text, b)
        if am is not None:
            # A separator whose value the fast path could not read: _ASSIGN_VALUE is _ASSIGN followed
            # by _VALUE's alternatives, so _VALUE fails after this separator too and no rule below
            # applies, but for a title's colon at the end of its line ("Wifi password:" / "Hytta2024").
            e = am.end()
            return text[e:e + 1] in ("\n", "\r") and am.group(1) == ":" and _value_below(text, a, e, info, spans)
    n = len(text)
    pos = b
    sep = None
    prev = text[a - 1] if a > 0 else ""
    # XML element <password>...</password>, or one whose key or name is the label: <entry
    # key="password">…</entry>, Android's <string name="api_key">…</string>
    if (prev == "<" and pos < n and text[pos] == ">") or (
            (prev == '"' or prev == "'") and text.startswith(prev + ">", pos) and low.endswith((" key=", " name="), 0, a - 1)):
        pos = text.find(">", pos)
        end = text.find("<", pos + 1, pos + 1 + _MAX_VALUE)
        if end > pos + 1 and text.startswith("</", end):  # <password>…</password>, not <PASSWORD> in prose
            v = text[pos + 1:end].strip()
            if v and spans.value_fits(v, cls, True):
                off = text.find(v, pos + 1, end)
                spans.add(off, off + len(v), kind, text)
                return True
        return False
    if prev == '"' or prev == "'":
        # <add key="ClearTextPassword" value="..."/>
        xm = _XML_VALUE.match(text, pos)
        if xm is not None:
            pos = xm.end()
            sep = "="
        elif text.endswith(("(", "( "), max(0, a - 3), a - 1):
            # a call's name and value: define('DB_PASSWORD', '...'), setProperty("X_TOKEN", "...")
            dm = _PHP_DEFINE.match(text, pos)
            if dm is not None and text[dm.end():dm.end() + 1] in ("\"", "'"):
                pos = dm.end()  # (a bare argument is a variable or a keyword: 'prompt("Password", hide_input=True)')
                sep = "="
    if sep is None and _name_before(text, a):
        # {"key": "token", "value": "..."} / - name: DB_PASSWORD\n  value: ...
        vf = _VALUE_FIELD.match(text, pos)
        if vf is not None:
            pos = vf.end()
            sep = "="
    if sep is None:
        if (flag or lident in _WS_LABELS) and text[b - 1] != ".":
            # "--password X", netrc "password X" (not the end of a sentence: "… to pass.  X")
            j = _BLANKS.match(text, pos).end()
            if j == pos or j >= n:
                return False
            pos = j
            sep = " "
        else:
            return False
    if pos >= n:
        return False
    return _value_at(text, pos, info, sep, spans)


def _glued_name(text: str, a: int, v: str, e: int) -> bool:
    """A label glued to a word by ':' that names, not holds: a version ('db-pass:latest', a secret
    manager's entry) or one symbol in quotes ('"passwd:gecos"', a library's function name)."""
    if v == "latest":
        return True
    q = text[a - 1] if a > 0 else ""
    return (q == '"' or q == "'") and text.startswith(q, e) and v.isalpha() and v.islower()


def _value_at(text: str, pos: int, info: tuple, sep: str, spans: _Spans) -> bool:
    """Read the value (quoted or bare) that starts at pos and judge it; True when it is dealt with."""
    vm = _VALUE.match(text, pos)
    if vm is None:
        return False
    g = vm.lastindex
    quoted = g != 6
    if g == 1:
        g = 2
    return _check_value(text, info, sep, quoted, vm.group(g), vm.start(g), spans)


# What may stand before a label that is the title of the line below: a list, quote or heading
# mark and a few words ("- Wifi password:", "## Router admin password:"), not code ("if not
# password:", "case Password:")
_TITLE_HEAD = _lazy(r"[ \t]*(?:[-*+>#]+[ \t]+)?((?:[^\W\d_]+[ \t]+){0,4})[*_]*")
_CODE_WORDS = frozenset("if elif else while for not and or def class case when with except return "
                        "var let const val public private static final".split())
# the value alone on the next line: indentation, then one token (quoted or bare) and the end of the line
_BELOW = _lazy(r"\r?\n[ \t]*(?:([\"'`])([^\s\"'`]{6,64})\1|([^\s\"'`]{6,64}))[ \t]*(?:\r?\n|$)")


def _value_below(text: str, a: int, e: int, info: tuple, spans: _Spans) -> bool:
    """A password alone on the line below a label that ends its own line ("Wifi password:" then
    "Hytta2024", "**Password**" then "Hytta2024"): the way people jot logins down in notes.

    Only a label that is the line's title (a few words before it, no code) and only a value
    that looks like a password (a digit or a symbol; _pw_shape) on a line of its own: a word,
    a sentence, a YAML mapping or a list below a "password:" key stays as it is.
    """
    if info[0] != _PWD and info[0] != _SEC:
        return False
    bm = _BELOW.match(text, e)
    if bm is None:
        return False
    g = 2 if bm.lastindex == 2 else 3
    v = bm.group(g)
    if v[-1] in ":;,{[(" or v[0] == "*" or "(" in v or "=" in v:
        return False  # the next key, Markdown, or code ("sys.exit(1)", "x=1")
    bol = text.rfind("\n", 0, a) + 1
    hm = _TITLE_HEAD.fullmatch(text, bol, a)
    if hm is None or not _CODE_WORDS.isdisjoint(hm.group(1).lower().split()):
        return False
    key = (v, "below")  # (the verdicts' keys are 4-tuples: this one cannot collide)
    shape = spans.verdicts.get(key)
    if shape is None:
        shape = spans.verdicts[key] = _pw_shape(v)
    if shape < 1:
        return False
    return _check_value(text, info, ":", g == 2, v, bm.start(g), spans)


def _emphasised(text, low, a, b, info, spans, covered) -> bool:
    """A label in Markdown emphasis or code: '**Password**: X', '**Password:** X', '`token`: X'.

    The closing marks stand between the label and its separator (or between the separator and
    the value); a label whose marks do not close where it ends is read as any other.
    """
    mark = text[a - 1]
    k = 1
    while k < 3 and a - k > 0 and text[a - k - 1] == mark:
        k += 1
    closer = mark * k
    if text.startswith(closer, b):
        if text[b + k:b + k + 1] in ("\n", "\r"):
            return _value_below(text, a - k, b + k, info, spans)  # "**Password**" / "Hytta2024"
        return _value_after(text, low, a, b + k, info, spans, covered)
    if text[b:b + 1] == ":" and text.startswith(closer, b + 1):
        j = _BLANKS.match(text, b + 1 + k).end()
        if text[j:j + 1] in ("\n", "\r"):
            return _value_below(text, a - k, j, info, spans)  # "**Password:**" / "Hytta2024"
        return j < len(text) and _value_at(text, j, info, ":", spans)
    return _value_after(text, low, a, b, info, spans, covered)


def _check_value(text, info, sep, quoted, v, vs, spans) -> bool:
    """Redact the value v found at vs after a label; True when the label's value is dealt with.

    The verdict depends on the value, the separator and the label alone, so a document that
    repeats "password: X" reaches it once; only the look at what follows a bare lower-case word
    and an Authorization value read the text around it.
    """
    key = (v, sep, quoted, info)
    verdict = spans.verdicts.get(key)
    if verdict is None:
        verdict = spans.verdicts[key] = _value_verdict(v, sep, quoted, info)
    word, action = verdict
    if word >= 0:
        after = text[vs + word:vs + word + 3]
        if after[:1] == " " and (after[1:2].isalpha() or after[1:3] in ("= ", "| ")):
            if word == 4 and info[0] == _PWD:
                return _app_password(text, vs, vs + 60, spans)  # "password: vkbq pmzt hxle wryd"
            return False  # prose ("treat it like a password: never commit it"), or a type
            # ("password: Unused = False", "password: Secret | None")
    if action is None:
        return False
    if action is _AUTH:
        _auth_value(text, vs, spans)
        return True
    off, n = action
    digits = n - 2 if v.startswith(("0x", "0X"), off) else n
    if info[0] != _PWD and digits in (8, 16, 40) and _HEX_ID.fullmatch(v, off, off + n) and _OPENPGP.search(_line_of(text, vs).lower()):
        return True  # an OpenPGP key id or fingerprint ("gpg --recv-keys …", "user.signingkey …"): public
    if not quoted and text.startswith(_CODE_AFTER, vs + off + n) and _typed_name(v[off:off + n]):
        return True  # a type or a variable in code: "key: X25519PrivateKey | None", "sig=p0_type_char + …"
    if _plain_label_holds(text, v[off:off + n], vs + off, spans):
        return True  # a type or a shared setting ("password: ReadableBuffer" beside "salt: ReadableBuffer")
    if (not quoted and (sep == "=" or sep == ":=") and text.find(",", max(0, vs - 160), vs) >= 0
            and _IDENTIFIER.fullmatch(v, off, off + n) and _unpacked_into(text, vs)):
        return True  # unpacked in code: "username, password = split" names a variable
    spans.add(vs + off, vs + off + n, info[1], text)
    return True


# Google shows an app password as four groups of four small letters, and people paste it with or
# without the spaces ("App password for Thunderbird: vkbq pmzt hxle wryd")
_APP_PASSWORD = _lazy(r"(?<![\w-])[a-z]{4}(?: [a-z]{4}){3}(?![\w-])|(?<![\w-])[a-z]{16}(?![\w-])")
_APP_PASSWORD_LABEL = _lazy(r"app(?:lication)?[ -]?(?:specific[ -])?pass(?:word|ord|ort)?\b")


def _app_password(text: str, s: int, e: int, spans: _Spans) -> bool:
    """Redact an app password within text[s:e] on its line, if its letters are random (not four
    words: "password: this must be long"); True when one was found."""
    eol = text.find("\n", s, e)
    m = _APP_PASSWORD.search(text, s, eol if eol >= 0 else e)
    if m is None or not _random_letters(m.group().replace(" ", "")):
        return False
    spans.add(m.start(), m.end(), "password", text)
    return True


def _app_passwords(text: str, low: str, spans: _Spans) -> None:
    """An app password after its name in prose ("Google app password - …"), where the rules for
    prose passwords want a digit or a symbol."""
    for m in _APP_PASSWORD_LABEL.finditer(low):
        _app_password(text, m.end(), m.end() + 60, spans)


_SPACE = _lazy(r"\s")


def _column_label(name: str):
    """A table's column header read as a label: its _label_info, or None when it names no secret."""
    info = _label_info(name)
    return info if info[0] != _NOT else None


def _cell(text: str, info: tuple, s: int, e: int, spans: _Spans) -> None:
    """Judge a table cell under a secret's header as that label's value: the cell bounds it, as
    quotes would ('`…`' and '**…**' around it are Markdown, not part of it)."""
    for mark in ("`", "**", "*"):
        if e - s > 2 * len(mark) and text.startswith(mark, s) and text.endswith(mark, s, e):
            s, e = s + len(mark), e - len(mark)
            break
    v = text[s:e]
    if _SPACE.search(v) is None:  # (a sentence in a cell: "see the vault", "same as above")
        _check_value(text, info, ":", True, v, s, spans)


# a password column of a CSV header: a password manager's export ("name,url,username,password")
_CSV_PASSWORD = _lazy(r'pass(?:word|ord|wort)"?[ \t]*(?:,|\r?$)', re.M)


def _csv_exports(text: str, low: str, spans: _Spans) -> None:
    """The password column of each CSV header in the text (a field "password", "login_password",
    '"Password"'), its cells judged as the values of that column's label."""
    done = -1  # the end of the rows last read: a header among them is not read again
    for m in _CSV_PASSWORD.finditer(low):
        s = m.start()
        if s <= done:
            continue
        j = s  # back over a quote, blanks and "login_" to where the field starts
        while (j > 0 and low[j - 1] in "_\" \t") or low.endswith("login", 0, j):
            j -= 5 if low.endswith("login", 0, j) else 1
        if j > 0 and low[j - 1] not in ",\n":
            continue
        cells, done = csv_cells(text, s, _column_label)
        for info, cs, ce in cells:
            _cell(text, info, cs, ce, spans)


# what follows a type or a variable in code: a union, a default, a return type, a sum, the next parameter
_CODE_AFTER = (" | ", " = ", " -> ", " + ", ",\n", ",\r\n", ")")


def _typed_name(v: str) -> bool:
    """A name code would use for a type or a variable, not a password someone chose: a name of
    words ('X25519PrivateKey'), a PascalCase word run ('FilterOrBool') or a snake_case name. A
    name that ends in digits ('SuperSecret2024') is how people make passwords: not a name here."""
    if _IDENTIFIER.fullmatch(v) is None or v[-1].isdigit():
        return False
    return ("_" in v.strip("_") or (v[0].isupper() and v.isalpha() and _CASE_HUMP.search(v) is not None)
            or _code_name(v))


def _name_like(v: str) -> bool:
    """A type's, a setting's or a mode's name ('ReadableBuffer', 'Incomplete', 'svc_backup',
    'bandpass'): only such a value may go free for being held by another label too. A password
    someone chose is often typed twice ('"password": "Zq8xLm2pWv", "confirm": "Zq8xLm2pWv"'),
    and both copies must go."""
    m = _IDENTIFIER.match(v)
    if m is not None and v[m.end():m.end() + 1] in ("[", "("):
        v = m.group()  # a generic type's head: "Callable[[", "Optional["
    return _typed_name(v) or (v.isalpha() and (v.islower() or (v[:1].isupper() and v[1:].islower())))


_MAX_SHARED = 64  # distinct values looked for per document: a bounded cost
_SHARED_REACH = 4000  # how far from the value its other holders are looked for
_SHARED_LOOKS = 8  # other copies looked at per value


def _plain_label_holds(text: str, v: str, vs: int, spans: _Spans) -> bool:
    """Is the value at vs also the value of a label that names no secret, nearby?

    A type or an enum is everyone's value: "password: Incomplete" beside "user: Incomplete",
    "password: ReadableBuffer, salt: ReadableBuffer"; and a variable is used as one elsewhere
    ("password = ident" after "ident.split(':')"). A secret is its own label's value; a
    label that holds it too is about it ("password_confirmation", "old_password"), so only a
    label without a secret word ("user", "salt", "func") counts, and only for a value that
    reads as a name (_name_like): a password typed twice goes twice. Looked for within a few
    thousand characters, for a bounded number of distinct values per document.
    """
    held = spans.shared.get(v)
    if held is not None:
        return held
    if not _name_like(v):
        held = spans.shared[v] = False
        return held
    if spans.searched >= _MAX_SHARED:
        return False
    spans.searched += 1
    held = spans.shared[v] = _plain_holder(text, v, vs)
    return held


def _plain_holder(text: str, v: str, vs: int) -> bool:
    lo, hi = max(0, vs - _SHARED_REACH), min(len(text), vs + len(v) + _SHARED_REACH)
    i = text.find(v, lo, hi)
    looks = 0
    while i >= 0 and looks < _SHARED_LOOKS:
        if i != vs and _bounded(text, i, i + len(v)):
            looks += 1
            after = text[i + len(v):i + len(v) + 2]
            if after[:1] in ("(", "[") or (after[:1] == "." and after[1:2].isalpha()):
                return True  # the same name called, indexed or its member read: a variable ("ident.split(")
            j = i
            while j > lo and text[j - 1] in " \t\"'`":
                j -= 1
            if j > lo and text[j - 1] in ":=":
                k = j - 1
                while k > lo and text[k - 1] in " \t\"'`":
                    k -= 1
                b = k
                while k > lo and text[k - 1] in _IDCHARS and b - k < 64:
                    k -= 1
                label = text[k:b].lower()
                if label and _STEM.search(label) is None:
                    return True
        i = text.find(v, i + len(v), hi)
    return False


_HEX_ID = _lazy(r"(?:0x)?[0-9A-Fa-f]+")
_OPENPGP = _lazy(r"gpg|pgp|keyserver|signingkey|fingerprint")


_AUTH = "auth"  # the value is an Authorization header's: <scheme> <credentials>


def _value_verdict(v, sep, quoted, info) -> tuple:
    """(length of a bare lower-case word whose next characters may make it prose, or -1;
    then None for no secret, _AUTH, or the (offset, length) in v of the value to redact)."""
    cls, _, _, flag, lident = info
    word = -1
    if not quoted:
        # connection strings / query strings: stop at the next "; key=" or "& key="
        if ";" in v or "&" in v or "," in v:
            cm = _NEXT_PAIR.search(v)
            if cm:
                v = v[:cm.start()]
        if sep == ":" and v.endswith(":"):
            return word, None
        raw = v
        v = v.rstrip(",;)]}>:")  # (the end of a call or a signature: "pwd=None):")
        if v[:1] == "{" and len(v) < len(raw) and _OPEN_BRACE_WORD.fullmatch(v):
            return word, None  # the brace closes after all, or an object goes on: "{name}", "{token1: x}"
        if v.isalpha() and (v.islower() or v.istitle()):
            word = len(v)  # ("password: Unicode password.": prose, when a word follows)
    if not v:
        return word, None
    if not quoted and v[-1] == "." and v[:-1].lower() in _NOT_A_VALUE:
        return word, None  # a field's description: "password: Required. The user's password."
    if cls != _PWD and (stand_in := _SQUASH.sub("", v.lower()).rstrip("0123456789")) and stand_in in (
            _SQUASH.sub("", lident), _last_word(lident)):
        return word, None  # a test's stand-in named after its label: token="token123", api_key: apikey1
    if _spells_label(v, lident):
        return word, None  # the value spells its label: 'utf_8_sig': 'UTF-8-SIG', SECRET_KEY = 'AWSSecretKey'
    if "-" in v and _named_id(v, info[2]):
        return word, None  # "ExportToken": "export-token-cu4lg26o…": an id named after what it is
    # Authorization: <scheme> <credentials>
    if lident.endswith("authorization") or (cls == _SEC and v.lower() in _SCHEMES):
        return word, _AUTH
    off = 0
    if v[:5].lower() == "pass:" and len(v) > 5:
        v = v[5:]
        off = 5
    if sep == " ":
        if v[0] == "-" or (flag and cls != _PWD and _OPTION_SPEC.match(v)):
            return word, None  # the next flag, or a flag's spec of fields ("--secret id=npm_token,src=…")
        if v.rstrip(".,;:!?)").lower() in _FLAG_NOUNS:
            return word, None  # prose about the flag: "use the --password flag.", "the --token option"
        if not flag and _pw_shape(v) < (2 if lident == "pass" else 1):
            return word, None  # ("pass force_zip64 to use …": 'pass' the verb wants a strong value)
    elif v[0] == "-" and not quoted and _FLAG_LIST.fullmatch(v):
        return word, None  # "Command line keys: -quiet,-verbose,-fix": options, listed
    if cls == _SEC and lident.endswith("auth") and not (_b64_creds(v) or _entropy_ok(v, 20)):
        return word, None
    if not _value_ok(v, cls, quoted):  # (this verdict is itself memoised: no second table)
        return word, None
    return word, (off, len(v))


_SQUASH = _lazy(r"[^a-z0-9]+")


def _last_word(lident: str) -> str:
    """The last word of a lower-cased label ("api_token" -> "token")."""
    return _SQUASH.split(lident)[-1]


def _named_id(v: str, ident: str) -> bool:
    """Does the value open with its whole label spelled out and a dash ('"ExportToken":
    "export-token-cu4l…"')? A service names its ids after what they are. (A vendor's prefix may
    be the label's first word, 'DNKEY_TOKEN = "dnkey-…"', never the whole label.)"""
    sl = _SQUASH.sub("", ident.lower())
    if len(sl) < 6:
        return False
    i = v.find("-")
    while 0 < i <= 3 * len(sl):
        if _SQUASH.sub("", v[:i].lower()) == sl:
            return True
        i = v.find("-", i + 1)
    return False
_NAME_OF_WORDS = _lazy(r"[A-Za-z_-]+")


def _spells_label(v: str, lident: str) -> bool:
    """Is the value its own label's name? An enum's member or a field's name, not a secret.

    'utf_8_sig': 'UTF-8-SIG' spells the label; a value of letters alone ('AWSSecretKey' for
    SECRET_KEY, 'challengePassword' for CHALLENGE_PASSWORD, a forward reference "_RSAPrivateKey"
    for private_key) may also hold the label or be held by it. A value with a digit must spell
    it exactly: 'Password123' is a weak password.
    """
    sv, sl = _SQUASH.sub("", v.lower()), _SQUASH.sub("", lident)
    if sv == sl:
        return True
    return _NAME_OF_WORDS.fullmatch(v) is not None and min(len(sv), len(sl)) >= 6 and (sv in sl or sl in sv)


_OPTION_SPEC = _lazy(r"[a-z][a-z_-]*=[^,\s]*(?:,|$)")
_FLAG_NOUNS = frozenset("flag flags option options argument arguments arg args parameter parameters param "
                        "params switch switches setting field prompt".split())
_FLAG_LIST = _lazy(r"--?[A-Za-z][\w-]*(?:, ?--?[A-Za-z0-9][\w-]*)+")
_WS_LABELS = frozenset(("password", "passwd", "pass", "passphrase", "psk", "requirepass", "masterauth", "masterpass"))
_SPLIT = _lazy(r"[\s/]+")
_USER_FLAG = _lazy(r"(?<![\w-])(?:-u|--user(?:name)?|-U)[ \t=]")
# (or, at the end of a bare value, the first word of a next key that has a space in it:
# "Password=x;Persist Security Info=true" is read up to the space)
_NEXT_PAIR = _lazy(r"[;&,][A-Za-z_][A-Za-z0-9_ .-]{0,40}=|;[A-Z][a-z]{2,}$")
_SCHEMES = frozenset("bearer basic token bot ssws digest negotiate ntlm apikey api-key sso-key oauth splunk geniekey".split())
_AUTH_VALUE = _lazy(r"(?:([A-Za-z][A-Za-z-]{1,20})[ \t]+)?([A-Za-z0-9._~+/=:\-][A-Za-z0-9._~+/=:@\-]{7,})")


def _auth_value(text: str, pos: int, spans: _Spans) -> None:
    m = _AUTH_VALUE.match(text, pos)
    if m is None:
        return
    scheme = (m.group(1) or "").lower()
    v = m.group(2)
    if scheme and scheme not in _SCHEMES and scheme not in ("sharedkey", "hmac", "aws4-hmac-sha256", "zoho-oauthtoken", "klaviyo-api-key"):
        return
    if not scheme and (_is_reference(v, False) or _is_compound_name(v)):
        return  # a variable ("self._expected_authorization") or a header's name ("x-amz-content-sha256")
    _credential_token(text, m.start(2), v, scheme, spans)


def _credential_token(text, s, v, scheme, spans) -> None:
    v = v.rstrip(".,;")
    if not v or _MARK in v or _placeholder(v, v.lower()):
        return  # (nothing left after the punctuation: "Authorization: Bearer ........")
    if scheme == "basic":
        if _b64_placeholder(v) or _B64_TEXT.fullmatch(v) is None:
            return  # base64 of "username:password"; or not base64 at all: "basic functionality.0Cm…" is prose
        if _b64_creds(v) or _entropy_ok(v, 16):
            spans.add(s, s + len(v), "basic_auth", text)
        return
    if _entropy_ok(v, 12) or (len(v) >= 20 and not v.isalpha()):
        spans.add(s, s + len(v), "bearer_token", text)


def _auth_headers(text: str, low: str, spans: _Spans) -> None:
    for scheme in ("bearer", "basic"):
        i = low.find(scheme)
        while i >= 0:
            e = i + len(scheme)
            if (i == 0 or not (low[i - 1].isalnum() or low[i - 1] in "_-")) and e < len(low) and low[e] in " \t":
                vm = _CRED_CHARS.match(text, e + 1 if low[e + 1:e + 2] not in (" ", "\t") else e + 2)
                if vm is not None:
                    _credential_token(text, vm.start(), vm.group(), scheme, spans)
            i = low.find(scheme, e)


_B64_TEXT = _lazy(r"[A-Za-z0-9+/]+={0,2}")
_CRED_CHARS = _lazy(r"[A-Za-z0-9._~+/=\-]{8,}")


# ---- URLs and connection strings -------------------------------------------------------------
_URL_CRED = _lazy(r"([^\s:/?#@\"'`<>\[\]]{0,128}):([^\s/?#\"'`<>]{1,256})@(?=[\w\[.-])")
_KV_PAIR = _lazy(r";[A-Za-z][A-Za-z ]{0,30}=")
_DOC_HOST = _lazy(r"(?i)(?:[\w-]+\.)*example\.(?:com|org|net)(?![\w.-])")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_ORACLE = _lazy(r"(?:thin:@?|sqlplus\s+|(?<![\w/])[A-Za-z_][A-Za-z0-9_]{0,30}/)([^\s/@\"']{1,128})@(?=[\w\[.-])")


def _url_creds(text: str, spans: _Spans) -> None:
    placeholders: dict[str, bool] = {}  # a password repeated in many URLs is judged once
    i = text.find("://")
    while i >= 0:
        m = _URL_CRED.match(text, i + 3)
        if m is not None:
            pw = m.group(2)
            if pw.lower() == "x-oauth-basic":
                # GitHub's 'https://<token>:x-oauth-basic@github.com': the token is the user, the
                # password a fixed word
                user = m.group(1)
                if len(user) >= 20 and not _url_placeholder(user):
                    spans.add(m.start(1), m.end(1), "url_credentials", text)
                i = text.find("://", m.end())
                continue
            placeholder = placeholders.get(pw)
            if placeholder is None:
                placeholder = placeholders[pw] = _url_placeholder(pw)
            if not placeholder and ";" in pw and _KV_PAIR.search(pw):
                placeholder = True  # 'host:1433;database=db;user=a@b': a port and JDBC pairs, not user:password
            if not placeholder and not m.group(1) and ":" in pw:
                placeholder = True  # 'cvs://:pserver:anoncvs@host': a protocol and a user, no password
            if not placeholder and _DOC_HOST.match(text, m.end()) and not _pw_shape(pw):
                placeholder = True  # 'https://abc:xyz@example.com': a host kept for examples (RFC 2606)
            if not placeholder:
                a = i
                while a > 0 and text[a - 1] in _SCHEME_CHARS and i - a < 30:
                    a -= 1
                scheme = text[a:i].lower()
                kind = "url_credentials" if scheme in _WEB_SCHEMES else "connection_string"
                spans.add(m.start(2), m.end(2), kind, text)
            i = text.find("://", m.end())
        else:
            i = text.find("://", i + 3)


_WEB_SCHEMES = frozenset("http https ftp ftps sftp ws wss git ssh smtp smtps imap imaps".split())


def _url_placeholder(pw: str) -> bool:
    if "%" in pw and not pw.startswith("%("):
        pw = unquote(pw)  # a URL's user info is percent-encoded: 'a%20secret' is 'a secret'
    lp = pw.lower()
    if lp in _PLACEHOLDER_WORDS or lp in ("pass", "pw", "pwd", "passwd", "password", "secret", "foobared", "example", "changeme", "xxx"):
        return True
    if pw.startswith(("$", "{", "<", "%(", "[REDACTED", "*")) or _placeholder(pw, lp):
        return True
    return len(set(pw)) <= 1 or lp in _DEFAULT_PASSWORDS or _low_information(pw)


def _oracle(text: str, spans: _Spans) -> None:
    for m in _ORACLE.finditer(text):
        pre = text[max(0, m.start() - 40):m.start()].lower()
        if "jdbc:oracle" not in pre and "sqlplus" not in pre and "thin:" not in m.group(0) and "sqlplus" not in m.group(0):
            continue
        pw = m.group(1)
        if not _url_placeholder(pw) and len(pw) >= 3:
            spans.add(m.start(1), m.end(1), "connection_string", text)


# ---- CLI arguments -------------------------------------------------------------------------
_CLI_P = _lazy(r"(?<![\w-])-p(?:[ \t]+|(?=['\"])|(?=[^\s-]))(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_TOOLS_GLUED = ("mysql", "mysqldump", "mariadb", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "7z", "7za", "rar", "unrar")
_CLI_TOOLS_SPACED = ("sshpass", "psexec", "login", "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "sqlcmd", "bcp", "az", "ldapsearch", "ldapmodify", "ldapadd", "smbclient", "mount", "cifs")
_CLI_USERPASS = _lazy(r"(?<![\w-])(?:-u|--user|-U)(?:[ \t]+|=)(['\"]?)([^\s:'\"%]{0,64})([:%])(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_KEY_AS_USER = _lazy(r"(?<![\w-])(?:-u|--user)(?:[ \t]+|=)(['\"]?)([^\s:'\"%]{8,64}):\1(?=\s|$)")
_CLI_REDIS = _lazy(r"(?<![\w-])(?:-a|--pass)[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_ECHO = _lazy(r"\becho[ \t]+(?:-n[ \t]+)?(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"|]{1,200})[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\w+[ \t]+)*-S\b|[^\n|]*--password-stdin|passwd\b|(?:sudo[ \t]+)?chpasswd|[^\n|]*\bsudo\b[^\n|]*-S\b)")
_CLI_HTPASSWD = _lazy(r"\bhtpasswd[ \t]+(?:-\w+[ \t]+)*-\w*b\w*[ \t]+(?:-\w+[ \t]+)*\S+[ \t]+\S+[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
_CLI_LDAP_W = _lazy(r"(?<![\w-])-w[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"]{1,200})")
# PowerShell's plain-text secure string: the literal is the password whatever it is assigned to
_PS_SECURE = _lazy(r"(?i)convertto-securestring[ \t]+(?:-string[ \t]+)?(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}')")
_CLI_NETUSER = _lazy(r"\bnet[ \t]+user[ \t]+(\"[^\"\n]+\"|\S+)[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"/*]{1,200})")
# net use Z: \\server\share /user:DOMAIN\alice <password>: the password follows the user
_CLI_NETUSE = _lazy(r"(?i)\bnet[ \t]+use[ \t][^\n]*?/user:(?:\"[^\"\n]+\"|\S+)[ \t]+(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^\s'\"/*]{1,200})")


def _unquote(v: str, s: int) -> tuple[str, int]:
    if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
        return v[1:-1], s + 1
    return v, s


def _line_of(text: str, pos: int) -> str:
    lo = max(0, pos - 300)
    a = text.rfind("\n", lo, pos) + 1
    if a == 0:
        a = lo
    b = text.find("\n", pos, pos + 300)
    return text[a:b if b >= 0 else min(len(text), pos + 300)]


def _cli(text: str, low: str, spans: _Spans) -> None:
    if "-p" in text or "-P" in text:
        for m in _CLI_P.finditer(text):
            bol = low.rfind("\n", max(0, m.start() - 200), m.start()) + 1
            head = low[max(bol, m.start() - 200):m.start()]
            bar = head.rfind("|")
            if bar >= 0:
                head = head[bar + 1:]
            glued = text[m.start() + 2] not in " \t"
            words = set(_SPLIT.split(head))
            ok = False
            if glued and words.intersection(_CLI_TOOLS_GLUED):
                ok = True
            elif not glued and (words.intersection(_CLI_TOOLS_SPACED) or _USER_FLAG.search(head)):
                ok = True
            if not ok:
                continue
            v, s = _unquote(m.group(1), m.start(1))
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text)
    if "-u" in text or "--user" in text or "-U" in text:
        for m in _CLI_USERPASS.finditer(text):
            v, s = _unquote(m.group(4), m.start(4))
            if m.group(2).startswith("<") or v.startswith("//"):
                continue  # <user:password>; a URL after -U ("add-apt-repository -U http://host/repo")
            if m.group(3) == "%" and "smbclient" not in _line_of(low, m.start()) and "rpcclient" not in _line_of(low, m.start()):
                continue
            if _cli_value_ok(v) and not _url_placeholder(v):
                spans.add(s, s + len(v), "cli_password", text)
        for m in _CLI_KEY_AS_USER.finditer(text):
            v = m.group(2)  # curl -u "<api key>:" — the key is the user name, the password empty
            if _cli_value_ok(v) and (_pw_shape(v) or _entropy_ok(v)):
                spans.add(m.start(2), m.end(2), "cli_password", text)
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
            if m.group(0).endswith("chpasswd") and ":" in v:
                user, _, pw = v.partition(":")  # chpasswd reads "user:password" lines
                v, s = pw, s + len(user) + 1
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text)
    if " -w " in text and "ldap" in low:
        for m in _CLI_LDAP_W.finditer(text):  # OpenLDAP tools: -w is the bind password (-p the port)
            if "ldap" in _line_of(low, m.start()):
                v, s = _unquote(m.group(1), m.start(1))
                if _cli_value_ok(v):
                    spans.add(s, s + len(v), "cli_password", text)
    if "securestring" in low:
        _argument_values(text, _PS_SECURE, 1, "password", spans)
    if "htpasswd" in text:
        _argument_values(text, _CLI_HTPASSWD, 1, "cli_password", spans)
    if "net user" in low:
        _argument_values(text, _CLI_NETUSER, 2, "cli_password", spans)
    if "net use " in low:
        _argument_values(text, _CLI_NETUSE, 1, "cli_password", spans)


def _argument_values(text: str, rx, group: int, kind: str, spans: _Spans) -> None:
    """Redact group `group` of every match of `rx`, unquoted, unless it is a placeholder."""
    for m in rx.finditer(text):
        v, s = _unquote(m.group(group), m.start(group))
        if _cli_value_ok(v):
            spans.add(s, s + len(v), kind, text)


def _cli_value_ok(v: str) -> bool:
    if len(v) < 3 or _MARK in v:
        return False
    lv = v.lower()
    if v.startswith(("$", "%", "<", "{", "-")) or lv in _PLACEHOLDER_WORDS:
        return False
    if _placeholder(v, lv):
        return False
    if v.isdigit() and len(v) < 6:
        return False
    return True


# ---- cookies ----------------------------------------------------------------------------------
_COOKIE_LINE = _lazy(r"(?i)(?:set-)?cookie[\"']?\s*[:=]\s*|--cookie[ \t=]+|(?<![\w-])-b[ \t]+['\"]")
_COOKIE_PAIR = _lazy(r"[ \t]*([A-Za-z0-9_.\-!#$%&*+^|~]{1,64})=([^;\s\"',]{1,2000})")
_SESSIONISH = _lazy(r"(?i)sess|sid$|^sid|token|auth|jwt|remember|login|csrf|xsrf|secret|ident|^_?sso|api_?key|credential|^__(?:secure|host)-")


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
_K8S_DATA = _lazy(r"(?m)^([ \t]*)(?:data|stringData):[ \t]*\r?\n")
# an item's value runs to its last character that is not a blank (a lazy "[^\r\n]*?" before "[ \t]*"
# tried every blank of a run followed by more text against the rest of the run: quadratic)
_K8S_ITEM = _lazy(r"([ \t]+)[\"']?[A-Za-z0-9_.\-]+[\"']?:[ \t]*([^\s#](?:[^\r\n]*[^ \t\r\n])?)[ \t]*\r?(?:\n|$)")
_K8S_JSON = _lazy(r"\"(?:data|stringData)\"\s*:\s*\{([^{}]{0,20000})\}")
_JSON_VAL = _lazy(r"\"[^\"]{1,200}\"\s*:\s*\"([^\"]{1,10000})\"")


_K8S_KIND = _lazy(r"(?im)^[ \t]*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?secret[\"']?[ \t]*,?[ \t]*\r?$")
_YAML_DOC = _lazy(r"(?m)^---[ \t]*\r?$")
_BLOCK_LINE = _lazy(r"([ \t]*)([^\r\n]*)\r?(?:\n|$)")


def _secret_documents(text: str):
    """(start, end) of each YAML document that is a Secret: a ConfigMap beside it is not one."""
    if _K8S_KIND.search(text) is None and '"kind": "Secret"' not in text:
        return
    starts = [0] + [m.end() for m in _YAML_DOC.finditer(text)]
    ends = starts[1:] + [len(text)]
    for a, b in zip(starts, ends):
        if _K8S_KIND.search(text, a, b) or text.find('"kind": "Secret"', a, b) >= 0:
            yield a, b


def _k8s(text: str, spans: _Spans) -> None:
    for a, b in _secret_documents(text):
        for m in _K8S_DATA.finditer(text, a, b):
            _k8s_items(text, m, b, spans)
        for m in _K8S_JSON.finditer(text, a, b):
            for vm in _JSON_VAL.finditer(m.group(1)):
                v = vm.group(1)
                if len(v) >= 4 and not _is_reference(v, True):
                    st = m.start(1) + vm.start(1)
                    spans.add(st, st + len(v), "k8s_secret", text)


def _k8s_items(text: str, m, end: int, spans: _Spans) -> None:
    """The values of the items under one data:/stringData: key, block scalars (| and >) too."""
    indent = len(m.group(1))
    pos = m.end()
    for _ in range(500):
        im = _K8S_ITEM.match(text, pos, end)
        if im is None or len(im.group(1)) <= indent:
            return
        v = im.group(2).strip("\"'")
        pos = im.end()
        if v in ("|", ">", "|-", ">-", "|+", ">+"):
            pos = _block_scalar(text, pos, end, len(im.group(1)), spans)
        elif len(v) >= 4 and not _is_reference(v, True):
            off = text.find(v, im.start(2))
            spans.add(off, off + len(v), "k8s_secret", text)


def _block_scalar(text: str, pos: int, end: int, indent: int, spans: _Spans) -> int:
    """Redact the lines of a block scalar (more indented than its key); return where it ends."""
    first = last = -1
    while pos < end:
        lm = _BLOCK_LINE.match(text, pos, end)
        if lm is None or lm.end() == pos or (lm.group(2) and len(lm.group(1)) <= indent):
            break
        if lm.group(2):
            first = lm.start(2) if first < 0 else first
            last = lm.end(2)
        pos = lm.end()
    if first >= 0:
        spans.add(first, last, "k8s_secret", text)
    return pos


# ---- Terraform variable defaults ----------------------------------------------------------------
# variable "db_password" { type = string  default = "…" }: the label is the variable's quoted name
# and the value its default a few lines further down, so neither the label scan nor a token's
# context window sees them as a pair. A variable Terraform is told is `sensitive` holds a secret
# whatever its name.
_TF_VARIABLE = _lazy(r'variable[ \t]+"([A-Za-z0-9_.-]{1,64})"[ \t]*\{')
_TF_DEFAULT = _lazy(r'(?<![\w.])default[ \t]*=[ \t]*"((?:[^"\\\n]|\\.){1,200})"')
_TF_SENSITIVE = _lazy(r'(?<![\w.])sensitive[ \t]*=[ \t]*true\b')
_TF_REACH = 800  # a variable block is a few lines; its default is looked for this far at most


def _terraform(text: str, spans: _Spans) -> None:
    for m in _TF_VARIABLE.finditer(text):
        stop = text.find("variable", m.end(), m.end() + _TF_REACH)
        stop = stop if stop >= 0 else min(len(text), m.end() + _TF_REACH)
        dm = _TF_DEFAULT.search(text, m.end(), stop)
        if dm is None:
            continue
        info = _label_info(m.group(1))
        if info[0] == _NOT:
            if _TF_SENSITIVE.search(text, m.end(), stop) is None:
                continue
            info = (_SEC,) + info[1:]
        _check_value(text, info, "=", True, dm.group(1), dm.start(1), spans)


# ---- passwords in prose -----------------------------------------------------------------------
_PROSE_KW = _lazy(
    r"(?:passwords?|passwort(?:e|s)?|passe|passord(?:et)?|kennwort|pw|pwd|pass|passphrase|passcode|"
    r"mot de passe|mdp|contraseña|contrasena|clave|lösenord(?:et)?|losenord(?:et)?|adgangskode(?:n)?|"
    r"kodeord(?:et)?|wachtwoord|senha|salasana|hasło|haslo|heslo|jelszó|jelszo)(?![a-z0-9_])")
_PAIR_KW = _lazy(r"(?<![a-z0-9_])(?:login|logon|wi-?fi|wlan|vpn|creds|credentials|zugang(?:sdaten)?|innlogging|pålogging|brukernavn|benutzer(?:name)?|username|user|bruker|nas|router|account|konto|identifiants|usuario)(?![a-z0-9_])")
_CONNECT = frozenset(
    "is er ist est es är er lautet was war var blev wurde = : to til på på: now nå jetzt ahora è é je jest "
    "maintenant nu changed set reset new nytt neues nouveau nuevo nya nye temp temporary "
    "midlertidig vorläufiges provisoire default -> => - – — →".split())
_STOP_AFTER = frozenset("like such e.g. eg. example z.b. zb som wie comme como zoals".split())
_STRONG_SYM = frozenset("!@#$%^&*?~+=|{}[]()<>;,")


def _yaml_tag(tok: str) -> bool:
    """'!secret', '!vault', '!env_var', '!Ref': a YAML tag names where the value comes from."""
    return tok[:1] == "!" and tok[1:].replace("_", "").isalpha()


def _pw_shape(tok: str) -> int:
    """0 = not a password, 1 = letters+digits, 2 = letters+digits+symbols / passphrase."""
    if tok.endswith("**"):
        tok = tok.rstrip("*")  # Markdown bold closing: "… a password change**"
    n = len(tok)
    if n < 6 or n > 64 or _yaml_tag(tok):
        return 0
    if "://" in tok or "@" in tok[1:-1] and "." in tok.split("@")[-1] or tok.endswith(":"):
        return 0
    if tok.startswith(("#", "@", "/", "~/", "./", "$", "%", "<", "{{", "[REDACTED", "http")):
        return 0
    if "\\" in tok and _ROFF.search(tok):
        return 0  # a manual page's markup: "prompt\\&.", "\\-\\-password"
    if tok[0] in "*_" and tok.strip("*_").replace("_", "").isalpha():
        return 0  # Markdown or reStructuredText emphasis: "*Type*", "*makes", "*codec_errors*"
    if tok[0] == "{" and (tok[1:2].isalnum() or tok[1:2] in "_}"):
        return 0  # an f-string's or a format's field: "{password!r}", "{0}"
    if tok[0] == "&" and tok[1:6].lower().startswith(("lt;", "#x3c;", "#60;")):
        return 0  # an HTML-escaped <placeholder>
    if _DATEISH.match(tok) or _CODE_TOKEN.search(tok) or module_attribute(tok):
        return 0  # (a date, a version, code; "win32typing.PyHANDLE" after '->')
    letters = digits = syms = 0
    for ch in tok:
        if ch.isalpha():
            letters += 1
        elif ch.isdigit():
            digits += 1
        elif ch in _STRONG_SYM:
            syms += 1
    if tok[-1] == "?" and tok.rstrip("?").replace("-", "").isalpha():
        return 0  # a question: "(file? command-line? env. variable?)"
    if not digits and (tok.count("(") != tok.count(")") or tok.count("[") != tok.count("]")):
        return 0  # a word and its punctuation ("digest)#", "options])#"), not a generated password
    if _EXPRESSION.search(tok) and not _nested(tok):
        return 0  # a piece of an expression: "Piecewise((1", "1/3)*piecewise(x", "x^2)/x"
    if not letters or tok.rstrip("!?.").isalpha():
        # a word ending a sentence ("did not match!", "you've just created?"), unless random
        return 1 if _random_letters(tok) else 0
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


# v8::Object, GetCurrent(), res.writeHead(200, utf8_to_utf16_dup(value, target[1024, pw[:-1]
_CODE_TOKEN = _lazy(r"::|\(\)|\.[A-Za-z_]\w*\(|[A-Za-z0-9]_\w*\(|\w\[[-:\d]+\]?$|\(\?[:i!=<]|\)\|\(")
# calls nested in calls or an operator beside a parenthesis: with unmatched parentheses, code cut
# at a space ("Piecewise((1", "Sum(Piecewise((1", "x^2)/x"), where "Welcome(2024" is a password
_EXPRESSION = _lazy(r"[A-Za-z]{3}\((?:\(|[A-Za-z]{3})|[)\]][*/^+]|[*/^+]\(")


def _nested(tok: str) -> bool:
    """Parentheses that open before they close and all close: "Welcome(2024)", not "f((1"."""
    depth = 0
    for c in tok:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


_ROFF = _lazy(r"\\(?:[&-]|f[BIRP]|\*\()")  # (not a Windows path's "\\fx166.exe")
_DATEISH = _lazy(r"^(?:\d{1,4}[-./:]\d{1,2}[-./:]\d{1,4}|v?\d+(?:\.\d+)+|\d+(?:[.,]\d+)*%?$|[A-Z]{2,}[-#]\d+$)")
_WORD = _lazy(r"\S+")
_TRIM_L = "([\"'`<*_"
_TRIM_R = ")]\"'`>*_.,:;"


def _prose_kw(text: str, low: str, i: int, spans: _Spans, words: dict) -> None:
    """A password word found at i: if it is a whole word, look for the password after it."""
    if i > 0 and (low[i - 1].isalnum() or low[i - 1] == "_"):
        return
    m = _PROSE_KW.match(low, i)
    if m is None:
        return
    e = m.end()
    if e < len(low) and low[e] not in " \t:=\u00a0" and not (low[e] in ".,;!?" and e + 1 < len(low) and low[e + 1] in " \t"):
        return
    if e < len(low) and low[e] in ":=":
        e += 1  # a glued 'password=%DB_PW%': the value is what follows the sign, not '=%DB_PW%'
    elif e - i == 4 and low[i:e] == "pass":
        # 'pass' is a verb too ("pass --debug to configure", "pass session to X"): it introduces
        # a password glued to ':' / '=', before 'is', or as "pass for the NAS: …"
        w = _WORD.match(low, e + 1) if e < len(low) else None
        if w is None or w.group() not in _PASS_NEXT:
            return
    _prose_after(text, low, e, spans, words)


_LOGIN_IS = frozenset("is er ist är est es".split())  # "my login is <user> / <password>"
_PASS_NEXT = frozenset("is er ist est es är was war var blev wurde lautet = : -> => "
                       "for til fürs für pour para voor för på".split())


def _pairs(text: str, low: str, spans: _Spans) -> None:
    """'login for the NAS: admin / S3cret!', 'Wifi: Hytta-5G / Winter394@@'."""
    j = low.find(" / ")
    while j >= 0:
        nxt = low.find(" / ", j + 3)
        bol = low.rfind("\n", max(0, j - 80), j) + 1
        if _PAIR_KW.search(low, max(bol, j - 80), j) is None and not _email_before(low, bol, j):
            j = nxt
            continue
        j, nxt = nxt, j
        wm = _WORD.match(text, nxt + 3)
        if wm is None:
            continue
        tok, s = _trim(wm.group(), wm.start())
        shape = _pw_shape(tok)
        if shape == 2 or (shape == 1 and _login_pair(low, bol, nxt, tok)):
            spans.add(s, s + len(tok), "password", text)


def _email_before(low: str, bol: int, j: int) -> bool:
    """An e-mail address right before the slash: "Netflix: ola@example.com / …" is a login."""
    at = low.rfind("@", bol, j)
    return at > 0 and low[at - 1].isalnum() and "." in low[at:j] and not any(c.isspace() for c in low[at:j])


def _login_pair(low: str, bol: int, j: int, pw: str) -> bool:
    """': admin / …' or 'login is admin / …' — a user name alone between the colon (or 'is') and
    the slash makes the pair a login, so a letters-and-digits password ('Hytta2024') counts there,
    not in 'read / write2'; unless it is the user's name or a placeholder word with digits after
    it ('demo / demo1234')."""
    c = low.rfind(":", bol, j)
    user = low[c + 1:j].strip()
    if c < 0 or not user or " " in user or "\t" in user:
        words = low[bol:j].split()
        if len(words) < 3 or words[-2] not in _LOGIN_IS:
            return False
        user = words[-1]
    stem = pw.lower().rstrip("0123456789!")
    return stem != user and stem not in _PLACEHOLDER_WORDS and stem not in _DEFAULT_PASSWORDS


def _trim(tok: str, s: int) -> tuple[str, int]:
    lead = ""
    while tok and tok[0] in _TRIM_L:
        lead += tok[0]
        tok = tok[1:]
        s += 1
    # keep symbols that belong to the password; drop quotes, brackets and sentence punctuation
    while tok:
        c = tok[-1]
        if c in "*_":
            if tok[-2:] == c + c:
                tok = tok.rstrip(c)  # "**… as an admin**": Markdown bold
                continue
            if c not in lead:
                break  # "NordlysHytta23*" keeps its star; "*bold*" loses it
        elif c in ".,:;":
            if len(tok) > 1 and tok[-2] in "!?#$%&*@":
                tok = tok[:-1]
                continue
        elif c not in _TRIM_R:
            break
        tok = tok[:-1]
    return tok, s


def _judge_word(raw: str, start: int) -> tuple:
    """(stop, token, its start, its shape, not a password after all, a connector, a copula, a type) for one word
    after a password word: the same whichever password word before it is being followed."""
    if _MARK in raw:
        return (True, "", start, 0, False, False, False, False)  # already redacted here
    lw = raw.lower().strip("\"'`*_")
    if lw in _STOP_AFTER or raw.startswith("--"):
        return (True, "", start, 0, False, False, False, False)  # ("--oracle-hostname=…": a command's next option)
    tok, s = _trim(raw, start)
    shape = _pw_shape(tok) if tok else 0
    if not shape and tok and raw[0] in "\"'`" and _QUOTED_WORD.fullmatch(raw) and tok.isalpha() and 4 <= len(tok) <= 40:
        shape = _QUOTED  # "the default password is 'blooberry'": quotes mark a literal value
    # a URL, a number, a file name; or a placeholder ("MyExamplePassword1!"), a default ('admin')
    ltok = tok.lower()
    bad = bool(shape) and (_PROSE_BAD.search(tok) is not None or _PH_INNER_RE.search(ltok) is not None
                           or ltok in _DEFAULT_PASSWORDS or ltok in _PLACEHOLDER_WORDS
                           or (shape == _QUOTED and (ltok in _NOT_A_VALUE or _placeholder(tok, ltok))))
    connector = lw in _CONNECT or lw.endswith(":") or raw.endswith(":") or lw in ("=", ":")
    copula = lw in _PASS_NEXT  # ("is", "=", ":" alone; not another pair's "host:")
    typed = _ANNOTATION.fullmatch(tok) is not None  # (a type after a name: a signature, not a value)
    return (False, tok, s, shape, bad, connector, copula, typed)


# a type written after a name in a signature ("password: str", "token: Optional[str]")
_ANNOTATION = _lazy(r"(?:str|int|bytes|bool|float|string|String|number|boolean|SecretStr)|"
                    r"(?:Optional|List|Dict|Union|Callable|Sequence|Iterable|Mapping|Literal|list|dict|tuple)\[.*")
_QUOTED = 3  # a quoted word: a password only right after "is" / ":"
_QUOTED_WORD = _lazy(r"(['\"`])[^'\"`\s]+\1[.,;!)]*")
# words a sentence puts in quotes after "password is" that are not the password
_NOT_A_VALUE = frozenset("required optional empty blank hidden invalid incorrect wrong correct missing "
                         "null none unset masked encrypted secret password sample".split())


def _prose_after(text, low, pos, spans, words: dict) -> None:
    end = min(len(low), pos + 90)
    eol = low.find("\n", pos, end)
    if eol >= 0:
        end = eol
    eol = low.find("\r", pos, end)
    if eol >= 0:
        end = eol
    after_connector = True  # right after the keyword counts as a connector
    after_copula = pos > 0 and low[pos - 1] in ":="
    count = 0
    for wm in _WORD.finditer(text, pos, end):
        key = wm.span()
        judged = words.get(key)
        if judged is None:
            judged = words[key] = _judge_word(wm.group(), key[0])
        stop, tok, s, shape, bad, connector, copula, typed = judged
        if stop or (typed and after_copula):
            return  # (a signature: "password: str, method: str = 'scrypt'" gives no value)
        if shape == 2 or (shape == 1 and after_connector) or (shape == _QUOTED and after_copula):
            if not bad:
                spans.add(s, s + len(tok), "password", text)
            return
        count += 1
        if count > 8:
            return
        after_connector, after_copula = connector, copula


# a URL, a number, a file name, SOPS ciphertext; or code: a quote inside the word ('$p="",$q="0"') or an
# interpolation opener ('$(dirname', '#{password}', '${PW}'): prose never writes those
_PROSE_BAD = _lazy(r"^\w+=|^ENC\[|^\d+(?:[.,:]\d+)+$|\.(?:com|org|net|io|no|de|txt|md|py|json)$|.[\"'`]|[$#@%]\{|\$\("
                    r"|\w\($|^/?[A-Za-z][\w-]*>|\*\*\w")  # (a call: "SHA224Password()"; markup: "<code>!"; "**kwargs")


# ---- e-mail ---------------------------------------------------------------------------------
_EMAIL_RIGHT = _lazy(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])")
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


_PEM_BASE64 = _lazy(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}")
_VAULT_UNSEAL = _lazy(r"(?:[Uu]nseal [Kk]ey \d{1,2}: |vault operator unseal (?:-\S+ )*)([A-Za-z0-9+/]{20,}={0,2})")
# a call that takes a user and a password, the password written as a literal: .NET's
# NetworkCredential("user", "pw"), requests' auth=("user", "pw"), HTTPBasicAuth, smtp.login(user, "pw")
_CREDENTIAL_CALL = _lazy(
    r"""(?:NetworkCredential\(|DirectoryEntry\(\s*"[^"\n]*",|(?:HTTP(?:Basic|Digest|Proxy)Auth|BasicAuth|DigestAuth|"""
    r"""UsernamePasswordCredentials|PasswordAuthentication|\.login)\(|(?<![\w-])auth\s*=\s*[(\[])\s*"""
    r"""(?:"[^"\n]{0,100}"|'[^'\n]{0,100}'|[A-Za-z_][\w.]{0,60}(?:\[[^\]\n]{0,40}\])?)\s*,\s*"""
    r"""(["'])([^"'\n]{3,200})\1(?=\s*[,)\].])""")
_AUTH_ARG = _lazy(r"(?<![\w-])auth\s*=\s*[(\[]")
_CREDENTIAL_CALLS = ("Credential(", "DirectoryEntry(", "Auth(", ".login(", "Credentials(", "Authentication(")
# SQL: CREATE USER u IDENTIFIED BY 'pw', ALTER USER u IDENTIFIED BY pw, GRANT … TO u IDENTIFIED BY
# 'pw' (not BY VALUES '<hash>', not "the comment identified by `name`" in prose)
_IDENTIFIED_BY = _lazy(r"""(?i)\b(?:user|to)\s+[^\s;]{1,100}\s+identified\s+(?:with\s+\w+\s+)?by\s+(?!values\b|password\b)"""
                       r"""(?:(["'])([^"'\n]{3,128})\1|([^\s;'"`]{3,128}))""")
_WIFI_QR = _lazy(r"WIFI:(?:[A-Z]:(?:\\.|[^;\\\n]){0,64};){0,4}P:((?:\\.|[^;\\\n]){1,64})")
# New Relic keys end in their kind: a license key in NRAL, a mobile app token in -NRMA
_NEW_RELIC = _lazy(r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{36}NRAL|[A-Za-z0-9]{40,42}-NRMA)(?![A-Za-z0-9-])")
_BRAINTREE = _lazy(r"access_token\$(?:production|sandbox)\$([a-z0-9]{16}\$[a-f0-9]{32})(?![A-Za-z0-9])")
_WEBHOOK_PATH = _lazy(r"(?i)://[^\s/\"'<>]{1,100}/(?:[a-z0-9_-]{1,40}/){0,3}(?:webhooks?|webhookb2|hooks)/(?=[A-Za-z0-9_-])")
_URL_PATH_REST = _lazy(r"[^\s\"'`<>?#)\]]{0,400}")
_PATH_SEGMENT = _lazy(r"[A-Za-z0-9_-]+")
# Shapes too short for the token scan (which starts at 20 characters), found by their own gate.
_SLACK_LEGACY = _lazy(r"(?<![A-Za-z0-9_-])xox[ar]-(?:\d-)?[0-9A-Za-z]{8,48}(?![A-Za-z0-9_-])")
_SUMO_ACCESS_ID = _lazy(r"(?i)sumo[a-z]*[_.-]?access[_.-]?id[\"']?\s*[:=]\s*[\"']?(su[A-Za-z0-9]{12})(?![A-Za-z0-9])")
_DATAFACTORY_SHIR = _lazy(r"IR@[0-9a-zA-Z-]{36}@[^@\s]{1,100}@[0-9a-zA-Z=-]{0,100}@[A-Za-z0-9+/=]{44}")
# Jenkins credentials.xml keeps secrets encrypted as {AQAAAB…}: the master key decrypts them.
_JENKINS_SECRET = _lazy(r"\{[^{}\n]{0,40}?(AQAAAB[^{}\n]{4,600}?)\}")
_BUNDLER = _lazy(r"(?<![A-Za-z0-9_])BUNDLE_[A-Z0-9_]+__[A-Z0-9]+(?![A-Za-z0-9_])")
_PGPASS = _lazy(r"(?m)^[ \t]*[A-Za-z0-9_.*\[\]:-]{1,253}:(?:\d{1,5}|\*):[^:\s]{1,63}:[^:\s]{1,63}:([^\s]{1,200})[ \t]*\r?$")


# ---- driver -----------------------------------------------------------------------------------
def _collect(text: str, strip_emails: bool) -> list[tuple[int, int, str]]:
    if not _READY:
        _init()
    spans = _Spans()
    low = _lower(text)
    skip: list = []
    if "-----" in text or "PuTTY" in text or "---- BEGIN" in text:
        _private_keys(text, spans)
        skip.extend((s, e) for s, e, _ in spans.items)
        _public_blocks(text, skip)
        skip.sort()
    _tokens(text, low, spans, skip)
    _keywords(text, low, spans, skip)
    # (a one-character look first where the longer trigger is rare: it is a memchr, where a
    # search for a word of two or more characters costs about ten times as much)
    if "/" in text and " / " in text:
        _pairs(text, low, spans)
    if "app" in low and "pass" in low:
        _app_passwords(text, low, spans)
    if "|" in text and ("-|" in text or "- |" in text or ":|" in text):
        for info, s, e in markdown_cells(text, lambda hb, he: _STEM.search(low, hb, he) is not None, _column_label):
            _cell(text, info, s, e, spans)
    if "," in text and "pass" in low:
        _csv_exports(text, low, spans)
    if "b" in low and ("bearer" in low or "basic" in low):
        _auth_headers(text, low, spans)
    if "@" in text:
        if "://" in text:
            _url_creds(text, spans)
        if "sqlplus" in low or "jdbc:oracle" in low:
            _oracle(text, spans)
    if ("-" in text and " -" in text) or "net use" in low or ("|" in text and "echo" in text):
        _cli(text, low, spans)
        if " -b " in text:
            _cookies(text, spans)
    if "cookie" in low:
        _cookies(text, spans)
    if "BUNDLE_" in text:
        for m in _BUNDLER.finditer(text):  # Bundler's per-host credentials, "user:password"
            _value_after(text, low, m.start(), m.end(), (_PWD, "password", m.group(), False, m.group().lower()), spans)
    if "pgpass" in low or (":" in text and (":5432:" in text or ("*" in text and ":*:" in text))):
        for m in _PGPASS.finditer(text):
            v = m.group(1)
            if _cli_value_ok(v):
                spans.add(m.start(1), m.end(1), "password", text)
    if "kind" in low and "secret" in low:
        _k8s(text, spans)
    if "variable" in text and "default" in text:
        _terraform(text, spans)
    if "hook" in low:
        for m in _WEBHOOK_PATH.finditer(text):  # the URL is the credential: its random segments go
            for seg in _PATH_SEGMENT.finditer(text, m.end(), _URL_PATH_REST.match(text, m.end()).end()):
                if seg.end() - seg.start() >= 16 and _entropy_ok(seg.group(), 16):
                    spans.add(seg.start(), seg.end(), "webhook_url", text)
    if "xox" in text:
        for m in _SLACK_LEGACY.finditer(text):
            spans.add(m.start(), m.end(), "slack_token", text)
    if "sumo" in low:
        for m in _SUMO_ACCESS_ID.finditer(text):
            if _entropy_ok(m.group(1), 14):
                spans.add(m.start(1), m.end(1), "sumologic_access_id", text)
    if "LS0tLS1CRUdJTi" in text:  # base64 of "-----BEGIN": a PEM file put in an environment variable
        for m in _PEM_BASE64.finditer(text):
            if b"PRIVATE KEY" in _b64_head(m.group()):
                spans.add(m.start(), m.end(), "private_key", text)
    if "nseal" in text:  # HashiCorp Vault unseal keys: "Unseal Key 2: …", "vault operator unseal …"
        for m in _VAULT_UNSEAL.finditer(text):
            if _entropy_ok(m.group(1), 20):
                spans.add(m.start(1), m.end(1), "vault_unseal_key", text)
    if "(" in text and (any(c in text for c in _CREDENTIAL_CALLS) or ("auth" in text and _AUTH_ARG.search(text))):
        for m in _CREDENTIAL_CALL.finditer(text):
            v = m.group(2)
            if _cli_value_ok(v) and v.lower() not in _DEFAULT_PASSWORDS:
                spans.add(m.start(2), m.end(2), "password", text)
    if "identified" in low:
        for m in _IDENTIFIED_BY.finditer(text):
            g = 2 if m.group(2) is not None else 3
            v = m.group(g)
            if _cli_value_ok(v) and v.lower() not in _DEFAULT_PASSWORDS and (g == 2 or not v.isalpha()):
                spans.add(m.start(g), m.end(g), "password", text)
    if "WIFI:" in text:
        for m in _WIFI_QR.finditer(text):  # the text of a Wi-Fi QR code: WIFI:T:WPA;S:<net>;P:<password>;;
            if _cli_value_ok(m.group(1)):
                spans.add(m.start(1), m.end(1), "password", text)
    if "NRAL" in text or "-NRMA" in text:
        for m in _NEW_RELIC.finditer(text):
            spans.add(m.start(), m.end(), "new_relic_key", text)
    if "$" in text and ("$production$" in text or "$sandbox$" in text):
        for m in _BRAINTREE.finditer(text):  # PayPal Braintree: access_token$production$<id>$<hex>
            spans.add(m.start(1), m.end(1), "braintree_token", text)
    if "IR@" in text:
        for m in _DATAFACTORY_SHIR.finditer(text):  # Azure Data Factory: IR@<guid>@<factory>@<region>@<key>
            spans.add(m.start(), m.end(), "datafactory_shir_key", text)
    if "AQAAAB" in text:
        for m in _JENKINS_SECRET.finditer(text):
            spans.add(m.start(1), m.end(1), "jenkins_secret", text)
    if "code" in low or "pin" in low or "seed" in low or "rase" in low:  # (rase: phrase, frase)
        personal(text, low, spans)  # seed phrases, 2FA backup codes, PINs, door codes
    if strip_emails and "@" in text:
        _emails(text, spans)
    return spans.items


# ---- a secret found once is a secret everywhere in the document ---------------------------------
def _propagates(v: str) -> bool:
    """Only values a rule was sure of are searched for elsewhere: not words, defaults or filler."""
    if not 6 <= len(v) <= 4 * _MAX_VALUE or "\n" in v:
        return False
    if v.isalpha() and (v.islower() or v.isupper() or v.istitle()):
        return False  # a dictionary-like word ("Unicode" after ":param password:")
    return v.lower() not in _DEFAULT_PASSWORDS and not _code_name(v)  # (filler never became a span)


def _bounded(text: str, s: int, e: int) -> bool:
    """The copy at [s, e) is a whole token, not the middle of a longer word or token."""
    if s > 0 and text[s].isalnum() and (text[s - 1].isalnum() or text[s - 1] == "_"):
        return False
    return not (e < len(text) and text[e - 1].isalnum() and (text[e].isalnum() or text[e] == "_"))


# a copy this long, with a digit, is the secret even glued inside a longer word ('somSG.…where');
# a shorter one, or one of letters only ('IAmSensitive' in 'IAmSensitiveBytes'), only as a whole token
_GLUED_MIN = 12


def _everywhere(text: str, items: list) -> list:
    """Add every other copy of each redacted value ("wifi password: X ... connect with X"): a whole
    token, or any copy of a long one. Every value is looked for, however many a document holds
    (a mailbox, a long conversation): one Aho-Corasick pass over the text finds the copies of all
    of them at once, so the cost stays linear where a search per value would not."""
    values: dict[str, str] = {}
    for s, e, k in items:
        v = text[s:e]
        if v not in values and _propagates(v):
            values[v] = k
    if not values:
        return items
    import ahocorasick  # (C, linear time; imported only by a text that has a secret worth searching)

    automaton = ahocorasick.Automaton()
    for v in values:
        automaton.add_word(v, v)
    automaton.make_automaton()
    have = set(items)
    out = list(items)
    for end, v in automaton.iter(text):
        s, e = end + 1 - len(v), end + 1
        span = (s, e, values[v])
        if span in have:
            continue
        glued = len(v) >= _GLUED_MIN and not v.isalpha() and _HAS_DIGIT.search(v) is not None
        if glued or _bounded(text, s, e):
            have.add(span)
            out.append(span)
    return out


# ---- a way out of a false positive ---------------------------------------------------------------
ALLOW_MARKER = "secondbrain:allow"
# kinds found by labels, context and prose rather than by a vendor's or a structure's shape. An
# allow *pattern* may release only these: a vendor-shaped key, a private key or a structural token
# is redacted whatever the patterns say; only the inline marker, written on the very line, keeps
# one (and it is counted as "allowed"). Where spans overlap, a shape's name wins over these.
_RULE_KINDS = frozenset(("secret", "password", "api_token", "k8s_secret", "cli_password",
                         "connection_string", "url_credentials", "session_cookie", "bearer_token",
                         "basic_auth", "email", "seed_phrase", "recovery_code", "pin"))


def load_allow_patterns(path: str) -> list[re.Pattern]:
    """Compile an allow file: one regular expression a line; blank lines and '#' lines are skipped.

    A value the rules would redact stays when one of the patterns matches inside it (and is
    counted as "allowed"). Raises ValueError naming the file and line of a bad expression.
    """
    patterns = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            src = line.rstrip("\r\n")
            if not src.strip() or src.lstrip().startswith("#"):
                continue
            try:
                patterns.append(re.compile(src))
            except re.error as e:
                raise ValueError(f"{path}:{lineno}: bad allow pattern {src!r}: {e}") from None
    return patterns


def _allowed(text: str, s: int, e: int, kind: str, allow) -> bool:
    """Is the value at [s, e) released by the line's marker or by an allow pattern?"""
    bol = text.rfind("\n", 0, s) + 1
    eol = text.find("\n", s)
    if ALLOW_MARKER in text[bol:eol if eol >= 0 else len(text)]:
        return True
    if allow and kind in _RULE_KINDS:
        v = text[s:e]
        return any(p.search(v) for p in allow)
    return False


def _release(text: str, items: list, allow, counts) -> list:
    """Drop the allowed spans, counting each under "allowed" so nothing is let through silently."""
    if not allow and ALLOW_MARKER not in text:
        return items
    kept = []
    for s, e, k in items:
        if _allowed(text, s, e, k, allow):
            if counts is not None:
                counts["allowed"] += 1
        else:
            kept.append((s, e, k))
    return kept


def spans(text: str, *, strip_emails: bool = False, allow: Sequence[re.Pattern] | None = None,
          counts: Counter | None = None) -> list[tuple[int, int, str]]:
    """What scrubbing `text` replaces: sorted, non-overlapping (start, end, kind) spans, with
    released values counted under "allowed" in `counts`. (`scrub.document` cuts one set of
    spans, found over a whole document, back into the document's parts.)"""
    if not isinstance(text, str) or not text:
        return []
    items = _collect(text, strip_emails)
    if not items:
        return []
    items = _everywhere(text, items)
    return _release(text, _merge(items) if len(items) > 1 else items, allow, counts)


def _redact(text: str, strip_emails: bool, allow, counts) -> str:
    items = spans(text, strip_emails=strip_emails, allow=allow, counts=counts)
    return apply(text, items, counts) if items else text



def _merge(items: list) -> list:
    """Sorted, non-overlapping spans; where rules overlap, the vendor's name wins over "secret"."""
    items = sorted(items)
    merged = []
    cur_s, cur_e, cur_k = items[0]
    for s, e, k in items[1:]:
        if s <= cur_e:
            if e > cur_e:
                cur_e = e
            if cur_k in _RULE_KINDS and k not in _RULE_KINDS:
                cur_k = k
        else:
            merged.append((cur_s, cur_e, cur_k))
            cur_s, cur_e, cur_k = s, e, k
    merged.append((cur_s, cur_e, cur_k))
    return merged


def apply(text: str, merged: list, counts: Counter | None = None) -> str:
    """Replace each span with its marker, counting the kinds in `counts`."""
    out = []
    last = 0
    for s, e, k in merged:
        out.append(text[last:s])
        out.append("[REDACTED:" + k + "]")
        last = e
        if counts is not None:
            counts[k] += 1
    out.append(text[last:])
    return "".join(out)


def scrub_report(text: str, *, strip_emails: bool = False,
                 allow: Sequence[re.Pattern] | None = None) -> tuple[str, Counter]:
    """Return the scrubbed text and a Counter of redacted kinds (never the values).

    ``allow``: compiled patterns (see ``load_allow_patterns``); values they release, and values on
    a line marked ``secondbrain:allow``, stay in clear and are counted under "allowed".
    """
    counts: Counter = Counter()
    return _redact(text, strip_emails, allow, counts), counts


def scrub(text: str, *, strip_emails: bool = False, allow: Sequence[re.Pattern] | None = None) -> str:
    """Redact every secret the rules know; idempotent, never raises on any str."""
    return _redact(text, strip_emails, allow, None)

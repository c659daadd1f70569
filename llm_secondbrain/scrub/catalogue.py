"""The scrubber's knowledge, as data: what each rule looks for, where it may fire, and its examples.

Every rule has an id (shown by ``llm brain scrub --explain``), the kind of its marker
(``[REDACTED:<kind>]``), the lower-case keywords one of which a text must hold before the rule
is tried (a tuple inside ``keywords`` needs all of its words: the engine's prefilter is built
from these), and its examples: texts whose ⟦marked⟧ parts the rule redacts, and counter-examples
the scrubber leaves as they are. One test walks the catalogue and checks every example (see
``examples`` for how a template such as ``ghp_{alnum:36}`` is filled in).

Three sorts of rule:

* ``Shape``: a vendor's documented token, a literal prefix and the regular expression of the rest
  (``entropy``: the whole token must also look random, for short, common prefixes). The token
  scan classifies every long run of token characters by its first two characters against these.
* ``Pattern``: a regular expression whose group is the secret, kept only when every named
  validator (``filters.VALIDATORS``) accepts it.
* ``Reader``: structure read by code (a label and its value, a table's column, a command's
  arguments, a Kubernetes Secret): the rule names what the reader finds; the reader lives in the
  module that reads that structure, and the engine runs it when the keywords allow.

Below the rules, the vocabulary the readers and filters share: label words, placeholder words,
documented default passwords, services, schemes, the words of prose.
"""
from __future__ import annotations

from dataclasses import KW_ONLY, dataclass


@dataclass(frozen=True)
class Rule:
    id: str
    kind: str
    _: KW_ONLY
    keywords: tuple = ()  # lower-case words, one of which the text must hold (a tuple: all of them)
    examples: tuple[str, ...] = ()  # texts whose ⟦marked⟧ parts this rule redacts (templates)
    counter: tuple[str, ...] = ()  # texts that stay as they are
    optional: str = ""  # the option that turns the rule on ("strip_emails"), or "" for always


@dataclass(frozen=True)
class Shape(Rule):
    prefixes: tuple[str, ...]
    body: str
    entropy: bool = False


@dataclass(frozen=True)
class Pattern(Rule):
    pattern: str
    group: int = 0
    validators: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reader(Rule):
    pass


# --------------------------------------------------------------------------------------------
# Vendor shapes. Sources: the providers' own token-format documentation (GitHub, GitLab, Slack,
# Stripe, OpenAI, Anthropic, Google, AWS, npm, PyPI, Hugging Face, ...); the prefixes are public.
# Where two shapes share their first two characters, the longer pattern is tried first.
# --------------------------------------------------------------------------------------------
SHAPES: tuple[Shape, ...] = (
    # cloud
    Shape("aws-access-key-id", "aws_access_key_id", ("AKIA", "ASIA", "ABIA", "ACCA"), r"[A-Z0-9]{16}(?![A-Za-z0-9])",
          examples=(
              "[10:02] Ola: ⟦AKIA{upper:16}⟧ (don't paste it in #general pls)",
              "export SOME_VAR='⟦AKIA{upper:16}⟧'\nPORT=8080",
              '[default]\naws_access_key_id = ⟦AKIA{upper:16}⟧\naws_secret_access_key = {b64:40}\nregion = eu-north-1',
              'aws configure set aws_access_key_id ⟦AKIA{upper:16}⟧\naws configure set aws_secret_access_key {b64:40}',
              'provider "aws" {\n  access_key = "⟦AKIA{upper:16}⟧"\n  secret_key = "{b64:40}"\n}',
              'aws_access_key_id = ⟦AKIA{upper:16}⟧',
          ), counter=(
            'the sample key AKIAIOSFODNN7EXAMPLE',
        )),
    Shape("google-api-key", "google_api_key", ("AIza",), r"[0-9A-Za-z_-]{35}", examples=(
        "[10:02] Ola: ⟦AIza{url:35}⟧ (don't paste it in #general pls)",
        "export SOME_VAR='⟦AIza{url:35}⟧'\nPORT=8080",
        'maps: ⟦AIza{url:35}⟧',
    )),
    Shape("google-oauth-client-secret", "google_oauth_client_secret", ("GOCSPX-",), r"[A-Za-z0-9_-]{24,40}",
        examples=(
            "[10:02] Ola: ⟦GOCSPX-{url:28}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦GOCSPX-{url:28}⟧'\nPORT=8080",
        )),
    Shape("google-oauth-token", "google_oauth_token", ("ya29.",), r"[0-9A-Za-z_-]{20,}"),
    Shape("google-refresh-token", "google_refresh_token", ("1//0",), r"[0-9A-Za-z_-]{30,}"),
    Shape("digitalocean-token", "digitalocean_token", ("dop_v1_", "doo_v1_", "dor_v1_"), r"[a-f0-9]{64}",
        examples=(
            "[10:02] Ola: ⟦dop_v1_{hex:64}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦dop_v1_{hex:64}⟧'\nPORT=8080",
        )),
    Shape("heroku-api-key", "heroku_api_key", ("HRKU-",), r"[A-Za-z0-9_-]{30,}",
        examples=(
            "[10:02] Ola: ⟦HRKU-AA{url:58}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦HRKU-AA{url:58}⟧'\nPORT=8080",
        )),
    Shape("amazon-mws-token", "amazon_mws_token", ("amzn.mws.",),
          r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
          examples=(
              'MWS_AUTH_TOKEN=⟦amzn.mws.{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}⟧',
          )),
    Shape("aws-appsync-key", "aws_appsync_key", ("da2-",), r"[a-z0-9]{26}(?![A-Za-z0-9])",
          examples=('x-api-key: ⟦da2-{lower:26}⟧',)),
    Shape("kolide-api-key", "kolide_api_key", ("k2sk_v1_",), r"[0-9A-Za-z]{24}(?![A-Za-z0-9])",
          examples=('⟦k2sk_v1_{alnum:24}⟧',)),
    Shape("alibaba-access-key", "alibaba_access_key", ("LTAI",), r"[A-Za-z0-9]{12,24}(?![A-Za-z0-9])", entropy=True),
    Shape("tencent-secret-id", "tencent_secret_id", ("AKID",), r"[A-Za-z0-9]{32}(?![A-Za-z0-9])", entropy=True),
    Shape("flyio-token", "flyio_token", ("fm2_", "fm1a_", "fm1r_"), r"[A-Za-z0-9+/=_-]{40,}"),
    Shape("flyio-org-token", "flyio_token", ("fo1_",), r"[A-Za-z0-9_-]{30,}"),
    Shape("supabase-token", "supabase_token", ("sbp_",), r"[a-f0-9]{40}"),
    Shape("supabase-secret-key", "supabase_secret_key", ("sb_secret_",), r"[A-Za-z0-9_-]{20,}"),
    Shape("databricks-token", "databricks_token", ("dapi",), r"[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])",
        examples=(
            "[10:02] Ola: ⟦dapi{hex:32}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦dapi{hex:32}⟧'\nPORT=8080",
        )),
    Shape("clickhouse-secret", "clickhouse_secret", ("4b1d",), r"[A-Za-z0-9]{38}(?![A-Za-z0-9])", entropy=True,
    examples=('pasted from the console:\n⟦4b1d{alnum:38}⟧\n',)),
    Shape("scalingo-token", "scalingo_token", ("tk-us-",), r"[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])",
    examples=('pasted from the console:\n⟦tk-us-{alnum:48}⟧\n',)),
    Shape("tailscale-key", "tailscale_key", ("tskey-",), r"[a-z]{3,10}-[A-Za-z0-9_-]{20,}",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and napi_{alnum:64} and PMAT-{alnum:26} and RGAPI-{lower:8}-{lower:27} and zpka_{alnum:32}_{hex:8} and wandb_v1_{alnum:77} and cog_{b32:52} and ⟦tskey-secret-{alnum:30}⟧ and xoxc-123456789012-123456789012-123456789012-{hex:64}',
        'pasted from the console:\n⟦tskey-auth-{alnum:12}CNTRL-{alnum:33}⟧\n',
    )),
    Shape("cockroachdb-api-key", "cockroachdb_api_key", ("CCDB1_",), r"[A-Za-z0-9]{22}_[A-Za-z0-9]{40}",
    examples=(
        '⟦CCDB1_{alnum:22}_{alnum:40}⟧ and napi_{alnum:64} and PMAT-{alnum:26} and RGAPI-{lower:8}-{lower:27} and zpka_{alnum:32}_{hex:8} and wandb_v1_{alnum:77} and cog_{b32:52} and tskey-secret-{alnum:30} and xoxc-123456789012-123456789012-123456789012-{hex:64}',
    )),
    Shape("neon-api-key", "neon_api_key", ("napi_",), r"[A-Za-z0-9]{64}(?![A-Za-z0-9])",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and ⟦napi_{alnum:64}⟧ and PMAT-{alnum:26} and RGAPI-{lower:8}-{lower:27} and zpka_{alnum:32}_{hex:8} and wandb_v1_{alnum:77} and cog_{b32:52} and tskey-secret-{alnum:30} and xoxc-123456789012-123456789012-123456789012-{hex:64}',
    )),
    Shape("mongodb-atlas-key", "mongodb_atlas_key", ("mdb_sa_sk_",), r"[0-9A-Za-z_-]{40}"),
    # source hosting / CI
    # (installation tokens of the newer kind carry underscores too)
    Shape("github-token", "github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"[A-Za-z0-9_]{30,255}",
          examples=(
              'git clone https://⟦ghs_{alnum:36}⟧@github.com/acme/repo.git',
              "[10:02] Ola: ⟦ghp_{alnum:36}⟧ (don't paste it in #general pls)",
              "export SOME_VAR='⟦ghp_{alnum:36}⟧'\nPORT=8080",
              "[10:02] Ola: ⟦gho_{alnum:36}⟧ (don't paste it in #general pls)",
              "export SOME_VAR='⟦gho_{alnum:36}⟧'\nPORT=8080",
              'GITHUB_TOKEN=⟦ghp_{alnum:36}⟧',
              'installation: ⟦ghs_{alnum:20}_{alnum:19}⟧',
          ),
          counter=('ghp_ is the prefix of a classic token',)),
    Shape("github-fine-grained-pat", "github_token", ("github_pat_",), r"[A-Za-z0-9_]{22,255}",
        examples=(
            "[10:02] Ola: ⟦github_pat_11{upper:20}_{alnum:59}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦github_pat_11{upper:20}_{alnum:59}⟧'\nPORT=8080",
        )),
    Shape("gitlab-token", "gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "glcbt-",
                                           "glsoat-", "gloas-", "glagent-", "glffct-", "glwt-", "GR1348941"),
          r"[A-Za-z0-9_-]{20,}",
        examples=(
            "[10:02] Ola: ⟦glpat-{url:20}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦glpat-{url:20}⟧'\nPORT=8080",
        )),
    Shape("bitbucket-app-password", "bitbucket_app_password", ("ATBB",), r"[A-Za-z0-9_=.-]{28,}", entropy=True),
    Shape("atlassian-api-token", "atlassian_api_token", ("ATATT3", "ATCTT3"), r"[A-Za-z0-9_=-]{40,}"),
    Shape("circleci-token", "circleci_token", ("CCIPAT_", "CCIPRJ_"), r"[A-Za-z0-9]{20,}_[a-f0-9]{40}"),
    Shape("postman-api-key", "postman_api_key", ("PMAT-",), r"[A-Za-z0-9]{26}(?![A-Za-z0-9])",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and napi_{alnum:64} and ⟦PMAT-{alnum:26}⟧ and RGAPI-{lower:8}-{lower:27} and zpka_{alnum:32}_{hex:8} and wandb_v1_{alnum:77} and cog_{b32:52} and tskey-secret-{alnum:30} and xoxc-123456789012-123456789012-123456789012-{hex:64}',
    )),
    Shape("openvsx-token", "openvsx_token", ("ovsxat_",), r"[A-Za-z0-9-]{36}(?![A-Za-z0-9-])"),
    Shape("tolgee-token", "tolgee_token", ("tgpat_",), r"[a-z0-9]{48,64}(?![A-Za-z0-9])"),
    Shape("devcycle-server-key", "devcycle_server_key", ("dvc_server_",), r"[A-Za-z0-9_]{8,}", entropy=True),
    Shape("buildkite-token", "buildkite_token", ("bkua_",), r"[a-f0-9]{40}"),
    Shape("sonarqube-token", "sonarqube_token", ("squ_", "sqp_", "sqa_"), r"[a-f0-9]{40}"),
    Shape("netlify-token", "netlify_token", ("nfp_",), r"[A-Za-z0-9]{36}"),
    Shape("octopus-api-key", "octopus_api_key", ("API-",), r"[A-Z0-9]{26}(?![A-Za-z0-9])", entropy=True,
    examples=('pasted from the console:\n⟦API-{upper:26}⟧\n',)),
    Shape("vercel-token", "vercel_token", ("vcp_",), r"[A-Za-z0-9]{24,}", entropy=True),
    # chat and mail
    Shape("slack-token", "slack_token", ("xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxe-", "xoxe.xox"),
          r"[0-9A-Za-z-]{20,}",
        examples=(
            "[10:02] Ola: ⟦xoxb-{digits:12}-{digits:13}-{alnum:24}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦xoxb-{digits:12}-{digits:13}-{alnum:24}⟧'\nPORT=8080",
        )),
    Shape("slack-session-token", "slack_token", ("xoxc-",), r"\d{9,15}-\d{9,15}-\d{9,15}-[a-fA-F0-9]{64}",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and napi_{alnum:64} and PMAT-{alnum:26} and RGAPI-{lower:8}-{lower:27} and zpka_{alnum:32}_{hex:8} and wandb_v1_{alnum:77} and cog_{b32:52} and tskey-secret-{alnum:30} and ⟦xoxc-123456789012-123456789012-123456789012-{hex:64}⟧',
    )),
    Shape("slack-workspace-token", "slack_token", ("xoxa-", "xoxr-"), r"(?:\d-)?[0-9A-Za-z]{4,}-[0-9A-Za-z-]{14,}", examples=(
            'refresh: ⟦xoxr-{digits:6}-{digits:6}-{digits:6}-{hex:18}⟧ ok',
            '⟦xoxa-2-{digits:9}-{digits:9}-{digits:9}-{hex:18}⟧',
        )),
    Shape("slack-legacy-workspace-token", "slack_token", ("xoxa-", "xoxr-"), r"(?:\d-)?[0-9A-Za-z]{8,48}"),
    Shape("slack-webhook", "slack_webhook", ("hooks.slack.com/",),
          r"(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"),
    Shape("slack-app-token", "slack_token", ("xapp-",), r"\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+",
        examples=(
            "[10:02] Ola: ⟦xapp-1-A{upper:10}-{digits:13}-{hex:64}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦xapp-1-A{upper:10}-{digits:13}-{hex:64}⟧'\nPORT=8080",
        )),
    Shape("slack-webhook-url", "slack_webhook", ("//hooks.slack.com/",),
          r"(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
        examples=(
            'SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T{upper:10}/B{upper:10}/⟦{alnum:24}⟧',
        )),
    Shape("discord-webhook", "discord_webhook", ("//discord.com/api/webhooks/", "//discordapp.com/api/webhooks/"),
          r"\d+/[A-Za-z0-9_-]{30,}"),
    Shape("zapier-webhook", "zapier_webhook", ("//hooks.zapier.com/hooks/catch/",), r"\d+/[A-Za-z0-9]+"),
    Shape("twilio-api-key", "twilio_api_key", ("SK",), r"[0-9a-fA-F]{32}(?![A-Za-z0-9])",
        examples=(
            "[10:02] Ola: ⟦SK{hex:32}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦SK{hex:32}⟧'\nPORT=8080",
        )),
    Shape("sendgrid-api-key", "sendgrid_api_key", ("SG.",), r"[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{30,50}",
        examples=(
            "[10:02] Ola: ⟦SG.{url:22}.{url:43}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦SG.{url:22}.{url:43}⟧'\nPORT=8080",
        )),
    Shape("brevo-api-key", "brevo_api_key", ("xkeysib-", "xsmtpsib-"), r"[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    Shape("mailgun-key", "mailgun_key", ("key-",), r"[0-9a-f]{32}(?![A-Za-z0-9])",
        examples=(
            "[10:02] Ola: ⟦key-{hex:32}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦key-{hex:32}⟧'\nPORT=8080",
        )),
    # payments
    Shape("stripe-key", "stripe_key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_"), r"[A-Za-z0-9]{10,}",
        examples=(
            "[10:02] Ola: ⟦sk_live_51{alnum:40}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦sk_live_51{alnum:40}⟧'\nPORT=8080",
            "[10:02] Ola: ⟦rk_live_{alnum:40}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦rk_live_{alnum:40}⟧'\nPORT=8080",
            "Billing runs on prod-⟦sk_live_{alnum:24}⟧ since March.",  # glued to a word before it
            "the key file backup_⟦sk_live_{alnum:24}⟧ is gone",
        )),
    Shape("stripe-webhook-secret", "stripe_webhook_secret", ("whsec_",), r"[A-Za-z0-9+/=]{20,}",
        examples=(
            "[10:02] Ola: ⟦whsec_{alnum:32}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦whsec_{alnum:32}⟧'\nPORT=8080",
        )),
    Shape("razorpay-key", "razorpay_key", ("rzp_live_",), r"[A-Za-z0-9]{14}(?![A-Za-z0-9])", entropy=True),
    Shape("adyen-api-key", "adyen_api_key", ("AQE",), r"[a-z0-9]{5,}\.[A-Za-z0-9_=-]{50,80}", entropy=True,
    examples=('pasted from the console:\n⟦AQEyhmfx.{alnum:60}⟧\n',)),
    Shape("square-token", "square_token", ("sq0atp-",), r"[0-9A-Za-z_-]{22,}"),
    Shape("square-oauth-secret", "square_token", ("sq0csp-",), r"[0-9A-Za-z_-]{40,}"),
    Shape("square-access-token", "square_token", ("EAAA",), r"[A-Za-z0-9_-]{60,}"),
    Shape("facebook-token", "facebook_token", ("EAA",), r"[A-Za-z0-9]{90,}"),
    Shape("flutterwave-secret-key", "flutterwave_secret_key", ("FLWSECK-",), r"[a-f0-9]{32}-X"),
    Shape("shippo-token", "shippo_token", ("shippo_live_",), r"[a-f0-9]{40}"),
    Shape("easypost-key", "easypost_key", ("EZAK", "EZTK"), r"[A-Za-z0-9]{54}",
    examples=('easypost\n- ⟦EZAK{alnum:54}⟧\n',)),
    Shape("lob-api-key", "lob_api_key", ("live_pub_", "test_pub_"), r"[a-f0-9]{31,35}(?![A-Za-z0-9])"),
    Shape("mollie-api-key", "mollie_api_key", ("live_",), r"[A-Za-z0-9]{30}(?![A-Za-z0-9])", entropy=True),
    # AI APIs
    Shape("anthropic-api-key", "anthropic_api_key", ("sk-ant-",), r"(?:api|admin|sid|oat)\d\d-[A-Za-z0-9_-]{40,}",
        examples=(
            "[10:02] Ola: ⟦sk-ant-api03-{url:93}AA⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦sk-ant-api03-{url:93}AA⟧'\nPORT=8080",
        )),
    Shape("openai-api-key", "openai_api_key", ("sk-",), r"[A-Za-z0-9_-]{20,}", entropy=True,
        examples=(
            'OPENAI_API_KEY=sk-proj-⟦{alnum:32}⟧',
            "[10:02] Ola: ⟦sk-proj-{url:60}T3BlbkFJ{url:40}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦sk-proj-{url:60}T3BlbkFJ{url:40}⟧'\nPORT=8080",
        )),
    Shape("elevenlabs-api-key", "elevenlabs_api_key", ("sk_",), r"[a-f0-9]{48}(?![A-Za-z0-9])"),
    Shape("mapbox-token", "mapbox_secret_token", ("sk.eyJ", "tk.eyJ"), r"[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{10,}",
    examples=("mapboxgl.accessToken = '⟦tk.eyJ{url:40}.{url:22}⟧';",)),
    Shape("huggingface-token", "huggingface_token", ("hf_",), r"[A-Za-z0-9]{30,40}(?![A-Za-z0-9])",
        examples=(
            "[10:02] Ola: ⟦hf_{letters:34}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦hf_{letters:34}⟧'\nPORT=8080",
        )),
    Shape("huggingface-org-token", "huggingface_token", ("api_org_",), r"[A-Za-z]{30,40}"),
    Shape("groq-api-key", "groq_api_key", ("gsk_",), r"[A-Za-z0-9]{40,}",
        examples=(
            "[10:02] Ola: ⟦gsk_{alnum:52}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦gsk_{alnum:52}⟧'\nPORT=8080",
        )),
    Shape("perplexity-api-key", "perplexity_api_key", ("pplx-",), r"[A-Za-z0-9]{40,}"),
    Shape("replicate-token", "replicate_token", ("r8_",), r"[A-Za-z0-9]{30,}", entropy=True),
    Shape("xai-api-key", "xai_api_key", ("xai-",), r"[A-Za-z0-9]{60,}"),
    Shape("nvidia-api-key", "nvidia_api_key", ("nvapi-",), r"[A-Za-z0-9_-]{50,}"),
    Shape("langsmith-api-key", "langsmith_api_key", ("lsv2_",), r"(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{8,12}"),
    Shape("pinecone-api-key", "pinecone_api_key", ("pcsk_",), r"[A-Za-z0-9_]{40,}"),
    Shape("tavily-api-key", "tavily_api_key", ("tvly-",), r"[A-Za-z0-9_-]{20,}", entropy=True),
    Shape("firecrawl-api-key", "firecrawl_api_key", ("fc-",), r"[a-f0-9]{32}(?![A-Za-z0-9])"),
    Shape("cerebras-api-key", "cerebras_api_key", ("csk-",), r"[a-z0-9]{40,}"),
    Shape("fireworks-api-key", "fireworks_api_key", ("fw_",), r"[A-Za-z0-9]{20,}", entropy=True),
    Shape("together-api-key", "together_api_key", ("tgp_v1_",), r"[A-Za-z0-9_-]{40,}",
    examples=('key is ⟦tgp_v1_{url:43}⟧',)),
    Shape("jina-api-key", "jina_api_key", ("jina_",), r"[a-f0-9]{32}[A-Za-z0-9_-]{20,}"),
    Shape("wandb-api-key", "wandb_api_key", ("wandb_v1_",), r"[A-Za-z0-9_]{77}",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and napi_{alnum:64} and PMAT-{alnum:26} and RGAPI-{lower:8}-{lower:27} and zpka_{alnum:32}_{hex:8} and ⟦wandb_v1_{alnum:77}⟧ and cog_{b32:52} and tskey-secret-{alnum:30} and xoxc-123456789012-123456789012-123456789012-{hex:64}',
    )),
    Shape("devin-api-key", "devin_api_key", ("cog_",), r"[a-z2-7]{52}(?![A-Za-z0-9])",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and napi_{alnum:64} and PMAT-{alnum:26} and RGAPI-{lower:8}-{lower:27} and zpka_{alnum:32}_{hex:8} and wandb_v1_{alnum:77} and ⟦cog_{b32:52}⟧ and tskey-secret-{alnum:30} and xoxc-123456789012-123456789012-123456789012-{hex:64}',
    )),
    Shape("riot-api-key", "riot_api_key", ("RGAPI-",), r"[A-Za-z0-9-]{36}(?![A-Za-z0-9-])",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and napi_{alnum:64} and PMAT-{alnum:26} and ⟦RGAPI-{lower:8}-{lower:27}⟧ and zpka_{alnum:32}_{hex:8} and wandb_v1_{alnum:77} and cog_{b32:52} and tskey-secret-{alnum:30} and xoxc-123456789012-123456789012-123456789012-{hex:64}',
    )),
    Shape("dub-api-key", "dub_api_key", ("dub_",), r"[A-Za-z0-9]{24}(?![A-Za-z0-9])", entropy=True),
    Shape("zuplo-api-key", "zuplo_api_key", ("zpka_",), r"[A-Za-z0-9]{32}_[a-fA-F0-9]{8}",
    examples=(
        'CCDB1_{alnum:22}_{alnum:40} and napi_{alnum:64} and PMAT-{alnum:26} and RGAPI-{lower:8}-{lower:27} and ⟦zpka_{alnum:32}_{hex:8}⟧ and wandb_v1_{alnum:77} and cog_{b32:52} and tskey-secret-{alnum:30} and xoxc-123456789012-123456789012-123456789012-{hex:64}',
    )),
    # package registries
    Shape("npm-token", "npm_token", ("npm_",), r"[A-Za-z0-9]{36}(?![A-Za-z0-9])",
        examples=(
            "[10:02] Ola: ⟦npm_{alnum:36}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦npm_{alnum:36}⟧'\nPORT=8080",
        )),
    Shape("pypi-token", "pypi_token", ("pypi-",), r"AgE[A-Za-z0-9_-]{50,}",
        examples=(
            "[10:02] Ola: ⟦pypi-AgEIcHlwaS5vcmc{url:70}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦pypi-AgEIcHlwaS5vcmc{url:70}⟧'\nPORT=8080",
        )),
    Shape("rubygems-token", "rubygems_token", ("rubygems_",), r"[a-f0-9]{48}"),
    Shape("nuget-api-key", "nuget_api_key", ("oy2",), r"[a-z0-9]{43}(?![A-Za-z0-9])"),
    Shape("docker-hub-token", "docker_hub_token", ("dckr_pat_", "dckr_oat_"), r"[A-Za-z0-9_-]{20,}",
        examples=(
            "[10:02] Ola: ⟦dckr_pat_{url:27}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦dckr_pat_{url:27}⟧'\nPORT=8080",
        )),
    Shape("jfrog-api-key", "jfrog_api_key", ("AKCp",), r"[A-Za-z0-9]{60,}"),
    Shape("jfrog-token", "jfrog_token", ("cmVmdGtuOjAxOj",), r"[A-Za-z0-9]{40,}"),
    Shape("clojars-token", "clojars_token", ("CLOJARS_",), r"[a-z0-9]{60}"),
    Shape("pulumi-token", "pulumi_token", ("pul-",), r"[a-f0-9]{40}"),
    # observability / productivity
    Shape("sentry-token", "sentry_token", ("sntryu_",), r"[a-f0-9]{64}",
        examples=(
            "[10:02] Ola: ⟦sntryu_{hex:64}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦sntryu_{hex:64}⟧'\nPORT=8080",
        )),
    Shape("sentry-org-token", "sentry_token", ("sntrys_",), r"eyJ[A-Za-z0-9_=+/-]{20,}"),
    Shape("grafana-service-account-token", "grafana_token", ("glsa_",), r"[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
        examples=(
            "[10:02] Ola: ⟦glsa_{alnum:32}_{hex:8}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦glsa_{alnum:32}_{hex:8}⟧'\nPORT=8080",
        )),
    Shape("grafana-cloud-token", "grafana_token", ("glc_",), r"[A-Za-z0-9+/]{32,}={0,2}"),
    Shape("newrelic-user-key", "newrelic_key", ("NRAK-",), r"[A-Z0-9]{27}",
        examples=(
            "[10:02] Ola: ⟦NRAK-{upper:27}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦NRAK-{upper:27}⟧'\nPORT=8080",
        )),
    Shape("newrelic-admin-key", "newrelic_key", ("NRAA-",), r"[a-f0-9]{27}",
    examples=('admin_access:⟦NRAA-{hex:27}⟧',)),
    Shape("newrelic-browser-key", "newrelic_key", ("NRJS-",), r"[a-f0-9]{19}"),
    Shape("newrelic-insert-key", "newrelic_key", ("NRII-",), r"[A-Za-z0-9_-]{32}"),
    Shape("dynatrace-token", "dynatrace_token", ("dt0c01.",), r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    Shape("sourcegraph-token", "sourcegraph_token", ("sgp_",), r"(?:[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}"),
    Shape("harness-token", "harness_token", ("pat.", "sat."), r"[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20}"),
    Shape("settlemint-token", "settlemint_token", ("sm_pat_", "sm_aat_", "sm_sat_"),
          r"[A-Za-z0-9]{16}(?![A-Za-z0-9])"),
    Shape("intra42-secret", "intra42_secret", ("s-s4t2ud-", "s-s4t2af-"), r"[a-f0-9]{64}"),
    Shape("cloudflare-origin-ca-key", "cloudflare_origin_ca_key", ("v1.0-",), r"[a-f0-9]{24}-[a-f0-9]{146}"),
    Shape("onepassword-secret-key", "onepassword_secret_key", ("A3-",),
          r"[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}"),
    Shape("postman-api-key-legacy", "postman_api_key", ("PMAK-",), r"[a-f0-9]{24}-[a-f0-9]{34}",
        examples=(
            "[10:02] Ola: ⟦PMAK-{hex:24}-{hex:34}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦PMAK-{hex:24}-{hex:34}⟧'\nPORT=8080",
        )),
    Shape("prefect-token", "prefect_token", ("pnu_",), r"[A-Za-z0-9]{36}"),
    Shape("dropbox-token", "dropbox_token", ("sl.",), r"(?:u\.)?[A-Za-z0-9_=-]{130,}",
    examples=("dbx = Dropbox('⟦sl.{url:138}⟧')",)),
    Shape("resend-api-key", "resend_api_key", ("re_",),
          r"[A-Za-z0-9]{8}_[A-Za-z0-9]{24,}(?![A-Za-z0-9_])", entropy=True,
    examples=('RESEND=⟦re_{alnum:8}_{alnum:24}⟧',)),
    Shape("linear-api-key", "linear_api_key", ("lin_api_",), r"[A-Za-z0-9]{40}",
        examples=(
            "[10:02] Ola: ⟦lin_api_{alnum:40}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦lin_api_{alnum:40}⟧'\nPORT=8080",
        )),
    Shape("linear-oauth-token", "linear_api_key", ("lin_oauth_",), r"[a-f0-9]{64}"),
    Shape("notion-token", "notion_token", ("ntn_",), r"[A-Za-z0-9]{40,}",
        examples=(
            "[10:02] Ola: ⟦ntn_{alnum:46}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦ntn_{alnum:46}⟧'\nPORT=8080",
        )),
    Shape("notion-integration-secret", "notion_token", ("secret_",), r"[A-Za-z0-9]{43}(?![A-Za-z0-9])"),
    Shape("figma-token", "figma_token", ("figd_",), r"[A-Za-z0-9_-]{40}"),
    Shape("contentful-token", "contentful_token", ("CFPAT-",), r"[A-Za-z0-9_-]{43}"),
    Shape("shopify-token", "shopify_token", ("shpat_", "shpca_", "shppa_", "shpss_"), r"[a-fA-F0-9]{32}",
        examples=(
            "[10:02] Ola: ⟦shpat_{hex:32}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦shpat_{hex:32}⟧'\nPORT=8080",
        )),
    Shape("readme-api-key", "readme_api_key", ("rdme_",), r"[a-z0-9]{70}"),
    # (shapes other scanners name, read from their rules: gitleaks' openshift, duffel, frame.io,
    # flutterwave, defined networking and yandex rules)
    Shape("openshift-token", "openshift_token", ("sha256~",), r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
          examples=('oc login --token=⟦sha256~{url:43}⟧ --server=https://api.example.com:6443',)),
    Shape("duffel-token", "duffel_token", ("duffel_live_", "duffel_test_"), r"[A-Za-z0-9_=-]{43}",
          examples=('⟦duffel_test_{url:43}⟧',)),
    Shape("frameio-token", "frameio_token", ("fio-u-",), r"[A-Za-z0-9_=-]{64}",
          examples=('frame.io: ⟦fio-u-{url:64}⟧',)),
    Shape("flutterwave-test-key", "flutterwave_secret_key", ("FLWSECK_TEST-", "FLWSECK_TEST"),
          r"[a-h0-9]{12,32}(?:-X)?(?![A-Za-z0-9])", examples=('⟦FLWSECK_TEST-{hex:12}⟧',)),
    Shape("defined-networking-key", "api_token", ("dnkey-",), r"[a-z0-9=_-]{26}-[a-z0-9=_-]{52}",
          examples=('⟦dnkey-{small:26}-{small:52}⟧',)),
    Shape("yandex-api-key", "yandex_key", ("AQVN",), r"[A-Za-z0-9_-]{35,38}(?![A-Za-z0-9_-])", entropy=True,
          examples=('yc config set token ⟦AQVN{url:36}⟧',)),
    Shape("yandex-iam-token", "yandex_key", ("t1.",), r"[A-Za-z0-9_-]+=*\.[A-Za-z0-9_-]{86}=*",
          examples=('export YC_TOKEN=⟦t1.{url:20}.{url:86}⟧',)),
    Shape("typeform-token", "typeform_token", ("tfp_",), r"[A-Za-z0-9_=.-]{40,}"),
    Shape("airtable-token", "airtable_token", ("pat",), r"[A-Za-z0-9]{14}\.[a-f0-9]{64}(?![A-Za-z0-9])",
    examples=('pasted from the console:\n⟦pat{alnum:14}.{hex:64}⟧\n',)),
    Shape("planetscale-token", "planetscale_token", ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
          r"[A-Za-z0-9=_.-]{32,64}"),
    Shape("hubspot-token", "hubspot_token", ("pat-na1-", "pat-eu1-"), r"[a-f0-9-]{36}"),
    Shape("twitter-bearer-token", "twitter_bearer_token", ("AAAAAAAAAAAAAAAAAAAAA",), r"[A-Za-z0-9%]{30,}",
    examples=("curl -H 'Authorization: Bearer ⟦AAAAAAAAAAAAAAAAAAAAAA{alnum:90}⟧'",)),
    # secret managers
    Shape("vault-token", "vault_token", ("hvs.", "hvb.", "hvr."), r"[A-Za-z0-9_-]{24,}",
        examples=(
            "[10:02] Ola: ⟦hvs.{url:90}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦hvs.{url:90}⟧'\nPORT=8080",
        )),
    Shape("vault-legacy-token", "vault_token", ("s.",), r"[A-Za-z0-9]{24}(?![A-Za-z0-9.])", entropy=True),
    Shape("doppler-personal-token", "doppler_token", ("dp.pt.",), r"[A-Za-z0-9]{40,}"),
    Shape("doppler-service-token", "doppler_token", ("dp.st.",), r"[A-Za-z0-9_.-]{40,}",
        examples=(
            "[10:02] Ola: ⟦dp.st.prd.{alnum:43}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦dp.st.prd.{alnum:43}⟧'\nPORT=8080",
        )),
    Shape("doppler-other-token", "doppler_token", ("dp.ct.", "dp.sa.", "dp.scim.", "dp.audit."), r"[A-Za-z0-9]{40,}",
    examples=('DOPPLER_AUDIT=⟦dp.audit.{alnum:43}⟧',)),
    Shape("onepassword-token", "onepassword_token", ("ops_eyJ",), r"[A-Za-z0-9+/=_-]{50,}"),
    Shape("age-secret-key", "age_secret_key", ("AGE-SECRET-KEY-1",), r"[0-9A-Z]{50,}",
        examples=(
            "[10:02] Ola: ⟦AGE-SECRET-KEY-1{upper:58}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦AGE-SECRET-KEY-1{upper:58}⟧'\nPORT=8080",
        )),
    # Aiven service passwords and tokens: 'AVNS_' and about 19 random characters
    Shape("aiven-password", "aiven_password", ("AVNS_",), r"[A-Za-z0-9_-]{15,}", examples=(
            'avnadmin:⟦AVNS_{alnum:19}⟧@pg-1.aivencloud.com',
            'it printed ⟦AVNS_{alnum:19}⟧',
        )),
    # Grafana's older API keys are base64 of '{"k":"…","n":"…","id":…}', so they open 'eyJrIjoi'
    Shape("grafana-api-key", "grafana_api_key", ("eyJrIjoi",), r"[A-Za-z0-9+/]{50,}={0,2}", examples=(
            "curl -H 'Authorization: Bearer' ⟦eyJrIjoi{alnum:60}⟧",
        )),
    # JSON Web Tokens (header.payload.signature; JWE has five parts). An unsigned token (alg "none", or a
    # signature cut off) is header.payload: both halves are base64 JSON ('eyJ')
    Shape("jwt", "jwt", ("eyJ",),
          r"[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?"
          r"|eyJ[A-Za-z0-9_-]{14,}(?![A-Za-z0-9_.-]))",
        examples=(
            'token ⟦eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ{alnum:30}⟧',
            'token for staging: ⟦eyJ{url:33}.eyJ{url:60}.{url:43}⟧',
            'Cookie: theme=dark; access_token=⟦eyJ{url:33}.eyJ{url:60}.{url:43}⟧; lang=nb',
        ), counter=(
            'header eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 only',
            'eyJAAAA.eyJBBB',
            'eyJBB.eyJCC.eyJDDDD',
        )),
)

# --------------------------------------------------------------------------------------------
# Shapes the token scan judges in code (a checksum-free structure, a neighbour, an entropy test)
# --------------------------------------------------------------------------------------------
TOKEN_RULES: tuple[Rule, ...] = (
    Reader("private-key", "private_key", keywords=("-----", "putty", "---- begin"),
        examples=(
            'tls:\n  key: |\n    -----BEGIN RSA PRIVATE KEY-----\n    ⟦{b64:64}\n    {b64:64}\n    {b64:64}\n    {b64:20}==⟧\n    -----END RSA PRIVATE KEY-----\n',
            '<tls-auth>\n-----BEGIN OpenVPN Static key V1-----\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n⟦{hex:32}⟧\n-----END OpenVPN Static key V1-----\n</tls-auth>\n',
            'here is the key:\n-----BEGIN RSA PRIVATE KEY-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}==⟧\n-----END RSA PRIVATE KEY-----\nthanks',
            'here is the key:\n-----BEGIN PRIVATE KEY-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}==⟧\n-----END PRIVATE KEY-----\nthanks',
            'here is the key:\n-----BEGIN EC PRIVATE KEY-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}==⟧\n-----END EC PRIVATE KEY-----\nthanks',
            'here is the key:\n-----BEGIN DSA PRIVATE KEY-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}==⟧\n-----END DSA PRIVATE KEY-----\nthanks',
            'here is the key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}==⟧\n-----END OPENSSH PRIVATE KEY-----\nthanks',
            'here is the key:\n-----BEGIN ENCRYPTED PRIVATE KEY-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}==⟧\n-----END ENCRYPTED PRIVATE KEY-----\nthanks',
            'here is the key:\n-----BEGIN PGP PRIVATE KEY BLOCK-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:20}==⟧\n-----END PGP PRIVATE KEY BLOCK-----\nthanks',
            '{"ssh_key": "-----BEGIN RSA PRIVATE KEY-----\\n⟦{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:20}==⟧\\n-----END RSA PRIVATE KEY-----\\n", "port": 22}',
            'PRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----\\n⟦{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:64}\\n{b64:20}==⟧\\n-----END RSA PRIVATE KEY-----"\nPORT=80',
            'private_key=-----BEGIN OPENSSH PRIVATE KEY----- ⟦{b64:64} {b64:64} {b64:64} {b64:64} {b64:64} {b64:64} {b64:20}==⟧ -----END OPENSSH PRIVATE KEY-----',
            '-----BEGIN RSA PRIVATE KEY-----\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}⟧\n',
            '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,{HEX:32}\n\n⟦{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}⟧\n-----END RSA PRIVATE KEY-----',
        )),
    Reader("putty-private-key", "private_key", keywords=("putty",),
        examples=(
            'PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: me@laptop\nPublic-Lines: 2\n{b64:64}\n{b64:4}\nPrivate-Lines: 1\n⟦{b64:44}⟧\nPrivate-MAC: {hex:64}',
        )),
    Reader("bitlocker-key", "bitlocker_key",
        examples=(
            'BitLocker recovery key for the laptop: ⟦373318-112915-358501-616737-538340-693374-643577-465960⟧',
            '⟦373318-112915-358501-616737-538340-693374-643577-465960⟧.',
            'key ⟦373318-112915-358501-616737-538340-693374-643577-465961⟧',
        )),
    Reader("azure-client-secret", "azure_client_secret",
        examples=(
            "[10:02] Ola: ⟦{alnum:3}8Q~{azure:34}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦{alnum:3}8Q~{azure:34}⟧'\nPORT=8080",
        )),
    Reader("discord-bot-token", "discord_bot_token",
        examples=(
            "[10:02] Ola: ⟦MTE{alnum:21}.{url:6}.{url:38}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦MTE{alnum:21}.{url:6}.{url:38}⟧'\nPORT=8080",
        )),
    Reader("terraform-cloud-token", "terraform_cloud_token"),
    Reader("facebook-app-token", "facebook_app_token"),
    Reader("salesforce-token", "salesforce_token", examples=(
            'sf org display says\nAccess Token      ⟦00D{alnum:12}!{alnum:95}Q⟧.\nInstance Url      https://x.my.salesforce.com',
        ), counter=(
            'Hello!{small:90}',
        )),
    Reader("telegram-bot-token", "telegram_bot_token",
        examples=(
            "[10:02] Ola: ⟦{digits:10}:AA{url:33}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦{digits:10}:AA{url:33}⟧'\nPORT=8080",
        )),
    Reader("azure-refresh-token", "azure_refresh_token",
    examples=(
        '"refreshToken": "⟦0.A{url:60}.{url:120}⟧"',
        '| ⟦0.ABCDEFGHIJKLMNOPQRS_AAAAAAAAAAAA{url:30}.{url:200}⟧ |',
    )),
    Reader("mailchimp-key", "mailchimp_key",
        examples=(
            "[10:02] Ola: ⟦{hex:32}-us14⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦{hex:32}-us14⟧'\nPORT=8080",
        )),
    Reader("aws-secret-access-key", "aws_secret_access_key",
        examples=(
            '[default]\naws_access_key_id = AKIA{upper:16}\naws_secret_access_key = ⟦{b64:40}⟧\nregion = eu-north-1',
            'aws configure set aws_access_key_id AKIA{upper:16}\naws configure set aws_secret_access_key ⟦{b64:40}⟧',
            'provider "aws" {\n  access_key = "AKIA{upper:16}"\n  secret_key = "⟦{b64:40}⟧"\n}',
        )),
    Reader("generic-prefixed-token", "api_token",
        examples=(
            'the build uses acme_⟦{alnum:32}⟧',
            '  "querykey": "NRIQ-⟦{alnum:32}⟧",',
            'the secret is sess_⟦{alnum:32}⟧',
            "[10:02] Ola: ⟦acme_live_{alnum:40}⟧ (don't paste it in #general pls)",
            "export SOME_VAR='⟦acme_live_{alnum:40}⟧'\nPORT=8080",
        )),
    Reader("url-user-token", "url_credentials",
    examples=('git clone https://⟦{lower:52}⟧@dev.azure.com/acme/app/_git/app',)),
    Reader("secret-word-context", "secret",
        examples=(
            'the freshworks api key is ⟦aB{alnum:9}-{alnum:9}-{alnum:9}⟧ for the sandbox',
            'IBMCLOUDIAMAPIKEY=⟦{alnum:18}-{alnum:12}_{alnum:12}⟧',
            'ibm_cloud_iamapikey= ⟦{alnum:18}-{alnum:12}_{alnum:12}⟧',
            "API_KEY = '⟦{alnum:40}⟧'",
            'newRelicToken = "⟦NRAK-{lower:27}⟧"',
            'the token (⟦{alnum:32}⟧_)',
            'apiVersion: v1\nkind: secret\ndata:\n\textra: ⟦YWRtaW46AWFsbnVtOjEyAg==⟧\n',
            'HEROKU_TOKEN ?= "⟦{lower:40}⟧"\nOTHER_TOKEN ::= "\x0204:rewol\x01"',
            'System.setProperty("TRAVIS_TOKEN", "⟦{lower:40}⟧")',
            '"duo_skey": "⟦{alnum:40}⟧"',
            '<secret>{⟦AQAAABAAAAAQ{b64:44}=⟧}</secret>',
            'pat ci-token\n⟦{alnum:22}⟧==:{alnum:32}\n',
            'the api_tokens: [⟦{alnum:32}⟧]',
            'GITHUB_TOKEN_V2 ⟦{alnum:32}⟧',
            '<com.example.credentials.Impl>\n  <id>{⟦{alnum:32}⟧}</id>',
            'secret_key_base ⟦{alnum:32}⟧',
            'rotated the token -> ⟦{alnum:32}⟧',
            'DNKEY_TOKEN = "dnkey-⟦{lower:60}⟧"',
            'gh auth login --token ⟦{alnum:32}⟧',
            'App token in XML: <token><version>1</version><data>⟦{alnum:32}⟧</data></token>',
            'API token: ⟦{alnum:32}⟧\n<apiKey>\x0223:munla\x01</apiKey>',
            '"token": "⟦{alnum:32}⟧"',
            'private_key: 0x⟦{hex:64}⟧',
            'secret: YSBiIGMgAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6P⟦kJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8⟧vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj9AQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVpbXF1eX2BhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ent8fX5/gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp+goaKjpKWmp6ipqqusra6vsLGys7S1tre4ubq7vL2+v8DBwsPExcbHyMnKy8zNzs/Q0dLT1NXW19jZ2tvc3d7f4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTlJWWl5iZmpucnZ6foKGio6SlpqeoqaqrrK2ur7CxsrO0tba3uLm6u7y9vr/AwcLDxMXGx8jJysvMzc7P0NHS09TV1tfY2drb3N3e3+Dh4uPk5ebn6Onq6+zt7u/w8fLz9PX29/j5+vv8/f7/AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6P⟦kJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8⟧vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==',
            '"arn": "arn:aws:ivs:us-west-2:123456789012:stream-key/abc",\n"value": "sk_us-west-2_⟦{alnum:32}⟧"',
            'SECRET_KEY = "secret_key=⟦{alnum:32}⟧"',
            'mailgun_token: ⟦65ed7095ace4a6654adb8309177339ab-00001111-22223333⟧',
            'Hi,\n\nhere is the Frobnicator API token:\n\n    ⟦{alnum:40}⟧\n\nBest',
            '[09:00] Mia: can someone send me the Acme key?\n[09:01] Ola: ⟦{alnum:40}⟧',
            'SESSION_TOKEN=⟦{alnum:40}⟧',
            '{"OPENWEATHER_API_KEY": "⟦{alnum:40}⟧"}',
            "curl -H 'X-API-Key: ⟦{alnum:40}⟧' https://api.example.com",
            'Ocp-Apim-Subscription-Key: ⟦{alnum:40}⟧',
            'oauth:\n  client_secret: ⟦{alnum:40}⟧\n',
            "SECRET_KEY = '⟦{alnum:40}⟧'",
            '2026-01-01T00:00:00Z DEBUG auth configured refresh_token=⟦{alnum:40}⟧',
            '//registry.npmjs.org/:_authToken=⟦{alnum:40}⟧',
            '- Acme token: `⟦{alnum:40}⟧`',
            'API-Schlüssel für den SMS-Dienst: ⟦{alnum:32}⟧',  # the label ends the secret's own phrase
            'API-nyckel för SMS-tjänsten: ⟦{alnum:32}⟧',
        ), counter=(
            'monkey = banana_split_recipe_v2',
            'api_key: [REDACTED:secret]\nclient-id: {alnum:32}',  # a field of its own, on its own line
        )),
    Reader("service-name-context", "secret",
    examples=('cloudflare: "⟦{alnum:40}⟧"', 'mixpanel ⟦{alnum:40}⟧', 'webexbot = "⟦{alnum:40}⟧"',
              'mvn sonar:sonar -Dsonar.login=⟦{hex:40}⟧', '$sonarLogin = "⟦{hex:40}⟧"'),
    counter=('github: {hex:40}', 'sonar.scm.revision={hex:40}')),
    Reader("token-second-half", "secret",
    examples=('pat ci-token\n{alnum:22}==:⟦{alnum:32}⟧\n',)),
)

# --------------------------------------------------------------------------------------------
# A label and its value, wherever it is written (labels.py reads them; the kind is the label's:
# "password" for a password word, "secret" for the others)
# --------------------------------------------------------------------------------------------
LABEL_RULES: tuple[Rule, ...] = (
    Reader("label-assignment", "label", examples=(
        '"password": "⟦Kq7{alnum:9}!⟧",',
        'PASSWORD_DB=⟦Kq7{alnum:9}⟧',  # the system it is for, after the secret's word
        'docker run -e GF_SECURITY_ADMIN_PASSWORD=⟦8p7ez\\&Mbc{alnum:5}⟧ -p 3000:3000',  # a shell's escape, not roff's
        'contraseña_bd: ⟦Kq7{alnum:9}⟧',  # other languages' words (PASSWORD_WORDS, FOREIGN_KEY_WORDS)
        'mot_de_passe: "⟦Kq7{alnum:9}⟧"',
        'HASLO_BD=⟦Kq7{alnum:9}⟧',
        'HASLO_BAZY=⟦Kq7{alnum:9}⟧',  # the head first where a language puts it there (HEAD_FIRST_*)
        'PAROL_BD=⟦Kq7{alnum:9}⟧',
        'parola_d_ordine=⟦Kq7{alnum:9}⟧',
        'chiave_segreta=⟦{small:12}{digits:8}⟧',
        'cle_api = "⟦{small:12}{digits:8}⟧"',
        'KLYUCH_API=⟦{small:12}{digits:8}⟧',
        'CHIAVE_API=⟦{small:12}{digits:8}⟧',
        'API-kulcs: ⟦{small:12}{digits:8}⟧',
        'API 키: ⟦{small:12}{digits:8}⟧',
        'κλειδί_api: ⟦{small:12}{digits:8}⟧',
        'kata_laluan: "⟦Kq7{alnum:9}⟧"',
        'jeton : ⟦{small:12}{digits:8}⟧',
        'token_acceso: ⟦{small:12}{digits:8}⟧',
        'DB_PASSWORD = b"⟦Kq7{alnum:9}!⟧"',  # a string's prefix: Python's b, r, f, u; C#'s $ and @
        "password = u'⟦Kq7{alnum:9}!⟧'",
        'var password = $"⟦Kq7{alnum:9}!⟧";',
        "password = '⟦Kq7{alnum:9}!⟧'",
        'password: "⟦#Kq7{alnum:8}⟧"',
        "password = '⟦\\Kq7{alnum:8}!⟧'",
        'wifi pass: ⟦{alnum:10}!⟧',
        '{"password": "⟦{alnum:10=pw}!⟧", "confirm": "⟦{=pw}!⟧"}',
        'new_pass: ⟦{alnum:32=t}⟧\nrepeat: ⟦{=t}⟧',
        'auth token: ⟦{alnum:32}⟧., next',
        'Atlassian_key = "⟦{letters:24}⟧"',
        'var sumoToken string = "⟦{alnum:14}⟧"',
        '$coinbaseToken .= "⟦{lower:40}⟧"',
        'HEROKU_TOKEN ?= "{lower:40}"\nOTHER_TOKEN ::= "⟦\x0204:rewol\x01⟧"',
        '"access_token": "⟦xoxa-{lower:12}⟧"\n"refresh_token": "⟦xoxr-4-{lower:12}⟧"',
        'senha: ⟦{alnum:10}!⟧',
        'Jelszó: ⟦{alnum:10}!⟧',
        'salasana = ⟦{alnum:10}!⟧',
        '"client_secret": "⟦MmCgmcWpWdtwZPNt⟧"',
        'API_TOKEN=⟦MmCgmcWpWdtwZPNt⟧',
        "SECRET_KEY = '⟦%{alnum:14}!⟧'",
        'variable "conn" {\n  sensitive = true\n  default   = "⟦Server=db;Pwd={alnum:14}⟧"\n}',
        'AZURE_DEVOPS_EXT_PAT=⟦{lower:52}⟧',
        "HEROKU_API_KEY=⟦{hex:8}-{hex:4}-4{hex:3}-a{hex:3}-{hex:12}⟧\ncurl 'https://api.x.io/v1?key=⟦{hex:8}-{hex:4}-4{hex:3}-a{hex:3}-{hex:12}⟧'",
        'password: ⟦Vinter2026!x⟧\npassword_confirmation: ⟦Vinter2026!x⟧',
        'kind: Secret\ndata:\n  # base64 encoded password\n  key: ⟦bXlwYXNzd29yZA==⟧',
        'password: ⟦VmludGVyMjAyNiF4⟧',
        'password: ⟦SuperSecret2024⟧,\n',
        '| password: ⟦Sommer2024⟧ | prod |',
        'password: ⟦1.302103abc⟧',
        'secret: YSBiIGMgAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6P⟦kJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8⟧vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/wABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj9AQUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVpbXF1eX2BhYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ent8fX5/gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp+goaKjpKWmp6ipqqusra6vsLGys7S1tre4ubq7vL2+v8DBwsPExcbHyMnKy8zNzs/Q0dLT1NXW19jZ2tvc3d7f4OHi4+Tl5ufo6err7O3u7/Dx8vP09fb3+Pn6+/z9/v8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QEFCQ0RFRkdISUpLTE1OT1BRUlNUVVZXWFlaW1xdXl9gYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1+f4CBgoOEhYaHiImKi4yNjo+QkZKTlJWWl5iZmpucnZ6foKGio6SlpqeoqaqrrK2ur7CxsrO0tba3uLm6u7y9vr/AwcLDxMXGx8jJysvMzc7P0NHS09TV1tfY2drb3N3e3+Dh4uPk5ebn6Onq6+zt7u/w8fLz9PX29/j5+vv8/f7/AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6P⟦kJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8⟧vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==',
        'SECRET_KEY = "secret_key=⟦{alnum:32}⟧"',
        'password: ⟦Vinter2026!x⟧\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nfiller line\nuser: ⟦Vinter2026!x⟧',
        'App-specific password: ⟦vkbqpmzthxlewryd⟧',
        "EMAIL_HOST_PASSWORD = '⟦vkbqpmzthxlewryd⟧'",
        'token: "⟦qmzvtrxkplwhdnbgsfyc⟧"',
        'password: ⟦{x9Fq2LmZ7⟧',
        "password: '⟦{x9Fq2LmZ7⟧'",
        '- **Password**: ⟦Hytta2024⟧',
        '**Password:** ⟦Hytta2024⟧',
        '`password`: ⟦Hytta2024⟧',
        'var password = @"⟦Zq8xLm2pWv⟧";',
        'NSString *password = @"⟦Zq8xLm2pWv⟧";',
        'os.environ["DB_PASSWORD"] = "⟦Zq8xLm2pWv⟧"',
        "$_ENV['DB_PASS'] = '⟦Zq8xLm2pWv⟧';",
        'password: !!str ⟦Zq8xLm2pWv⟧',
        'wifi password: ⟦Blaabaer2023⟧',
        "password='⟦1qay@WXS????⟧'",
        'if password == "⟦Zq8xLm2pWv⟧":',
        'if form["password"] == "⟦Zq8xLm2pWv⟧":',
        "if (user.password === '⟦Hunter2xyz⟧') {",
        'if apiKey != "⟦RxLVnOlvj3#V4bh4RBwOd⟧" {',
        'API key: ⟦Qm7vX2pLz9Kw⟧',
        'WPA2 key: ⟦hunter22⟧',
        'Wifi password: ⟦plaid fence tulip orbit⟧\n',
        'Passord: ⟦blå hest ringer⟧.',
        'Wi-Fi key: ⟦Qm7vX2pLz9Kw⟧',
        'network key: ⟦Qm7vX2pLz9Kw⟧',
        'Server=db;User ID=sa;Password=⟦Xk9mQ2vLp8r!⟧;Persist Security Info=true',
        'password: ⟦str0ngPass1⟧',
        '"Default": "Server=tcp:sql.example.net,1433;User ID=app;Password=⟦{alnum:8}=x^{alnum:6}⟧;Encrypt=True;"',
        'jdbc:postgresql://db:5432/app?user=kari&password=⟦{alnum:18}⟧&ssl=true',
        'psql "host=db port=5432 dbname=app user=app password=⟦{alnum:18}⟧ sslmode=require"',
        'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=⟦{b64:86}==⟧;EndpointSuffix=core.windows.net',
        '{"auths": {"registry.example.com": {"auth": "⟦cm9ib3Q6AWFsbnVtOjIwAg==⟧"}}}',
        'DB_PASSWORD=⟦{alnum:8}#{alnum:5}⟧',
        "export REDIS_PASSWORD='⟦{alnum:8}#{alnum:5}⟧'",
        'database:\n  password: "⟦{alnum:8}#{alnum:5}⟧"\n',
        '{"password": "⟦{alnum:8}#{alnum:5}⟧", "user": "app"}',
        '[db]\npassword = ⟦{alnum:8}#{alnum:5}⟧\n',
        '[db]\npassword = "⟦{alnum:8}#{alnum:5}⟧"\n',
        'spring.datasource.password=⟦{alnum:8}#{alnum:5}⟧',
        "DATABASES = {'default': {'PASSWORD': '⟦{alnum:8}#{alnum:5}⟧'}}",
        "'password' => '⟦{alnum:8}#{alnum:5}⟧',",
        'network={\n    ssid="home"\n    psk="⟦{alnum:8}#{alnum:5}⟧"\n}',
        'environment:\n  POSTGRES_PASSWORD: ⟦{alnum:8}#{alnum:5}⟧\n',
        'ansible-playbook site.yml --extra-vars "ansible_become_pass=⟦{alnum:8}#{alnum:5}⟧"',
        'https://api.example.org/weather?q=Oslo&appid=⟦{alnum:40}⟧',
        'GET https://maps.example.com/geo?address=x&api_key=⟦{alnum:40}⟧&format=json',
        '[Interface]\nPrivateKey = ⟦{b64:43}=⟧\nAddress = 10.0.0.2/32',
        'APP_KEY=base64:⟦{b64:43}=⟧',
        "wget --user=root --password='⟦{alnum:12}!⟧' https://files.example.org/x.csv",
        "PGPASSWORD='⟦{alnum:12}!⟧' psql -h db -U app -c 'select 1'",
        'openssl pkcs12 -export -in c.pem -inkey k.pem -out b.p12 -passout pass:⟦{alnum:12}!⟧',
        'Benutzer: etl_user, Kennwort: ⟦Sommer2022!⟧',
        "password = '⟦{alnum:12}⟧'",
        'secret: ⟦hardcoded0⟧',
        'DB_PASSWORD=⟦{alnum:10}!⟧',
        'api_key => "⟦{alnum:6}#{alnum:5}⟧"',
        'TWITTERCONSUMERKEY=⟦{alnum:8}${alnum:8}⟧',
        'wget --http-password=⟦{alnum:12}⟧ https://host/f',
    ),
        counter=(
            'password: "{{ db_password }}"',
            "password = os.environ['DB_PASSWORD']",
            'clave_primaria = id_cliente_2024',  # a database's primary key, not a secret one
            'parola_chiave = Sommer2024x',  # a keyword
            'password: str = None',
            '--password=PASS‐\n   WORD | --prompt-for-password',
            'token: YOUR_TOKEN_HERE',
        )),
    Reader("label-element", "label", examples=(
        'API token: {alnum:32}\n<apiKey>⟦\x0223:munla\x01⟧</apiKey>',
        '<entry key="password">⟦Zq8xLm2pWv⟧</entry>',
        '<string name="api_key">⟦Zq8xLm2pWvx9Q2w⟧</string>',
        '<config><password>⟦{alnum:8}#{alnum:5}⟧</password></config>',
        '<password>⟦{alnum:12}⟧</password>',
        "<sometag name= 'db_password' >⟦{alnum:12}⟧</sometag>",
    ),
           counter=('Use the <password> element to set it.', '<label for="password">Password</label>')),
    Reader("label-element-pair", "label", examples=(
        '<key>Password</key>\n<string>⟦{alnum:12}⟧</string>',
        '<property><name>fs.s3a.secret.key</name><value>⟦{alnum:40}⟧</value></property>',
    ),
        counter=(
            '<key>Password</key>\n<string>$(DB_PASSWORD)</string>',
        )),
    Reader("label-list-item", "label", examples=(
        'passwords:\n  - ⟦{alnum:12}⟧\n  - ⟦{alnum:10}⟧\n',
        '{"api_tokens": ["⟦{alnum:24}⟧", "⟦{alnum:24}⟧"]}',
        'passwords:\n  - ⟦Kq7#{alnum:8}⟧\n',  # (a '#' inside a value is no comment)
        # a heading or a line of its own naming the secrets, a list under it; an item's name stays
        '## Passwords\n\n- NAS: ⟦{alnum:10}!x⟧\n- Router: ⟦Hytta{digits:4}⟧\n',
        '**Wi-Fi passwords**\n* Home: ⟦{alnum:12}⟧\n* Cabin = ⟦{alnum:12}⟧\n',
    ),
        counter=(
            'keyVaultSecrets: cmp2-qat-1208358310',
            'passwords:\n  - ${PW_ONE}\n',
            '## Passwords\n- Rotate: quarterly\n- Length: 16\n- Use a manager\n- NAS: see Bitwarden\n',
            'The passwords\n- must be long\n',
        )),
    Reader("label-attribute", "label",
        examples=(
            '<add key="ClearTextPassword" value="⟦TestSourcePassword1⟧" />',
            '<add key="ClearTextPassword" value="⟦{alnum:8}#{alnum:5}⟧" />',
            '<sometag value="⟦{alnum:8}>{alnum:5}⟧" name="the_password" />',
            "< db_password value = '⟦{alnum:12}⟧'/>",
        ),
        counter=('<input type="password" name="password" value="">',)),
    Reader("label-call", "label",
        examples=(
            'System.setProperty("TRAVIS_TOKEN", "⟦{lower:40}⟧")',
            "define('DB_PASSWORD', '⟦Vinter2026!x⟧');",
            "define('DB_PASSWORD', '⟦{alnum:8}#{alnum:5}⟧');",
        )),
    Reader("label-name-value", "label",
        examples=(
            'env:\n  - name: DB_PASSWORD\n    value: ⟦{alnum:8}#{alnum:5}⟧\n',
            '{"key": "token", "value": "⟦{alnum:8}#{alnum:5}⟧", "type": "string"}',
        )),
    Reader("label-directive", "label", examples=(
        'ssl_password "⟦{alnum:8}!{alnum:4}⟧";',
        "private_key '⟦{alnum:20}⟧';",
    ),
           counter=('private_key "fake";', 'private_key "";')),
    Reader("label-is", "label", examples=(
        'the staging api key is ⟦{alnum:24}⟧',
        'our travis token was ⟦{small:12}{digits:8}⟧ until March',
        'the client secret is now ⟦{alnum:10}-{alnum:12}⟧.',
    ),
           counter=('the key is important', 'the token is invalid after 2 days', 'the secret key is stored in ~/.ssh/id_rsa',
                    'the key is F5 on a Mac', 'the api key is in the vault')),
    Reader("label-elsewhere", "label", examples=(
        'clé API : ⟦{alnum:24}⟧',
        "la clé d'API est ⟦{alnum:24}⟧",
        'chave de API: ⟦{alnum:24}⟧',
        'chiave API: ⟦{alnum:24}⟧',
        'klucz API: ⟦{alnum:24}⟧',
        'ключ API: ⟦{alnum:24}⟧',
        'טוקן גישה ל-API: ⟦{alnum:26}⟧',
        'API anahtarı: ⟦{alnum:24}⟧',
        'API密钥：⟦{alnum:24}⟧',
        'API密钥是⟦{alnum:24}⟧',
        'APIキーは ⟦{alnum:24}⟧ です',
    ),
           counter=('parola chiave: Python3x', 'clé USB: SanDisk64GB', 'chiave: Casa2024', 'la chiave è sotto il vaso',
                    'APIキーは管理画面の「設定2」から発行。', 'トークンは24時間で失効します。',
                    'ключ: 12345678', 'キーボード: Logicool2024', '키보드: Logi2024x', 'la clé est sous le paillasson')),
    Reader("label-flag", "label",
        examples=(
            'gpg --batch --passphrase ⟦{alnum:10}!⟧ -c notes.txt',
            'gh auth login --token ⟦{alnum:32}⟧',
            'mysql --password ⟦id=Vinter2026x⟧',
            'vault write --secret ⟦Vinter2026!x⟧',
            '**Password** ⟦Hytta2024⟧',
            'mysql --password ⟦Qm7vX2pLz9Kw⟧ db',
            'machine api.example.com login app password ⟦{alnum:8}#{alnum:5}⟧',
            'bind 127.0.0.1\nrequirepass ⟦{alnum:8}#{alnum:5}⟧\n',
            'some-tool --password ⟦{alnum:12}!⟧ --verbose',
            "keytool -importcert -keystore t.jks -storepass '⟦{alnum:12}!⟧' -file ca.crt",
            '- VPN: user admin, pass ⟦Sommer2022!⟧',
        )),
    Reader("label-below", "label",
    examples=(
        'Wifi password:\n⟦Hytta2024⟧\n',
        '**Password**\n⟦Hytta2024⟧',
        '- **Password:**\n  `⟦Fjell!99x⟧`\n',
        '## Router admin password:\r\n    ⟦Fjell!99x⟧\r\n',
        'api token:\n⟦Abc123xyzQwe⟧\n',
    )),
    Reader("label-compared", "label",
    examples=(
        'if ("⟦Zr8qLm2Wx7Kp⟧" == password) {',
        'if (!"⟦Zr8qLm2Wx7Kp⟧".equals(password)) return false;',
    )),
    Reader("label-unpacked", "label", examples=(
        'username, password = "admin", "⟦Qm7vX2pLz9Kw⟧"',
        "password, user = '⟦Qm7vX2pLz9Kw⟧', 'bob'",
        'user, password = "admin", "⟦{alnum:12}⟧"',
        "my ($user, $pass) = ('admin', '⟦{alnum:10}!⟧');",
    ),
        counter=(
            "user, password = line.split(':')",
            'def login(user, password):',
        )),
    Reader("authorization-value", "bearer_token",
        examples=(
            'curl -H "Authorization: sha256~⟦{alnum:8}@=-.{alnum:8}⟧"',
            'Authorization: ⟦{alnum:32}⟧',
            'Authorization: SSWS ⟦00{url:40}⟧',
        )),
    Reader("prose-password", "password", examples=(
        'the password is ⟦Kq7{alnum:9}!⟧ for now',
        '[04/03/2025, 19:02:40] Ben: the wifi pw is\n[04/03/2025, 19:02:41] Ben: ⟦Jasper-Meadow{digits:4}#⟧\n',
        'pass for the NAS: ⟦{alnum:10}!⟧',
        'the pass is ⟦{alnum:10}⟧',
        'a senha é ⟦{alnum:10}!⟧ desde ontem',
        'la password è ⟦{alnum:10}⟧ per ora',
        'hasło to ⟦{alnum:10}!⟧',
        "Modemin admin şifresi ⟦Lokum_Gul{digits:2}'dir⟧, değiştirme.",  # (a suffix after an apostrophe goes too)
        'väliaikainen salasanasi on ⟦Hb7%{alnum:7}⟧',
        'كلمة سر الواي فاي هي ⟦Yasmine@{digits:4}⟧',
        'রাউটারের অ্যাডমিন পাসওয়ার্ড হলো ⟦Mishti_Doi{digits:2}⟧',
        'Pass router: ⟦Banh_Mi_Pate{digits:1}⟧ , user admin',
        'رمز وای‌فای ⟦Zafaran!Chai{digits:4}⟧ است',
        'รหัสไวไฟคือ⟦Mango@Sticky{digits:2}⟧นะ',
        "Coucou ! Le code wifi c'est ⟦LaBelleVie#{digits:4}⟧ (réseau Livebox-8E2A)",
        "Koden til wifi'en er ⟦Rodgrod-Med-Flode{digits:1}⟧",
        'the wifi code is ⟦Hytta{digits:4}x⟧',
        'heslo je ⟦{alnum:10}!⟧',
        '$pw = ConvertTo-SecureString "⟦{alnum:10}!⟧" -AsPlainText -Force',
        "The default password is '⟦blooberry⟧'.",
        'the wifi password is ⟦Welcome(2024⟧)',
        'Password — ⟦Hytta2024⟧',
        'wifi passord – ⟦Tyttebaer17⟧',
        'the wifi password is ⟦Sommer2022!⟧',
        'The database password is\n⟦Kq7{alnum:9}!⟧ since the move.',  # a hard-wrapped sentence
        'Our wifi password is now\r\n⟦Tyttebaer17⟧ for guests',
        'The router password is\n\n⟦Kq7{alnum:9}!⟧\n',  # a document's next paragraph
        '数据库密码：⟦Kq7{alnum:9}!⟧',  # Chinese, Japanese, Korean, Russian; a full-width colon
        '服务器的密码是⟦Kq7{alnum:9}!⟧，请保密',
        'パスワードは ⟦Kq7{alnum:9}!⟧ です',
        '비밀번호는 ⟦Kq7{alnum:9}!⟧ 입니다',
        'пароль от роутера: ⟦Kq7{alnum:9}!⟧',
        'password：⟦Kq7{alnum:9}!⟧',
        'New hire: temp password for Okta is ⟦Sommer2022!⟧ - change it on first login.',
        "I set the BIOS password to ⟦Sommer2022!⟧, don't forget it",
        'Passordet til wifi er ⟦Sommer2022!⟧',
        'pw til NAS-en: ⟦Sommer2022!⟧',
        'Das WLAN-Passwort lautet ⟦Sommer2022!⟧',
        'Le mot de passe du routeur est ⟦Sommer2022!⟧',
        'La contraseña del wifi es ⟦Sommer2022!⟧',
        'Lösenordet till wifi är ⟦Sommer2022!⟧',
        'Adgangskoden til routeren er ⟦Sommer2022!⟧',
        'Het wachtwoord voor de wifi is ⟦Sommer2022!⟧',
        'The vault passphrase is ⟦meadow-pickle-biscuit-horse-90⟧',
        'the wifi password is ⟦Hytta-{digits:4}⟧ now',
        'wifi şifresi: ⟦Kq7{alnum:9}!⟧',  # more languages (SECRET_WORDS_ELSEWHERE)
        'Ο κωδικός είναι ⟦Kq7{alnum:9}!⟧',
        'كلمة المرور: ⟦Kq7{alnum:9}!⟧',
        'הסיסמה היא ⟦Kq7{alnum:9}!⟧',
        'वाईफाई का पासवर्ड है ⟦Kq7{alnum:9}!⟧',
        'Mật khẩu là ⟦Kq7{alnum:9}!⟧',
        'kata sandi: ⟦Kq7{alnum:9}!⟧',
        'รหัสผ่านคือ ⟦Kq7{alnum:9}!⟧',
        'nova lozinka je ⟦Kq7{alnum:9}!⟧',
        'la parola d\'ordine è ⟦Kq7{alnum:9}!⟧',
        'Parola de la wifi e ⟦Sarmale!{alnum:8}⟧ 😄',  # Romanian and Turkish write a bare "parola"
        'Panele girerken kullanıcı adı depo, parola ⟦Cay-Demlik-{digits:2}⟧',
        'naujas slaptažodis yra ⟦Kq7{alnum:9}!⟧',
        'رمز عبور: ⟦Kq7{alnum:9}!⟧',
        'nova šifra za wifi je ⟦Kq7{alnum:9}!⟧',
        'Kirjaudu salasanalla ⟦Sommer-Kesa-42⟧',
        'Пароль адміністратора роутера змінив на ⟦Sonyashnyk-Pole-{digits:2}⟧',  # "changed it to"
        'Mudei a senha do roteador para ⟦Sabia-Laranja-{digits:2}⟧',
        'Das Router-Passwort habe ich auf ⟦Sonnen-Blume-{digits:2}⟧ geändert',
        '⟦Kq7{alnum:9}!⟧ is the new password for the NAS',  # the value first
        'Sign in with the "raktar" user and the "⟦Tokaji!{alnum:5}7⟧" password.',  # the word ends the text
        'Use "⟦Tokaji!{alnum:5}7⟧" as the password.',  # quoted, two words before the password word
        'enter "admin" in the user field and "⟦Falak-Najm-{digits:4}⟧" in the password field.',
        '⟦Sommer_Hytta_88⟧ est le nouveau mot de passe du routeur',
        '⟦Sommer_Hytta_88⟧ — это новый пароль от роутера',
        '⟦Hytta_Fjord_2024⟧ là mật khẩu mới',
        '⟦Chao-Phraya-{digits:2}⟧ คือรหัสผ่านใหม่ของฐานข้อมูล',  # the connector glued to the word (GLUED_CONNECTORS)
        '⟦Fuji-San-{digits:4}⟧ がDBの新パスワードです',
        'パスワード「⟦Kq7{alnum:9}⟧」でログイン',  # a quoted value, a particle glued after it
        '비밀번호 "⟦Kq7{alnum:9}!⟧"로 로그인하세요',
        'временната ти парола е „⟦Sommer_Hytta_88⟧“.',
        'SSH anahtarının parolası olarak "⟦Sommer_Hytta_88⟧" girin',
        'a „⟦Kq7{alnum:9}!⟧” jelszóval',
        'password: hello ⟦Kq7#{alnum:6}⟧',  # (a word the sentence goes on from stays on a second pass)
    ),
           counter=(
               'asking the user for passwords using plymouth(8), wall(1)',
               'parola chiave: Python3',
               'Python3 がパスワード管理に使われる',
               'Palabra clave: Python3x',
               '密码学 2024年',
               'Passord til hyttekontoen på Finn.',
               'E2fsck now uses less CPU time in pass 5',
               'Fixed bug12345 - Don\'t pass deprecated options to gtkdoc',
               "cls.data1 = cls._read_csv(join(pwd, './data/set-1.csv'))",
               "you cannot be sure that the preceding pass is just 'pass-1'",
               '.TH PWD "1" "2023年9月" "GNU coreutils"',
               'define f($user,$password="",$timeout="0") {',
               'uses: actions/checkout@v4.2.2 # if password != confirm_password',
               'PBKDF2 is a password hashing function defined in RFC 8018.',
               'Ubuntu22 ist das neue System, das Passwort bleibt.',
               'Sprint42 — password reset flow redesign',
               'Le champ du mot de passe s\'appelle "mdp_saisie2".',
               'Пароль хранится в файле «доступ2024.kdbx».',
               'Parola: Covid19 (nuova voce del dizionario)', 'Nuova parola: smart-working2',
               'Cerca la parola Roma2024 nel testo',
               'Palabras clave: covid19, sars-cov-2',
               '密码是2024年3月改的。',
               'パスワード（8〜64文字）',
           )),
)

# --------------------------------------------------------------------------------------------
# What runs after the token scan and the labels, in this order, each when its keywords allow
# --------------------------------------------------------------------------------------------

# Two-factor recovery codes named in other languages, as whole labels (lower case; the English and
# German ones are personal._CODES_LABEL's, read with the words before "code"): each is a label
# when the rest of its line ends in a colon and codes follow (personal._backup_codes)
RECOVERY_CODE_WORDS: tuple[str, ...] = (
    "リカバリーコード", "リカバリコード", "バックアップコード", "復旧コード", "回復コード",  # ja
    "恢复码", "恢复代码", "备用码", "备份码", "復原碼", "恢復碼", "備用碼", "備份碼",  # zh
    "복구 코드", "복구코드", "백업 코드", "백업코드",  # ko
    "codes de récupération", "codes de secours", "codes de sauvegarde",  # fr
    "códigos de recuperación", "códigos de respaldo", "códigos de copia de seguridad",  # es
    "códigos de recuperação", "códigos de backup", "códigos de reserva",  # pt
    "codici di recupero", "codici di backup",  # it
    "herstelcodes", "back-upcodes", "reservecodes",  # nl
    "kody zapasowe", "kody odzyskiwania",  # pl
    "záložní kódy", "kódy pro obnovení",  # cs
    "резервные коды", "коды восстановления", "резервні коди",  # ru, uk
    "reservkoder", "återställningskoder", "reservekoder", "gjenopprettingskoder", "gendannelseskoder",  # sv, no, da
    "varmistuskoodit", "palautuskoodit",  # fi
    "kurtarma kodları", "yedek kodlar", "yedek kodları",  # tr
    "kode cadangan", "kode pemulihan",  # id
    "mã dự phòng", "mã khôi phục",  # vi
)
# a part every word above holds, looked for first (a text without any of them is passed over in a
# few searches, not fifty): each word is searched for only where its part is in the text
RECOVERY_CODE_PARTS = ("codes", "codici", "kod", "kood", "cód", "kód", "コード", "码", "碼", "코드", "коды", "коди", "mã ")

# words that ask for something, as a question mark does: a chat message that asks for a password
# in them ("please send me the wifi password", "パスワード教えてください") is answered in the next one
REQUEST_WORDS = ("please", "pls", "plz", "bitte", "por favor", "per favore", "s'il te plaît", "s'il vous plaît",
                 "svp", "vennligst", "snälla", "proszę", "prosím", "пожалуйста", "будь ласка", "lütfen", "kérlek",
                 "ください", "下さい", "请", "請", "주세요")

DETECTORS: tuple[Rule, ...] = (
    Reader("login-pair", "password", keywords=(" / ",),
        examples=(
            'Login for the router: admin / ⟦Hytta⟧{digits:4}',
            'my bank login is ola.nordmann / ⟦Fjord2024⟧',
            'Netflix: ola@example.com / ⟦Solsikke88⟧',
            'login for the NAS: admin / ⟦Sommer2022!⟧',
            '- Wifi: Hytta-5G / ⟦Sommer2022!⟧',
            # a line that is a system, its user and a password only a password looks like, in any language
            'Passaggio di consegne:\n- gestionale: m.conti / ⟦Bt8#kP4zWq⟧\n',
        ),
        counter=(
            '>>> nsum(lambda k: (-1)**(k+1) / k**1.5, [1, inf])',
            '    raises(TypeError, lambda: A / 1.5)',
            'timestamp: Date.now() / 1000,',
        )),
    Reader("chat-answer", "password", keywords=("?", "？", "؟", *REQUEST_WORDS),
        examples=(
            '[09:20] 佐藤: 共有アカウントのパスワード教えてください\n[09:21] 鈴木: ⟦Sakura#Fuji{digits:4}⟧ です\n',
            '[09:20] Sato: please send me the shared account password\n[09:21] Suzuki: ⟦Sakura#Fuji{digits:4}⟧\n',
            '[07:58] Elin: vet någon lösenordet till kundportalen?\n[07:59] Johan: ⟦Vinter2023#⟧\n',
            'Ana: what is the wifi password?\nBo: ⟦Hytta#{digits:4}⟧\n',
            '[09:20] 佐藤: 共有アカウントのパスワードは？\n[09:21] 鈴木: ⟦Sakura#Fuji2024⟧ です\n',
            'jaké je heslo k Wi-Fi pro hosty?\n⟦Knedlik_Zeli_2023⟧\n',
        ),
        counter=(
            'did the build pass?\nv2.3.1\n',
            'What is the password policy?\nMinimum 12 characters, one digit.\n',
            'Which port does the password service use?\n8080\n',
            'Welcher Server hat das neue Passwort?\nBen: srv-db01\n',  # a name with a digit answers "which"
            'Who reset the password for the shared mailbox?\nBen: jdoe42\n',
        )),
    Reader("app-password", "password", keywords=(("app", "pass"),),
    examples=(
        'gmail app password: ⟦vkbq pmzt hxle wryd⟧',
        'App password for Thunderbird: ⟦vkbq pmzt hxle wryd⟧',
        'Google app password - ⟦vkbq pmzt hxle wryd⟧',
        'App-specific password: ⟦vkbqpmzthxlewryd⟧',
    )),
    Reader("table-column", "label", keywords=("-|", "- |", ":|"),
    examples=(
        '| Dịch vụ | Mật khẩu |\n|---|---|\n| FTP | ⟦Hytta2024⟧ |\n',  # a header in any script
        '| Сервис | Пароль |\n|---|---|\n| NAS | ⟦Hytta2024⟧ |\n',
        '| Service | User | Password |\n|---|---|---|\n| NAS | admin | ⟦Hytta2024⟧ |\n',
        '| Tjeneste | Passord |\n|:--|--:|\n| Ruter | `⟦Fjell!99x⟧` |\n',
        'Service | Password\n--- | ---\nNAS | ⟦Hytta2024⟧\n',
    )),
    Reader("delimited-table", "label", keywords=("|", "\t"),
    examples=(
        'Service | User | Password\nNAS | admin | ⟦Kd8vPq2xLm7!⟧\n',  # the rows the HTML and DOCX readers write
        'host\tuser\tpassword\nnas\tadmin\t⟦Kd8vPq2xLm8!⟧\nweb\troot\t⟦Fjell!99x⟧\n',
        '| Service | Password |\n| Ruter | ⟦Hytta2024⟧ |\n',
        # an HTML table pasted into a note (fold.py reads it as the table it shows)
        '<table class="wifi">\n  <tr><th>SSID</th><th>Password</th></tr>\n  <tr><td>Gast</td><td>⟦{alnum:12}⟧</td></tr>\n</table>',
        '<table>\n<tr>\n  <th>Host</th>\n  <th>Passwort</th>\n</tr>\n<tr>\n  <td>NAS</td>\n  <td>⟦{alnum:10}!x⟧</td>\n</tr>\n</table>',
    )),
    Reader("csv-column", "label", keywords=(",", ";"),
    examples=(
        'host,user,pwd,comment\nftp.example.org,web123,⟦{alnum:12}!⟧,old hosting\n',
        'Name;Benutzer;Passwort;Bemerkung\nFritzBox;admin;⟦{alnum:10}&*x⟧;Keller\n',
        'id, account, secret , last_used\n1, backup-s3 , "⟦{alnum:14}#x⟧" , 2025-02-11\n',
        'name,url,username,password\nNAS,http://nas,admin,⟦Hytta2024⟧\n',
        '"Group","Title","Username","Password","URL","Notes"\n"Root","NAS","admin","⟦Hytta,2024x⟧","http://nas",""\n',
        'folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp\n,,login,NAS,,,0,http://nas,admin,⟦Hytta2024⟧,\n',
    )),
    Reader("auth-header", "bearer_token", keywords=("bearer", "basic"),
        examples=(
            "curl -H 'Authorization: Bearer ⟦AAAAAAAAAAAAAAAAAAAAAA{alnum:90}⟧'",
            'curl -H "Authorization: Bearer ⟦{url:40}⟧" https://api.example.com/v1/me',
            'headers: { Authorization: `Bearer ⟦{url:40}⟧` },',
            'Authorization: Basic ⟦ZGVwbG95OgFwd3N5bToxNAI=⟧\nAccept: */*',
            "headers = {'Authorization': 'Basic ⟦ZGVwbG95OgFwd3N5bToxNAI=⟧'}",
        )),
    Reader("url-credentials", "url_credentials", keywords=(("@", "://"),),
        examples=(
            'https://deploy:⟦{alnum:12}&⟧@example.com/repo.git',
            'https://user:⟦he%2F%2Fo9Xq⟧@pypi.company.com/simple',
            'git clone https://deploy:⟦{alnum:10}%40{alnum:4}⟧@git.example.com/team/repo.git',
        )),
    Reader("oracle-connect", "connection_string", keywords=(("@", "sqlplus"), ("@", "jdbc:oracle")),
        examples=('jdbc:oracle:thin:scott/⟦{alnum:18}⟧@db.example.com:1521/ORCL',)),
    # command lines: a password passed as an argument
    Reader("cli-p-flag", "cli_password", keywords=("-p",),
        examples=(
            'psexec -u DOMAIN\\admin -p ⟦Vinter2026!x⟧\\fx166 cmd',
            'zip -P ⟦Vinter2026!x⟧ backup.zip notes.txt\nsshpass -p ⟦Vinter2026!y⟧ ssh host',
            'unzip -P ⟦{alnum:12}⟧ backup.zip',
            'ipmitool -I lanplus -H 10.0.0.9 -U admin -P ⟦{alnum:12}⟧ chassis power status',
            "mysql -uroot -p'⟦{alnum:12}!⟧' shop < dump.sql",
            'alias db="mysql -uroot -p⟦{alnum:12}⟧"',  # a command inside quotes, brackets, $( )
            'x=$(sshpass -p ⟦{alnum:12}⟧ ssh host uptime)',
            'subprocess.run(["mysql", "-uroot", "-p⟦{alnum:12}⟧"])',
            'sqlcmd -S srv -U sa -P ⟦{alnum:12}!⟧ -Q "select 1"',  # SQL Server's tools: capital -P
            'mysql -u root -p⟦{alnum:12}!⟧ -h db analytics',
            "sshpass -p '⟦{alnum:12}!⟧' ssh deploy@10.0.0.1 uptime",
            'docker login -u robot -p ⟦{alnum:12}!⟧ registry.example.com',
            'az login --service-principal -u 1b2c -p ⟦{alnum:12}!⟧ --tenant 3d4e',
        )),
    Reader("cli-user-password", "cli_password", keywords=("-u",), examples=(
        'curl -u ":⟦{alnum:10}!t⟧" https://localhost:9200',
        "curl -u admin:'⟦{alnum:12}!⟧' https://grafana.internal/api/health",
        "smbclient //fs01/share -U app%'⟦{alnum:12}!⟧'",
        'curl -u admin:⟦{alnum:12}⟧ https://host',
        'curl --proxy-user bob:⟦{alnum:10}⟧ https://host',
    ),
        counter=(
            'cp -u -p would fail to preserve one hard link',
        )),
    Reader("redis-cli-password", "cli_password", keywords=("-a ", "--pass "),
        examples=("redis-cli -h 10.0.0.5 -a '⟦{alnum:12}!⟧' INFO",)),
    Reader("echo-to-password-reader", "cli_password", keywords=(("echo", "|"),),
        examples=(
            "echo 'deploy:⟦{alnum:10}!⟧' | sudo chpasswd",
            "echo '⟦{alnum:12}!⟧' | sudo -S apt-get update",
        )),
    Reader("ldap-bind-password", "cli_password", keywords=((" -w ", "ldap"),),
    examples=('ldapsearch -x -D "cn=admin,dc=example,dc=org" -w ⟦{alnum:10}!⟧ -b dc=example',)),
    Reader("powershell-securestring", "password", keywords=("securestring",),
    examples=('$pw = ConvertTo-SecureString "⟦{alnum:10}!⟧" -AsPlainText -Force',)),
    Reader("htpasswd-batch", "cli_password", keywords=("htpasswd",),
        examples=("htpasswd -b -c /etc/nginx/.htpasswd admin '⟦{alnum:12}!⟧'",)),
    Reader("net-user", "cli_password", keywords=("net user",),
        examples=('net user svc_backup ⟦{alnum:12}!⟧ /add',)),
    Reader("net-use", "cli_password", keywords=("net use ",),
        examples=('net use Z: \\\\fs01\\share /user:CORP\\svc_backup ⟦{alnum:12}!⟧ /persistent:yes',)),
    Reader("irc-identify", "password", keywords=("identify",),
        examples=(
            '[21:13] <kai> /msg NickServ IDENTIFY ⟦{alnum:14}%q⟧\n[21:13] -NickServ- You are now identified for kai.',
            '/ns identify kai ⟦{alnum:12}⟧',
        ),
        counter=('Use /msg NickServ IDENTIFY to log in to your account again.', 'Type /msg NickServ IDENTIFY to login')),
    Reader("openssl-k", "cli_password", keywords=("openssl",),
        examples=('$ openssl enc -aes-256-cbc -pbkdf2 -k "⟦{alnum:9}\'x⟧" -in secrets.tar -out secrets.tar.enc',)),
    Reader("freerdp-password", "cli_password", keywords=("freerdp",),
        examples=('xfreerdp /v:10.0.0.4 /u:admin /p:⟦{alnum:12}!⟧ /cert:ignore',)),
    Reader("lftp-user", "cli_password", keywords=("lftp",),
        examples=("lftp -u backup,'⟦{alnum:12}!⟧' sftp://nas.local",)),
    Reader("session-cookie", "session_cookie", keywords=("cookie", " -b "),
        examples=(
            'Cookie: lang=en; sessionid=⟦{alnum:32}⟧; csrftoken=abc',
            'Set-Cookie: connect.sid=⟦{alnum:32}⟧; Path=/; HttpOnly',
        )),
    Reader("comment-label", "label", keywords=("#", "//", "--", ";"),
        examples=(
            '# Парола за базата данни\nBAZA_PAROLA=⟦Rila-Planina-{digits:4}⟧\n',
            '# מפתח API לשירות המיילים\nMAFTEACH_API=⟦{alnum:32}⟧\n',
            '# API key for the maps service\nMAPS_CREDENTIAL_X=⟦{small:12}{digits:8}⟧\n',
            '// wachtwoord van de database\nDB_WW: "⟦Tulpen-Veld-{digits:4}⟧"\n',
        ),
        counter=(
            '# Database password\nDB_USER=facturation\n',
            '# password policy\nMIN_LENGTH=12\n',
            '# token settings\nTOKEN_TTL=3600\n',
            '# API key for the maps service\nMAPS_ENABLED=true\n',
            '# API key lives in 1Password\nAPI_VERSION=2023-10-01\n',
            '# Senha do banco\nSERVIDOR=db-prod-01\n',
            '; Kennwort wird beim ersten Start gesetzt\nSprache=de_DE.UTF-8\n',
            '# The DB password comes from the secret below\nimage: postgres:16-alpine\n',
            '# the password is read from the vault\nVAULT_PATH=secret/data/app\n',
        )),
    Reader("bundler-credentials", "password", keywords=("bundle_",),
    examples=('export BUNDLE_GEMS__EXAMPLE__COM={lower:8}:⟦{alnum:10}!t⟧',)),
    Pattern("pgpass", "password", keywords=("pgpass", ":5432:", ":*:"),
            pattern=r"(?m)^(?![^\n]*\[REDACTED:)[ \t]*[A-Za-z0-9_.*\[\]:-]{1,253}:(?:\d{1,5}|\*):[^:\s]{1,63}:[^:\s]{1,63}:([^\s]+)[ \t]*\r?$",
            group=1, validators=("cli_value",),
        examples=('# ~/.pgpass\ndb.example.com:5432:shop:app:⟦{alnum:8}#{alnum:5}⟧\n',)),
    Reader("k8s-secret", "k8s_secret", keywords=(("kind", "secret"),),
        examples=(
            'apiVersion: v1\nkind: secret\ndata:\n\textra: ⟦YWRtaW46AWFsbnVtOjEyAg==⟧\n',
            'kind: Secret\ndata:\n  .dockercfg: |\n    ⟦eyJhdXRocyI6eyJyLmV4YW1wbGUiOnsiYXV0aCI6IllXUnRhVzQ2QVdGc2JuVnRPakV5QWc9PSJ9fX0=⟧\n',
            'apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  DB_PASS: ⟦AWFsbnVtOjE2Ag==⟧\n  DATABASE_URL: ⟦cG9zdGdyZXM6Ly9hcHA6AWFsbnVtOjEyAkBkYi9hcHA=⟧\n',
        )),
    # a password's hash beside its user, one a line: .htpasswd, /etc/shadow (a hash is cracked offline)
    Pattern("password-hash", "password_hash",
            examples=(
                'alice:⟦$apr1${lower:8}${b64x:22}⟧\nbob:⟦{SHA}{b64:27}=⟧',
                'root:⟦$6${lower:8}${b64x:86}⟧:19000:0:99999:7:::',
                'UPDATE users SET password_hash = \'⟦$2b$12${b64x:53}⟧\' WHERE id = 7;',
                '"hash": "⟦$1${lower:8}${b64x:22}⟧"',
            ),
            counter=(
                'the bcrypt prefix is $2b$ followed by the cost',
                'echo $1$2 $6$HOME',
            ), keywords=("$apr1$", "$2y$", "$2a$", "$2b$", "{sha}", "$1$", "$5$", "$6$", "$y$"),
            pattern=r"(?m)^[ \t]*[\w.@+-]{1,64}:(\$apr1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}|\$2[abxy]?\$\d\d\$[./0-9A-Za-z]{53}"
                    r"|\{SHA\}[A-Za-z0-9+/]{27}=|\$[156]\$[^$:\s]{1,32}\$[./0-9A-Za-z]{22,86}"
                    r"|\$y\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{1,32}\$[./0-9A-Za-z]{43})(?=:|[ \t]*\r?$)"
                    # ... and a crypt(3) hash standing alone, which no other text is shaped like
                    r"|(?<![\w$./])(\$2[abxy]\$\d\d\$[./0-9A-Za-z]{53}|\$[156]\$[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{22}"
                    r"(?:[./0-9A-Za-z]{21}|[./0-9A-Za-z]{64})?|\$apr1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22})(?![\w$./])",
            group=1),
    Reader("terraform-variable", "label", keywords=(("variable", "default"),),
    examples=(
        'variable "db_password" {\n  type    = string\n  default = "⟦Hx7!{alnum:10}⟧"\n}\n',
        'variable "api_token" { default = "⟦{alnum:32}⟧" }',
        'variable "conn" {\n  sensitive = true\n  default   = "⟦Server=db;Pwd={alnum:14}⟧"\n}',
    )),
    Reader("webhook-url", "webhook_url", keywords=("hook",),
    examples=(
        'curl -X POST https://acme.tines.com/webhook/⟦{lower:32}⟧/⟦{lower:32}⟧',
        'https://acme.webhook.office.com/webhookb2/{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}@{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}/IncomingWebhook/⟦{hex:32}⟧/{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}',
    )),
    # shapes shorter than the token scan's 20 characters
    Pattern("slack-legacy-token", "slack_token", keywords=("xox",),
            pattern=r"(?<![A-Za-z0-9_-])xox[ar]-(?:\d-)?[0-9A-Za-z]{8,48}(?![A-Za-z0-9_-])",
    examples=(
        '"access_token": "⟦xoxa-{lower:12}⟧"\n"refresh_token": "⟦xoxr-4-{lower:12}⟧"',
        '"access_token": "⟦xoxa-5-{lower:12}⟧',
    )),
    Pattern("sumologic-access-id", "sumologic_access_id", keywords=("sumo",),
            pattern=r"(?i)sumo[a-z]*[_.-]?access[_.-]?id[\"']?\s*[:=]\s*[\"']?(su[A-Za-z0-9]{12})(?![A-Za-z0-9])",
            group=1, validators=("random14",),
    examples=('SUMO_ACCESS_ID = "⟦su{alnum:12}⟧"',)),
    # base64 of "-----BEGIN": a PEM file put in an environment variable
    Pattern("pem-base64", "private_key", keywords=("ls0tls1crudjti",),
            pattern=r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}", validators=("b64_private_key",),
    examples=('PRIVATE_KEY_B64=⟦LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQoBYjY0OjY0Ago=⟧',)),
    # HashiCorp Vault unseal keys: "Unseal Key 2: …", "vault operator unseal …"
    Pattern("vault-unseal-key", "vault_unseal_key", keywords=("nseal",),
            pattern=r"(?:[Uu]nseal [Kk]ey \d{1,2}: |vault operator unseal (?:-\S+ )*)([A-Za-z0-9+/]{20,}={0,2})",
            group=1, validators=("random20",),
    examples=('Unseal Key 2: ⟦{b64:44}⟧', 'kubectl exec -ti vault-0 -- vault operator unseal ⟦{b64:44}⟧')),
    # (the calls of CREDENTIAL_CALLS, lower-cased; or "auth=(" as a keyword argument)
    Reader("credential-call", "password", keywords=("credential(", "credentials(", "directoryentry(", "auth(", ".login(",
                                                    "authentication(", ("(", "auth", "=")),
    examples=(
        'c.Credentials = new NetworkCredential("ops@corp.example", "⟦{alnum:12}⟧");',
        'new DirectoryEntry("LDAP://corp.example",\n  "svc@corp.example",\n  "⟦{alnum:12}⟧");',
        'requests.get(url, auth=("admin", "⟦Qm7vX2pLz9Kw⟧"))',
        "HTTPBasicAuth('admin', '⟦Qm7vX2pLz9Kw⟧')",
        'smtp.login("me@x.io", "⟦Qm7vX2pLz9Kw⟧")',
        'server.login(cfg.user, "⟦Qm7vX2pLz9Kw⟧")',
        'new PasswordAuthentication("me", "⟦Qm7vX2pLz9Kw⟧".toCharArray())',
    )),
    Reader("sql-identified-by", "password", keywords=("identified",),
    examples=(
        "CREATE USER app IDENTIFIED BY '⟦Qm7vX2pLz9Kw⟧';",
        'ALTER USER app IDENTIFIED BY ⟦Qm7vX2pLz9Kw⟧;',
        "CREATE USER 'app'@'%' IDENTIFIED WITH mysql_native_password BY '⟦Qm7vX2pLz9Kw⟧';",
    )),
    # the text of a Wi-Fi QR code: WIFI:T:WPA;S:<net>;P:<password>;;
    Pattern("wifi-qr", "password", keywords=("wifi:",),
            pattern=r"WIFI:(?:[A-Z]:(?:\\.|[^;\\\n]){0,64};){0,4}P:((?:\\.|[^;\\\n])+)",
            group=1, validators=("cli_value",),
    examples=("qrencode 'WIFI:T:WPA;S:Hytta;P:⟦{alnum:10}!⟧;;'",)),
    # New Relic keys end in their kind: a license key in NRAL, a mobile app token in -NRMA
    Pattern("new-relic-key", "new_relic_key", keywords=("nral", "-nrma"),
            pattern=r"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{36}NRAL|[A-Za-z0-9]{40,42}-NRMA)(?![A-Za-z0-9-])",
    examples=("license = '⟦eu01xx{hex:30}NRAL⟧'", 'NEW_RELIC_APP = ⟦AA{hex:40}-NRMA⟧')),
    # PayPal Braintree: access_token$production$<id>$<hex>
    Pattern("braintree-token", "braintree_token", keywords=("$production$", "$sandbox$"),
            pattern=r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}(?![A-Za-z0-9])",
            examples=(
                'gateway = access_token$production$⟦{lower:16}${hex:32}⟧',
                'BT=⟦access_token$production${lower:16}${hex:32}⟧',
            )),
    # Azure Data Factory: IR@<guid>@<factory>@<region>@<key>
    Pattern("datafactory-shir-key", "datafactory_shir_key", keywords=("ir@",),
            pattern=r"IR@[0-9a-zA-Z-]{36}@[^@\s]{1,100}@[0-9a-zA-Z=-]{0,100}@[A-Za-z0-9+/=]{44}",
    examples=(
        'pasted from the console:\n⟦IR@{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}@adf-app-001@we@{b64:43}=⟧\n',
    )),
    # Jenkins credentials.xml keeps secrets encrypted as {AQAAAB…}: the master key decrypts them
    Pattern("jenkins-secret", "jenkins_secret", keywords=("aqaaab",),
            pattern=r"\{[^{}\n]{0,40}?(AQAAAB[^{}\n]{4,}?)\}", group=1,
    examples=('<secret>{⟦AQAAABAAAAAQ{b64:44}=⟧}</secret>',)),
    # (rase: phrase, frase)
    Reader("personal", "personal", keywords=("code", "pin", "puk", "seed", "rase", "keypad", "lockbox", "lock box", "lock-box", "key box", "key safe",
                                             "combination") + RECOVERY_CODE_WORDS),
    Reader("email", "email", keywords=("@",), optional="strip_emails"),
)

# --------------------------------------------------------------------------------------------
# Rules inside the readers above, named so that --explain can say which one redacted a value
# --------------------------------------------------------------------------------------------
READER_RULES: tuple[Rule, ...] = (
    Reader("connection-string", "connection_string",
        examples=(
            'redis://:⟦{alnum:10}!⟧@cache:6379/0',
            'DATABASE_URL=postgres://app:⟦{alnum:10}%40{alnum:4}⟧@db.internal:5432/shop',
            'const uri = "mongodb+srv://root:⟦{alnum:10}%40{alnum:4}⟧@cluster0.abcde.mongodb.net/shop";',
            'CELERY_BROKER_URL=redis://default:⟦{alnum:10}%40{alnum:4}⟧@redis.local:6379/0',
        )),
    Reader("github-oauth-user", "url_credentials",
    examples=(
        'git clone https://⟦9f8e7d6c5b4a39281706f5e4d3c2b1a098765432⟧:x-oauth-basic@github.com/o/r.git',
    )),
    Reader("cli-key-as-user", "cli_password",
    examples=('curl -u "⟦{alnum:10}!t⟧:" https://localhost:9200',)),
    Reader("k8s-secret-json", "k8s_secret"),
    Reader("seed-phrase", "seed_phrase",
        examples=(
            'seed phrase: ⟦{small:5} {small:7} {small:6} {small:6} {small:8} {small:8} {small:5} {small:8} {small:8} {small:8} {small:6} {small:5}⟧',
            'Secret Recovery Phrase (MetaMask): ⟦{small:5} {small:7} {small:6} {small:6} {small:8} {small:8} {small:5} {small:8} {small:8} {small:8} {small:6} {small:5} {small:5} {small:5} {small:6} {small:6} {small:5} {small:7} {small:5} {small:8} {small:6} {small:7} {small:5} {small:6}⟧',
            '## Ledger seed\n\n1. ⟦{small:5}⟧\n2. ⟦{small:7}⟧\n3. ⟦{small:6}⟧\n4. ⟦{small:6}⟧\n5. ⟦{small:8}⟧\n6. ⟦{small:8}⟧\n7. ⟦{small:5}⟧\n8. ⟦{small:8}⟧\n9. ⟦{small:8}⟧\n10. ⟦{small:8}⟧\n11. ⟦{small:6}⟧\n12. ⟦{small:5}⟧\n\nStored in the safe.',
            '24 words seed phrase: 1 ⟦{small:5}⟧ 2 ⟦{small:7}⟧ 3 ⟦{small:6}⟧ 4 ⟦{small:6}⟧ 5 ⟦{small:8}⟧ 6 ⟦{small:8}⟧ 7 ⟦{small:5}⟧ 8 ⟦{small:8}⟧ 9 ⟦{small:8}⟧ 10 ⟦{small:8}⟧ 11 ⟦{small:6}⟧ 12 ⟦{small:5}⟧ 13 ⟦{small:5}⟧ 14 ⟦{small:5}⟧ 15 ⟦{small:6}⟧ 16 ⟦{small:6}⟧ 17 ⟦{small:5}⟧ 18 ⟦{small:7}⟧ 19 ⟦{small:5}⟧ 20 ⟦{small:8}⟧ 21 ⟦{small:6}⟧ 22 ⟦{small:7}⟧ 23 ⟦{small:5}⟧ 24 ⟦{small:6}⟧',
            'Backup phrase:\n⟦{small:5}⟧ ⟦{small:7}⟧ ⟦{small:6}⟧ ⟦{small:6}⟧\n⟦{small:8}⟧ ⟦{small:8}⟧ ⟦{small:5}⟧ ⟦{small:8}⟧\n⟦{small:8}⟧ ⟦{small:8}⟧ ⟦{small:6}⟧ ⟦{small:5}⟧',
            'SEED_PHRASE="⟦{small:5} {small:7} {small:6} {small:6} {small:8} {small:8} {small:5} {small:8} {small:8} {small:8} {small:6} {small:5}⟧"',
            'Gjenopprettingsfrase: ⟦{small:5} {small:7} {small:6} {small:6} {small:8} {small:8} {small:5} {small:8} {small:8} {small:8} {small:6} {small:5}⟧',
            'Wiederherstellungsphrase: ⟦{small:5} {small:7} {small:6} {small:6} {small:8} {small:8} {small:5} {small:8} {small:8} {small:8} {small:6} {small:5}⟧',
        )),
    Reader("recovery-codes", "recovery_code",
        examples=(
            'backup codes: ⟦1270-3885⟧ ⟦1721-5071⟧ ⟦5487-8937⟧',
            '2FA recovery codes\n- ⟦{lower:4}-{lower:4}⟧\n- ⟦{lower:4}-{lower:4}⟧\n',
            'GitHub recovery codes (saved 2024-03-01):\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n\nnext',
            'Google backup codes:\n⟦8763 4975⟧    ⟦8453 9436⟧\n⟦6820 6598⟧    ⟦8771 9218⟧',
            'Backup-Codes:\n- [x] ⟦1270-3885⟧\n- [ ] ⟦1721-5071⟧',
            'Wiederherstellungscodes:\n1. ⟦1270-3885⟧\n2. ⟦1721-5071⟧',
            'GitHubのリカバリーコード（残り４つ）：\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧\n⟦{hex:5}-{hex:5}⟧',
            'Codes de récupération Google :\n⟦8763 4975⟧    ⟦8453 9436⟧',
            'Резервные коды:\n1. ⟦1270-3885⟧\n2. ⟦1721-5071⟧',
        )),
    Reader("pin", "pin",
        examples=(
            'PIN for the card: ⟦4921⟧',
            'bank pin ⟦4921⟧',
            'SIM PIN: ⟦4921⟧',
            'the PIN is ⟦4921⟧.',
            'PIN ⟦4921⟧',
            '**PIN:** ⟦4921⟧',
            '{"pin": "⟦4921⟧"}',
            'PIN-kode til kortet: ⟦4921⟧',
            'SIM PUK: ⟦06612885⟧',
            'PIN for the new card: ⟦1 4 6 9⟧',
        )),
    Reader("pin-column", "pin",
        examples=(
            '| Card | PIN |\n|---|---|\n| Visa | ⟦4921⟧ |',
            'iccid,msisdn,pin,puk\n8949754222100538917,+49 151 7543888,⟦2481⟧,⟦06612885⟧',
            'Door\tDoor code\nFront\t⟦55123⟧#',
        ),
        counter=('| Pin | Function |\n|---|---|\n| 13 | LED |', '| Building code | Year |\n|---|---|\n| IBC | 2018 |')),
    Reader("pin-list", "pin",
        examples=(
            '### Door codes\n- Front door: ⟦80764⟧#\n- Bike shed: ⟦64020⟧\n- Mailbox key is on the blue ring',
            '## PINs\n\n- Visa: ⟦4921⟧\n* SIM: ⟦2481⟧\n',
        ),
        counter=('## Error codes\n- E42: 4711\n', 'Our door codes changed.\n- Front: 80764')),
    Reader("lock-code", "pin",
        examples=(
            'door code is ⟦55123⟧#',
            'alarm code: ⟦55123⟧',
            'gate code ⟦1987⟧',
            'garage code: ⟦55123⟧',
            'safe code is ⟦12-34-56⟧',
            'Türcode ⟦55123⟧',
            'building code: ⟦55123⟧',
            'Garage keypad: ⟦53320⟧',
            'Safe combination: ⟦12-34-56⟧',
            'The code for the lock box is ⟦7082⟧.',  # the lock after its code
            'the code to the garage is ⟦53320⟧',
            'Lock box: ⟦7082⟧',
        ),
        counter=('Keypad 2000 series, model 4721', 'error code for the door sensor is 4021',
                 'the lock box model 7082 from Acme')),
    Reader("propagated", "secret"),
)


# --------------------------------------------------------------------------------------------
# Vocabulary: labels
# --------------------------------------------------------------------------------------------
PASSWORD_WORDS = frozenset(
    "password passwd passwort passord passordet pwd pass pw passphrase passcode kennwort "
    "lösenord losenord lösenordet wachtwoord contraseña contrasena adgangskode adgangskoden "
    "kodeord kodeordet senha salasana hasło haslo heslo jelszó jelszo psk mdp motdepasse "
    "passin passout storepass keypass srcstorepass deststorepass srckeypass destkeypass "
    "kspass tspass requirepass masterauth masterpass".split()) | frozenset(
    # other languages', as an identifier writes them (mot_de_passe, contraseña_bd, HASLO_BD, mat_khau)
    "contrasenya contrasinal wagwoord parool lozinka geslo slaptazodis slaptažodis sifre şifre matkhau "
    "mậtkhẩu katasandi katalaluan hesla jelszó jelszavak lykilord lykilorð пароль парола лозинка κωδικός "
    "κωδικοσ κωδικος كلمةالمرور رمزعبور סיסמה סיסמא पासवर्ड รหัสผ่าน 密码 密碼 パスワード 비밀번호 암호 비번".split())
# a key's word in other languages: a bare key (judged as "key" is), an API key beside "api"
# (CHIAVE_API, API_KLUC, kunci_api)
FOREIGN_KEY_WORDS = frozenset(
    "nøkkel nokkel schlüssel schluessel nyckel sleutel nøgle nogle chiave chave clé cle klucz kluc kljuc ključ "
    "klic klíč kľúč cheie kulcs avain anahtar anahtari raktas võti voti ключ кључ κλειδί مفتاح کلید מפתח "
    "khoa khóa kunci キー 키 密钥 秘钥 klyuch kljuch kluch kleidi miftah kelid".split())
# In languages that put what qualifies a noun after it, an identifier opens on its head: the
# password of the database is HASLO_BAZY, PAROL_BD, senha_do_banco, parola_d_ordine; a secret or
# an API key is chiave_segreta, cle_api, KLYUCH_API (as "db_password" ends on its head in English).
# A label whose first word is one of these is a password's; a key's word first is a secret key's
# when a word after it says so (FOREIGN_KEY_QUALIFIERS: not "clave_primaria", a database's key).
# Words as identifiers write them: without accents, Cyrillic and Greek in Latin letters.
HEAD_FIRST_PASSWORD_WORDS = frozenset(
    "contrasena contraseña contrasenya contrasinal senha haslo hasło heslo hesla parol parola lozinka "
    "geslo matkhau katasandi katalaluan kodikos slaptazodis motdepasse пароль парола лозинка κωδικός".split())
HEAD_FIRST_KEY_WORDS = frozenset(
    "clave chiave chave cle clé klucz kluc klic klíč kljuc ključ cheie ключ кључ klyuch kljuch kluch "
    "kunci khoa kleidi κλειδί miftah".split())
FOREIGN_KEY_QUALIFIERS = frozenset(
    "api secreta secreto segreta segreto secrete secrète privada privado privata privato privee privée "
    "acceso accesso acesso acces accès tajny tajna prywatny dostepu dostępu sekretny tajni tajný "
    "dostupa доступа pristupa pristup rahasia akses".split())
# ... and what such a head makes no secret of after it: a hash, a rule, a keyword ("parola_chiave")
HEAD_FIRST_NOT = frozenset("hash hashed politica política polityka policy reset regex regla pattern min max len "
                           "length longitud lunghezza chiave primaria primario foranea externa unica".split())
SECRET_WORDS = frozenset(
    "secret token apikey credential credentials creds authorization auth authtoken "
    "accesstoken refreshtoken idtoken sessiontoken privatekey secretkey accesskey accountkey "
    "sharedaccesskey appkey masterkey dockerconfigjson dockercfg appid sig clientsecret "
    "passkey skey".split()) | frozenset(  # skey: Duo's secret key
    "secreto segreto geheim geheimnis sekret jeton токен توکن توكن トークン 토큰 令牌 密钥 秘钥".split())
# A password's, a key's or a token's word in the other languages people write notes in, as prose
# and labels write it (lower-cased): (the literal stem the label scan finds it by; the forms that
# count as the word, a regular expression starting with the stem; the label the value after it is
# judged as: "password" (prose.py), "token" or a bare "key" (labels._key_elsewhere)). A key's word
# takes the qualifier after it where its language puts it ("clé API", "chave de API": judged as
# "API key"). The stems are the scan's way in (labels.SCAN_STEMS), so none may begin another.
# Where a word also means something else, its forms say which ("parola chiave" is a keyword).
# Examples: the prose-password and label-elsewhere readers'.
SECRET_WORDS_ELSEWHERE: tuple[tuple[str, str, str], ...] = (
    # passwords
    ("pass", r"passwords?|passwort(?:e|s)?|passe|passord(?:et)?|pass|passphrase|passcode", "password"),
    ("pw", r"pw|pwd", "password"),
    ("kennwort", r"kennwort", "password"),
    ("mdp", r"mdp", "password"),
    ("contrase", r"contraseña|contrasena|contrasenya", "password"),  # Spanish, Catalan
    ("contrasin", r"contrasinal", "password"),  # Galician
    ("clave", r"(?<!palabra )(?<!palabras )clave", "password"),  # (a "palabra clave" is a keyword)
    ("lösenord", r"lösenord(?:et)?", "password"),
    ("losenord", r"losenord(?:et)?", "password"),
    ("adgangskode", r"adgangskode(?:n)?", "password"),
    ("kodeord", r"kodeord(?:et)?", "password"),
    ("wachtwoord", r"wachtwoord", "password"),
    ("wagwoord", r"wagwoord", "password"),  # Afrikaans
    ("senha", r"senha", "password"),
    ("salasana", r"salasana(?:lla|n|ksi|a)?(?:si|ni|nsa|mme|nne)?", "password"),  # (and "your": salasanasi)
    ("hasło", r"hasło", "password"),
    ("haslo", r"haslo", "password"),
    ("heslo", r"heslo", "password"),  # Czech, Slovak
    ("heslem", r"heslem", "password"),
    ("hesla", r"hesla", "password"),
    ("jelszó", r"jelszó(?:val|t)?", "password"),
    ("jelszo", r"jelszo", "password"),
    ("jelszav", r"jelszav(?:a|át|ak)", "password"),
    ("šifr", r"šifr(?:a|e|u|om)", "password"),  # Croatian, Serbian, Bosnian
    ("шифр", r"шифр(?:а|е|у|ом)", "password"),
    ("şifre", r"şifre(?:si|niz|m)?", "password"),  # Turkish
    ("sifre", r"sifre(?:si|niz|m)?", "password"),
    # Turkish, Romanian, Italian: a bare "parola" is the password in Turkish and Romanian ("parola
    # contului: …", "și parola …"), and a word in Italian, which writes it after an article or a
    # preposition, as "parola chiave", or as a dictionary's label ("Parola: Covid19")
    ("parol", r"parola(?:sı|si)|parolă|parola d'ordine|(?<!la )(?<!una )(?<!ogni )(?<!sola )(?<!della )(?<!nella )"
              r"(?<!alla )(?<!sulla )(?<!dalla )(?<!questa )(?<!quella )parola(?! chiave)(?![ \t]*:)", "password"),
    ("lozink", r"lozink(?:om|[aeiu])", "password"),  # Croatian, Serbian, Bosnian
    ("gesl", r"gesl[oa]", "password"),  # Slovenian
    ("parool", r"parool(?:i)?", "password"),  # Estonian
    ("slaptažod", r"slaptažod(?:is|į|žio)", "password"),  # Lithuanian
    ("slaptazod", r"slaptazod(?:is|i|zio)", "password"),
    ("lykilorð", r"lykilorð(?:ið)?", "password"),  # Icelandic
    ("lykilord", r"lykilord(?:id)?", "password"),
    ("pasahitz", r"pasahitza?", "password"),  # Basque
    ("cyfrinair", r"cyfrinair", "password"),  # Welsh
    ("fjalëkalim", r"fjalëkalim(?:i)?", "password"),  # Albanian
    ("nenosiri", r"nenosiri", "password"),  # Swahili
    ("mật khẩu", r"mật khẩu", "password"),  # Vietnamese
    ("mậtkhẩu", r"mậtkhẩu", "password"),
    ("kata sandi", r"kata sandi(?:nya)?", "password"),  # Indonesian
    ("kata laluan", r"kata laluan", "password"),  # Malay
    ("парол", r"парол[а-яё]*", "password"),  # Russian, Ukrainian, Bulgarian
    ("лозинк", r"лозинк(?:ом|[аеиу])", "password"),  # Serbian, Macedonian
    ("κωδικ", r"κωδικ(?:ός|ος|ού|ου|ό|ο)(?: πρόσβασης)?", "password"),  # Greek
    ("συνθηματικ", r"συνθηματικ(?:ό|ο)", "password"),
    ("كلمة", r"كلمة (?:ال)?(?:مرور|سر)", "password"),  # Arabic (with the article or without)
    ("رمز", r"رمز (?:عبور|وای[\u200c ]?فای)", "password"),  # Persian (a Wi-Fi's: "رمز وای‌فای")
    ("گذرواژه", r"گذرواژه", "password"),
    ("סיסמ", r"סיסמ(?:אות|ה|א|ת)", "password"),  # Hebrew
    ("पासवर्ड", r"पासवर्ड", "password"),  # Hindi
    ("পাসওয়ার্ড", r"পাসওয়ার্ড", "password"),  # Bengali
    ("கடவுச்சொல்", r"கடவுச்சொல்", "password"),  # Tamil
    ("پاس ورڈ", r"پاس ورڈ", "password"),  # Urdu
    ("รหัสผ่าน", r"รหัสผ่าน", "password"),  # Thai
    ("รหัสไวไฟ", r"รหัสไวไฟ", "password"),  # (a Wi-Fi's code)
    ("პაროლ", r"პაროლი?", "password"),  # Georgian
    ("գաղտնաբառ", r"գաղտնաբառ(?:ը)?", "password"),  # Armenian
    # a Wi-Fi network's code is its password ("the wifi code is …", "WLAN-Code: …", "code wifi c'est
    # …", "Koden til wifi'en er …"); "code" alone names too much else. The whole phrase is the stem:
    # "wifi" alone would take "Wifi-wachtwoord" from its own stem
    *((f"{net}{sep}{code}", f"{net}{sep}{code}" + ("" if code == "code" else "(?:en?)?"), "password")
      for net in ("wifi", "wi-fi", "wlan") for sep in (" ", "-") for code in ("code", "kod")),
    ("code wi", r"code wi-?fi", "password"),  # French
    ("code du wi", r"code du wi-?fi", "password"),
    ("code de la wi", r"code de la wi-?fi", "password"),
    ("código wi", r"código (?:do |de )?wi-?fi", "password"),  # Spanish, Portuguese
    ("codice wi", r"codice (?:del )?wi-?fi", "password"),  # Italian
    ("kode til wi", r"kode til wi-?fi(?:'en|en|-en)?", "password"),  # Danish, Norwegian
    ("koden til wi", r"koden til wi-?fi(?:'en|en|-en)?", "password"),
    ("koden till wi", r"koden till wi-?fi(?:'n|n|-n|et)?", "password"),  # Swedish
    ("密码", r"密码", "password"),
    ("密碼", r"密碼", "password"),
    ("口令", r"口令", "password"),
    ("パスワード", r"パスワード", "password"),
    ("パスフレーズ", r"パスフレーズ", "password"),
    ("비밀번호", r"비밀번호", "password"),
    ("비번", r"비번", "password"),
    ("암호", r"암호", "password"),
    # keys and tokens
    ("clé", r"clé(?: (?:d'|de l')?api| secrète| privée| d'accès)?", "key"),  # French
    ("chiave", r"chiave(?: (?:dell'|di )?api| segreta| privata| di accesso)?", "key"),  # Italian
    ("chave", r"chave(?: (?:de |da )?api| secreta| privada| de acesso)?", "key"),  # Portuguese
    ("kluc", r"klucz(?:a)?(?: api| prywatny| tajny| dostępu)?|kluc", "key"),  # Polish; Slovak's kľúč as an identifier writes it
    ("ключ", r"ключ(?:а)?(?: api| доступа)?", "key"),  # Russian
    ("anahtar", r"anahtar(?:ı|i)?", "key"),  # Turkish ("API anahtarı")
    ("kulcs", r"kulcs(?:a)?", "key"),  # Hungarian ("API-kulcs")
    ("avain", r"avain", "key"),  # Finnish ("API-avain")
    ("jeton", r"jeton(?: d'accès| d'api)?", "token"),  # French
    ("токен", r"токен(?:а)?(?: доступа)?", "token"),
    ("密钥", r"密钥", "token"),  # Chinese
    ("秘钥", r"秘钥", "token"),
    ("金鑰", r"金鑰", "token"),
    ("密鑰", r"密鑰", "token"),
    ("令牌", r"令牌", "token"),
    ("klíč", r"klíč(?:e)?(?: api)?", "key"),  # Czech
    ("klic", r"klic", "key"),
    ("kljuc", r"kljuc", "key"),
    ("raktas", r"raktas", "key"),  # Lithuanian
    ("võti", r"võti", "key"),  # Estonian
    ("voti", r"voti", "key"),
    ("کلید", r"کلید(?: api)?", "key"),  # Persian
    ("khoa", r"khoa(?: api)?", "key"),
    ("kľúč", r"kľúč(?:a)?(?: api)?", "key"),  # Slovak
    ("ključ", r"ključ(?:a)?(?: (?:za )?api)?", "key"),  # Croatian, Serbian, Slovenian
    ("кључ", r"кључ(?:а)?(?: (?:за )?api)?", "key"),  # Serbian
    ("chei", r"chei(?:e|a)(?: api)?", "key"),  # Romanian
    ("κλειδ", r"κλειδί(?: api)?", "key"),  # Greek
    ("مفتاح", r"مفتاح(?: api)?", "key"),  # Arabic
    ("khóa", r"khóa(?: api)?", "key"),  # Vietnamese
    ("kunci", r"kunci(?: api)?", "key"),  # Indonesian, Malay
    ("คีย์", r"คีย์(?: ?api)?", "key"),  # Thai
    ("टोकन", r"टोकन", "token"),  # Hindi
    ("कुंजी", r"कुंजी", "key"),
    ("โทเค็น", r"โทเค็น", "token"),  # Thai
    ("טוקן", r"טוקן(?: גישה)?(?: ל-?api)?", "token"),  # Hebrew ("טוקן גישה ל-API": an API access token)
    ("توكن", r"توكن", "token"),  # Arabic
    ("توکن", r"توکن", "token"),  # Persian
    ("מפתח", r"מפתח(?: api)?", "key"),  # Hebrew
    ("キー", r"キー", "key"),  # Japanese ("APIキー")
    ("トークン", r"トークン", "token"),
    ("シークレット", r"シークレット", "token"),
    ("키", r"키", "key"),  # Korean ("API 키")
    ("토큰", r"토큰", "token"),
)
# qualifiers that turn a bare "key" into a secret key
KEY_QUALIFIERS = frozenset(
    "api secret private access account app application master encryption enc signing sign "
    "client auth license licence subscription shared service webhook hmac jwt session storage "
    "admin write deploy ssh gpg pgp root management mgmt cipher crypt crypto aes x ingest "
    "ingestion instrumentation sdk server rest consumer aws azure gcp s3 openai anthropic "
    "mistral cohere groq gemini stripe twilio sendgrid mailgun datadog dd sentry algolia "
    "mapbox pusher firebase recaptcha live prod production test dev user personal "
    "nøkkel".split())
# what names a wireless network's key ("WPA2 key", "Wi-Fi key", "network key")
WIFI_WORDS = frozenset("wifi wlan wpa wpa2 wpa3 wep network".split())
# "pat" is a personal access token only beside the name of a service that issues them
PAT_OWNERS = frozenset("github gh gitlab gl azure devops ado vsts bitbucket atlassian jira confluence "
                        "huggingface hf personal access".split())
# allowed words *after* the secret word ("secret_key_base", "password2", "token_value")
LABEL_TRAILERS = frozenset("value val base str string b64 base64 hex raw plain clear cleartext encoded literal key".split())
# ... and the system or the environment a secret is for, written after it (PASSWORD_DB,
# contraseña_bd, senha_smtp, SECRET_KEY_PROD): the label still ends in the secret
LABEL_TRAILERS |= frozenset("db bd bp database smtp imap mysql pg postgres postgresql redis mongo prod production "
                            "staging stg test dev admin root app ftp sftp ssh ldap mail sms vpn wifi "
                            # languages that put "of what" after the noun: token_acceso, secreto_cliente
                            "acceso acesso accesso accès acces dostepu dostępu доступа cliente usuario utente "
                            "utilisateur".split())
# a label ending in one of these names something about a secret, not the secret itself
FUSED_PASS_PREFIXES = ("store", "key", "srcstore", "deststore", "srckey", "destkey", "become",
                      "ssh", "sudo", "db", "root", "admin", "user", "ks", "ts", "ansible")
REFERENCE_PREFIXES = ("#{", "@{", "-----", "env:", "enc[",  # (SOPS ciphertext: 'ENC[AES256_GCM,data:…]')
               "file:", "fd:", "vault:", "op://", "!vault", "!ref", "ref+", "arn:", "secretref",
               "process.env", "os.environ", "os.getenv", "getenv(", "env(", "env[", "env.",
               "secrets.", "settings.", "config.", "import.meta", "request.", "self.", "this.",
               "args.", "params.", "options.", "opts.", "cfg.", "conf.", "props.", "sys.argv",
               "input(", "getpass", "prompt(", "read(", "keyring.", "vars.", "var.", "local.",
               "data.", "module.", "lookup(")
PLACEHOLDER_WORDS = frozenset(
    "password passwd passwort passord secret secrets token apikey api_key key changeme change_me "
    "changeit example examples sample redacted removed hidden masked none null nil undefined true "
    "false yes no required optional string str text int integer bool boolean bytes any object dict "
    "list value default empty placeholder todo tbd fixme dummy fake test testing foo bar baz qux "
    "foobar foobared hunter2 letmein admin root user username guest demo mypassword mysecret "
    "mytoken yourpassword yoursecret yourtoken pass pwd na n/a xxx unset unknown notset "
    "set missing omitted private public same_as_above see_above secure supersecret "
    "correcthorsebatterystaple geheim hemmelig passord123 password123 sensitive confidential "
    "auto generated random".split())
# a field's rule or a password's state written where its value would be ("Password: mandatory",
# "| Passwort | abgelaufen |"), in English and the languages of SECRET_WORDS_ELSEWHERE; a label's
# value only (a password may be made of one with digits: "Reset2024!")
FIELD_STATES = frozenset(
    "mandatory expired unchanged changed forgotten locked disabled enabled reset "
    "erforderlich pflichtfeld abgelaufen gesperrt vergessen unverändert "
    "obligatoire facultatif facultative expiré expirée "
    "obligatorio obligatoria opcional caducado caducada "
    "obrigatório obrigatória expirada expirado "
    "obbligatorio obbligatoria facoltativo facoltativa scaduta scaduto "
    "verplicht optioneel verlopen "
    "obligatoriskt valfritt valfri påkrevd valgfri obligatorisk utgått "
    "pakollinen valinnainen vanhentunut "
    "wymagane wymagany opcjonalne wygasło "
    "povinné povinný volitelné "
    "zorunlu "
    "kötelező "
    "obligatoriu opțional "
    "обязательно необязательно обязательный истёк истек "
    "обов'язково "
    "υποχρεωτικό προαιρετικό "
    "obavezna obavezno".split())
# the values a setting's documentation lists where its value would be ("ask_password = on/off",
# "verify: yes|no"): two or more of these joined by / or | name the
# choices, not a password (a manual's wgetrc table redacted every on/off of the page otherwise)
SETTING_CHOICES = frozenset(
    "on off yes no true false y n enable disable enabled disabled auto always never none default "
    "ask prompt 0 1 oui non ja nein sí si".split())
CHOICE_SEPARATOR = r"\s*[/|]\s*"

# documented defaults of servers and images: not a secret of the user's
DEFAULT_PASSWORDS = frozenset(
    "postgres mysql mariadb root admin changeme changeit password secret guest oracle tiger "
    "manager sa redis rabbitmq minioadmin minio elastic neo4j mongo mongodb toor raspberry "
    "ubuntu vagrant docker jenkins sonar nexus keycloak airflow grafana prom-operator "
    "admin123 password1 123456 12345678 qwerty letmein welcome anonymous anonymous@ "
    "notasecret".split())  # (Google's P12 key files all open with 'notasecret')


PLACEHOLDER_OPENINGS = ("your", "my", "insert", "enter", "replace", "put", "paste", "fill", "add")
PLACEHOLDER_ENDINGS = ("_here", "-here", " here", ".here")
PLACEHOLDER_INNER = ("xxxx", "***", "...", "\u2026", "\u2022\u2022\u2022", "____", "example", "placeholder",
             "redacted", "changeme", "change_me", "change-me", "dummy", "fake", "notareal",
             "not_a_real", "not-a-real", "notreal")
# kinds of file no secret is named after (a key's own files are in PATH_ENDINGS: "key: id_rsa.pem" is a
# path, and a value ending in them is judged as one)
FILE_TYPES = frozenset("""mp4 mp3 m4a wav flac ogg mov avi mkv webm webp png jpg jpeg gif svg ico bmp tif tiff heic
pdf doc docx xls xlsx ppt pptx odt ods csv tsv xml html htm md rst tex zip gz tgz bz2 xz zst 7z rar tar jar war
whl deb rpm dmg iso img exe dll so dylib py js mjs ts tsx jsx go rs java rb php sh sql log bak db sqlite
parquet avro ipynb""".split())
PATH_ENDINGS = (".pem", ".key", ".json", ".txt", ".crt", ".cer", ".p12", ".pfx", ".jks", ".gpg", ".asc",
             ".env", ".yml", ".yaml", ".ini", ".conf", ".cfg", ".toml")
# an API's object and request ids ("req_…", "evt_…", "chatcmpl-…"): shown in logs and answers, no secret
ID_PREFIXES = frozenset("req request trace span evt event msg txn run thread asst chatcmpl batch job "
                         "cus ch pi py sub in prod price acct file".split())


FUSED_SECRET_ENDINGS = ("key", "keys", "token", "tokens", "secret", "secrets")
HOLDER_LABELS = frozenset("value val data content body payload result text".split())
HOLDER_TAGS = HOLDER_LABELS | frozenset("member item entry string element code pre kbd samp tt span div p li td th b i em strong".split())


# Services whose keys scanners find by the service's name as the label ("cloudflare: '…'",
# "mixpanel …", "'artifactory', '…'"): the name alone says what a random token beside it is.
SERVICES = frozenset("""
airtable algolia amplitude artifactory asana atlassian auth0 bitbucket bitly braintree browserstack
buildkite circleci clickup cloudflare cloudinary cloudimage codecov confluent contentful coveralls
datadog digitalocean discord docusign doppler dropbox dynatrace elastic fastly figma firebase
freshdesk freshworks github gitlab grafana heroku honeycomb hubspot intercom jfrog jira keenio
kraken kucoin launchdarkly linear linode loggly mailchimp mailgun mailjet mapbox mattermost
metabase mixpanel mongodb netlify newrelic ngrok notion npm okta onesignal openai opsgenie
pagerduty paypal pinecone planetscale plaid postman pulumi pusher railway readme rollbar
salesforce segment sendgrid sendinblue sentry shopify slack snyk sonar sonarqube sonarcloud sourcegraph splunk
square stripe sumologic supabase telegram terraform textmagic travis trello twilio twitch
typeform vercel vonage webex wistia zapier zendesk zoom mux backblaze coinbase binance bitfinex
dockerhub quay rapidapi sendbird pubnub ably agora imgur giphy unsplash spotify smartsheet toggl
clockify calendly eventbrite openweathermap ipstack ipinfo scraperapi apify huggingface replicate
cohere anthropic deepgram assemblyai elevenlabs pinata infura alchemy etherscan moralis nylas
postmark sparkpost mandrill mailerlite klaviyo braze iterable customerio mparticle heap fullstory
hotjar logrocket bugsnag raygun airbrake honeybadger papertrail logdna sematext scalyr statuspage
""".split())
VENDOR_SEPARATORS = " \t\"'`:=,("
DIGEST_LENGTHS = frozenset((32, 40, 56, 64, 96, 128))  # md5, sha1, sha224, sha256, sha384, sha512
REFERENCE_BEFORE = "#/$@%"  # (after '%': the rest of a percent-encoded URL, "Diffie%E2%80%93Hellman_key")
# (a MIME encoded word: "=?utf-8?b?…?=")
BENIGN_BEFORE = ("base64,", "sha256:", "sha512-", "sha384-", "sha1:", "md5:", "h1:", 'key="', "key='", "?b?", "?q?")
PAGING_WORDS = frozenset(("next", "page", "continuation", "pagination", "idempotency", "cursor", "sync",
                     "resume", "purchase", "action", "request", "input", "output", "change",
                     "lock", "sequence", "forward", "backward", "starting", "marker", "client", "update", "synced"))
DIGEST_BEFORE = ("sha256=", "sha256:", "sha384=", "sha512=", "sha512-", "sha384-", "sha1=", "md5=")  # a wheel's RECORD
# words that make a nearby high-entropy token a secret ("here is the Acme API token: ...")
CONTEXT_WORDS = ("token", "secret", "key", "passw", "passord", "kennwort", "credential", "nøkkel",
             "nokkel", "schlüssel", "clé", "clave", "nyckel", "sleutel", "nøgle", "bearer",
             "webhook", "dsn", " pat")
# ... in other languages: the stems of SECRET_WORDS_ELSEWHERE (English's "pass" and "pw" aside, too
# short to count inside any word) and the words for "secret" a key's or a token's name may hold
CONTEXT_WORDS_ELSEWHERE = (*(stem for stem, _, _ in SECRET_WORDS_ELSEWHERE if stem not in ("pass", "pw", "mdp")),
                           "segret", "секрет", "シークレット", "시크릿", "秘密", "सीक्रेट", "ซีเคร็ต",
                           "سري", "סוד", "tajn", "titkos", "salainen", "sekret", "hemlig", "geheim", "bí mật",
                           "rahasia", "rahsia", "gizli", "μυστικ", "비번", "lösen")
# words that say "this long string is a hash / id / public thing"
NOT_SECRET_CONTEXT = ("public", "fingerprint", "gpg", "pgp", "keyserver", "keybase", "signingkey", "rsa key", "key id", "keyid", "signature", "sha1", "sha2", "sha3", "sha5", "md5", "checksum", "digest",
            "integrity", "commit", "hash", "cert", "request_id", "request-id", "request id", "trace", "uuid",
            "etag", "revision", "rev=", "serial", "ciphervalue", "ciphertext", "cipherdata", "dnskey",
            "page token", "page_token", "pagetoken", "next token", "next_token", "nexttoken")
HEX_CONTEXT_WORDS = ("token", "secret", "key", "passw", "credential", "nøkkel", "schlüssel")
CODE_WORDS = frozenset("if elif else while for not and or def class case when with except return "
                        "var let const val public private static final".split())
FLAG_NOUNS = frozenset("flag flags option options argument arguments arg args parameter parameters param "
                        "params switch switches setting field prompt".split())
SPACED_LABELS = frozenset(("password", "passwd", "pass", "passphrase", "psk", "requirepass", "masterauth", "masterpass"))
AUTH_SCHEMES = frozenset("bearer basic token bot ssws digest negotiate ntlm apikey api-key sso-key oauth splunk geniekey".split())


WEB_SCHEMES = frozenset("http https ftp ftps sftp ws wss git ssh smtp smtps imap imaps".split())
CLI_TOOLS_GLUED = ("mysql", "mysqldump", "mariadb", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "7z", "7za", "rar", "unrar")
# -P and a space: SQL Server's tools, zip's and unzip's archive password, ipmitool's
CLI_TOOLS_CAPITAL_P = ("sqlcmd", "bcp", "osql", "isql", "zip", "unzip", "ipmitool")
CLI_TOOLS_SPACED = ("sshpass", "psexec", "login", "mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "sqlcmd", "bcp", "az", "ldapsearch", "ldapmodify", "ldapadd", "smbclient", "mount", "cifs")
PROSE_CONNECTORS = frozenset(
    "is er ist est es är er lautet was war var blev wurde = : to til på på: now nå jetzt ahora è é je jest "
    "till auf naar para na на jadi menjadi "  # "changed it to": sv, de, nl, es and pt, pl and cs, ru and uk, id
    "és este yra ni là adalah ialah itu είναι هي هو היא הוא זו זה है คือ c'est это е је হলো হল "
    "maintenant nu changed set reset new nytt neues nouveau nuevo nya nye temp temporary "
    "midlertidig vorläufiges provisoire default -> => - – — →".split())
# the same in scripts written without spaces, where the connecting word is glued to the password
# word after it: "Chao-Phraya-42 คือรหัสผ่านใหม่", "Fuji-San-3776 がDBの新パスワードです", "…は新しいパスワード",
# "…是新的密码"
GLUED_CONNECTORS = ("คือ", "が", "は", "是", "为", "為")
# words prose after a password's label is made of, which a passphrase of words is not
# ("password: must be at least twelve characters", "Password: stored in the keychain")
PROSE_WORDS = frozenset(
    "the and for your with are was from not its our these those them were been has had but which "
    "would could should his her she who how why did does than each some here there this that what "
    "must can will may might shall into onto over under via per about after before when where while "
    "then same see use set ask any all every only also just more most less least very too never "
    "always often once again still stored kept saved written sent shared given found reset changed "
    "characters letters digits long short minimum maximum".split())
PROSE_STOPS = frozenset("like such e.g. eg. example z.b. zb som wie comme como zoals".split())


LOGIN_IS = frozenset("is er ist är est es".split())  # "my login is <user> / <password>"
PASS_NEXT = frozenset("is er ist est es är was war var blev wurde lautet = : -> => "
                       "for til fürs für pour para voor för på".split())
# words a sentence puts in quotes after "password is" that are not the password
NOT_A_VALUE = frozenset("required optional empty blank hidden invalid incorrect wrong correct missing "
                         "null none unset masked encrypted secret password sample".split())
CREDENTIAL_CALLS = ("Credential(", "DirectoryEntry(", "Auth(", ".login(", "Credentials(", "Authentication(")


# --------------------------------------------------------------------------------------------
# Texts no rule may change: real notes, manuals, code and configuration that hold no secret,
# found where a rule once fired wrongly and no one filter owns the reason (the filters' own
# examples are beside them in filters.py). The catalogue's test walks these too.
# --------------------------------------------------------------------------------------------
STAYS: tuple[str, ...] = (
    'String usernamePassword = "application:" + appKey + ":" + appSecret;',
    'Invoice INV/2026/00037 is due 2026-06-04. Amount: NOK 5 644,76. KID: 9964717449',
    '| INV-2026-3611 | 2026-11-17 | 41 530,24 |\n| PO-80671 | 2026-06-02 | 0aebf0c | 24073,35 |',
    'Please transfer the deposit to IBAN NO93 8601 1117 947 (BIC DNBANOKKXXX).',
    '{"beneficiary": "Ola", "iban": "NL91ABNA0417164300", "bic": "ABNANL2A"}',
    'commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Kari\n\n    fix: handle CRLF',
    '- uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2',
    'request_id=83633d51-3f50-4434-9e38-6c7babf980ec trace_id=c9cb8c55d4cdeecaff3345a6212d339b user_id=4',
    'oauth: token refreshed for client_id=b6488566-03c1-46a0-b594-52c1e2385d6e expires_in=3600',
    '"integrity": "sha512-dWlh/rJQ0vpCfWiVOFTGugLl4UYDJqTC2PHjOPhevuRl8PrIz1QV3uJXAAkpGUNnb+SRph6/fILibdzwZZMV8A=="',
    'hash = "sha256:c813c7d7cb9c1a35d9217c171fbe4209b251f363839ba81c28e40a18109960b1"',
    'golang.org/x/net v0.21.0 h1:U1kOOk8EnuWuAXLVLqADrQYvzY/4/Ow00zRu/IzQy1o=',
    '<script src="/x.js" integrity="sha384-uAPKYUJWVeGE5CixYZg85WMLRfWkVjrpvDxaRkZAb7nkVYfBTNWYlBcKjH41hFSV"></script>',
    'ssh host key fingerprint: SHA256:VJ27KqywIJKIGqRtdh9mnwb8mA8qrnMTWOV1kjGmtIo (ED25519)',
    'image: ghcr.io/acme/notifier@sha256:8d8157d6c3328ff83018bccadcabaa5396caad3087ac6ab67ae169325d237889',
    'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKGhJOW27RKA965RY6e7z3sGJuKAe1S2R7BN/tlxseOm deploy@ci',
    '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AicO2XMbVZvsjdBSDgzu3kqn/4Odk2+a3\nh0aEj0sYKK4+M8mnhNr7CAk65EwjEDidtDlWMPavQlQGr3oPza2KwuRc+hErcf/x\n-----END PUBLIC KEY-----',
    '-----BEGIN CERTIFICATE-----\nMIIDHjCCAgagAwIBAvQ0GntT5gWuVJ1c77iCcb6JroyJAAhaMXVsusvJKJ4KpY7S\nnTkA8XY3X4yYH2H/5TdK6Cfuu4Ks5gkUjV/i6ctZhQ7IXO4SX21AV9yUHdTpbRvt\n-----END CERTIFICATE-----',
    '[Peer]\nPublicKey = rTXM0xDZa/4KKUaPaecJ4f9WmE/5PxvWUsVPZ+9JUB8=\nEndpoint = vpn.example.org:51820',
    '# age public recipient\nage1ul3g6ud6thqf297n9cr46htqlesq3glq54w5wf9sekzvsxwmez5s6nylns',
    '![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==)',
    'Docs: https://docs.python.org/3/library/getpass.html#getpass.getpass',
    'git remote add origin git@github.com:acme/billing.git',
    'https://user@example.org/ is a URL with a username but no password.',
    "curl 'https://api.example.com/search?q=password+reset&lang=nb&page=2'",
    'Mirror: http://[2001:db8::1]:8080/debian/ bookworm main',
    'OPENAI_API_KEY=<YOUR_API_KEY>',
    'Authorization: Bearer <token>',
    'aws_access_key_id = AKIAIOSFODNN7EXAMPLE',
    'postgres://user:password@localhost:5432/mydb\nDATABASE_URL=postgres://USER:PASS@HOST:5432/DB',
    'curl -u USERNAME:PASSWORD https://api.example.com/',
    "password: <%= ENV['DB_PASSWORD'] %>",
    "if password != confirm_password:\n    raise ValidationError('Passwords do not match')",
    "const { username, password } = req.body;\nif (!password) return res.status(400).json({ error: 'password required' });",
    'PASSWORD_MIN_LENGTH = 12\nPASSWORD_HASHERS = ["django.contrib.auth.hashers.Argon2PasswordHasher"]',
    'primary_key=True, foreign_key="users.id", keyFrame: 12',
    'aws secretsmanager get-secret-value --secret-id arn:aws:secretsmanager:eu-north-1:217001419436:secret:prod/db-zOX9YY',
    'An API key is a long random string. Treat it like a password: never commit it, rotate it if leaked.',
    'GitHub classic personal access tokens start with `ghp_`, fine-grained ones with `github_pat_`.',
    'Password policy: at least 12 characters, one digit, one symbol; passwords expire every 180 days.',
    'Hvis du mister API-nøkkelen, lag en ny under Innstillinger → API og slett den gamle.',
    'Der API-Schlüssel wird im Header X-API-Key übergeben. Bewahre ihn sicher auf.',
    'Welcome to Nordic2026! Registration opens at 09:00.',
    'The Summer2026 campaign starts on 1 June. Go Team2026!',
    'Stripe objects: customer cus_vkcrZmx9e5YsJ3, payment intent pi_f9JJT9LmRtmhKKmwXCBoDVye',
    'llm logs: conversation 01JN9EP41V3T4Y0TM67PS2B9Q2, model gpt-4o-mini, 812 input / 96 output tokens',
    '2026-01-01T05:18:49.462Z WARN  auth: login failed for user=ola.n reason=bad_password attempts=1',
    'Build 2026.02.11-rc3+sha.6eb2aee (go1.23.4 linux/amd64)',
    'model: claude-3-5-sonnet-20241022 / gpt-4o-2024-08-06 / gemini-2.0-flash-001',
    'docker run -p 8080:80 -v /data:/data nginx\nssh -p 2222 deploy@host\nmkdir -p /srv/app',
    'Cookie: theme=dark; lang=nb',
    'send the invoice to ola.nordmann@example.com please',
    'Connect the LED to pin 13 and GND.',
    'GPIO pin: 13',
    'pin the version to 2024 in requirements.txt',
    'The server answered with code 404.',
    'The process ended with exit code 1.',
    'error code 1234: disk full',
    'zip code 94107, area code 415, country code 47',
    'HTTP status code 500 means the server failed.',
    'The International Building Code 2018 applies.',
    'SIM PIN: 0000 (the default; change it)',
    'door code: 1234',
    'random seed: 1234',
    'A seed phrase is 12 words that you must never share with anyone.',
    'Write down the 12 words and keep them in a safe place.',
    'Recovery\n1. install\n2. restart\n3. verify\n4. login\n5. check\n6. backup\n7. reboot\n8. test\n9. done\n10. relax\n11. sleep\n12. wake',
    'Recovery steps:\n1. install the package\n2. run the tool\n3. reboot',
    'seed phrase:\n1. write it down\n2. store it offline\n3. never type it into a website',
    'Keep your backup codes somewhere safe; GitHub shows them only once.',
    'backup codes: see 1Password',
    'recovery codes: 10 remaining, regenerated 2024-03-01',
    'Les codes de secours sont à garder au chaud : GitHub ne les montre qu’une fois.',
    'リカバリーコード：安全な場所に保管してください（2024-03-01 再発行）',
    'mnemonic = "test test test test test test test test test test test junk"  # Hardhat seed phrase',
    'ISBN 978-3-16-148410-0, coordinates 123456-654321',
    'github: {hex:40}',
    'docker pull sentry:{hex:64}',
    'the cloudflare dashboard shows request {hex:32} as blocked',
    'see https://example.com/hooks/setup and https://docs.example.com/webhooks/overview',
    'stripe docs: https://stripe.com/docs/api',
    'define wget::authfetch($source,$destination,$user,$password="",$timeout="0",$verbose=false) {',
    'text << "Password=#{password}, "',
    "$('.password-field').val(''); var passwordSel = '.login-password-input';",
    'password = newPassword',
    'api_key: myAPIKeyForProdEnv',
    '$cred = Get-Credential',
    'ldapsearch -x -H ldap://localhost -b dc=example -w',
    'grep -w password notes.txt',
    "echo 'hello' | wc -l",
    'a senha é obrigatória',
    'gpg --keyserver hkps://keys.openpgp.org --recv-keys {HEX:40}',
    'gpg --recv-keys 0x{HEX:16}',
    'git config --global user.signingkey {HEX:16}',
    'git config --global user.signingkey {HEX:40}',
    '* **A Releaser** <<someone@keybase.io>>\n  `{HEX:40}`',
    "const myURL = new URL('https://abc:xyz@example.com');",
    "// Encrypted with same algorithm, key and iv.\nconst encrypted =\n  '{hex:64}';",
    "pubkey: <Buffer 04 a1>,\n  serialNumber: '{HEX:32}',",
    '- **build,win**: pass --debug-nghttp2 to configure',
    '- **http2**: pass session to DEBUG\\_HTTP2SESSION2 (Daniel)',
    'In most cases it is OK to simply pass `v8::Isolate::GetCurrent()`, e.g.',
    'passing an empty password and/or salt to crypto.pbkdf2() would cause a fatal error',
    'crypto.pbkdf2(password, salt, iterations, keylen, digest, callback)#',
    'encrypted with the given cipher and passphrase using PKCS#5 v2.0 password based encryption',
    'Default key size, 32.\nFunction: void camellia128_set_encrypt_key (struct camellia128_ctx *ctx)',
    "'other-sensitive-header': 'very secret data',\n  [http2.sensitiveHeaders]: ['cookie']",
    '  cvs://:pserver:anoncvs@sources.redhat.com:/cvs/src',
    '  wchar_t *password, *protocol, *host, *path, target[1024];',
    'interactive password provision?  (file? command-line? env. variable?)',
    'secret flags are set via v8.setFlagsFromString(flags)',
    '/* store the encrypted session key */\nnode = xmlSecTmplKeyInfoAddEncryptedKey(keyInfo,\n    xmlSecTransformRsaPkcs1Id,',
    '<KeyInfo/>\n<CipherData>\n<CipherValue>{b64:32}</CipherValue>',
    '        2 GiB, pass force_zip64 to use the ZIP64 format',
    "            passwd = passwd + 'anonymous@'",
    '        :param password: Unicode password.\n        :param client: Client object.',
    '        print(f"password={password!r}")',
    'def _looks_like_msys2_mingw_scheme() -> bool:',
    'PRIVATE_KEY_TYPES = typing.Union[\n    ed25519.Ed25519PrivateKey,\n    x25519.X25519PrivateKey,\n]',
    '    def export(self, password: Unused = False) -> bytes: ...',
    '          "NextToken": "{lower:36}",',
    'nextPageToken: {alnum:32}',
    '    "AmazonRoute53AutoNamingFullAccess": "arn:aws:iam::aws:policy/AmazonRoute53AutoNamingFullAccess",',
    "# the secret key lexers\n__all__ = ['Inform6Lexer', 'Inform6TemplateLexer', 'Inform7Lexer']",
    "# token styles\n    'Terminal256Formatter': ('pygments.formatters.terminal256', 'Terminal256'),",
    'yaml/representer.py,sha256=IuNWk_Bv0UtZ7rbyEJSLnJlMKqpIgr3yUHp4KU5wJD0,14190',
    "    >>> _encode_auth('username%3Apassword')\n    'dXNlcm5hbWU6cGFzc3dvcmQ='",
    "    log.info('token', `removing ${toRemove.length} tokens`)",
    'exports.SOCKS5_CUSTOM_AUTH_END = SOCKS5_CUSTOM_AUTH_END;',
    'the part of the event to pass.  *Type*: String  *Required*: No',
    '**To set a user password as an administrator**',
    '**To force a password change**',
    '"RequestToken": "26988d21-54c8-7241-140f-105b297bb1e1",',
    'aws cloudformation describe-publisher\n"PublisherId": "{hex:40}",',
    '        self._retrieve_k8s_aws_id(sts) # the token',
    '    "Query": {\n      "input_token": "ExclusiveStartKey",\n      "output_token": "LastEvaluatedKey",',
    'see the API-REFERENCE-GUIDE-FOR-DEVELOPERS page',
    'pathologically_long_identifier_name = 3',
    'variable "region" {\n  default = "eu-west-1"\n}\nvariable "db_password" {\n  sensitive = true\n}',
    'variable "instance_type" {\n  sensitive = false\n  default = "t3.medium"\n}',
    'date_pat = "\\d{4}-\\d{2}-\\d{2}"',
    'SENTRY_DSN=https://{hex:32}@o4504.ingest.sentry.io/4504',
    'git clone https://x-access-token@github.com/acme/app.git',
    'login page: GET / POST2, then the redirect',
    'test user: demo / demo1234',
    'user account settings: see the docs / Chapter12',
    'CA_B64=LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCgFiNjQ6NjQCCg==',
    "username: '', password: '', host: 'localhost', hostname: 'localhost'",
    'the password is "required"',
    'the password field is "hidden" by default',
    '  put \'/forgot-password\' => "cms/sites/passwords#update", as: \'update_password\'',
    '"/en/authentication/creating-a-strong-password":"/en/enterprise-server@3.0/auth"',
    'export AUTH0_CLIENT_ID="{alnum:32}"',
    'password: this must be long',
    'the app password is same with this rule',
    'Applications passwords are stored in the keychain',
    'password = getpasswordfromkeychain',
    'secret: mysupersecretvalue',
    'password: {password}',
    'password: {x9Fq2LmZ7}',
    'contact ola@example.com / write2 more',
    'mail me at ola@example.com / Oslo2024 office',
    'the ratio is read / write2',
    'login is demo / demo1234',
    '**Password** is required',
    'password - the one from 2024',
    '<div class="password">Forgot password</div>',
    '**Password:** see the vault',
    '`password` is a `str`',
    '| Name | Type | Description |\n|---|---|---|\n| password | str | The password |\n',
    'id,name,password_changed\n1,ola,2024-01-01\n',
    'the fields are name, password, and url\n',
    'Password:\nRequired.\n',
    'Password:\nHytta2024 is the one we use\n',
    'The admin password is\nreset on first login by Kari2024 herself\n',
    '密码学2024年的课程很难\n',
    'auth_str = f", auth={auth!r}" if auth else ""',
    'The password is\n\nstored in the vault, as Kari2024 said\n',
    'パスワードを忘れた場合は管理者に連絡してください\n',
    'Password:\n********\n',
    'password:\n  - item1\n',
    'secret:\n  name: x1y2z3\n',
    'password:\n  $DB_PASS1\n',
    'password:\n  {{ vault_pw1 }}\n',
    'if not password:\n    abort401x\n',
    'if not password:\n    sys.exit(1)\n',
    'class Password:\n    pass\n',
    'Key:\nCtrl+Shift+P\n',
    'Password:\n2024-01-01\n',
    'api_key: abcdefghijklmnop123',
    'if password == "":',
    'if secret == SECRET_VALUE:',
    'if api_key == "your-api-key-here":',
    'if (a == "Zr8qLm2Wx7Kp" && b == password)',
    'x = "abc".equals(password)',
    '"repository": "git+https://github.com/o/r.git"',
    'the api key: see the vault',
    'net use Z: \\\\srv\\s /user:alice * /persistent:yes',
    'requests.get(url, auth=("admin", "password"))',
    'auth=(user, pw)',
    'ALTER USER scott IDENTIFIED BY tiger;',
    "CREATE USER u IDENTIFIED BY '<password>';",
    "CREATE USER x IDENTIFIED BY VALUES 'S:AB12CD34EF56'",
    'Return the comment identified by `comment_id`, or None.',
    'the group identified by group_id',
    'use the --password flag.',
    'information can be provided via the --username and --password options\ninstead of the URL.',
    'Command line keys: -quiet,-verbose,-fix,-f77,-f90,-show,-h <pyffilename>',
    '            if len(split) == 2:\n                username, password = split\n',
    '    "passwd:dir",\n    "passwd:gecos",\n    "passwd:shell",',
    'https://metabase.example.com/question#?sql=SELECT%20user_token%2C%20api_key_hash%20FROM%20accounts%20WHERE%20id%3D42',
    'gpg --list-secret-keys --keyid-format=long\nsec   rsa4096/{HEX:16} 2025-10-19 [SC]\ngpg:                using RSA key {HEX:40}',
    '[confetti](https://manual.example.com/deeplinks#block-{hex:32})',
    'notes = "Maven - io.jsonwebtoken:jjwt-jackson-0.11.2"',
    'publicToken = "{alnum:43}"',
    'secret_key => "sk_abcdefghijklmnopqrstuvwxyz123"\nSECRET_KEY_BASE=abc123efg456',
    'DATABASE_URL=postgresql://user_123:123456789012345@10.0.1.1/app',
    '> Authorization: Basic dXNlcm5hbWU6cGFzc3dvcmQK',
    '-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----',
    "What is the password for a MySQL instance you've just created?\n  puts 'That password did not match!'",
    "mongodump --username '<USER>' \\\n  --password '<PASSWORD>' \\\n  --out ./b/<DATE>-dump",
    '-e SUMO_ACCESS_KEY=`etcdctl get /sumologic_secret`',
    'except KeyError:\n    return {alnum:32}',
    'keyDetails === {alnum:32}',
    'a tokenizer splits {alnum:32}',
    'elif key_spec == {alnum:32}:',
    'isinstance(key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey))',
    'the key:\n    DRAFT201909.optional_cases_of(name="anchor"),',
    '    PyObject *key, PyObject* value)\n{\n    Proxy__ENSURE_WRAPPED_OR_RETURN_MINUS1(self);',
    'def pathing_grid(self, token) -> s2clientprotocol.common_pb2.ImageData:',
    'int convert_datetime64_to_datetimestruct "NpyDatetime_ConvertDatetime64ToDatetimeStruct" (',
    'def scrypt(password: ReadableBuffer, *, salt: ReadableBuffer, n: int) -> bytes: ...',
    'class URL:\n    scheme: Incomplete\n    username: Incomplete\n    password: Incomplete\n',
    "FILTERS = {\n    'pass': 'bandpass',\n    'bp': 'bandpass',\n}",
    '__pyx_n_u_keys, __pyx_mstate->__pyx_kp_b_iso88591_A_t9A, tuple_dedup_map);',
    'password_regex: str = "(?i)(?:password:)|(?:passphrase for key)",',
    'You can pass *codec_errors* to control how errors in decoding are handled.',
    'self._expected_authorization = expected_authorization',
    '_SIGNING_HEADERS = ("authorization", "x-amz-content-sha256", "x-amz-date")',
    '"Resources": [\n "token-vault",\n "oauth2credentialprovider"\n]',
    '    "utf_8_sig": "UTF-8-SIG",\n    AttributeOID.CHALLENGE_PASSWORD: "challengePassword",',
    "    ACCESS_KEY = 'AWSAccessKeyId'\n    SECRET_KEY = 'AWSSecretKey'",
    'the API key worked; request id: req_{hex:32}',
    '// the key is concatenated with "258EAFA5-\n//    E914-47DA-95CA-C5AB0DC85B11"',
    'aws waf update-ip-set --ip-set-id {hex:8} --change-token {hex:7}-{hex:4}-{hex:4}-{hex:4}-{hex:12}',
    '"JobRunId": "jr_{hex:64}"',
    'aws cloudformation describe-publisher\n{\n    "PublisherId": "{alnum:40}"\n}',
    '"LockToken":"{hex:8}-{hex:4}-4{hex:3}-a{hex:3}-{hex:12}",\n"ClientToken": "{hex:8}-{hex:4}-4{hex:3}-a{hex:3}-{hex:12}",\n"nextForwardToken": "f/{digits:56}"',
    '"ExportToken": "export-token-{lower:14}"',
    'removes the tag with the key ``Network`` from the device ``device-{hex:17}``',
    '"TaskArn": "AWS-DisableS3BucketPublicReadWrite"',
    "\t\t  echo 'q^Mq' | vim -e -s -c debuggreedy -c 'breakadd file script.vim' -S script.vim",
    'See private key [docs][3].\n    -   `OAUTH2CLIENT_TEST_P12_KEY_PATH`: The path to a key',
    'exclude these characters from the password: <code>! " # $ % &amp; </code>.',
    "r = _computeDigestResponse(auth_map, password, method = 'GET', A1 = None,**kwargs)",
    '  Fields:\n    password: Required. The password of the user.',
    '<status>fulfilled</status>\n<clientToken>token-f5b56c05-09b0-4d17-8d8c-c75d8a67b806</clientToken>',
    'the same token in the following format: <code>Console-CreateStack-7f59c3cf-00d2-40c7-b2ff-e75db0987002</code>',
    '    Items remaining: 0\n    Next page token: {alnum:25}',
    '\\x12\\x12\\n\\npage_token\\x18\\x03 \\x01(\\t\\"m\\n\\x1bListServiceAccountsResponse',
    'tag key, for example "123456789012/environment" : "production",\n "123456789013/costCenter"',
    '["50755454592d55736572", 0, ".ppk", "", "PuTTY User Key File"],\n["3c3c3c2053756e2078564d205669727475616c426f78204469736b20496d616765203e3e3e", 0, ".vdi"],',
    '# secret token\n - c29tZSB1bmtub3duIGRhdGE= SigV4',
    'processorArchitecture="*" publicKeyToken="{hex:16}"',
    '    transport: Transport\n    key: X25519PrivateKey | None\n',
    '        private_key: PKCS7PrivateKeyTypes,\n        hash_algorithm: PKCS7HashTypes,',
    '    password: FilterOrBool = False,',
    '    private_key: "_RSAPrivateKey",\n    data: bytes,',
    "kw = dict(sig=p0_type_char + (len(p)-1)*'d' + '->d')",
    'def PFXImportCertStore(PFX, Password, Flags) -> _win32typing.PyCERTSTORE: ...',
    '      "input_token": "nextToken",\n    },\n    "ListPrincipalThingsV2": {',
    'url = httpx.URL("HTTPS://jo%40email.com:a%20secret@müller.de:1234/pa%20th")',
    'HostKeyAlgorithms sk-ssh-ed25519-cert-v01@openssh.com,sk-ecdsa-sha2-nistp256-cert-v01@openssh.com',
    '.RS 4\nNever issue a password prompt\\&. If the server requires password authentication',
    'the key moves \\fBarch/i386/Makefile\\fR to \\fBarch/x86/Makefile\\fR',
    'unzip \\-p articles paper1.dvi | dvips\nunzip -p backup.zip notes.txt',
    '. IN DNSKEY 257 3 8 {b64:120}',
    ' * @GNUTLS_KX_DHE_PSK: DHE-PSK key-exchange algorithm.',
    '/* the key */\n#define V4L2_CID_ZOOM_ABSOLUTE   (V4L2_CID_CAMERA_CLASS_BASE+13)',
    '/* a bag of secrets */\nstruct SEC_PKCS12SecretBagStr {\n    PLArenaPool *poolp;',
    '#define PEM_STRING_SM2PRIVATEKEY "SM2 PRIVATE KEY"\n#define PEM_STRING_SM2PARAMETERS "SM2 PARAMETERS"',
    'docker run --secret id=npm_token_2024,src=$HOME/.npmrc node:20',
    'password: must be at least twelve characters\nPassword: stored in the keychain\n',
    'PASS: objdump compress debug sections\nPASS: objdump compress debug sections 3\n',
)

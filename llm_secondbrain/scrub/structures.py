"""Secrets that a file format or a command line puts in a place of its own.

Credentials in URLs and connection strings, an Oracle connect string, passwords passed to
commands (``mysql -p``, ``sshpass -p``, ``curl -u u:p``, ``redis-cli -a``, ``echo … | sudo -S``,
``htpasswd -b``, ``net user``), session cookies, the data of a Kubernetes ``Secret``, literals
passed to credential calls, SQL's ``IDENTIFIED BY``, the random segments of a webhook's URL, and
(on request) e-mail addresses.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .catalogue import CLI_TOOLS_CAPITAL_P, CLI_TOOLS_GLUED, CLI_TOOLS_SPACED, CREDENTIAL_CALLS, DEFAULT_PASSWORDS, WEB_SCHEMES
from .filters import _MARK, _cli_value_ok, _entropy_ok, _is_reference, _pw_shape, _url_placeholder
from .labels import _line_of
from .patterns import lazy

if TYPE_CHECKING:
    from .engine import _Spans
# the words before a flag: a command written inside quotes, brackets or an assignment is the same
# command ('alias db="mysql -uroot -p…"', '$(mysql …)', 'command: ["redis-server", …]', 'x=mysql …')
_SPLIT = lazy(r"[\s/\"'`()$=\[\],;]+")
_USER_FLAG = lazy(r"(?<![\w-])(?:-u|--user(?:name)?|-U)[ \t=]+(?!-)\S")  # (with a user: "cp -u -p" updates)


# ---- URLs and connection strings -------------------------------------------------------------
_URL_CRED = lazy(r"([^\s:/?#@\"'`<>\[\]]*):([^\s/?#\"'`<>]+)@(?=[\w\[.-])")
_KV_PAIR = lazy(r";[A-Za-z][A-Za-z ]{0,30}=")
_DOC_HOST = lazy(r"(?i)(?:[\w-]+\.)*example\.(?:com|org|net)(?![\w.-])")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_ORACLE = lazy(r"(?:thin:@?|sqlplus\s+|(?<![\w/])[A-Za-z_][A-Za-z0-9_]{0,30}/)([^\s/@\"']+)@(?=[\w\[.-])")


def _url_creds(text: str, low: str, spans: _Spans) -> None:
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
                    spans.add(m.start(1), m.end(1), "url_credentials", text, "github-oauth-user")
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
                kind = "url_credentials" if scheme in WEB_SCHEMES else "connection_string"
                spans.add(m.start(2), m.end(2), kind, text, "url-credentials" if kind == "url_credentials" else "connection-string")
            i = text.find("://", m.end())
        else:
            i = text.find("://", i + 3)


def _oracle(text: str, low: str, spans: _Spans) -> None:
    for m in _ORACLE.finditer(text):
        pre = text[max(0, m.start() - 40):m.start()].lower()
        if "jdbc:oracle" not in pre and "sqlplus" not in pre and "thin:" not in m.group(0) and "sqlplus" not in m.group(0):
            continue
        pw = m.group(1)
        if not _url_placeholder(pw) and len(pw) >= 3:
            spans.add(m.start(1), m.end(1), "connection_string", text, "oracle-connect")


# ---- CLI arguments -------------------------------------------------------------------------
# (each pattern opens with its literal and looks behind it after: the regex engine then jumps
# from one occurrence of the literal to the next instead of trying every position)
_ARG = r"(\"[^\"\n]+\"|'[^'\n]+'|[^\s'\"]+)"  # one argument, quoted or bare
_CLI_P = lazy(r"-[pP](?<![\w-]-[pP])(?:[ \t]+|(?=['\"])|(?=[^\s-]))" + _ARG)
_CLI_USERPASS = lazy(r"-(?<![\w-]-)(?:u|-user|U|-(?:proxy|[a-z]+)-user)(?:[ \t]+|=)(['\"]?)([^\s:'\"%]{0,64})([:%])" + _ARG)
_CLI_KEY_AS_USER = lazy(r"-(?<![\w-]-)(?:u|-user)(?:[ \t]+|=)(['\"]?)([^\s:'\"%]{8,64}):\1(?=\s|$)")
_CLI_REDIS = lazy(r"-(?<![\w-]-)(?:a|-pass)[ \t]+" + _ARG)
_CLI_ECHO = lazy(r"echo(?<!\wecho)[ \t]+(?:-n[ \t]+)?(\"[^\"\n]+\"|'[^'\n]+'|[^\s'\"|]+)[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-\w+[ \t]+)*-S\b|[^\n|]*--password-stdin|passwd\b|(?:sudo[ \t]+)?chpasswd|[^\n|]*\bsudo\b[^\n|]*-S\b)")
_CLI_HTPASSWD = lazy(r"htpasswd(?<!\whtpasswd)[ \t]+(?:-\w+[ \t]+)*-\w*b\w*[ \t]+(?:-\w+[ \t]+)*\S+[ \t]+\S+[ \t]+" + _ARG)
_CLI_LDAP_W = lazy(r"-w(?<![\w-]-w)[ \t]+" + _ARG)
# PowerShell's plain-text secure string: the literal is the password whatever it is assigned to
_PS_SECURE = lazy(r"(?i)convertto-securestring[ \t]+(?:-string[ \t]+)?(\"[^\"\n]+\"|'[^'\n]+')")
_CLI_NETUSER = lazy(r"net(?<!\wnet)[ \t]+user[ \t]+(\"[^\"\n]+\"|\S+)[ \t]+(\"[^\"\n]+\"|'[^'\n]+'|[^\s'\"/*]+)")
# net use Z: \\server\share /user:DOMAIN\alice <password>: the password follows the user
_CLI_NETUSE = lazy(r"(?i)\bnet[ \t]+use[ \t][^\n]*?/user:(?:\"[^\"\n]+\"|\S+)[ \t]+(\"[^\"\n]+\"|'[^'\n]+'|[^\s'\"/*]+)")
# IRC services: "/msg NickServ IDENTIFY [account] <password>", the command alone on its line (read
# in the lower-cased text from each "identify", a word English text is full of)
_IRC_IDENTIFY = lazy(r"identify[ \t]+(?:[^\s\"']+[ \t]+)?" + _ARG + r"[ \t]*\r?(?:\n|$)")
_IRC_SERVICE = lazy(r"(?:^|[\s>:])(?:/?ns|nickserv)[ \t]+$")
# openssl's -k <passphrase> (enc, the old way), FreeRDP's /p:<password>, lftp's -u user,<password>
_OPENSSL_K = lazy(r"openssl(?<![\w-]openssl)(?![\w-])[^\n|;&]*?[ \t]-k[ \t]+" + _ARG)
_FREERDP_P = lazy(r"(?i)freerdp[^\n|;&]*?[ \t]/p:" + _ARG)
_LFTP_U = lazy(r"lftp(?<![\w-]lftp)(?![\w-])[^\n|;&]*?[ \t]-u[ \t]+(?:\"[^\"\n,]+\"|[^\s,\"']+)," + _ARG)


def _unquote(v: str, s: int) -> tuple[str, int]:
    if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
        return v[1:-1], s + 1
    return v, s


def _cli_p(text: str, low: str, spans: _Spans) -> None:
    """-p: a password where the command is one that takes it so (mysql, sshpass, docker login);
    -P where it is the password's flag (sqlcmd, zip, ipmitool)."""
    for m in _CLI_P.finditer(text):
        bol = low.rfind("\n", max(0, m.start() - 200), m.start()) + 1
        head = low[max(bol, m.start() - 200):m.start()]
        bar = head.rfind("|")
        if bar >= 0:
            head = head[bar + 1:]
        glued = text[m.start() + 2] not in " \t"
        words = set(_SPLIT.split(head))
        ok = False
        if text[m.start() + 1] == "P":
            ok = not glued and bool(words.intersection(CLI_TOOLS_CAPITAL_P))
        elif glued and words.intersection(CLI_TOOLS_GLUED):
            ok = True
        elif not glued and (words.intersection(CLI_TOOLS_SPACED) or _USER_FLAG.search(head)):
            ok = True
        if not ok:
            continue
        v, s = _unquote(m.group(1), m.start(1))
        if _cli_value_ok(v):
            spans.add(s, s + len(v), "cli_password", text, "cli-p-flag")


def _cli_user(text: str, low: str, spans: _Spans) -> None:
    """-u / --user / --proxy-user user:password (smbclient's user%password); an API key as the user."""
    for m in _CLI_USERPASS.finditer(text):
        v, s = _unquote(m.group(4), m.start(4))
        if m.group(2).startswith(("<", _MARK)) or v.startswith("//"):
            continue  # <user:password>; a URL after -U ("add-apt-repository -U http://host/repo")
        if m.group(3) == "%" and "smbclient" not in _line_of(low, m.start()) and "rpcclient" not in _line_of(low, m.start()):
            continue
        if _cli_value_ok(v) and not _url_placeholder(v):
            spans.add(s, s + len(v), "cli_password", text, "cli-user-password")
    for m in _CLI_KEY_AS_USER.finditer(text):
        v = m.group(2)  # curl -u "<api key>:" — the key is the user name, the password empty
        if _cli_value_ok(v) and (_pw_shape(v) or _entropy_ok(v)):
            spans.add(m.start(2), m.end(2), "cli_password", text, "cli-key-as-user")


def _cli_redis(text: str, low: str, spans: _Spans) -> None:
    for m in _CLI_REDIS.finditer(text):
        line = _line_of(low, m.start())
        if "redis-cli" not in line and "keydb-cli" not in line and "--pass " not in m.group(0):
            continue
        v, s = _unquote(m.group(1), m.start(1))
        if _cli_value_ok(v):
            spans.add(s, s + len(v), "cli_password", text, "redis-cli-password")


def _cli_echo(text: str, low: str, spans: _Spans) -> None:
    for m in _CLI_ECHO.finditer(text):
        v, s = _unquote(m.group(1), m.start(1))
        if m.group(0).endswith("chpasswd") and ":" in v:
            user, _, pw = v.partition(":")  # chpasswd reads "user:password" lines
            v, s = pw, s + len(user) + 1
        if _cli_value_ok(v):
            spans.add(s, s + len(v), "cli_password", text, "echo-to-password-reader")


def _cli_ldap(text: str, low: str, spans: _Spans) -> None:
    for m in _CLI_LDAP_W.finditer(text):  # OpenLDAP tools: -w is the bind password (-p the port)
        if "ldap" in _line_of(low, m.start()):
            v, s = _unquote(m.group(1), m.start(1))
            if _cli_value_ok(v):
                spans.add(s, s + len(v), "cli_password", text, "ldap-bind-password")


def _irc_identify(text: str, low: str, spans: _Spans) -> None:
    """The password after NickServ's IDENTIFY; not a word ("IDENTIFY to login", in a help text)."""
    i = low.find("identify")
    while i >= 0:
        m = _IRC_IDENTIFY.match(low, i)
        if m is not None and _IRC_SERVICE.search(low, max(0, i - 24), i) is not None:
            v, s = _unquote(text[m.start(1):m.end(1)], m.start(1))
            if _cli_value_ok(v) and not (v.isalpha() and (v.islower() or v.istitle())):
                spans.add(s, s + len(v), "password", text, "irc-identify")
        i = low.find("identify", i + 8)


def _argument_reader(rx, group: int, kind: str, rule: str):
    """A reader that redacts group `group` of every match of `rx` (see _argument_values)."""
    def read(text: str, low: str, spans: _Spans) -> None:
        _argument_values(text, rx, group, kind, spans, rule)
    return read


def _argument_values(text: str, rx, group: int, kind: str, spans: _Spans, rule: str) -> None:
    """Redact group `group` of every match of `rx`, unquoted, unless it is a placeholder."""
    for m in rx.finditer(text):
        v, s = _unquote(m.group(group), m.start(group))
        if _cli_value_ok(v):
            spans.add(s, s + len(v), kind, text, rule)


# ---- cookies ----------------------------------------------------------------------------------
# (read in the lower-cased text: a pattern that ignores case is tried at every position; this one
# jumps from one "c" or "-" to the next. A "Set-Cookie:" header ends where its "cookie:" does.)
_COOKIE_LINE = lazy(r"cookie[\"']?\s*[:=]\s*|--cookie[ \t=]+|-(?<![\w-]-)b[ \t]+['\"]")
_COOKIE_PAIR = lazy(r"[ \t]*([A-Za-z0-9_.\-!#$%&*+^|~]{1,64})=([^;\s\"',]+)")
_SESSIONISH = lazy(r"(?i)sess|sid$|^sid|token|auth|jwt|remember|login|csrf|xsrf|secret|ident|^_?sso|api_?key|credential|^__(?:secure|host)-")


def _cookies(text: str, low: str, spans: _Spans) -> None:
    for m in _COOKIE_LINE.finditer(low):
        pos = m.end()
        for _ in range(50):
            pm = _COOKIE_PAIR.match(text, pos)
            if pm is None:
                break
            name, v = pm.group(1), pm.group(2)
            if _SESSIONISH.search(name) and len(v) >= 8 and not _is_reference(v, True) and _MARK not in v:
                spans.add(pm.start(2), pm.end(2), "session_cookie", text, "session-cookie")
            pos = pm.end()
            if pos < len(text) and text[pos] == ";":
                pos += 1
            else:
                break


# ---- Kubernetes Secret manifests ------------------------------------------------------------------
_K8S_DATA = lazy(r"(?m)^([ \t]*)(?:data|stringData):[ \t]*\r?\n")
# an item's value runs to its last character that is not a blank (a lazy "[^\r\n]*?" before "[ \t]*"
# tried every blank of a run followed by more text against the rest of the run: quadratic)
_K8S_ITEM = lazy(r"([ \t]+)[\"']?[A-Za-z0-9_.\-]+[\"']?:[ \t]*([^\s#](?:[^\r\n]*[^ \t\r\n])?)[ \t]*\r?(?:\n|$)")
_K8S_JSON = lazy(r"\"(?:data|stringData)\"\s*:\s*\{([^{}]*)\}")
_JSON_VAL = lazy(r"\"[^\"]{1,200}\"\s*:\s*\"([^\"]+)\"")


_K8S_KIND = lazy(r"(?im)^[ \t]*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?secret[\"']?[ \t]*,?[ \t]*\r?$")
_YAML_DOC = lazy(r"(?m)^---[ \t]*\r?$")
_BLOCK_LINE = lazy(r"([ \t]*)([^\r\n]*)\r?(?:\n|$)")


def _secret_documents(text: str):
    """(start, end) of each YAML document that is a Secret: a ConfigMap beside it is not one."""
    if _K8S_KIND.search(text) is None and '"kind": "Secret"' not in text:
        return
    starts = [0] + [m.end() for m in _YAML_DOC.finditer(text)]
    ends = starts[1:] + [len(text)]
    for a, b in zip(starts, ends):
        if _K8S_KIND.search(text, a, b) or text.find('"kind": "Secret"', a, b) >= 0:
            yield a, b


def _k8s(text: str, low: str, spans: _Spans) -> None:
    for a, b in _secret_documents(text):
        for m in _K8S_DATA.finditer(text, a, b):
            _k8s_items(text, m, b, spans)
        for m in _K8S_JSON.finditer(text, a, b):
            for vm in _JSON_VAL.finditer(m.group(1)):
                v = vm.group(1)
                if len(v) >= 4 and not _is_reference(v, True):
                    st = m.start(1) + vm.start(1)
                    spans.add(st, st + len(v), "k8s_secret", text, "k8s-secret-json")


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
            spans.add(off, off + len(v), "k8s_secret", text, "k8s-secret")


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
        spans.add(first, last, "k8s_secret", text, "k8s-secret")
    return pos


# ---- e-mail ---------------------------------------------------------------------------------
_EMAIL_RIGHT = lazy(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![A-Za-z0-9-])")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")


def _emails(text: str, low: str, spans: _Spans) -> None:
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
                spans.add(a, m.end(), "email", text, "email")
                pos = text.find("@", m.end())
                continue
        pos = text.find("@", pos + 1)


# a call that takes a user and a password, the password written as a literal: .NET's
# NetworkCredential("user", "pw"), requests' auth=("user", "pw"), HTTPBasicAuth, smtp.login(user, "pw")
_CREDENTIAL_CALL = lazy(
    r"""(?:NetworkCredential\(|DirectoryEntry\(\s*"[^"\n]*",|(?:HTTP(?:Basic|Digest|Proxy)Auth|BasicAuth|DigestAuth|"""
    r"""UsernamePasswordCredentials|PasswordAuthentication|\.login)\(|auth(?<![\w-]auth)\s*=\s*[(\[])\s*"""
    r"""(?:"[^"\n]{0,100}"|'[^'\n]{0,100}'|[A-Za-z_][\w.]{0,60}(?:\[[^\]\n]{0,40}\])?)\s*,\s*"""
    r"""(["'])([^"'\n]{3,})\1(?=\s*[,)\].])""")
# (each opens with its literal and looks behind it after: the regex engine jumps from one "auth" to the next)
_AUTH_ARG = lazy(r"auth(?<![\w-]auth)\s*=\s*[(\[]")


def _credential_calls(text: str, low: str, spans: _Spans) -> None:
    if any(c in text for c in CREDENTIAL_CALLS) or _AUTH_ARG.search(text):
        for m in _CREDENTIAL_CALL.finditer(text):
            v = m.group(2)
            if _cli_value_ok(v) and v.lower() not in DEFAULT_PASSWORDS:
                spans.add(m.start(2), m.end(2), "password", text, "credential-call")


# SQL: CREATE USER u IDENTIFIED BY 'pw', ALTER USER u IDENTIFIED BY pw, GRANT … TO u IDENTIFIED BY
# 'pw' (not BY VALUES '<hash>', not "the comment identified by `name`" in prose)
_IDENTIFIED_BY = lazy(r"""(?i)\b(?:user|to)\s+[^\s;]{1,100}\s+identified\s+(?:with\s+\w+\s+)?by\s+(?!values\b|password\b)"""
                      r"""(?:(["'])([^"'\n]{3,})\1|([^\s;'"`]{3,}))""")


def _identified_by(text: str, low: str, spans: _Spans) -> None:
    for m in _IDENTIFIED_BY.finditer(text):
        g = 2 if m.group(2) is not None else 3
        v = m.group(g)
        if _cli_value_ok(v) and v.lower() not in DEFAULT_PASSWORDS and (g == 2 or not v.isalpha()):
            spans.add(m.start(g), m.end(g), "password", text, "sql-identified-by")


_WEBHOOK_PATH = lazy(r"(?i)://[^\s/\"'<>]{1,100}/(?:[a-z0-9_-]{1,40}/){0,3}(?:webhooks?|webhookb2|hooks)/(?=[A-Za-z0-9_-])")
_URL_PATH_REST = lazy(r"[^\s\"'`<>?#)\]]*")
_PATH_SEGMENT = lazy(r"[A-Za-z0-9_-]+")


def _webhooks(text: str, low: str, spans: _Spans) -> None:
    """A webhook's URL is its credential: the random segments of its path go."""
    for m in _WEBHOOK_PATH.finditer(text):
        for seg in _PATH_SEGMENT.finditer(text, m.end(), _URL_PATH_REST.match(text, m.end()).end()):
            if seg.end() - seg.start() >= 16 and _entropy_ok(seg.group(), 16):
                spans.add(seg.start(), seg.end(), "webhook_url", text, "webhook-url")

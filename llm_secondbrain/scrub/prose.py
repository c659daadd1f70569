"""Passwords written in prose, in pairs and as app passwords: where no operator marks the value.

"passordet er Sommer2026!", "the wifi password is now Hytta-2024", "login for the NAS: admin /
S3cret!", "App password for Thunderbird: vkbq pmzt hxle wryd". A password word in a sentence
does not make the next word a value: a word is taken only when it looks like a password (a
digit, a symbol, random letters; ``filters._pw_shape``), after a connector ("is", ":", "til",
"now"), within a few words of the keyword and on its line.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .catalogue import (DEFAULT_PASSWORDS, GLUED_CONNECTORS, LOGIN_IS, NOT_A_VALUE, PASS_NEXT, PLACEHOLDER_WORDS, PROSE_CONNECTORS,
                        PROSE_STOPS, PROSE_WORDS, REQUEST_WORDS, SECRET_WORDS_ELSEWHERE)
from .filters import _MARK, _PH_INNER_RE, _placeholder, _pw_shape, _random_letters
from .patterns import lazy

if TYPE_CHECKING:
    from .engine import _Spans


# Google shows an app password as four groups of four small letters, and people paste it with or
# without the spaces ("App password for Thunderbird: vkbq pmzt hxle wryd")
_APP_PASSWORD = lazy(r"(?<![\w-])[a-z]{4}(?: [a-z]{4}){3}(?![\w-])|(?<![\w-])[a-z]{16}(?![\w-])")
_APP_PASSWORD_LABEL = lazy(r"app(?:lication)?[ -]?(?:specific[ -])?pass(?:word|ord|ort)?\b")


def _app_password(text: str, s: int, e: int, spans: _Spans) -> bool:
    """Redact an app password within text[s:e] on its line, if its letters are random (not four
    words: "password: this must be long"); True when one was found."""
    eol = text.find("\n", s, e)
    m = _APP_PASSWORD.search(text, s, eol if eol >= 0 else e)
    if m is None or not _random_letters(m.group().replace(" ", "")):
        return False
    spans.add(m.start(), m.end(), "password", text, "app-password")
    return True


# a passphrase alone on the rest of its line: three to eight words (and a full stop)
_BARE_PASS = lazy(r"(?<![\w-])(?i:pass)[ \t]*[:=][ \t]*$")  # a test's verdict: "PASS: objdump compress debug sections"
_PASSPHRASE = lazy(r"([^\W\d_]{3,12}(?:[ \t][^\W\d_]{3,12}){2,7})[ \t]*\.?[ \t]*(?:\r?\n|$)")


def passphrase(text: str, s: int, spans: _Spans, rule: str) -> bool:
    """Redact a passphrase of words that stands after a password's label alone on its line
    ("Wifi password: plaid fence tulip orbit"), if none of its words is one prose is made of
    (PROSE_WORDS: "password: must be long", "password: stored in the keychain") and none names
    a password ("hasło: proszę wstawić hasło zamienne"); True when one was found. A passphrase
    is words a person can remember, so no test of randomness applies."""
    m = _PASSPHRASE.match(text, s)
    if m is None or _BARE_PASS.search(text, max(0, s - 8), s) or any(
            not w.islower() or w in PROSE_WORDS or w in NOT_A_VALUE or _PROSE_KW.fullmatch(w)
            for w in m.group(1).split()):
        return False
    spans.add(m.start(1), m.end(1), "password", text, rule)
    return True


def _app_passwords(text: str, low: str, spans: _Spans) -> None:
    """An app password after its name in prose ("Google app password - …"), where the rules for
    prose passwords want a digit or a symbol."""
    for m in _APP_PASSWORD_LABEL.finditer(low):
        _app_password(text, m.end(), m.end() + 60, spans)


# ---- passwords in prose -----------------------------------------------------------------------
_PROSE_KW = lazy("(?:" + "|".join(forms for _, forms, kind in SECRET_WORDS_ELSEWHERE if kind == "password")
                 + ")(?![a-z0-9_])")
# Chinese, Japanese, Korean and Thai write no spaces, and Hebrew and Arabic glue "the", "and" and
# prepositions to a word: a password word there may follow other characters ("数据库密码",
# "הסיסמה", "وكلمة المرور"), take a particle ("密码是", "パスワードは", "비밀번호는", "รหัสผ่านคือ")
# and be glued to its value
_WIDE = lazy(r"[\u0590-\u06ff\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_THAI = lazy(r"[\u0e00-\u0e7f]")
_PARTICLE = lazy(r"(是|为|為|は|が|는|은|가|이|です|คือ|)[ \t\u3000]*")
_PAIR_KW = lazy(r"(?<![a-z0-9_])(?:login|logon|wi-?fi|wlan|vpn|creds|credentials|zugang(?:sdaten)?|innlogging|pålogging|brukernavn|benutzer(?:name)?|username|user|bruker|nas|router|account|konto|identifiants|usuario)(?![a-z0-9_])")
_WORD = lazy(r"\S+")
_TRIM_L = "([\"'`<*_«„“‚‘‹「『《〈【"
_TRIM_R = "|)]\"'`>*_.,:;»“”‘’›」』》〉】"  # (a "|" glued after a value is a table's cell border)
_PARTICLE_AFTER = lazy(r"[^\W\d_]{0,4}[.,;:!?)]*")
_GLUED_AFTER = lazy(r"[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]*")
# Inline HTML around a value in a note ("is <code>…</code>", "is …</p>", "is …<br/>next"): the
# value starts after its opening tags and ends at the first closing or empty tag. A password
# holding "</p>" is not worth the bare copy of it elsewhere in the note going unredacted.
_TAG_OPEN = lazy(r"(?:<[A-Za-z][\w:-]*>)+")
_TAG_END = lazy(r"</[A-Za-z][\w:-]*>|<(?i:br|hr|wbr)[ \t]*/?>")
# an opening quote and the quotes that may close it: what follows the closer is not the value
# ('"Bibimbap!Jeonju7"로', '「Onsen-Hakone9」で': a particle glued to the quoted word)
_CLOSERS = {'"': '"', "'": "'", "«": "»", "„": "“”", "“": "”", "‚": "‘’", "‘": "’", "‹": "›", "「": "」",
            "『": "』", "《": "》", "〈": "〉", "【": "】"}


def after_word(low: str, i: int, forms) -> tuple[int, int]:
    """(where a secret's word, one of `forms` (a compiled pattern), found at i ends; where the
    particle after it ends, in a script without spaces), or (-1, -1) when the word is part of
    another ("密码学", cryptography; "repass") or is not followed by a blank, a colon or an
    equals sign."""
    if not after_word_start(low, i):
        return -1, -1
    wide = _WIDE.match(low, i) is not None
    m = forms.match(low, i)
    if m is None:
        return -1, -1
    e = past = m.end()
    if wide:
        particle = _PARTICLE.match(low, e)
        if particle.end(1) == e and e < len(low) and _WIDE.match(low, e) and not _THAI.match(low, e):
            return -1, -1  # another word goes on: "密码学" (cryptography); Thai runs its words together
        past = particle.end()
    elif e < len(low) and low[e] not in " \t\r\n:=\u00a0：＝" and not (
            low[e] in ".,;!?" and (e + 1 == len(low) or low[e + 1] in " \t\r\n")):  # (a sentence's end too)
        return -1, -1
    return e, past


def _prose_kw(text: str, low: str, i: int, word: tuple[int, int], spans: _Spans, words: dict) -> None:
    """A password word found at i, a whole word ending as `after_word` says: look for the
    password after it."""
    end, e = word
    if e < len(low) and low[e] in ":=：＝":
        e += 1  # a glued 'password=%DB_PW%': the value is what follows the sign, not '=%DB_PW%'
    elif e - i == 4 and low[i:e] == "pass":
        # 'pass' is a verb too ("pass --debug to configure", "pass session to X"): it introduces
        # a password glued to ':' / '=', before 'is', as "pass for the NAS: …", or named by one
        # word and a colon ("Pass router: …", "pass wifi: …")
        w = _WORD.match(low, e + 1) if e < len(low) else None
        if w is None or not (w.group() in PASS_NEXT or (w.group()[-1] in ":：" and w.group()[:-1].isalpha())):
            return
    # (a quoted value counts wherever it stands in the sentence only after a word that means
    # nothing else: "pass", "pw" and "pwd" are also a count, a verb and a command)
    _prose_after(text, low, e, spans, words, quoted=low[i:end] not in ("pass", "pw", "pwd"))


_IS = LOGIN_IS | {"=", ":", "was", "war", "var", "lautet"}  # (a copula, not "for" or "til")
_JOINED = lazy(r"[^\W\d_]+[-_][^\W_]")  # words joined by a hyphen or an underscore ("Chaton_Gris_88")


def strong(tok: str, shape: int) -> bool:
    """A word only a password looks like, wherever it stands: letters, digits and a symbol
    (shape 2), or capitals, small letters and digits in words joined by "-" or "_"
    ("Chaton_Gris_88", "pizza-Napoli-1987"). A name with a digit ("Python3", "Ubuntu22",
    "srv-db01", "OPS-1234") is not; a rule that reads a value far from its password word, or
    before it, wants one of these."""
    if shape == 2:
        return True
    return (shape == 1 and len(tok) >= 8 and _JOINED.search(tok) is not None and any(c.isdigit() for c in tok)
            and any(c.isupper() for c in tok) and any(c.islower() for c in tok))


# nouns that make a compound with the password word before them: "PBKDF2 is a password hashing
# function" is about hashing, not a password
_COMPOUND_AFTER = frozenset("hash hashes hashing policy policies reset resets manager managers field fields format "
                            "length rule rules rotation expiry change changes prompt prompts protected protection "
                            "file files strength requirements audit".split())
_BEFORE_WORDS = 6  # a password written before its word stands at most this many words before it
_BEFORE_REACH = 120  # ... and this many characters
_DASHES = frozenset("–—")


def _prose_before(text: str, low: str, i: int, e: int, spans: _Spans, words: dict) -> None:
    """A password written before its word, as many languages put the new value first:
    "Vq9!mLz3Ht is the new password", "Chaton_Gris_88 est le nouveau mot de passe", "Matryoshka_77
    — это новый пароль", "SaiGon_Mua88 là mật khẩu mới". Within _BEFORE_WORDS words of the
    password word on its line: a word only a password looks like (`strong`: "Python3 is the
    password hashing default" names a tool) that opens the sentence (an article before it at
    most), right before a word that connects ("is", "est", "là"; in a script without spaces,
    glued to the password word: "คือรหัสผ่าน", "がDBの新パスワード", GLUED_CONNECTORS) or a dash,
    which says the sentence is about that word (a tag in code before a comment on passwords is
    not, nor a name assigned with "="); or in quotes at most two words before the password's
    ('a „…” jelszóval', '"…" as the password'). Not when the password word starts a compound
    ("password hashing", "password policy"), unless the value is quoted ('"…" in the password
    field'). `e`: where the password word ends (`after_word`)."""
    if low.startswith("pass", i) and e - i == 4:
        return  # ("pass" is a verb and a count too: "E2fsck now uses less time in pass 5")
    bol = max(low.rfind("\n", max(0, i - _BEFORE_REACH), i) + 1, i - _BEFORE_REACH)
    after = _WORD.match(low, e + 1) if e + 1 < len(low) and low[e] == " " else None
    compound = after is not None and after.group().strip(".,;:!?") in _COMPOUND_AFTER
    found = list(_WORD.finditer(text, bol, i))
    glued = ""
    if found and found[-1].end() >= i:
        # (the password word's own head, glued before it: "вход" in "входпароль"; in a script
        # without spaces, what connects the value to it: "คือ" in "คือรหัสผ่าน")
        glued = found.pop().group()
    if found and found[0].start() == bol and bol > 0 and not text[bol - 1].isspace():
        found.pop(0)  # (the tail of a word the reach cut, not a word)
    for k in sorted({0, 1, len(found) - 3, len(found) - 2, len(found) - 1}):  # (the sentence's opening, the password word's side)
        if k < 0 or k >= len(found):
            continue
        wm = found[k]
        # (a quoted value, at most two words before the password's: '"…" as the password', '„…” jelszóval')
        quoted = wm.group()[:1] in _CLOSERS and len(found) - k <= 3
        if not quoted and (compound or k > 1 or (k == 1 and len(found[0].group()) > 3)):
            continue  # the value opens the sentence, after an article at most ("Το …")
        key = wm.span()
        judged = words.get(key)
        if judged is None:
            judged = words[key] = _judge_word(wm.group(), key[0])
        stop, tok, s, shape, bad, _, _, _ = judged
        if stop or bad:
            return
        nxt = found[k + 1].group().lower() if k + 1 < len(found) else ""
        if strong(tok, shape) and len(found) - k <= _BEFORE_WORDS and (
                (nxt in PROSE_CONNECTORS and nxt[:1].isalpha()) or nxt in _DASHES or quoted
                or (k == len(found) - 1 and glued.startswith(GLUED_CONNECTORS))):
            spans.add(s, s + len(tok), "password", text, "prose-password")
            return


# a question (its line ends with a question mark of any script) and a chat message: its time and
# its author before the text ("[07:59] Johan: ", "鈴木: ")
_QUESTION_MARKS = ("?", "？", "؟")
_CHAT_HEAD = lazy(r"[ \t]*(?:\[[^\]\n]{1,24}\][ \t]*)?(?:[^\s:：\[][^:：\n]{0,30}[:：][ \t]+)?")
_ANSWER_LINES = 2  # the answer is looked for in this many lines after the question


def _asking_lines(low: str, stems: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """(start, end) of each line that holds a secret's word the scan found (`stems`) and asks, in
    order: it ends with a question mark of any script, or holds a word of a request. Only those
    lines are read: a search of the whole text for a question's line, or for twenty-odd request
    words, cost the scrubber 8 % on real text."""
    lines = set()
    for i, _ in stems:
        start = low.rfind("\n", 0, i) + 1
        end = low.find("\n", i)
        end = len(low) if end < 0 else end
        line = low[start:end]
        if line.rstrip(" \t\r").endswith(_QUESTION_MARKS) or any(w in line for w in REQUEST_WORDS):
            lines.add((start, end))
    return sorted(lines)


def _chat_answers(text: str, low: str, spans: _Spans) -> None:
    """A password asked for and given in the next message: "[07:58] Elin: what is the wifi
    password?" then "[07:59] Johan: Vinter2023#" (or "鈴木: Sakura#Fuji2024 です"); asked with a
    question mark or a word of a request ("please send me the wifi password", "パスワード教えて
    ください": catalogue.REQUEST_WORDS). The answer
    is a message of one word only a password looks like (`strong`: "which server has the new
    password?" is answered "srv-db01"), and at most a short word after it
    (a particle, "thanks"); a longer message is prose, left to the other rules. "pass", "pw" and
    "pwd" ask for nothing ("did the build pass?")."""
    if not spans.stems:
        return  # (no secret's word anywhere: none in a question)
    for start, end in _asking_lines(low, spans.stems):
        if not any(after_word_start(low, m.start()) and m.group() not in ("pass", "pw", "pwd")
                   for m in _PROSE_KW.finditer(low, start, end)):
            continue
        pos = end + 1
        for _ in range(_ANSWER_LINES):
            if pos >= len(text):
                break
            eol = text.find("\n", pos)
            eol = len(text) if eol < 0 else eol
            if text[pos:eol].lstrip().startswith(_MARK):
                break  # (the answer, redacted: a head must not read its marker as a chat's "[…]")
            head = _CHAT_HEAD.match(text, pos, eol).end()
            said = text[head:eol].split()
            if said and len(said) <= 2 and (len(said) == 1 or len(said[1]) <= 4):
                start = text.find(said[0], head)
                stop, tok, s, shape, bad, _, _, _ = _judge_word(said[0], start)
                if not stop and not bad and strong(tok, shape):
                    spans.add(s, s + len(tok), "password", text, "chat-answer")
                break
            if said:
                break  # (another message came first)
            pos = eol + 1


_AFTER_MARK = lazy(r"\[redacted:[a-z0-9_]*\]$")


def after_word_start(low: str, i: int) -> bool:
    """Does a word start at i (a script without spaces starts one anywhere)? Not right after a
    redaction marker: the word was glued to the value the marker took (a token run on into a
    password word, "…aE9पासवर्ड"), and read as glued on the first pass it must be on the next."""
    if i == 0 or _WIDE.match(low, i) is not None:
        return True
    c = low[i - 1]
    return not (c.isalnum() or c == "_" or (c == "]" and _AFTER_MARK.search(low, max(0, i - 40), i) is not None))


def _pairs(text: str, low: str, spans: _Spans) -> None:
    """'login for the NAS: admin / S3cret!', 'Wifi: Hytta-5G / Winter394@@'; and, in any language,
    a system, its user and a password only a password looks like ('- gestionale: m.conti /
    Bt8#kP4zWq', a handover's list)."""
    j = low.find(" / ")
    while j >= 0:
        nxt = low.find(" / ", j + 3)
        bol = low.rfind("\n", max(0, j - 80), j) + 1
        named = _PAIR_KW.search(low, max(bol, j - 80), j) is not None or _email_before(low, bol, j)
        if not named and not _user_after_colon(low, bol, j):
            j = nxt
            continue
        j, nxt = nxt, j
        wm = _WORD.match(text, nxt + 3)
        if wm is None:
            continue
        tok, s = _trim(wm.group(), wm.start())
        shape = _pw_shape(tok)
        if shape == 2 or (named and shape == 1 and _login_pair(low, bol, nxt, tok)):
            spans.add(s, s + len(tok), "password", text, "login-pair")


# a line that is a system, its user and its password, and nothing else ("- gestionale: m.conti / …")
_PAIR_LINE = lazy(r"[ \t]{0,8}(?:[-*•+][ \t]+|\d{1,2}[.)][ \t]+)?[^\W\d_][^\n:/()=]{0,40}:[ \t]{0,8}"
                  r"([\w.@+-]{1,64}) / [^\s()]{1,128}[ \t]*(?=\r?\n|$)")


def _user_after_colon(low: str, bol: int, j: int) -> bool:
    """Is the line of the slash at j 'system: user / password' alone (a list item at most)?"""
    m = _PAIR_LINE.match(low, bol)
    return m is not None and m.end(1) == j and any(c.isalpha() for c in m.group(1))


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
    while c >= 0 and low.endswith("[redacted", bol, c):
        c = low.rfind(":", bol, c)  # (a marker's colon separates nothing: the first pass saw the value)
    user = low[c + 1:j].strip()
    if c < 0 or not user or " " in user or "\t" in user:
        words = low[bol:j].split()
        if len(words) < 3 or words[-2] not in LOGIN_IS:
            return False
        user = words[-1]
    stem = pw.lower().rstrip("0123456789!")
    return stem != user and stem not in PLACEHOLDER_WORDS and stem not in DEFAULT_PASSWORDS


def _trim(tok: str, s: int) -> tuple[str, int]:
    opened = _TAG_OPEN.match(tok)
    if opened and opened.end() < len(tok):
        tok, s = tok[opened.end():], s + opened.end()
    ended = _TAG_END.search(tok)
    if ended and ended.start():
        tok = tok[:ended.start()]
    lead = ""
    while tok and tok[0] in _TRIM_L:
        lead += tok[0]
        tok = tok[1:]
        s += 1
    close = _CLOSERS.get(lead[-1:], "")
    if close:
        end = min((k for k in map(tok.find, close) if k >= 0), default=-1)
        if end >= 0 and (_PARTICLE_AFTER.fullmatch(tok, end + 1) or _GLUED_AFTER.fullmatch(tok, end + 1)):
            tok = tok[:end]  # (a closing quote, then a particle, or text of a script without spaces)
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
    if (lw in PROSE_STOPS or raw.startswith("--") or _PROSE_KW.fullmatch(lw.rstrip(":：")) is not None
            or (raw[0] == "&" and _NEXT_FIELD.match(raw) is not None)):
        # ("--oracle-hostname=…": a command's next option; "&remember=1": a form body's next field;
        # another password word: its own look)
        return (True, "", start, 0, False, False, False, False)
    tok, s = _trim(raw, start)
    wide = _WIDE.search(tok)
    if wide is not None:  # (a script without spaces glued after it: "2024年3月改的" is "2024")
        tok = tok[:wide.start()]
    shape = _pw_shape(tok) if tok else 0
    if not shape and tok and raw[0] in "\"'`" and _QUOTED_WORD.fullmatch(raw) and tok.isalpha() and 4 <= len(tok) <= 40:
        shape = _QUOTED  # "the default password is 'blooberry'": quotes mark a literal value
    # a URL, a number, a file name; or a placeholder ("MyExamplePassword1!"), a default ('admin')
    ltok = tok.lower()
    bad = bool(shape) and (_PROSE_BAD.search(tok) is not None or _PH_INNER_RE.search(ltok) is not None
                           or ltok in DEFAULT_PASSWORDS or ltok in PLACEHOLDER_WORDS
                           or (shape == _QUOTED and (ltok in NOT_A_VALUE or _placeholder(tok, ltok))))
    connector = lw in PROSE_CONNECTORS or lw.endswith(":") or raw.endswith(":") or lw in ("=", ":")
    copula = lw in PASS_NEXT  # ("is", "=", ":" alone; not another pair's "host:")
    typed = _ANNOTATION.fullmatch(tok) is not None  # (a type after a name: a signature, not a value)
    return (False, tok, s, shape, bad, connector, copula, typed)


_NEXT_FIELD = lazy(r"&[A-Za-z_][\w.\-\[\]]*=")  # a form body's next field ("password=&remember=1")


# a type written after a name in a signature ("password: str", "token: Optional[str]")
_ANNOTATION = lazy(r"(?:str|int|bytes|bool|float|string|String|number|boolean|SecretStr)|"
                    r"(?:Optional|List|Dict|Union|Callable|Sequence|Iterable|Mapping|Literal|list|dict|tuple)\[.*")
_QUOTED = 3  # a quoted word: a password only right after "is" / ":"
_QUOTED_WORD = lazy(r"(['\"`])[^'\"`\s]+\1[.,;!)]*")


def _line_end(low: str, pos: int, end: int) -> int:
    for brk in ("\n", "\r"):
        eol = low.find(brk, pos, end)
        if eol >= 0:
            end = eol
    return end


def _next_line(low: str, eol: int) -> int:
    return eol + (2 if low.startswith("\r\n", eol) else 1)


def _chat_head_end(text: str, bol: int, eol: int) -> int:
    """Where a chat message's time and sender ("[19:02] Ben: ", "Ben: ") end on the line that
    starts at bol, or 0 when it has none."""
    m = _CHAT_HEAD.match(text, bol, eol)
    return m.end() if ":" in m.group() or "]" in m.group() else 0


def _prose_after(text, low, pos, spans, words: dict, quoted: bool = True) -> None:
    """The password after a password word at pos, on its line; or at the start of the next line
    when the sentence was wrapped between its connector and the value ("The database password
    is\nS3cret!"): a hard-wrapped note or mail breaks a line anywhere, and a sentence left
    hanging on its "is" goes on past one blank line too (a document's paragraphs: "The password
    is" / "S3cret!"); in a chat the next message goes on after its time and sender. A title
    ("Password:") over a line of prose is left to the title rule."""
    end = min(len(low), pos + 90)
    eol = _line_end(low, pos, end)
    wrapped = eol
    if eol < end:
        nxt = _next_line(low, eol)
        if nxt < end and low[nxt] in "\r\n":
            nxt = _next_line(low, nxt)  # (one blank line)
        if nxt < end and low[nxt] not in "\r\n":
            wrapped = _line_end(low, nxt, end)
    head = (nxt, _chat_head_end(text, nxt, wrapped)) if wrapped > eol and _chat_head_end(
        text, low.rfind("\n", 0, pos) + 1, eol) > 0 else (0, 0)
    after_connector = True  # right after the keyword counts as a connector
    after_copula = after_is = pos > 0 and low[pos - 1] in ":="
    count = 0
    for wm in _WORD.finditer(text, pos, wrapped):
        if head[0] <= wm.start() < head[1]:
            continue  # (the next message's time and sender: "[19:02] Ben: the wifi pw is" / "[19:02] Ben: …")
        if wm.start() > eol and not (after_connector and count):
            return  # (on the next line only the value a sentence was wrapped before, after its "is")
        key = wm.span()
        judged = words.get(key)
        if judged is None:
            judged = words[key] = _judge_word(wm.group(), key[0])
        stop, tok, s, shape, bad, connector, copula, typed = judged
        if stop or (typed and after_copula):
            return  # (a signature: "password: str, method: str = 'scrypt'" gives no value)
        # (letters alone count only after "is" or a sign: after "til", "for", "to" a word that
        # merely reads as random to an English eye names what the password is for: "hyttekontoen")
        if shape == 2 or (shape == 1 and after_connector and (after_is or not tok.isalpha())) or (
                shape == _QUOTED and after_copula) or (
                quoted and count <= 1 and wm.group()[:1] in _CLOSERS and strong(tok, shape)):  # quoted, a word after the password's at most
            if not bad:
                spans.add(s, s + len(tok), "password", text, "prose-password")
            return
        count += 1
        if count > 8:
            return
        after_connector, after_copula = connector, copula
        after_is = copula and wm.group().lower() in _IS


# a URL, a number, a file name, SOPS ciphertext; or code: a quote inside the word ('$p="",$q="0"'; not
# Turkish's suffix after an apostrophe, redacted with the word: "Lokum_Gul77'dir") or an
# interpolation opener ('$(dirname', '#{password}', '${PW}'): prose never writes those
_PROSE_BAD = lazy(r"^\w+=|^ENC\[|^\d+(?:[.,:]\d+)+$|\.(?:com|org|net|io|no|de|txt|md|py|json)$|.[\"`]|.'(?![^\W\d_]{1,4}$)|[$#@%]\{|\$\("
                    r"|\w\($|^/?(?i:[a-z]+[1-6]?)>|\*\*\w")  # (a call: "SHA224Password()"; markup: "<code>!", not "U7o7>0%S"; "**kwargs")

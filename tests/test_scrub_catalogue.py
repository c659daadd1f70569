"""One test walks the scrubber's catalogue: every rule's examples and every named filter's.

A rule's examples live beside the rule (``scrub/catalogue.py``): each ⟦marked⟧ part of a true
example must be redacted, and by that rule (``scrub.explain`` names it); a counter-example must
come out unchanged. A filter's examples live beside the filter (``scrub/filters.py``): a text it
releases comes out unchanged (and, for a labelled value, ``explain`` names the filter), a text it
keeps has its ⟦marked⟧ parts redacted. Random parts are written as templates and filled from a
seeded generator, so the repository holds no secret-shaped string: ``{alnum:36}``, ``{hex:32}``,
``{upper:16}`` (capitals and digits), ``{lower:26}`` (small letters and digits), ``{b64:27}``,
``{b64x:22}`` (crypt's ./0-9A-Za-z), ``{url:35}`` (base64url), ``{digits:4}``, ``{letters:8}``,
``{small:6}`` (small letters), ``{HEX:32}``, ``{azure:34}`` (letters, digits and _~.-), ``{pwsym:14}``
(letters, digits, ! and %), ``{b32:52}`` (base32, small letters). A field may be named to be used
again: ``{alnum:12=pw}`` draws a value, ``{=pw}`` repeats it (a secret typed twice in one text).
"""
from __future__ import annotations

import random
import re
import string

import pytest

from llm_secondbrain.scrub import catalogue, explain, filters, scrub

_ALPHABETS = {
    "alnum": string.ascii_letters + string.digits, "hex": "0123456789abcdef",
    "upper": string.ascii_uppercase + string.digits, "lower": string.ascii_lowercase + string.digits,
    "b64": string.ascii_letters + string.digits + "+/", "b64x": "./" + string.digits + string.ascii_letters,
    "url": string.ascii_letters + string.digits + "-_", "digits": string.digits, "letters": string.ascii_letters,
    "small": string.ascii_lowercase, "HEX": "0123456789ABCDEF", "azure": string.ascii_letters + string.digits + "_~.-",
    "pwsym": string.ascii_letters + string.digits + "!%", "b32": string.ascii_lowercase + "234567",
}
_FIELD = re.compile(r"\{(?:(" + "|".join(_ALPHABETS) + r"):(\d+))?(?:=(\w+))?\}")
_MARKED = re.compile(r"⟦(.*?)⟧", re.S)


def fill(template: str, seed: str) -> tuple[str, list[str]]:
    """The template with its fields filled (every class of a field's alphabet present where the
    length allows, as in a real key) and the ⟦marks⟧ taken out; and the marked parts."""
    rng = random.Random(seed)
    named: dict[str, str] = {}

    def field(m: re.Match) -> str:
        if m.group(1) is None:
            return named[m.group(3)] if m.group(3) else m.group()  # ({=name}; "{}" stays as written)
        alphabet, n = _ALPHABETS[m.group(1)], int(m.group(2))
        classes = [c for c in (string.ascii_lowercase, string.ascii_uppercase, string.digits) if set(c) & set(alphabet)]
        while True:
            s = "".join(rng.choice(alphabet) for _ in range(n))
            if n < 8 or all(set(s) & set(c) for c in classes):
                if m.group(3):
                    named[m.group(3)] = s
                return s

    text = _FIELD.sub(field, template)
    return _MARKED.sub(r"\1", text), _MARKED.findall(text)


def _rules():
    for group in (catalogue.SHAPES, catalogue.TOKEN_RULES, catalogue.LABEL_RULES, catalogue.DETECTORS,
                  catalogue.READER_RULES):
        yield from group


def _rule_cases():
    for rule in _rules():
        for i, t in enumerate(rule.examples):
            yield pytest.param(rule.id, t, True, id=f"{rule.id}+{i}")
        for i, t in enumerate(rule.counter):
            yield pytest.param(rule.id, t, False, id=f"{rule.id}-{i}")


def _filter_cases():
    for chain in ("PLACEHOLDER", "REFERENCE", "VALUE", "TOKEN", "CONTEXT_TOKEN", "FILLER"):
        for f in getattr(filters, chain):
            for i, t in enumerate(f.releases):
                yield pytest.param(chain, f.name, t, True, id=f"{chain}.{f.name}+{i}")
            for i, t in enumerate(f.keeps):
                yield pytest.param(chain, f.name, t, False, id=f"{chain}.{f.name}-{i}")


def _leaked(secret: str, out: str, text: str) -> bool:
    context = text.replace(secret, "\x00")
    return secret in out or any(secret[i:i + 8] not in context and secret[i:i + 8] in out
                                for i in range(len(secret) - 7))


@pytest.mark.parametrize("rule_id, template, true", list(_rule_cases()))
def test_every_rule_does_what_its_examples_say(rule_id, template, true):
    text, secrets = fill(template, rule_id + template)
    out = scrub(text)
    assert scrub(out) == out
    if not true:
        assert out == text
        return
    assert secrets, "a true example marks what must go"
    found, _ = explain(text)
    for secret in secrets:
        assert not _leaked(secret, out, text), secret
        s = text.index(secret)
        by = {r for f in found if f.start < s + len(secret) and f.end > s for r in f.rules}
        assert rule_id in by or "propagated" in by, (rule_id, by)


@pytest.mark.parametrize("chain, name, template, releases", list(_filter_cases()))
def test_every_filter_does_what_its_examples_say(chain, name, template, releases):
    text, secrets = fill(template, name + template)
    out = scrub(text)
    if releases:
        assert out == text
        if chain in ("VALUE", "REFERENCE", "PLACEHOLDER"):
            _, let_go = explain(text)
            assert name in {r.filter for r in let_go}
    else:
        for secret in secrets:
            assert not _leaked(secret, out, text), secret


def test_the_catalogue_holds_one_rule_per_id_and_the_prefilter_reads_its_keywords():
    ids = [r.id for r in _rules()]
    assert len(ids) == len(set(ids))
    for rule in catalogue.DETECTORS:
        assert rule.keywords and all(w == w.lower() for k in rule.keywords for w in ((k,) if isinstance(k, str) else k))


@pytest.mark.parametrize("template", catalogue.STAYS, ids=[t[:40] for t in catalogue.STAYS])
def test_what_no_rule_may_change_stays(template):
    text, _ = fill(template, template)
    assert scrub(text) == text


def test_every_word_of_the_label_vocabulary_is_read_as_a_label():
    """A word the catalogue lists is of no use where the label scan never finds it: each password
    word, foreign key word (beside "api") and head-first word is read as a label, as written, in
    capitals and after a prefix ("db_…"), and its value is redacted."""
    pw, key = fill("{alnum:10}!x", "vocabulary")[0], fill("{alnum:32}", "vocabulary")[0]
    kept = []
    for word in sorted(catalogue.PASSWORD_WORDS):
        for form in (word, word.upper()):
            kept += [t for t in (f"{form}: {pw}", f'{form} = "{pw}"', f"db_{form}: {pw}") if pw in scrub(t)]
    for word in sorted(catalogue.FOREIGN_KEY_WORDS):
        for form in (word, word.upper()):
            kept += [t for t in (f"api_{form}: {key}", f'{form}_api = "{key}"') if key in scrub(t)]
    for word in sorted(catalogue.HEAD_FIRST_PASSWORD_WORDS):
        kept += [t for t in (f'{word}_bd = "{pw}"', f'{word.upper()}_BD = "{pw}"') if pw in scrub(t)]
    assert not kept

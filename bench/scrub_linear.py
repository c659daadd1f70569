#!/usr/bin/env python3
"""Linear time on pathological input: ten times the input must not take thirty times as long.

    python3 bench/scrub_linear.py            # every input, 20 KB grown to 10x
    python3 bench/scrub_linear.py --big      # and one 10 MB line against 1 MB

Inputs built to make a regex engine backtrack or a scanner rescan (runs of '=', labels glued to
labels, quotes, flags, table and CSV headers, seed-phrase and PIN labels, …). For each, the time
of a small input (grown until it is above timer noise) and of ten times that size, best of a few
rounds, and the ratio; a ratio of 30 or more is reported as NOT LINEAR. Takes about a minute
(the 10 MB line adds half a minute). These were tests; timings belong here, not in the suite.
"""
from __future__ import annotations

import argparse
import base64
import os
import random
import string
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from llm_secondbrain.scrub import scrub  # noqa: E402

ALNUM = string.ascii_letters + string.digits


def _best(fn, text, rounds=3):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t0)
    return best


def _line(n):
    rng = random.Random(7)
    words = ["password=", "token:", "key=", "https://u:p@h/", "Bearer", "-p", "eyJ", "ghp_", "AKIA",
             "lorem", "ipsum", "=", "'", '"', "sk-", "@", "://", "/", "secret", "\\n"]
    out, size = [], 0
    while size < n:
        w = rng.choice(words) + "".join(rng.choice(ALNUM) for _ in range(rng.randint(0, 12)))
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n]


_PATHOLOGICAL = {
    "single-line": _line,
    "equals": lambda n: "=" * n,  # 1 MB of "=" at the largest size
    "base64": lambda n: base64.b64encode(random.Random(3).randbytes(n * 3 // 4 + 3)).decode()[:n],
    "spaces": lambda n: " " * n,
    "pem-begins": lambda n: ("-----BEGIN RSA PRIVATE KEY-----\n" * (n // 32 + 1))[:n],
    "labels": lambda n: ("password=" * (n // 9 + 1))[:n],
    "key-eq": lambda n: ("key=" * (n // 4 + 1))[:n],
    "url-creds": lambda n: ("a://b:c@" * (n // 8 + 1))[:n],
    "flags": lambda n: (" -p" * (n // 3 + 1))[:n],
    "slashes": lambda n: (" / " * (n // 3 + 1))[:n],
    "pair-lines": lambda n: ("- system: m.conti / Bt8#kP4zWq\n" * (n // 31 + 1))[:n],
    "pair-long-user": lambda n: ("a: " + "x" * n)[:n - 6] + " / y#1\n",
    "head-first-labels": lambda n: ("HASLO_BAZY=" * (n // 11 + 1))[:n],
    "quotes": lambda n: ('password="' * (n // 10 + 1))[:n],
    "at-signs": lambda n: ("a@" * (n // 2 + 1))[:n],
    # a label, then blanks to the end: the look for a '"value":' field after it must not backtrack
    # over the blanks once per blank (with and without a "name:" before the label)
    "label-blanks": lambda n: ("password" + " " * n)[:n],
    "name-label-blanks": lambda n: ("name: password" + " " * n)[:n],
    # a Kubernetes Secret's item whose value has a long run of blanks inside it
    "k8s-item-blanks": lambda n: ("kind: Secret\ndata:\n  k: v" + " " * n)[:n - 1] + "x",
    # one long token of word-like segments that ends in a character no name holds
    "word-segments": lambda n: ("secret 1" + "-abcdefghij" * (n // 11 + 1))[:n - 1] + "~",
    # the personal-secret labels, repeated and with their lists run on
    "seed-labels": lambda n: ("seed phrase: " * (n // 13 + 1))[:n],
    "seed-words": lambda n: ("seed phrase: " + "witch " * n)[:n],
    "seed-numbered": lambda n: ("seed phrase:\n" + "".join(f"{i % 99}. witch\n" for i in range(n // 9)))[:n],
    "code-list": lambda n: ("backup codes:\n" + "1234-5678\n" * (n // 10 + 1))[:n],
    "code-labels": lambda n: ("backup codes: 8213-4471 " * (n // 24 + 1))[:n],
    "pins": lambda n: ("PIN " * (n // 4 + 1))[:n],
    "pin-for": lambda n: ("PIN for " + "x" * n)[:n],
    "door-codes": lambda n: ("door code " * (n // 10 + 1))[:n],
    "bitlocker-digits": lambda n: ("123456-" * (n // 7 + 1))[:n],
    # tables: a password column's header over and over, rows under one header, a long header line
    # that no rule follows, and CSV headers naming a password field on every line
    "table-headers": lambda n: ("| Password |\n|---|\n" * (n // 19 + 1))[:n],
    "table-rows": lambda n: ("| User | Password |\n|---|---|\n" + "| ola | Hytta2024x |\n" * (n // 21 + 1))[:n],
    "table-rules": lambda n: ("-|-|\n" * (n // 5 + 1))[:n],
    "long-header": lambda n: ("password " * (n // 9 + 1))[:n - 6] + "\n-|-|\n",
    "csv-headers": lambda n: ("name,url,password\n" * (n // 18 + 1))[:n],
    # labels that end their line, over values below them, and one title after a long line of words
    "title-lines": lambda n: ("Wifi password:\nHytta2024\n" * (n // 25 + 1))[:n],
    "bold-titles": lambda n: ("**Password**\n" * (n // 13 + 1))[:n],
    "long-title": lambda n: ("a " * n)[:n - 20] + "password:\nHytta2024\n",
    # other languages' words and the readers that read around them
    "wide-words": lambda n: ("パスワード「" * (n // 6 + 1))[:n],
    "wide-words-spaced": lambda n: ("パスワード " * (n // 6 + 1))[:n],
    "quoted-before": lambda n: ("„Kq7#x9“ jelszóval " * (n // 19 + 1))[:n],
    "key-after-word": lambda n: ("clé API : " * (n // 10 + 1))[:n],
    "chat-questions": lambda n: ("[09:00] Ana: password?\n" * (n // 23 + 1))[:n],
    "escaped-paragraphs": lambda n: ("%2F\n\n" * (n // 5 + 1))[:n],
    "escaped-tags": lambda n: ("Password: <code>Kq7&amp;tuMw</code> &#106;\\u30d1\\u30b9\n" * (n // 52 + 1))[:n],
    "zero-width": lambda n: ("pass\u200bword: Ｈｙｔｔａ２０２４\n" * (n // 24 + 1))[:n],
    "comments-over-settings": lambda n: ("# Парола за базата данни\nPAROLA_BD=Rila-Planina-2024\n" * (n // 52 + 1))[:n],
    "value-before": lambda n: ("Chaton_Gris_88 est le nouveau mot de passe. " * (n // 44 + 1))[:n],
}


def ratio(name: str) -> tuple[int, float, float]:
    make = _PATHOLOGICAL[name]
    n = 20_000
    small = make(n)
    t_small = _best(lambda t: scrub(t, strip_emails=True), small)
    while t_small < 0.01 and n < 100_000:  # above timer noise (bounded: 10x of at most 1 MB)
        n *= 2
        small = make(n)
        t_small = _best(lambda t: scrub(t, strip_emails=True), small)
    t_big = _best(lambda t: scrub(t, strip_emails=True), make(n * 10), rounds=2)
    return n, t_small, t_big


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", action="store_true", help="also a 10 MB line against 1 MB")
    a = ap.parse_args(argv)
    scrub("warm up")
    bad = 0
    for name in sorted(_PATHOLOGICAL):
        n, t_small, t_big = ratio(name)
        r = t_big / max(t_small, 1e-9)
        bad += r >= 30
        print(f"  {name:<22}{n:>8} chars {t_small * 1000:8.1f} ms   x10 {t_big * 1000:9.1f} ms   ratio {r:5.1f}"
              + ("   NOT LINEAR" if r >= 30 else ""))
    if a.big:
        one = _line(100_000) * 10
        t1, t10 = _best(scrub, one, rounds=2), _best(scrub, one * 10, rounds=1)
        bad += t10 >= 30 * t1
        print(f"  10 MB line / 1 MB line: {t10 / t1:.1f}x")
    print("linear on every input" if not bad else f"{bad} inputs NOT LINEAR")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Record scrub's output over the golden corpus, with the rules' identity it was made under.

    python tests/golden/make.py

Run it after a change to the scrub rules that is meant to change their output, and review the
diff of tests/golden/scrubbed.jsonl: it shows what the change redacts and keeps. The test
(tests/test_golden.py) fails whenever the output differs from the record, and says whether the
rules' identity moved with it (if it did not, something outside the scrub package decides
scrub's output, and the identity brains store would miss an upgrade).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def cases() -> list[dict]:
    return read(HERE / "corpus.jsonl")


def read(path: Path) -> list[dict]:
    """JSON lines, one a line (written ASCII-only: a text may hold any line separator)."""
    return [json.loads(line) for line in path.read_text(encoding="ascii").split("\n") if line]


def output(case: dict) -> dict:
    from llm_secondbrain.scrub import scrub, scrub_document

    if "text" in case:
        return {"text": scrub(case["text"])}
    fields, sections, _ = scrub_document(case["fields"], case["sections"])
    return {"fields": fields, "sections": sections}


def main() -> None:
    sys.path.insert(0, str(HERE.parent.parent))
    from llm_secondbrain.scrub import rules_identity

    with open(HERE / "scrubbed.jsonl", "w", encoding="ascii") as f:
        for case in cases():
            f.write(json.dumps(output(case)) + "\n")
    (HERE / "identity.txt").write_text(rules_identity() + "\n")


if __name__ == "__main__":
    main()

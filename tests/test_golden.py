"""scrub's output over a fixed corpus (tests/golden: the scrub tests' inputs, the sample notes,
documents in parts), against the output recorded with the rules' identity it was made under.

The identity is what a brain stores with every file to know when to re-scrub; this test is
what keeps it honest: output that changes while the identity stays the same means something
outside the scrub package decides the output, and brains would miss an upgrade."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
from make import HERE, cases, output, read  # noqa: E402

from llm_secondbrain.scrub import rules_identity  # noqa: E402


def test_scrub_output_is_the_recorded_one():
    recorded = read(HERE / "scrubbed.jsonl")
    made_under = (HERE / "identity.txt").read_text().strip()
    inputs = cases()
    assert len(recorded) == len(inputs), "the golden record is out of date: python tests/golden/make.py"
    changed = [i for i, (case, want) in enumerate(zip(inputs, recorded)) if output(case) != want]
    if rules_identity() == made_under:
        assert not changed, (f"scrub's output changed for {len(changed)} golden texts under the same rules "
                             f"identity ({made_under}): what decides the output is not all in the scrub package")
    else:
        assert not changed, (f"scrub's output changed for {len(changed)} golden texts (first: line "
                              f"{changed[0] + 1}); review, then record it: python tests/golden/make.py")

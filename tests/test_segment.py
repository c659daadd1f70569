from hypothesis import given, settings, strategies as st

from llm_secondbrain.segment import segment


def test_one_line_note_is_kept():
    segs = segment("INV/2026/00037 paid 2026-03-01")
    assert [s.text for s in segs] == ["INV/2026/00037 paid 2026-03-01"]
    assert (segs[0].line_start, segs[0].line_end) == (1, 1)


def test_short_paragraphs_are_packed_and_line_spans_are_right():
    text = "# Title\n\nFirst paragraph here.\n\nSecond one,\non two lines.\n"
    segs = segment(text, max_chars=1000, min_chars=5)
    assert len(segs) == 1
    assert segs[0].text == text.strip()
    assert (segs[0].line_start, segs[0].line_end) == (1, 6)


def test_paragraph_boundaries_are_respected_when_full():
    paras = [f"Paragraph {i} " + "x" * 60 for i in range(5)]
    text = "\n\n".join(paras)
    segs = segment(text, max_chars=80, min_chars=5)
    assert [s.text for s in segs] == paras
    assert [s.line_start for s in segs] == [1, 3, 5, 7, 9]


def test_long_paragraph_splits_on_sentences_then_words():
    sentence = "This sentence is about invoices and payments. "
    text = sentence * 40
    segs = segment(text, max_chars=200, min_chars=10)
    assert all(len(s.text) <= 200 for s in segs)
    assert all(s.text.endswith(".") for s in segs)
    one_word = "a" * 500
    segs = segment(one_word, max_chars=200, min_chars=10)
    assert "".join(s.text for s in segs) == one_word


def test_short_heading_before_long_paragraph_is_not_dropped():
    text = "Para two.\n" + "word " * 100
    segs = segment(text, max_chars=120, min_chars=20)
    assert segs[0].text.startswith("Para two.")


def test_empty_text_has_no_chunks():
    assert segment("   \n\n  ") == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab .\n\t!é"), max_size=3000),
       st.integers(min_value=30, max_value=400))
def test_no_text_is_lost_or_duplicated(text, max_chars):
    """Every non-space character survives exactly once, in order, when nothing is noise."""
    segs = segment(text, max_chars=max_chars, min_chars=1)
    assert all(len(s.text) <= max_chars for s in segs)
    joined = "".join(s.text for s in segs)
    assert [c for c in joined if not c.isspace()] == [c for c in text if not c.isspace()]
    for s in segs:
        lines = text.split("\n")
        first = lines[s.line_start - 1]
        assert s.text.split("\n")[0].strip() in first or first.strip() in s.text


def test_title_is_the_first_line_with_words_without_markdown_marks():
    from llm_secondbrain.segment import TITLE_MAX_CHARS, title

    assert title("# Sourdough starter\n\nFeed it daily.") == "Sourdough starter"
    assert title("---\ntags: [bread]\n---\n# Rye") == "tags: [bread]"
    assert title("\n\n> - Quoted line\nmore") == "Quoted line"
    assert title("----\n====\n") is None
    long = "word " * 100
    cut = title(long)
    assert len(cut) <= TITLE_MAX_CHARS and cut.endswith("word") and long.startswith(cut)
    assert len(title("x" * 500)) == TITLE_MAX_CHARS

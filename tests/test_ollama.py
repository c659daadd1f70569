"""The Ollama client, the embedders and the `llm` model, over real HTTP to tests/ollama_stub.py."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import llm
import pytest
from click.testing import CliRunner
from llm.cli import cli
from llm.plugins import pm

sys.path.insert(0, str(Path(__file__).parent))
from ollama_stub import closed_port_url, cosine, raw_vector  # noqa: E402

from llm_secondbrain import config  # noqa: E402
from llm_secondbrain.ollama import (  # noqa: E402
    InputRejected,
    LLMEmbedder,
    ModelMissing,
    OllamaClient,
    OllamaEmbedder,
    OllamaUnreachable,
    ServerError,
    UnknownEmbedModel,
    get_embedder,
    normalise,
)


def settings_for(stub, **changes) -> config.Settings:
    env = {"OLLAMA_URL": stub.url, "SECONDBRAIN_DB": "/nonexistent/brain.db"}
    env.update({k: v for k, v in changes.items() if k.isupper()})
    s = config.load(env)
    rest = {k: v for k, v in changes.items() if not k.isupper()}
    return config.replace(s, extra={"backoff": 0.01}, **rest)


def norm(v) -> float:
    return math.sqrt(sum(x * x for x in v))


# -- the stub itself ---------------------------------------------------------------------------


def test_stub_vectors_are_deterministic_and_mildly_semantic():
    a = raw_vector("The cat sat on the mat")
    assert a == raw_vector("the CAT sat, on the mat!")
    assert cosine(a, raw_vector("a cat on a mat")) > 0.3
    assert abs(cosine(a, raw_vector("quarterly invoice totals"))) < 0.15


# -- the client --------------------------------------------------------------------------------


def test_batch_goes_in_one_request_and_comes_back_unit_length(stub):
    with OllamaClient(stub.url, "nomic-embed-text") as client:
        vectors = client.embed(["alpha", "beta", "gamma", "delta"])
    assert len(vectors) == 4 and all(len(v) == 768 for v in vectors)
    assert all(abs(norm(v) - 1) < 1e-9 for v in vectors)
    assert stub.counts["embed"] == 1 and stub.counts["texts"] == 4
    assert stub.requests[0]["input"] == ["alpha", "beta", "gamma", "delta"]


def test_old_server_falls_back_to_legacy_endpoint_once_per_run(stub):
    stub.old_server = True
    with OllamaClient(stub.url, "nomic-embed-text") as client:
        first = client.embed(["one", "two"])
        second = client.embed(["three"])
    assert client.legacy
    paths = [r["path"] for r in stub.requests]
    assert paths == ["/api/embeddings"] * 3  # /api/embed was tried once (plain 404), then never
    assert stub.counts["embeddings"] == 3
    # The legacy endpoint returns raw vectors; the client hands them over as they are...
    assert norm(first[0]) > 1.5
    # ...and normalising gives exactly the batch endpoint's answer.
    stub.old_server = False
    with OllamaClient(stub.url, "nomic-embed-text") as client:
        modern = client.embed(["one", "two", "three"])
    for legacy_v, modern_v in zip(first + second, modern):
        assert max(abs(a - b) for a, b in zip(normalise(legacy_v), modern_v)) < 1e-9


def test_500s_are_retried_then_succeed(stub):
    stub.fail_next(2)
    with OllamaClient(stub.url, "nomic-embed-text", retries=3, backoff=0.01) as client:
        assert len(client.embed(["x"])) == 1
    assert stub.counts["failed"] == 2 and stub.counts["embed"] == 3


def test_500s_give_up_after_bounded_retries(stub):
    stub.fail_next(50)
    with OllamaClient(stub.url, "nomic-embed-text", retries=2, backoff=0.01) as client:
        with pytest.raises(ServerError) as info:
            client.embed(["x"])
    assert stub.counts["embed"] == 3  # one try + two retries
    assert "failed 3 times" in str(info.value) and "\n" not in str(info.value)


def test_dropped_connection_is_retried(stub):
    stub.drop_next(2)
    with OllamaClient(stub.url, "nomic-embed-text", retries=3, backoff=0.01) as client:
        assert len(client.embed(["x", "y"])) == 2
    assert stub.counts["dropped"] == 2


def test_a_kept_connection_the_server_closed_is_opened_again(stub):
    # Ollama closes idle keep-alive connections; the next request must not fail for it, even
    # with no retries left (a dropped answer on a fresh connection still fails: next test)
    with OllamaClient(stub.url, "nomic-embed-text", retries=0) as client:
        assert len(client.embed(["x"])) == 1
        stub.drop_next(1)
        assert len(client.embed(["y"])) == 1
        stub.drop_next(2)
        with pytest.raises(ServerError) as info:
            client.embed(["z"])
    assert "dropped the connection" in str(info.value) and "\n" not in str(info.value)


def test_slow_answers_within_timeout_work_and_too_slow_ones_fail(stub):
    stub.delay = 0.2
    with OllamaClient(stub.url, "nomic-embed-text", timeout=2.0, retries=0) as client:
        assert len(client.embed(["x"])) == 1
    stub.delay = 0.6
    with OllamaClient(stub.url, "nomic-embed-text", timeout=0.2, retries=1, backoff=0.01) as client:
        with pytest.raises((ServerError, OllamaUnreachable)) as info:
            client.embed(["x"])
    assert "\n" not in str(info.value)


def test_unreachable_message_is_exact():
    url = closed_port_url()
    with OllamaClient(url, "nomic-embed-text", retries=3) as client:
        with pytest.raises(OllamaUnreachable) as info:
            client.embed(["x"])
    assert str(info.value) == (
        f'Ollama is not reachable at {url} — start it with "ollama serve" or set OLLAMA_URL'
    )


def test_missing_model_says_how_to_pull_it(stub):
    stub.missing = {"nomic-embed-text"}
    with OllamaClient(stub.url, "nomic-embed-text") as client:
        with pytest.raises(ModelMissing) as info:
            client.embed(["x"])
    assert "ollama pull nomic-embed-text" in str(info.value)
    stub.old_server = True  # the legacy endpoint reports a missing model the same way
    with OllamaClient(stub.url, "nomic-embed-text:latest") as client:
        with pytest.raises(ModelMissing):
            client.embed(["x"])


def test_rejected_input_is_its_own_exception(stub):
    stub.reject_marker = "POISON"
    with OllamaClient(stub.url, "nomic-embed-text") as client:
        with pytest.raises(InputRejected) as info:
            client.embed(["fine", "POISON pill"])
        assert "cannot be embedded" in info.value.reason
        assert client.embed(["fine"])  # the client is still usable


def test_version(stub):
    with OllamaClient(stub.url, "nomic-embed-text") as client:
        assert client.version() == stub.version


# -- embedders and prefixes --------------------------------------------------------------------


def test_nomic_gets_task_prefixes(stub):
    with get_embedder(settings_for(stub)) as emb:
        assert isinstance(emb, OllamaEmbedder)
        assert (emb.name, emb.doc_prefix, emb.query_prefix) == (
            "nomic-embed-text", "search_document: ", "search_query: ")
        emb.embed_documents(["a note"])
        q = emb.embed_query("a question")
    assert stub.requests[0]["input"] == ["search_document: a note"]
    assert stub.requests[1]["input"] == ["search_query: a question"]
    assert len(q) == 768


def test_other_models_get_no_prefix_and_env_overrides(stub):
    with get_embedder(settings_for(stub, SECONDBRAIN_EMBED_MODEL="all-minilm:latest")) as emb:
        assert (emb.name, emb.doc_prefix, emb.query_prefix) == ("all-minilm", "", "")
        emb.embed_documents(["plain"])
    assert stub.requests[-1] == {"path": "/api/embed", "model": "all-minilm:latest", "input": ["plain"]}
    s = settings_for(stub, SECONDBRAIN_DOC_PREFIX="passage: ", SECONDBRAIN_QUERY_PREFIX="")
    with get_embedder(s) as emb:
        assert (emb.doc_prefix, emb.query_prefix) == ("passage: ", "")
        emb.embed_query("q")
    assert stub.requests[-1]["input"] == ["q"]


class TinyModel(llm.EmbeddingModel):
    model_id = "tiny-test-embed"
    batch_size = 3

    def __init__(self):
        self.calls = []

    def embed_batch(self, items, *, key=None):
        items = list(items)
        self.calls.append(items)
        for text in items:
            yield [float(len(text)), 1.0, 0.0, 2.0, 0.5]


class TinyPlugin:
    def __init__(self, model):
        self.model = model

    @llm.hookimpl
    def register_embedding_models(self, register):
        register(self.model)


@pytest.fixture
def tiny_model():
    model = TinyModel()
    pm.register(TinyPlugin(model), name="secondbrain-test-tiny")
    try:
        yield model
    finally:
        pm.unregister(name="secondbrain-test-tiny")


def test_llm_prefixed_model_goes_through_llm(stub, tiny_model):
    with get_embedder(settings_for(stub, SECONDBRAIN_EMBED_MODEL="llm:tiny-test-embed")) as emb:
        assert isinstance(emb, LLMEmbedder)
        assert (emb.name, emb.doc_prefix, emb.query_prefix) == ("llm:tiny-test-embed", "", "")
        vectors = emb.embed_documents(["a", "bb", "ccc", "dddd"])
    assert [v[0] for v in vectors] == [1.0, 2.0, 3.0, 4.0]
    assert stub.counts["embed"] == 0  # nothing went to Ollama


def test_unknown_llm_model_is_one_line(stub):
    with pytest.raises(UnknownEmbedModel) as info:
        get_embedder(settings_for(stub, SECONDBRAIN_EMBED_MODEL="llm:no-such-model"))
    assert "llm embed-models list" in str(info.value)


# -- the model registered with llm, through llm's own CLI ---------------------------------------


def test_embed_models_list_shows_our_ids(env):
    runner = CliRunner()
    result = runner.invoke(cli, ["embed-models", "list"])
    assert result.exit_code == 0, result.output
    assert "secondbrain/nomic-embed-text" in result.output
    result = runner.invoke(cli, ["embed-models", "list"], env={"SECONDBRAIN_EMBED_MODEL": "all-minilm"})
    assert "secondbrain/all-minilm" in result.output and "secondbrain/nomic-embed-text" in result.output


def test_llm_embed_returns_a_unit_vector(env, stub):
    result = CliRunner().invoke(cli, ["embed", "-m", "secondbrain/nomic-embed-text", "-c", "hello"])
    assert result.exit_code == 0, result.output
    vector = json.loads(result.stdout)
    assert len(vector) == 768 and abs(norm(vector) - 1) < 1e-6
    assert stub.requests[-1]["input"] == ["hello"] and stub.requests[-1]["model"] == "nomic-embed-text"


def test_llm_embed_with_old_server_is_normalised_too(env, stub):
    stub.old_server = True
    result = CliRunner().invoke(cli, ["embed", "-m", "secondbrain/nomic-embed-text", "-c", "hello"])
    assert result.exit_code == 0, result.output
    assert abs(norm(json.loads(result.stdout)) - 1) < 1e-6
    assert stub.counts["embeddings"] == 1


def test_llm_embed_unreachable_is_one_line(env, monkeypatch):
    url = closed_port_url()
    monkeypatch.setenv("OLLAMA_URL", url)
    result = CliRunner().invoke(cli, ["embed", "-m", "secondbrain/nomic-embed-text", "-c", "hello"])
    assert result.exit_code == 1
    assert result.output.strip() == (
        f'Error: Ollama is not reachable at {url} — start it with "ollama serve" or set OLLAMA_URL'
    )


@pytest.mark.parametrize("bad", ["http://[::1", "http://127.0.0.1:abc"])
def test_an_ollama_url_that_is_no_address_degrades_like_an_absent_server(env, run, tmp_path, monkeypatch, bad):
    (tmp_path / "n.md").write_text("The invoice run is on the fifth.\n")
    run("brain", "ingest", tmp_path / "n.md")  # embedded through the stub
    monkeypatch.setenv("OLLAMA_URL", bad)
    recalled = run("brain", "recall", "invoice run")
    assert "n.md" in recalled.output and "OLLAMA_URL is not a usable URL" in recalled.output
    (tmp_path / "m.md").write_text("The ferry leaves at nine.\n")
    ingested = run("brain", "ingest", tmp_path / "m.md")
    assert "embedding pending (OLLAMA_URL is not a usable URL" in ingested.output
    failed = run("brain", "embed", ok=False)
    assert failed.exit_code == 1 and failed.output.startswith("Error: OLLAMA_URL is not a usable URL")
    assert "Traceback" not in recalled.output + ingested.output + failed.output


def test_a_password_in_the_ollama_url_is_never_shown(env, run, tmp_path, monkeypatch):
    (tmp_path / "n.md").write_text("The invoice run is on the fifth.\n")
    monkeypatch.setenv("OLLAMA_URL", closed_port_url().replace("http://", "http://ola:Fjord2024pw@"))
    out = run("brain", "ingest", tmp_path / "n.md").output + run("brain", "recall", "invoice").output
    out += run("brain", "embed", ok=False).output
    assert "not reachable at http://[REDACTED:url_credentials]@127.0.0.1:" in out and "Fjord2024pw" not in out


def test_a_server_that_drips_its_answer_is_given_up_on_at_the_timeout(stub):
    stub.drip = 0.05  # 100 blanks over 5 s, then the answer: past a 0.5 s timeout
    with OllamaClient(stub.url, "nomic-embed-text", timeout=0.5, retries=0) as client:
        with pytest.raises((ServerError, OllamaUnreachable)) as info:
            client.embed(["x"])
    assert "timed out" in str(info.value) or "not reachable" in str(info.value)

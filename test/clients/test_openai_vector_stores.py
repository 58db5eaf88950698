"""The official `openai` Python client against Pustaka's Files and Vector Stores (corpora)."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import httpx
import openai
import pytest
from openai import OpenAI

from conftest import Server

DOCS_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "docs"
README = Path(__file__).resolve().parents[2] / "docs" / "api.md"
POLL_MS = 200

KELANTAN = "banjir-kelantan-2022.md"
PAHANG = "floods-pahang-2023-briefing.md"
LEAVE = "employee-leave-policy.md"


@pytest.fixture(scope="module")
def client(server: Server) -> OpenAI:
    return OpenAI(base_url=server.v1, api_key=server.key, max_retries=0, timeout=300)


def _upload(client: OpenAI, name: str, purpose: str = "assistants"):
    return client.files.create(file=(name, (DOCS_DIR / name).read_bytes()), purpose=purpose)


@pytest.fixture(scope="module")
def store(client: OpenAI):
    """A store with three eval documents, one attached alone and two in a batch, each with attributes."""
    vs = client.vector_stores.create(name="Python client store", metadata={"client": "python"})
    pahang = client.vector_stores.files.upload_and_poll(vector_store_id=vs.id, file=(PAHANG, (DOCS_DIR / PAHANG).read_bytes()), poll_interval_ms=POLL_MS)
    assert pahang.status == "completed", pahang.last_error
    client.vector_stores.files.update(pahang.id, vector_store_id=vs.id, attributes={"lang": "en", "topic": "floods"})
    kelantan = _upload(client, KELANTAN)
    leave = _upload(client, LEAVE, purpose="user_data")
    batch = client.vector_stores.file_batches.create_and_poll(
        vector_store_id=vs.id,
        files=[
            {"file_id": kelantan.id, "attributes": {"lang": "ms", "topic": "floods"}},
            {"file_id": leave.id, "attributes": {"lang": "en", "topic": "hr"}},
        ],
        poll_interval_ms=POLL_MS,
    )
    assert batch.status == "completed"
    assert batch.file_counts.completed == 2
    ids = {PAHANG: pahang.id, KELANTAN: kelantan.id, LEAVE: leave.id}
    yield vs, ids
    client.vector_stores.delete(vs.id)
    for file_id in ids.values():
        client.files.delete(file_id)


def test_files_upload_list_content_delete(client: OpenAI) -> None:
    uploaded = _upload(client, LEAVE)
    assert uploaded.object == "file" and uploaded.id.startswith("file-")
    assert uploaded.bytes == (DOCS_DIR / LEAVE).stat().st_size
    assert uploaded.filename == LEAVE and uploaded.purpose == "assistants"
    assert client.files.retrieve(uploaded.id).id == uploaded.id
    assert uploaded.id in [f.id for f in client.files.list()]
    assert client.files.content(uploaded.id).content == (DOCS_DIR / LEAVE).read_bytes()
    deleted = client.files.delete(uploaded.id)
    assert deleted.deleted is True and deleted.id == uploaded.id
    with pytest.raises(openai.NotFoundError) as gone:
        client.files.retrieve(uploaded.id)
    assert gone.value.body["message"] == f"No such File object: {uploaded.id}"
    with pytest.raises(openai.BadRequestError) as wrong:
        client.files.create(file=("x.md", b"# hello"), purpose="batch")
    assert wrong.value.body["param"] == "purpose"


def test_store_is_a_corpus_with_counts(client: OpenAI, server: Server, store) -> None:
    vs, ids = store
    assert vs.id.startswith("vs_") and vs.object == "vector_store"
    got = client.vector_stores.retrieve(vs.id)
    assert got.status == "completed"
    assert got.file_counts.completed == 3 and got.file_counts.total == 3
    assert got.usage_bytes > 0 and got.metadata == {"client": "python"}
    # The corpus behind it, through Pustaka's own API.
    corpus = httpx.get(f"{server.v1}/rag/corpora/corp_{vs.id[3:]}", headers={"Authorization": f"Bearer {server.key}"}).json()
    assert corpus["document_counts"]["indexed"] == 3
    files = client.vector_stores.files.list(vector_store_id=vs.id, limit=2, order="asc")
    assert len(files.data) == 2 and files.has_more
    every = [f.id for f in client.vector_stores.files.list(vector_store_id=vs.id, limit=2)]
    assert sorted(every) == sorted(ids.values())
    assert client.vector_stores.files.list(vector_store_id=vs.id, filter="failed").data == []
    content = list(client.vector_stores.files.content(ids[KELANTAN], vector_store_id=vs.id))
    assert "Tambatan Diraja" in "".join(part.text or "" for part in content)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("For how long did ship handling stop at the state's main seaport during the Pahang floods of early 2023?", PAHANG),
        ("How many days of unused annual leave can be carried forward under HR-POL-012?", LEAVE),
        ("Berapakah bilangan kemuncak mangsa di pusat pemindahan sementara semasa banjir Kelantan November 2022?", KELANTAN),
    ],
)
def test_search_finds_the_right_document_first(client: OpenAI, store, question: str, expected: str) -> None:
    vs, ids = store
    page = client.vector_stores.search(vs.id, query=question, max_num_results=5)
    assert page.data, question
    assert page.data[0].filename == expected, [r.filename for r in page.data]
    assert page.data[0].file_id == ids[expected]
    assert page.data[0].content[0].type == "text" and page.data[0].content[0].text
    scores = [r.score for r in page.data]
    assert scores == sorted(scores, reverse=True)


def test_search_filters_on_attributes(client: OpenAI, store) -> None:
    vs, _ = store
    question = "flood evacuation centres"
    malay = client.vector_stores.search(vs.id, query=question, max_num_results=20, filters={"type": "eq", "key": "lang", "value": "ms"})
    assert malay.data and all(r.attributes["lang"] == "ms" for r in malay.data)
    english_floods = client.vector_stores.search(
        vs.id,
        query=question,
        max_num_results=20,
        filters={"type": "and", "filters": [{"type": "eq", "key": "topic", "value": "floods"}, {"type": "nin", "key": "lang", "value": ["ms"]}]},
    )
    assert english_floods.data and {r.filename for r in english_floods.data} == {PAHANG}
    with pytest.raises(openai.BadRequestError) as bad:
        client.vector_stores.search(vs.id, query=question, filters={"type": "like", "key": "lang", "value": "ms"})
    assert bad.value.body["param"] == "filters.type"


def test_modify_and_errors(client: OpenAI, store) -> None:
    vs, _ = store
    updated = client.vector_stores.update(vs.id, name="Renamed from Python", expires_after={"anchor": "last_active_at", "days": 7})
    assert updated.name == "Renamed from Python"
    assert updated.expires_after is not None and updated.expires_after.days == 7
    assert updated.expires_at == updated.last_active_at + 7 * 86400
    assert client.vector_stores.update(vs.id, expires_after=None).expires_at is None
    with pytest.raises(openai.NotFoundError) as missing:
        client.vector_stores.retrieve("vs_000000000000000000000000")
    assert missing.value.body["message"] == "No vector store found with id 'vs_000000000000000000000000'."
    with pytest.raises(openai.BadRequestError) as too_many:
        client.vector_stores.create(name="x", metadata={f"k{i}": "v" for i in range(17)})
    assert too_many.value.body["param"] == "metadata"
    with pytest.raises(openai.BadRequestError):
        client.vector_stores.search(vs.id, query="")


def test_responses_file_search(client: OpenAI, server: Server, store) -> None:
    """responses.create with the file_search tool: the search item with its results, then the answer with file_citation annotations."""
    vs, ids = store
    response = client.responses.create(
        model=server.chat_model,
        input="How many days of annual leave does an employee with less than 5 years of service get?",
        tools=[{"type": "file_search", "vector_store_ids": [vs.id], "max_num_results": 3}],
        include=["file_search_call.results"],
        temperature=0,
        max_output_tokens=60,
    )
    call, message = response.output[0], response.output[1]
    assert call.type == "file_search_call" and call.status == "completed"
    assert call.results and call.results[0].file_id == ids[LEAVE]
    assert call.results[0].filename == LEAVE
    assert message.type == "message"
    text = message.content[0]
    assert text.type == "output_text" and text.text == response.output_text
    assert not re.search(r"\[\d+\]", text.text)
    for annotation in text.annotations:
        assert annotation.type == "file_citation"
        assert annotation.file_id in ids.values()
        assert 0 <= annotation.index <= len(text.text)

    events = [e.type for e in client.responses.create(
        model=server.chat_model,
        input="Berapakah bilangan kemuncak mangsa banjir Kelantan 2022?",
        tools=[{"type": "file_search", "vector_store_ids": [vs.id]}],
        max_output_tokens=16,
        stream=True,
    )]
    assert events[2:7] == [
        "response.output_item.added",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.output_item.done",
    ]
    assert events[-1] == "response.completed" or events[-1] == "response.incomplete"


def test_langchain_chat_openai_with_file_search(server: Server, store) -> None:
    """LangChain's ChatOpenAI on the Responses API with OpenAI's built-in file_search tool, bound as LangChain binds it."""
    from langchain_openai import ChatOpenAI

    vs, ids = store
    llm = ChatOpenAI(base_url=server.v1, api_key=server.key, model=server.chat_model, use_responses_api=True, temperature=0, max_tokens=60, max_retries=0)
    reply = llm.bind_tools([{"type": "file_search", "vector_store_ids": [vs.id], "max_num_results": 3}]).invoke(
        "How many days of annual leave does an employee with less than 5 years of service get?"
    )
    text_blocks = [b for b in reply.content if isinstance(b, dict) and b.get("type") == "text"] if isinstance(reply.content, list) else []
    assert text_blocks or isinstance(reply.content, str)
    for block in text_blocks:
        for annotation in block.get("annotations", []):
            assert annotation.get("type") in ("file_citation", "citation")
            assert (annotation.get("file_id") or annotation.get("extras", {}).get("file_id")) in ids.values()
    # The search ran: LangChain keeps the file_search_call among the message's tool outputs or content blocks.
    dumped = repr(reply)
    assert "file_search_call" in dumped, dumped[:500]


def test_llamaindex_openai_responses_with_file_search(server: Server, store) -> None:
    """LlamaIndex's OpenAIResponses LLM with the built-in file_search tool."""
    from llama_index.core.llms import ChatMessage
    from llama_index.llms.openai import OpenAIResponses

    vs, ids = store
    llm = OpenAIResponses(
        model=server.chat_model,
        api_base=server.v1,
        api_key=server.key,
        temperature=0,
        max_output_tokens=60,
        built_in_tools=[{"type": "file_search", "vector_store_ids": [vs.id], "max_num_results": 3}],
        context_window=2048,
        max_retries=0,
    )
    reply = llm.chat([ChatMessage(role="user", content="How many days of annual leave does an employee with less than 5 years of service get?")])
    assert reply.message.content is not None
    searched = [c for c in reply.additional_kwargs.get("built_in_tool_calls", []) if getattr(c, "type", None) == "file_search_call"]
    assert searched and searched[0].status == "completed", reply.additional_kwargs


def test_readme_example_runs(server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, client: OpenAI) -> None:
    """The vector-store example of docs/api.md, run as written (in a folder holding the file it opens)."""
    text = README.read_text(encoding="utf-8")
    found = re.findall(r"<!-- vector-stores example -->\n```python\n(.*?)\n```", text, flags=re.S)
    assert len(found) == 1
    shutil.copy(DOCS_DIR / KELANTAN, tmp_path / KELANTAN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PUSTAKA_KEY", server.key)
    code = found[0].replace("http://127.0.0.1:7780", server.url)
    namespace: dict = {"__name__": "readme_vector_stores"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/api.md:vector-stores", "exec"), namespace)  # noqa: S102 - our own documentation
    assert printed.getvalue().startswith(KELANTAN), printed.getvalue()
    assert namespace["file"].status == "completed"
    client.vector_stores.delete(namespace["store"].id)
    client.files.delete(namespace["file"].id)

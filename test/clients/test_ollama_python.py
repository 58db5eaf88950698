"""The official `ollama` Python client against Pustaka's Ollama API (`/api/*`)."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone

import httpx
import ollama
import pytest
from ollama import Client
from pydantic import BaseModel, Field

from conftest import Server


def get_weather(city: str) -> str:
    """Get the current weather in a city.

    Args:
      city: The city's name

    Returns:
      str: The weather there
    """
    return f"Hujan di {city}"


@pytest.fixture(scope="module")
def client(server: Server) -> Client:
    # The key as every client sends it: a bearer header (OLLAMA_API_KEY does the same).
    return Client(host=server.url, headers={"Authorization": f"Bearer {server.key}"}, timeout=120)


def _ask(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


GREEDY = {"temperature": 0, "num_predict": 16}


# --- chat and generate ---------------------------------------------------------------------


def test_chat(client: Client, server: Server) -> None:
    reply = client.chat(model=server.chat_model, messages=_ask("What is the capital of France?"), options=GREEDY)
    assert reply.model == server.chat_model
    assert reply.done is True
    assert reply.done_reason in ("stop", "length")
    assert reply.message.role == "assistant"
    assert reply.message.content and reply.message.content.strip()
    assert reply.prompt_eval_count > 0 and reply.eval_count > 0
    assert reply.total_duration >= reply.eval_duration >= 0
    datetime.fromisoformat(reply.created_at.replace("Z", "+00:00"))


def test_chat_stream(client: Client, server: Server) -> None:
    parts = list(client.chat(model=f"{server.chat_model}:latest", messages=_ask("Name three colours."), options=GREEDY, stream=True))
    assert len(parts) >= 2
    assert [p.done for p in parts] == [False] * (len(parts) - 1) + [True]
    text = "".join(p.message.content or "" for p in parts)
    assert text.strip()
    final = parts[-1]
    assert final.done_reason in ("stop", "length")
    assert final.eval_count > 0 and final.total_duration > 0
    assert final.model == f"{server.chat_model}:latest", "the name as the client sent it"


def test_generate(client: Client, server: Server) -> None:
    whole = client.generate(model=server.chat_model, prompt="Write one word about the sea.", system="Be brief.", options=GREEDY)
    assert whole.done is True and whole.response.strip()
    streamed = list(client.generate(model=server.chat_model, prompt="Write one word about the sea.", system="Be brief.", options=GREEDY, stream=True))
    assert streamed[-1].done is True
    assert "".join(p.response or "" for p in streamed).strip()
    raw = client.generate(model=server.chat_model, prompt="One, two, three,", raw=True, options={"temperature": 0, "num_predict": 4})
    assert raw.eval_count == 4 and raw.done_reason == "length"


def test_load_and_keep_alive(client: Client, server: Server) -> None:
    loaded = client.generate(model=server.chat_model, prompt="")
    assert loaded.done_reason == "load"
    assert client.chat(model=server.chat_model, messages=[], keep_alive="5m").done_reason == "load"
    assert client.chat(model=server.chat_model, messages=[], keep_alive=0).done_reason == "unload"
    with pytest.raises(ollama.ResponseError) as refused:
        client.chat(model=server.chat_model, messages=[], keep_alive="five minutes")
    assert refused.value.status_code == 400 and "keep_alive" in refused.value.error


class City(BaseModel):
    """Facts about a city, with the constraints ordinary pydantic models carry."""

    name: str = Field(max_length=40)
    state: str = Field(max_length=30)
    population_millions: int = Field(ge=0, le=50)


def test_structured_output(client: Client, server: Server) -> None:
    reply = client.chat(
        model=server.chat_model,
        messages=_ask("Describe Ipoh as JSON."),
        format=City.model_json_schema(),
        options={"temperature": 0, "num_predict": 200},
    )
    assert reply.done_reason == "stop", reply.message.content
    city = City.model_validate_json(reply.message.content)
    assert 0 <= city.population_millions <= 50
    generated = client.generate(model=server.chat_model, prompt="Describe Kuantan as JSON.", format=City.model_json_schema(), options={"temperature": 0, "num_predict": 200})
    City.model_validate_json(generated.response)


def test_tools_and_tool_results(client: Client, server: Server) -> None:
    # A Python function as a tool, as the client's README shows; the model decides whether to call it.
    reply = client.chat(model=server.chat_model, messages=_ask("What is the weather in Ipoh?"), tools=[get_weather], options={"temperature": 0, "num_predict": 40})
    assert reply.done is True
    for call in reply.message.tool_calls or []:
        assert call.function.name == "get_weather" and isinstance(call.function.arguments, dict)
    # A conversation holding a call and its result (Ollama's shape: arguments an object, the result by tool name).
    history = [
        *_ask("What is the weather in Ipoh?"),
        {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "get_weather", "arguments": {"city": "Ipoh"}}}]},
        {"role": "tool", "tool_name": "get_weather", "content": get_weather("Ipoh")},
    ]
    answer = client.chat(model=server.chat_model, messages=history, tools=[get_weather], options={"temperature": 0, "num_predict": 30})
    assert answer.done is True
    assert (answer.message.content or "").strip() or answer.message.tool_calls


# --- embeddings ------------------------------------------------------------------------


def test_embed(client: Client, server: Server) -> None:
    texts = ["The cat sits on the mat.", "A kitten is lying on the rug.", "The stock market fell sharply today."]
    batch = client.embed(model=server.embed_model, input=texts)
    assert batch.model == server.embed_model
    assert len(batch.embeddings) == 3
    assert {len(v) for v in batch.embeddings} == {384}, "all-MiniLM-L6-v2's width"
    assert all(abs(math.hypot(*v) - 1) < 1e-4 for v in batch.embeddings), "unit length"
    one = client.embed(model=server.embed_model, input=texts[0])
    assert len(one.embeddings) == 1
    # The vectors /v1/embeddings gives for the same inputs.
    openai = httpx.post(f"{server.v1}/embeddings", headers={"Authorization": f"Bearer {server.key}"}, json={"model": server.embed_model, "input": texts}, timeout=60).json()
    for ours, theirs in zip(batch.embeddings, (d["embedding"] for d in openai["data"])):
        assert max(abs(x - y) for x, y in zip(ours, theirs)) < 1e-6
    old = client.embeddings(model=server.embed_model, prompt=texts[1])
    assert max(abs(x - y) for x, y in zip(old.embedding, batch.embeddings[1])) < 1e-6


# --- models --------------------------------------------------------------------------------


def test_list_show_ps_version(client: Client, server: Server) -> None:
    names = {m.model for m in client.list().models}
    assert {f"{server.chat_model}:latest", f"{server.embed_model}:latest"} <= names
    listed = next(m for m in client.list().models if m.model == f"{server.chat_model}:latest")
    assert listed.details.format == "gguf" and listed.details.family and listed.details.parameter_size
    assert listed.size > 0 and len(listed.digest) == 64
    assert isinstance(listed.modified_at, datetime)

    shown = client.show(server.chat_model)
    assert shown.capabilities and "completion" in shown.capabilities
    assert shown.modelinfo["general.architecture"] == shown.details.family
    assert shown.parameters.startswith("num_ctx")
    assert client.show(server.embed_model).capabilities == ["embedding"]

    client.embed(model=server.embed_model, input="load me")
    running = {m.model: m for m in client.ps().models}
    assert f"{server.embed_model}:latest" in running
    embed = running[f"{server.embed_model}:latest"]
    assert embed.size_vram == 0
    assert embed.expires_at > datetime.now(timezone.utc)

    # The Python client has no version call; clients (VS Code's among them) read it to decide whether to talk.
    version = httpx.get(f"{server.url}/api/version", headers={"Authorization": f"Bearer {server.key}"}, timeout=30).json()["version"]
    assert tuple(int(p) for p in version.split(".")) >= (0, 6, 4)


# --- errors ----------------------------------------------------------------------------


def test_errors_in_ollamas_shape(client: Client, server: Server) -> None:
    with pytest.raises(ollama.ResponseError) as missing:
        client.chat(model="no-such-model", messages=_ask("hi"))
    assert missing.value.status_code == 404
    assert missing.value.error == "model 'no-such-model' not found"

    with pytest.raises(ollama.ResponseError) as images:
        client.chat(model=server.chat_model, messages=[{"role": "user", "content": "What is this?", "images": ["iVBORw0KGgo="]}])
    assert images.value.status_code == 400 and "does not support images" in images.value.error

    with pytest.raises(ollama.ResponseError) as empty:
        client.embed(model=server.embed_model, input=["fine", ""])
    assert empty.value.status_code == 400 and "input.1" in empty.value.error

    stranger = Client(host=server.url, timeout=30)
    with pytest.raises(ollama.ResponseError) as unauthenticated:
        stranger.list()
    assert unauthenticated.value.status_code == 401

    raw = httpx.post(f"{server.url}/api/chat", headers={"Authorization": f"Bearer {server.key}"}, content=b'{"model": ', timeout=30)
    assert raw.status_code == 400
    assert json.loads(raw.text) == {"error": "request body is not valid JSON"}


def test_key_from_the_environment(server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    # OLLAMA_HOST and OLLAMA_API_KEY, as the README says to set them.
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    monkeypatch.setenv("OLLAMA_API_KEY", server.key)
    assert Client(timeout=30).list().models

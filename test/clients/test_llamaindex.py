"""LlamaIndex's OpenAILike against Pustaka.

With its defaults (`is_chat_model=False`) OpenAILike sends `complete()` to /v1/completions as
a raw prompt; with `is_chat_model=True` it uses /v1/chat/completions. `max_tokens` is set
here only to keep the runs short: unset, the server continues a raw prompt until the model
stops or the context is full (as llama.cpp's server does), which for a prose prompt is the
whole context.
"""

from __future__ import annotations

import pytest
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.llms.openai_like import OpenAILike

from conftest import Server

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def completion_llm(server: Server) -> OpenAILike:
    llm = OpenAILike(model=server.chat_model, api_base=server.v1, api_key=server.key, max_tokens=16, temperature=0, max_retries=0)
    assert llm.is_chat_model is False, "OpenAILike's default is the completions endpoint"
    return llm


@pytest.fixture(scope="module")
def chat_llm(server: Server) -> OpenAILike:
    return OpenAILike(model=server.chat_model, api_base=server.v1, api_key=server.key, max_tokens=48, temperature=0, is_chat_model=True, max_retries=0)


def test_complete_uses_text_completions(completion_llm: OpenAILike, server: Server) -> None:
    response = completion_llm.complete(PROMPT)
    assert response.text.strip()
    # The raw response is the legacy completions object: the endpoint OpenAILike defaults to.
    assert response.raw.object == "text_completion"
    assert response.raw.model == server.chat_model
    assert 0 < response.raw.usage.completion_tokens <= 16


def test_stream_complete_matches_complete(completion_llm: OpenAILike) -> None:
    chunks = list(completion_llm.stream_complete(PROMPT))
    assert len(chunks) > 1
    deltas = "".join(chunk.delta or "" for chunk in chunks)
    assert deltas == chunks[-1].text, "deltas add up to the running text"
    assert deltas.strip() and deltas == completion_llm.complete(PROMPT).text


async def test_acomplete(completion_llm: OpenAILike) -> None:
    response = await completion_llm.acomplete(PROMPT)
    assert response.text == completion_llm.complete(PROMPT).text


def test_chat_model(chat_llm: OpenAILike, server: Server) -> None:
    messages = [ChatMessage(role=MessageRole.SYSTEM, content="You are a helpful assistant."), ChatMessage(role=MessageRole.USER, content="What is the capital of France?")]
    response = chat_llm.chat(messages)
    assert response.message.role == MessageRole.ASSISTANT
    assert response.message.content and response.message.content.strip()
    assert response.raw.object == "chat.completion"
    assert response.raw.model == server.chat_model

    streamed = list(chat_llm.stream_chat(messages))
    assert "".join(chunk.delta or "" for chunk in streamed) == response.message.content


def test_chat_model_complete_goes_through_chat(chat_llm: OpenAILike) -> None:
    # With is_chat_model=True, complete() wraps the prompt as a user message.
    response = chat_llm.complete("What is the capital of France?")
    assert response.text.strip()
    assert response.raw.object == "chat.completion"

"""LangChain's OpenAI and Anthropic integrations against Pustaka."""

from __future__ import annotations

import json
import math

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import BaseModel, Field

from conftest import Server

QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def chat_openai(server: Server) -> ChatOpenAI:
    return ChatOpenAI(model=server.chat_model, base_url=server.v1, api_key=server.key, temperature=0, max_tokens=48, max_retries=0, timeout=120)


@pytest.fixture(scope="module")
def chat_anthropic(server: Server) -> ChatAnthropic:
    # ChatAnthropic takes the server's root, like the Anthropic SDK under it.
    return ChatAnthropic(model=server.chat_model, base_url=server.url, api_key=server.key, temperature=0, max_tokens=48, max_retries=0, timeout=120)


def _concat(chunks: list[AIMessageChunk]) -> AIMessageChunk:
    assert chunks, "the stream yielded nothing"
    full = chunks[0]
    for chunk in chunks[1:]:
        full = full + chunk
    return full


# --- ChatOpenAI ------------------------------------------------------------------------------


def test_chat_openai_invoke(chat_openai: ChatOpenAI, server: Server) -> None:
    message = chat_openai.invoke([SystemMessage("You are a helpful assistant."), HumanMessage(QUESTION)])
    assert isinstance(message, AIMessage)
    assert isinstance(message.content, str) and message.content.strip()
    assert message.response_metadata["finish_reason"] in ("stop", "length")
    assert message.response_metadata["model_name"] == server.chat_model
    usage = message.usage_metadata
    assert usage and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_chat_openai_stream_matches_invoke(chat_openai: ChatOpenAI) -> None:
    streaming = chat_openai.model_copy(update={"stream_usage": True})
    chunks = list(streaming.stream(QUESTION))
    assert len(chunks) > 1, "streamed in several chunks, not one"
    full = _concat(chunks)
    assert isinstance(full.content, str) and full.content.strip()
    assert full.usage_metadata and full.usage_metadata["output_tokens"] > 0
    assert full.content == chat_openai.invoke(QUESTION).content


async def test_chat_openai_astream(chat_openai: ChatOpenAI) -> None:
    chunks = [chunk async for chunk in chat_openai.astream(QUESTION)]
    assert _concat(chunks).content == (await chat_openai.ainvoke(QUESTION)).content


@tool
def get_weather(city: str) -> str:
    """Get the current weather in a city."""
    return f"It is sunny in {city}."


@tool
def get_time(timezone: str) -> str:
    """Get the current local time in an IANA time zone such as Europe/Paris."""
    return "14:05"


@pytest.mark.parametrize("tool_choice", ["any", "required", "get_time"])
def test_chat_openai_bind_tools_tool_choice(chat_openai: ChatOpenAI, tool_choice: str) -> None:
    bound = chat_openai.bind_tools([get_weather, get_time], tool_choice=tool_choice)
    message = bound.invoke("What time is it in Paris?")
    assert message.tool_calls, message
    call = message.tool_calls[0]
    assert call["name"] in ("get_weather", "get_time")
    if tool_choice == "get_time":
        assert call["name"] == "get_time"
    assert call["id"]
    # The arguments validate against the tool's own schema.
    chosen = {"get_weather": get_weather, "get_time": get_time}[call["name"]]
    chosen.args_schema.model_validate(call["args"])


def test_chat_openai_tool_loop(chat_openai: ChatOpenAI) -> None:
    """A tool call, the tool run by LangChain, and the result sent back."""
    bound = chat_openai.bind_tools([get_weather], tool_choice="get_weather")
    messages = [HumanMessage("What is the weather in Lisbon?")]
    call_message = bound.invoke(messages)
    call = call_message.tool_calls[0]
    result = get_weather.invoke(call)
    assert isinstance(result, ToolMessage) and result.tool_call_id == call["id"]
    messages += [call_message, result]
    answer = chat_openai.bind_tools([get_weather]).invoke(messages)
    assert isinstance(answer, AIMessage)
    assert (isinstance(answer.content, str) and answer.content.strip()) or answer.tool_calls


def test_chat_openai_streamed_tool_call(chat_openai: ChatOpenAI) -> None:
    bound = chat_openai.bind_tools([get_weather], tool_choice="get_weather")
    full = _concat(list(bound.stream("What is the weather in Oslo?")))
    assert len(full.tool_calls) == 1
    assert full.tool_calls[0]["name"] == "get_weather"
    assert isinstance(full.tool_calls[0]["args"]["city"], str)


class MagicInput(BaseModel):
    """The input of the magic function, an integer strictly between -1000 and 1000."""

    input: int = Field(gt=-1000, lt=1000, description="the number to apply the magic function to")
    label: str = Field(max_length=20, description="a short name for the number")


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_chat_openai_with_structured_output(chat_openai: ChatOpenAI, method: str) -> None:
    structured = chat_openai.with_structured_output(MagicInput, method=method, include_raw=True)
    out = structured.invoke("Apply the magic function to the number 3.")
    assert out["parsing_error"] is None
    parsed = out["parsed"]
    assert isinstance(parsed, MagicInput)
    assert -1000 < parsed.input < 1000 and len(parsed.label) <= 20
    raw = out["raw"]
    text = raw.content if method == "json_schema" else json.dumps(raw.tool_calls[0]["args"])
    assert MagicInput.model_validate_json(text) == parsed


def test_chat_openai_json_mode(chat_openai: ChatOpenAI) -> None:
    structured = chat_openai.with_structured_output(method="json_mode")
    out = structured.invoke("Give the number 3 and its name as a JSON object with keys 'input' and 'label'.")
    assert isinstance(out, dict)


# --- OpenAIEmbeddings --------------------------------------------------------------------------


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_openai_embeddings(server: Server) -> None:
    # check_embedding_ctx_length=False: LangChain otherwise sends tiktoken token ids, which
    # mean nothing to a local model's tokenizer (the server refuses them by name).
    embeddings = OpenAIEmbeddings(model=server.embed_model, base_url=server.v1, api_key=server.key, check_embedding_ctx_length=False, max_retries=0)
    documents = ["The cat sits on the mat.", "A kitten is lying on the rug.", "The stock market fell sharply today."]
    vectors = embeddings.embed_documents(documents)
    assert len(vectors) == 3 and len({len(v) for v in vectors}) == 1 and len(vectors[0]) > 0
    query = embeddings.embed_query(documents[0])
    assert len(query) == len(vectors[0])
    assert _cosine(query, vectors[0]) > 0.999
    assert _cosine(vectors[0], vectors[1]) > _cosine(vectors[0], vectors[2])


async def test_openai_embeddings_async(server: Server) -> None:
    embeddings = OpenAIEmbeddings(model=server.embed_model, base_url=server.v1, api_key=server.key, check_embedding_ctx_length=False, max_retries=0)
    vectors = await embeddings.aembed_documents(["Selamat pagi", "Good morning"])
    assert len(vectors) == 2 and all(len(v) == len(vectors[0]) > 0 for v in vectors)


# --- ChatAnthropic --------------------------------------------------------------------------


def test_chat_anthropic_invoke(chat_anthropic: ChatAnthropic, server: Server) -> None:
    message = chat_anthropic.invoke([SystemMessage("You are a helpful assistant."), HumanMessage(QUESTION)])
    assert isinstance(message, AIMessage)
    assert message.text.strip()
    assert message.response_metadata["stop_reason"] in ("end_turn", "max_tokens")
    assert message.response_metadata["model"] == server.chat_model
    usage = message.usage_metadata
    assert usage and usage["input_tokens"] > 0 and usage["output_tokens"] > 0


def test_chat_anthropic_stream_matches_invoke(chat_anthropic: ChatAnthropic) -> None:
    chunks = list(chat_anthropic.stream(QUESTION))
    assert len(chunks) > 1
    full = _concat(chunks)
    assert full.text.strip()
    assert full.usage_metadata and full.usage_metadata["output_tokens"] > 0
    assert full.text == chat_anthropic.invoke(QUESTION).text


def test_chat_anthropic_bind_tools(chat_anthropic: ChatAnthropic) -> None:
    bound = chat_anthropic.bind_tools([get_weather, get_time], tool_choice="get_weather")
    message = bound.invoke("Is it raining in Jakarta?")
    assert len(message.tool_calls) == 1
    assert message.tool_calls[0]["name"] == "get_weather"
    get_weather.args_schema.model_validate(message.tool_calls[0]["args"])
    result = get_weather.invoke(message.tool_calls[0])
    answer = chat_anthropic.bind_tools([get_weather]).invoke([HumanMessage("Is it raining in Jakarta?"), message, result])
    assert answer.text.strip() or answer.tool_calls


def test_chat_anthropic_with_structured_output_function_calling(chat_anthropic: ChatAnthropic) -> None:
    # ChatAnthropic's default method: a forced tool call, enforced by the server's grammar.
    parsed = chat_anthropic.with_structured_output(MagicInput).invoke("Apply the magic function to the number 3.")
    assert isinstance(parsed, MagicInput) and -1000 < parsed.input < 1000

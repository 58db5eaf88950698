"""The official `openai` Python client against Pustaka's OpenAI-compatible API."""

from __future__ import annotations

import base64
import json
import math
import struct

import openai
import pytest
from openai import OpenAI
from pydantic import BaseModel, Field

from conftest import Server

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city's name"}},
            "required": ["city"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the current local time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {"timezone": {"type": "string", "description": "IANA time zone, e.g. Europe/Paris"}},
            "required": ["timezone"],
        },
    },
}


@pytest.fixture(scope="module")
def client(server: Server) -> OpenAI:
    return OpenAI(base_url=server.v1, api_key=server.key, max_retries=0, timeout=120)


def _ask(server: Server, text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


# --- chat completions -------------------------------------------------------------------


def test_chat_completion(client: OpenAI, server: Server) -> None:
    completion = client.chat.completions.create(
        model=server.chat_model,
        messages=[{"role": "system", "content": "You are a helpful assistant."}, *_ask(server, "What is the capital of France?")],
        max_tokens=48,
        temperature=0,
    )
    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    assert completion.model == server.chat_model
    choice = completion.choices[0]
    assert choice.message.role == "assistant"
    assert choice.finish_reason in ("stop", "length")
    assert choice.message.content and choice.message.content.strip()
    usage = completion.usage
    assert usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_chat_completion_stream_matches_whole(client: OpenAI, server: Server) -> None:
    request = dict(model=server.chat_model, messages=_ask(server, "Name three colours."), max_tokens=24, temperature=0)
    stream = client.chat.completions.create(**request, stream=True, stream_options={"include_usage": True})
    ids, text, finish, usage, roles = set(), "", None, None, []
    for chunk in stream:
        assert chunk.object == "chat.completion.chunk"
        ids.add(chunk.id)
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.role:
                roles.append(choice.delta.role)
            text += choice.delta.content or ""
            finish = choice.finish_reason or finish
    assert len(ids) == 1, "one id for the whole stream"
    assert roles[:1] == ["assistant"]
    assert text.strip()
    assert finish in ("stop", "length")
    assert usage is not None and usage.completion_tokens > 0
    whole = client.chat.completions.create(**request)
    assert text == whole.choices[0].message.content
    assert usage.completion_tokens == whole.usage.completion_tokens


def test_chat_completion_stream_helper(client: OpenAI, server: Server) -> None:
    """The SDK's `chat.completions.stream` helper assembles the final completion itself.

    (The helper raises LengthFinishReasonError on a `length` finish, so the reply must end.)
    """
    with client.chat.completions.stream(model=server.chat_model, messages=_ask(server, "What is the capital of France?"), max_tokens=64, temperature=0) as stream:
        deltas = [event.delta for event in stream if event.type == "content.delta"]
        final = stream.get_final_completion()
    assert deltas
    assert "".join(deltas) == final.choices[0].message.content


def test_tool_choice_required(client: OpenAI, server: Server) -> None:
    completion = client.chat.completions.create(
        model=server.chat_model,
        messages=_ask(server, "What is the weather like in Paris right now?"),
        tools=[WEATHER_TOOL],
        tool_choice="required",
        max_tokens=64,
        temperature=0,
    )
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls
    assert calls and len(calls) >= 1
    assert calls[0].type == "function"
    assert calls[0].id
    assert calls[0].function.name == "get_weather"
    arguments = json.loads(calls[0].function.arguments)
    assert isinstance(arguments.get("city"), str) and arguments["city"].strip()


def test_tool_choice_named_and_tool_result_turn(client: OpenAI, server: Server) -> None:
    messages: list[dict] = _ask(server, "What time is it in Paris?")
    completion = client.chat.completions.create(
        model=server.chat_model,
        messages=messages,
        tools=[WEATHER_TOOL, TIME_TOOL],
        tool_choice={"type": "function", "function": {"name": "get_time"}},
        max_tokens=64,
        temperature=0,
    )
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason in ("tool_calls", "stop")
    assert message.tool_calls and len(message.tool_calls) == 1
    call = message.tool_calls[0]
    assert call.function.name == "get_time", "the named tool, never the other one"
    arguments = json.loads(call.function.arguments)
    assert set(arguments) == {"timezone"} and isinstance(arguments["timezone"], str)

    # The tool's result goes back, with the assistant's call, as the SDK's users send it.
    messages.append(message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps({"time": "14:05"})})
    answer = client.chat.completions.create(model=server.chat_model, messages=messages, tools=[WEATHER_TOOL, TIME_TOOL], max_tokens=48, temperature=0)
    reply = answer.choices[0].message
    assert answer.choices[0].finish_reason in ("stop", "length", "tool_calls")
    assert (reply.content and reply.content.strip()) or reply.tool_calls


def test_tool_call_streamed(client: OpenAI, server: Server) -> None:
    stream = client.chat.completions.create(
        model=server.chat_model,
        messages=_ask(server, "What is the weather like in Rome?"),
        tools=[WEATHER_TOOL],
        tool_choice="required",
        max_tokens=64,
        temperature=0,
        stream=True,
    )
    names, arguments, finish = "", "", None
    for chunk in stream:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                assert delta.index == 0
                names += (delta.function.name or "") if delta.function else ""
                arguments += (delta.function.arguments or "") if delta.function else ""
            finish = choice.finish_reason or finish
    assert names == "get_weather"
    assert finish == "tool_calls"
    assert isinstance(json.loads(arguments)["city"], str)


class CityFacts(BaseModel):
    """Facts about a city, with the constraints ordinary pydantic models carry."""

    name: str = Field(max_length=40)
    country_code: str = Field(pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2 code")
    population_millions: int = Field(ge=0, le=40)
    founded_century: int = Field(ge=-30, le=21)
    landmarks: list[str] = Field(max_length=3)


def _parse_method(client: OpenAI):
    # The pinned SDK has the GA `chat.completions.parse`; older ones only the beta path.
    if hasattr(client.chat.completions, "parse"):
        return client.chat.completions.parse
    return client.beta.chat.completions.parse


@pytest.mark.parametrize("temperature", [0, 1.0])
def test_structured_output_parse(client: OpenAI, server: Server, temperature: float) -> None:
    completion = _parse_method(client)(
        model=server.chat_model,
        messages=[
            {"role": "system", "content": "Answer with facts about the city the user names."},
            *_ask(server, "Tell me about Paris."),
        ],
        response_format=CityFacts,
        max_tokens=160,
        temperature=temperature,
        seed=7,
    )
    message = completion.choices[0].message
    assert completion.choices[0].finish_reason == "stop"
    assert message.refusal is None
    parsed = message.parsed
    assert isinstance(parsed, CityFacts)
    # The SDK parsed it; validate the raw text again so the constraints are checked too.
    assert CityFacts.model_validate_json(message.content or "") == parsed
    assert len(parsed.landmarks) <= 3 and 0 <= parsed.population_millions <= 40


def test_json_object_mode(client: OpenAI, server: Server) -> None:
    completion = client.chat.completions.create(
        model=server.chat_model,
        messages=_ask(server, "Give the name and country of the city of Paris as a JSON object."),
        response_format={"type": "json_object"},
        max_tokens=64,
        temperature=0,
    )
    assert isinstance(json.loads(completion.choices[0].message.content or ""), dict)


# --- legacy completions ----------------------------------------------------------------


def test_legacy_completion_and_stream(client: OpenAI, server: Server) -> None:
    request = dict(model=server.chat_model, prompt="The capital of France is", max_tokens=12, temperature=0)
    completion = client.completions.create(**request)
    assert completion.object == "text_completion"
    assert completion.model == server.chat_model
    text = completion.choices[0].text
    assert text.strip()
    assert completion.choices[0].finish_reason in ("stop", "length")
    assert completion.usage and completion.usage.completion_tokens > 0

    streamed, finish, usage = "", None, None
    for chunk in client.completions.create(**request, stream=True, stream_options={"include_usage": True}):
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            streamed += choice.text
            finish = choice.finish_reason or finish
    assert streamed == text
    assert finish == completion.choices[0].finish_reason
    assert usage is not None and usage.completion_tokens == completion.usage.completion_tokens


def test_legacy_completion_several_prompts(client: OpenAI, server: Server) -> None:
    completion = client.completions.create(model=server.chat_model, prompt=["One, two,", "Red, green,"], max_tokens=6, temperature=0)
    assert sorted(choice.index for choice in completion.choices) == [0, 1]
    assert all(choice.text for choice in completion.choices)


# --- embeddings --------------------------------------------------------------------------


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_embeddings(client: OpenAI, server: Server) -> None:
    texts = ["The cat sits on the mat.", "A kitten is lying on the rug.", "The stock market fell sharply today."]
    # The SDK asks for base64 by default and decodes it itself.
    result = client.embeddings.create(model=server.embed_model, input=texts)
    assert result.model == server.embed_model
    assert [item.index for item in result.data] == [0, 1, 2]
    vectors = [item.embedding for item in result.data]
    assert len({len(v) for v in vectors}) == 1 and len(vectors[0]) > 0
    assert all(math.isfinite(x) for v in vectors for x in v)
    assert result.usage.prompt_tokens > 0
    # A real sentence-embedding model: the two sentences about cats are the closer pair.
    assert _cosine(vectors[0], vectors[1]) > _cosine(vectors[0], vectors[2])

    floats = client.embeddings.create(model=server.embed_model, input=texts[0], encoding_format="float")
    assert len(floats.data) == 1
    assert max(abs(x - y) for x, y in zip(floats.data[0].embedding, vectors[0])) < 1e-5

    raw = client.embeddings.with_raw_response.create(model=server.embed_model, input=texts[0], encoding_format="base64")
    encoded = json.loads(raw.text)["data"][0]["embedding"]
    decoded = struct.unpack(f"<{len(vectors[0])}f", base64.b64decode(encoded))
    assert max(abs(x - y) for x, y in zip(decoded, vectors[0])) < 1e-5


# --- Responses API ------------------------------------------------------------------------


def test_responses_create(client: OpenAI, server: Server) -> None:
    response = client.responses.create(
        model=server.chat_model,
        instructions="You are a concise assistant.",
        input="What is the capital of Italy?",
        max_output_tokens=32,
        temperature=0,
        store=False,
    )
    assert response.object == "response"
    assert response.status in ("completed", "incomplete")
    assert response.model == server.chat_model
    assert response.output_text.strip()
    assert response.output[0].type == "message"
    assert response.usage and response.usage.output_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


def test_responses_stream_matches_whole(client: OpenAI, server: Server) -> None:
    request = dict(model=server.chat_model, input="Name two fruits.", max_output_tokens=24, temperature=0, store=False)
    deltas, types, final, sequence = [], [], None, []
    for event in client.responses.create(**request, stream=True):
        types.append(event.type)
        sequence.append(event.sequence_number)
        if event.type == "response.output_text.delta":
            deltas.append(event.delta)
        if event.type in ("response.completed", "response.incomplete"):
            final = event.response
    assert types[0] == "response.created"
    assert "response.output_text.done" in types
    assert sequence == sorted(sequence) and len(set(sequence)) == len(sequence)
    assert final is not None
    text = "".join(deltas)
    assert text.strip() and text == final.output_text
    whole = client.responses.create(**request)
    assert whole.output_text == text


def test_responses_stream_helper(client: OpenAI, server: Server) -> None:
    # The helper only accepts a stream that ends in `response.completed` (not `.incomplete`,
    # which the server rightly sends when max_output_tokens cuts the reply), so the reply must end.
    with client.responses.stream(model=server.chat_model, input="What is the capital of France?", max_output_tokens=64, temperature=0, store=False) as stream:
        text = "".join(event.delta for event in stream if event.type == "response.output_text.delta")
        final = stream.get_final_response()
    assert text and text == final.output_text


RESPONSES_WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}


def test_responses_function_tool_and_result(client: OpenAI, server: Server) -> None:
    response = client.responses.create(
        model=server.chat_model,
        input="What is the weather in Berlin?",
        tools=[RESPONSES_WEATHER_TOOL],
        tool_choice="required",
        max_output_tokens=64,
        temperature=0,
    )
    calls = [item for item in response.output if item.type == "function_call"]
    assert len(calls) >= 1
    call = calls[0]
    assert call.name == "get_weather" and call.call_id
    assert isinstance(json.loads(call.arguments)["city"], str)

    # The result goes back as a continuation of the stored response.
    follow = client.responses.create(
        model=server.chat_model,
        previous_response_id=response.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": json.dumps({"weather": "sunny, 21 C"})}],
        tools=[RESPONSES_WEATHER_TOOL],
        max_output_tokens=48,
        temperature=0,
    )
    assert follow.status in ("completed", "incomplete")
    assert follow.output_text.strip() or any(item.type == "function_call" for item in follow.output)
    assert client.responses.retrieve(response.id).id == response.id
    client.responses.delete(response.id)
    client.responses.delete(follow.id)
    with pytest.raises(openai.NotFoundError):
        client.responses.retrieve(response.id)


def test_responses_function_tool_streamed(client: OpenAI, server: Server) -> None:
    arguments_deltas, done, final = [], None, None
    for event in client.responses.create(
        model=server.chat_model,
        input="What is the weather in Madrid?",
        tools=[RESPONSES_WEATHER_TOOL],
        tool_choice={"type": "function", "name": "get_weather"},
        max_output_tokens=64,
        temperature=0,
        stream=True,
        store=False,
    ):
        if event.type == "response.function_call_arguments.delta":
            arguments_deltas.append(event.delta)
        elif event.type == "response.function_call_arguments.done":
            done = event.arguments
        elif event.type == "response.completed":
            final = event.response
    assert done is not None and "".join(arguments_deltas) == done
    assert isinstance(json.loads(done)["city"], str)
    assert final is not None
    call = next(item for item in final.output if item.type == "function_call")
    assert call.name == "get_weather" and call.arguments == done


# --- models and errors --------------------------------------------------------------------------


def test_models_list_and_retrieve(client: OpenAI, server: Server) -> None:
    ids = [model.id for model in client.models.list()]
    assert server.chat_model in ids and server.embed_model in ids
    model = client.models.retrieve(server.chat_model)
    assert model.id == server.chat_model and model.object == "model"


def test_errors_are_typed(client: OpenAI, server: Server) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="no-such-model", messages=_ask(server, "hi"), max_tokens=1)
    assert missing.value.status_code == 404 and missing.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=server.chat_model, messages=_ask(server, "hi"), max_tokens=1, n=2)
    assert refused.value.param == "n"
    with pytest.raises(openai.AuthenticationError):
        OpenAI(base_url=server.v1, api_key="psk-not-a-real-key-xxxxxxxx", max_retries=0).models.list()

"""The official `anthropic` Python client against Pustaka's Messages API (/v1/messages).

The pinned SDK (2.x) no longer takes `temperature` as an argument of `messages.create`; it
still reaches the API through `extra_body`, as it does here for repeatable replies.
"""

from __future__ import annotations

import anthropic
import pytest
from anthropic import Anthropic

from conftest import Server

GREEDY = {"extra_body": {"temperature": 0}}

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Get the current weather in a city.",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city's name"}},
        "required": ["city"],
    },
}
TIME_TOOL = {
    "name": "get_time",
    "description": "Get the current local time in a time zone.",
    "input_schema": {
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "IANA time zone, e.g. Europe/Paris"}},
        "required": ["timezone"],
    },
}


@pytest.fixture(scope="module")
def client(server: Server) -> Anthropic:
    # The Anthropic client takes the server's root: it adds /v1/messages itself.
    return Anthropic(base_url=server.url, api_key=server.key, max_retries=0, timeout=120)


def _text(message: anthropic.types.Message) -> str:
    return "".join(block.text for block in message.content if block.type == "text")


def test_messages_create(client: Anthropic, server: Server) -> None:
    message = client.messages.create(
        model=server.chat_model,
        max_tokens=48,
        system="You are a helpful assistant.",
        messages=[{"role": "user", "content": "What is the capital of France?"}],
        **GREEDY,
    )
    assert message.type == "message" and message.role == "assistant"
    assert message.id.startswith("msg_")
    assert message.model == server.chat_model
    assert message.stop_reason in ("end_turn", "max_tokens")
    assert message.content and message.content[0].type == "text"
    assert _text(message).strip()
    assert message.usage.input_tokens > 0 and message.usage.output_tokens > 0


def test_messages_bearer_auth(server: Server) -> None:
    """The key also works as `Authorization: Bearer` (auth_token), as gateways send it."""
    bearer = Anthropic(base_url=server.url, auth_token=server.key, api_key=None, max_retries=0)
    message = bearer.messages.create(model=server.chat_model, max_tokens=4, messages=[{"role": "user", "content": "Hi"}])
    assert message.usage.output_tokens > 0


def test_messages_stream_matches_create(client: Anthropic, server: Server) -> None:
    request = dict(model=server.chat_model, max_tokens=40, messages=[{"role": "user", "content": "Name three animals."}], **GREEDY)
    event_types = []
    with client.messages.stream(**request) as stream:
        pieces = []
        for event in stream:
            event_types.append(event.type)
            if event.type == "text":
                pieces.append(event.text)
        final = stream.get_final_message()
    assert event_types[0] == "message_start"
    assert "content_block_start" in event_types and "content_block_stop" in event_types
    assert event_types[-1] == "message_stop"
    streamed = "".join(pieces)
    assert streamed.strip() and streamed == _text(final)
    assert final.stop_reason in ("end_turn", "max_tokens")
    assert final.usage.output_tokens > 0
    whole = client.messages.create(**request)
    assert _text(whole) == streamed
    assert whole.stop_reason == final.stop_reason


def test_messages_create_stream_true(client: Anthropic, server: Server) -> None:
    deltas, stop_reason, output_tokens = [], None, None
    for event in client.messages.create(
        model=server.chat_model, max_tokens=12, messages=[{"role": "user", "content": "Count from one to ten."}], stream=True, **GREEDY
    ):
        if event.type == "content_block_delta" and event.delta.type == "text_delta":
            deltas.append(event.delta.text)
        elif event.type == "message_delta":
            stop_reason, output_tokens = event.delta.stop_reason, event.usage.output_tokens
    assert "".join(deltas).strip()
    assert stop_reason in ("end_turn", "max_tokens")
    assert output_tokens and output_tokens <= 12


def test_stop_sequences(client: Anthropic, server: Server) -> None:
    message = client.messages.create(
        model=server.chat_model,
        max_tokens=64,
        stop_sequences=[","],
        messages=[{"role": "user", "content": "List five colours, separated by commas."}],
        **GREEDY,
    )
    if message.stop_reason == "stop_sequence":
        assert message.stop_sequence == ","
        assert "," not in _text(message)
    else:
        assert message.stop_reason in ("end_turn", "max_tokens") and "," not in _text(message)


def test_tool_choice_tool_and_tool_result_turn(client: Anthropic, server: Server) -> None:
    messages: list[dict] = [{"role": "user", "content": "What time is it in Tokyo?"}]
    message = client.messages.create(
        model=server.chat_model,
        max_tokens=64,
        tools=[WEATHER_TOOL, TIME_TOOL],
        tool_choice={"type": "tool", "name": "get_time"},
        messages=messages,
        **GREEDY,
    )
    assert message.stop_reason == "tool_use"
    uses = [block for block in message.content if block.type == "tool_use"]
    assert len(uses) == 1
    use = uses[0]
    assert use.name == "get_time", "the named tool, never the other one"
    assert use.id
    assert isinstance(use.input, dict) and set(use.input) == {"timezone"} and isinstance(use.input["timezone"], str)

    messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in message.content]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "09:30"}]})
    answer = client.messages.create(model=server.chat_model, max_tokens=48, tools=[WEATHER_TOOL, TIME_TOOL], messages=messages, **GREEDY)
    assert answer.stop_reason in ("end_turn", "max_tokens", "tool_use")
    assert _text(answer).strip() or any(block.type == "tool_use" for block in answer.content)


def test_tool_choice_any_streamed(client: Anthropic, server: Server) -> None:
    with client.messages.stream(
        model=server.chat_model,
        max_tokens=64,
        tools=[WEATHER_TOOL],
        tool_choice={"type": "any"},
        messages=[{"role": "user", "content": "Is it raining in London?"}],
        **GREEDY,
    ) as stream:
        partial_json = "".join(event.partial_json for event in stream if event.type == "input_json")
        final = stream.get_final_message()
    use = next(block for block in final.content if block.type == "tool_use")
    assert use.name == "get_weather"
    assert isinstance(use.input.get("city"), str)
    assert partial_json
    assert final.stop_reason == "tool_use"


@pytest.mark.parametrize(
    "tool_choice",
    [None, {"type": "tool", "name": "get_weather"}],
    ids=["no-tool-choice", "tool-choice-tool"],
)
def test_count_tokens_matches_usage(client: Anthropic, server: Server, tool_choice: dict | None) -> None:
    request: dict = dict(
        model=server.chat_model,
        system="You are terse.",
        tools=[WEATHER_TOOL],
        messages=[{"role": "user", "content": "What is the weather in Oslo?"}],
    )
    if tool_choice:
        request["tool_choice"] = tool_choice
    counted = client.messages.count_tokens(**request)
    assert counted.input_tokens > 0
    message = client.messages.create(**request, max_tokens=8, **GREEDY)
    assert message.usage.input_tokens == counted.input_tokens
    plain = client.messages.count_tokens(model=server.chat_model, messages=[{"role": "user", "content": "What is the weather in Oslo?"}])
    assert 0 < plain.input_tokens < counted.input_tokens


def test_errors_are_typed(client: Anthropic, server: Server) -> None:
    with pytest.raises(anthropic.NotFoundError):
        client.messages.create(model="no-such-model", max_tokens=4, messages=[{"role": "user", "content": "Hi"}])
    with pytest.raises(anthropic.BadRequestError) as refused:
        client.messages.create(model=server.chat_model, max_tokens=4, messages=[{"role": "user", "content": "Hi"}], thinking={"type": "enabled", "budget_tokens": 1024})
    assert "thinking" in str(refused.value)
    with pytest.raises(anthropic.AuthenticationError):
        Anthropic(base_url=server.url, api_key="psk-not-a-real-key-xxxxxxxx", max_retries=0).messages.create(
            model=server.chat_model, max_tokens=4, messages=[{"role": "user", "content": "Hi"}]
        )

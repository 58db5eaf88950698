"""Every Python snippet of docs/clients.md (once the README's), run exactly as written against the server.

The snippets are read from the Markdown itself (each fenced block after a
`<!-- snippet: NAME -->` marker), so the documentation and the tests cannot drift apart.
The documented address and model names are replaced by the test server's: the URL
`http://127.0.0.1:7780` by PUSTAKA_URL, `svc-merlion-13b` by PUSTAKA_CHAT_MODEL and
`svc-embed-1024` by PUSTAKA_EMBED_MODEL; the key comes from PUSTAKA_KEY, as in the snippets.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from conftest import server_from_env

README = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
DOC_URL = "http://127.0.0.1:7780"
DOC_CHAT_MODEL = "svc-merlion-13b"
DOC_EMBED_MODEL = "svc-embed-1024"


def _snippets() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    found = re.findall(r"<!-- snippet: ([\w-]+) -->\n```python\n(.*?)\n```", text, flags=re.S)
    snippets = dict(found)
    assert len(snippets) == len(found), "snippet names must be unique"
    return snippets


# What each snippet must have produced: expressions evaluated in its namespace.
CHECKS: dict[str, list[str]] = {
    "openai": [
        "reply.choices[0].message.content.strip()",
        "isinstance(city, City) and 0 <= city.population_millions <= 100 and len(city.name) <= 40",
        "len(vectors.data) == 2 and len(vectors.data[0].embedding) == len(vectors.data[1].embedding) > 0",
    ],
    "anthropic": ["message.content[0].type == 'text' and message.content[0].text.strip()"],
    "langchain-openai": ["all(isinstance(x, float) for x in vector) and len(vector) > 0"],
    "langchain-anthropic": ["isinstance(chunk.text, str)"],
    "llamaindex": ["completer.is_chat_model is False", "chat.is_chat_model is True"],
}


def test_every_snippet_is_checked() -> None:
    assert set(_snippets()) == set(CHECKS)


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_snippet(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server = server_from_env()
    monkeypatch.setenv("PUSTAKA_KEY", server.key)
    code = _snippets()[name]
    assert DOC_URL in code
    code = code.replace(DOC_URL, server.url).replace(DOC_CHAT_MODEL, server.chat_model).replace(DOC_EMBED_MODEL, server.embed_model)
    namespace: dict = {"__name__": f"readme_snippet_{name}"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, f"docs/clients.md:{name}", "exec"), namespace)  # noqa: S102 - our own documentation
    assert printed.getvalue().strip(), f"the {name} snippet printed nothing"
    for check in CHECKS[name]:
        assert eval(check, namespace), f"{name}: {check}"  # noqa: S307 - fixed expressions above

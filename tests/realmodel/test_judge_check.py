"""``thinkingbox judge-check`` against llama.cpp's server with SmolLM2 as the judge.

llama-cpp-python's server refuses a ``json_schema`` response format with HTTP 500, not 400;
the judge must fall back to its last-line answer format on that refusal too, so every
request comes back, and each closing ends either parsed (yes or no) or unjudged.
"""

from __future__ import annotations

import json

import pytest

from thinkingbox_env.cli import main

pytestmark = pytest.mark.realmodel

LIMIT = 2


def test_judge_check_judges_or_leaves_unjudged_every_closing(chat_server, tmp_path, capsys):
    figures = tmp_path / "judge.json"
    code = main(["judge-check", "--judge-model", chat_server.model, "--judge-base-url", chat_server.base_url,
                 "--judge-api-key", "none", "--limit", str(LIMIT), "--workers", "1", "--timeout", "900", "--json", str(figures)])
    out = capsys.readouterr().out
    assert chat_server.alive(), f"the server died during judge-check:\n{chat_server.log_tail()}"
    report = json.loads(figures.read_text())
    items = report["items"]
    assert len(items) == LIMIT
    overall = report["overall"]
    assert overall["failed"] == 0, f"judge requests failed: {[i['error'] for i in items if i['error']]}"
    for item in items:
        assert (isinstance(item["answer"], bool) and item["error"] is None) or (item["answer"] is None and item["error"] == "unparsed"), item
    assert overall["judged"] + overall["unparsed"] == LIMIT
    if overall["judged"]:
        assert code == 0, out
        assert "accuracy" in out and overall["accuracy"] is not None
    else:  # nothing measured: a non-zero exit that says why
        assert code == 1 and "nothing was judged" in out, out
    print(f"\nSmolLM2 as judge: {overall['judged']}/{LIMIT} closings judged, accuracy {overall['accuracy']}")

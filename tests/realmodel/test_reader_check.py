"""``thinkingbox judge-check --reader-set`` against llama.cpp's server with SmolLM2 as the reader.

llama-cpp-python's server refuses the reading's ``json_schema`` response format with HTTP 500;
the reader must fall back to asking for the object on the last line, so every request comes
back, and each closing ends either read (a reply that checks) or unread with the reason. A tiny
model's reply that does not check must never count as a reading.
"""

from __future__ import annotations

import json

import pytest

from thinkingbox_env.cli import main

pytestmark = pytest.mark.realmodel

LIMIT = 2


def test_reader_check_reads_or_leaves_unread_every_closing(chat_server, tmp_path, capsys):
    figures = tmp_path / "reader.json"
    code = main(["judge-check", "--reader-set", "--model", chat_server.model, "--base-url", chat_server.base_url,
                 "--api-key", "none", "--limit", str(LIMIT), "--workers", "1", "--timeout", "900", "--json", str(figures)])
    out = capsys.readouterr().out
    assert chat_server.alive(), f"the server died during the reader check:\n{chat_server.log_tail()}"
    report = json.loads(figures.read_text())
    items = report["items"]
    assert len(items) == LIMIT
    for item in items:
        # read: a verdict and scores; unread: the reason, and no verdict at all
        assert (item["error"] is None and isinstance(item["passed"], bool) and item["scores"]) or \
            (item["error"] and item["passed"] is None and not item["scores"]), item
        assert "request failed" not in (item["error"] or ""), item  # the endpoint answered: a refusal fell back
    overall = report["overall"]
    assert overall["read"] + overall["unread"] == LIMIT
    if overall["read"]:
        assert code == 0, out
    else:  # nothing measured: a non-zero exit that says why
        assert code == 1 and "nothing was read" in out, out
    print(f"\nSmolLM2 as reader: {overall['read']}/{LIMIT} closings read; unread: {[i['error'] for i in items if i['error']]}")

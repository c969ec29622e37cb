"""The LLM user played by SmolLM2 under the oracle that sends the facts the customer actually gave.

The plain oracle replays the task's golden values, so it passes whatever the model-played
customer says. With ``--agent-option facts=heard`` it sends, for each customer-given fact,
what the customer said (or nothing): the pass rate then measures whether the simulated user
gave what the task needs. The test runs it to the end and reports the rate; the rate itself
is the model's, not asserted.
"""

from __future__ import annotations

import pytest

import thinkingbox_env as tb
from thinkingbox_env.agents.heard_facts import classify_sent, is_customer_fact, profile_text, said
from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

pytestmark = pytest.mark.realmodel

# short tasks (two facts each) whose golden calls need identifiers, dates or names only the customer knows
TASKS = ["consulting/HV002_001", "travel/TR008_001"]
USER_MAX_TOKENS = 48


def _customer_before(trace: list[dict], index: int) -> str:
    return "\n".join(e["content"] for e in trace[:index]
                     if e.get("type") == "message" and e.get("role") == "user" and isinstance(e.get("content"), str))


def test_the_oracle_sends_only_facts_the_llm_customer_gave(chat_server, tmp_path, capsys):
    run = tmp_path / "llm-user.jsonl"
    code = main(["eval", *TASKS, "--agent", "oracle", "--agent-option", "facts=heard",
                 "--user", "llm", "--user-model", chat_server.model, "--user-base-url", chat_server.base_url,
                 "--user-api-key", "none", "--user-option", f"max_tokens={USER_MAX_TOKENS}",
                 "--no-judge", "-n", "1", "-c", "1", "-o", str(run)])
    out = capsys.readouterr().out
    assert chat_server.alive(), f"the server died during the run:\n{chat_server.log_tail()}"
    assert code == 0, out
    rows = read_rows(run)
    assert sorted(r["task_id"] for r in rows) == sorted(TASKS)
    uses: list[str] = []
    for row in rows:
        assert row["status"] == "ok", row["system_error"]
        assert row["user_replies"]["replies"] > 0
        task = tb.make(row["task_id"]).unwrapped.task
        trace = row["trace"]
        calls = [(i, e) for i, e in enumerate(trace) if e.get("type") == "tool_call"]
        assert [e["name"] for _, e in calls] == [c.name for c in task.golden]
        profile = profile_text(task)
        for (i, event), golden in zip(calls, task.golden):
            heard = _customer_before(trace, i)
            for name, source in golden.why.items():
                value = (event["arguments"] or {}).get(name)
                quotable = name in golden.arguments and is_customer_fact(name, golden.arguments[name], profile)
                if source == "customer" and quotable and value is not None:
                    # a customer-given fact is sent only as the customer said it before the call
                    assert said(value, heard), f"{row['task_id']} {golden.name}.{name}={value!r} was never said: {heard!r}"
        uses += classify_sent(task, [e for _, e in calls])
    passed = sum(r["outcome"] == "pass" for r in rows)
    judged = sum(r["outcome"] in ("pass", "fail") for r in rows)
    counts = {u: uses.count(u) for u in ("heard", "substituted", "missing", "composed")}
    print(f"\noracle with the facts SmolLM2's customer gave: {passed}/{judged} passed; customer-given values {counts}")

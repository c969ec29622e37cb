"""``thinkingbox eval --agent openai`` against llama.cpp's server with SmolLM2: trials end, and every outcome is categorised.

The tasks are consulting ones, the domain with the shortest opening; two of them share the
opening's long prefix (instructions, policy, tools), which the server evaluates once. The
checks before the first trial are left out (``--no-preflight``): their test request has a fixed
60-second limit, which a two-core machine running other work exceeds while this server reads
the tool-check prompt; what they would refuse the run for (no tool calls come back) is asserted
on the rows instead.
"""

from __future__ import annotations

import json

import pytest
from realmodel_figures import seconds_per_trial, tool_call_figures
from realmodel_server import TOOLS_N_CTX

from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

pytestmark = pytest.mark.realmodel

TASKS = ["consulting/HV004_004", "consulting/HV007_002"]
MAX_ACTIONS = 2


def test_eval_runs_every_trial_to_its_end_with_an_outcome(tools_server, tmp_path, capsys):
    run = tmp_path / "smollm2.jsonl"
    code = main(["eval", *TASKS, "--agent", "openai", "--base-url", tools_server.base_url, "--model", tools_server.model,
                 "--api-key", "none", "--extra-body", json.dumps({"tool_choice": "auto"}), "--compact-tools",
                 "--context-length", str(TOOLS_N_CTX), "--max-tokens", "128", "--max-actions", str(MAX_ACTIONS), "--timeout", "1200",
                 "--no-preflight",
                 "-n", "1", "-c", "1", "--no-judge", "-o", str(run)])
    out = capsys.readouterr().out
    assert tools_server.alive(), f"the server died during the run:\n{tools_server.log_tail()}"
    assert code == 0, out
    rows = read_rows(run)
    assert sorted(r["task_id"] for r in rows) == sorted(TASKS)
    for row in rows:
        assert row["status"] == "ok", row["system_error"]
        assert row["outcome"] in ("pass", "fail"), row["outcome"]
        if row["outcome"] == "fail":
            assert row["failure_category"], f"{row['task_id']}: a failed trial without a category"
        assert row["model_calls"] and all(c["ok"] for c in row["model_calls"])
    figures = tool_call_figures(rows)
    # the server returned tool calls (tools and tool_choice reached the model) and the env parsed them
    assert figures["turns_with_calls"] > 0, figures
    print(f"\nSmolLM2 on llama.cpp: {seconds_per_trial(rows):.1f} s per trial; tool calls parsed in "
          f"{figures['turns_parsed']}/{figures['turns_with_calls']} model turns with calls "
          f"({figures['model_turns']} model turns); categories: {[r['failure_category'] for r in rows]}")

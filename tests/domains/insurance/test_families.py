"""Auto-insurance domain: wrong-but-plausible trajectories fail with the right check named, the domain
meets its size requirements, and a sample of its tasks validates.

The wrong trajectories are the ones the paper reports for this domain: every tool call succeeds,
and only the checks over the final state tell that the policy forbade the change.
"""

from __future__ import annotations

import json

import pytest

import thinkingbox_env as tb
from thinkingbox_env.domain import load_domain
from thinkingbox_env.eval.validate import validate_task

DOMAIN = load_domain("insurance")
TOOLS = DOMAIN.tools_module
def test_the_domain_is_at_least_as_rich_as_the_papers():
    tools = [t for name, t in DOMAIN.toolbox.tools.items() if name != "end_conversation"]
    writes = [t for t in tools if t.writes]
    assert len(DOMAIN.db.tables) >= 14
    assert len(tools) >= 30 and len(writes) >= 13 and len(tools) - len(writes) >= 14
    assert len(DOMAIN.kb_documents()) >= 8
    assert len(DOMAIN.policy.split()) >= 2000
    tasks = tb.list_tasks(domain="insurance")
    families = {tb.load_task(t).family for t in tasks}
    assert len(tasks) >= 100 and len(families) >= 8
    assert families == set(DOMAIN.families)
    branches = {(tb.load_task(t).family, tb.load_task(t).tags[1]) for t in tasks}
    # every family whose requests need full verification has the branch where the customer cannot reach it; a first
    # notice of loss needs only partial verification, and two requests are verified once, together
    full = [code for code, fam in DOMAIN.families.items() if getattr(fam, "LEVEL", "full") == "full" and code != "IN011"]
    assert all(any(b.startswith("partial_verification") for f, b in branches if f == code) for code in full)
    assert all((code, b) in branches for code, fam in DOMAIN.families.items() for b in fam.branches)




SAMPLE = [f"insurance/{code}_{n:03d}" for code, n in
          [("IN001", 1), ("IN002", 3), ("IN003", 3), ("IN004", 4), ("IN005", 5), ("IN006", 1), ("IN007", 2), ("IN008", 3),
           ("IN009", 3), ("IN010", 5)]]  # tasks without a rubric: those need a judge (see test_task_set_v2)


@pytest.mark.parametrize("task_id", SAMPLE)
def test_sample_tasks_validate(task_id):
    result = validate_task(tb.load_task(task_id))
    assert result.ok, result.problems


def test_train_variants_are_fresh_and_solvable():
    for code in DOMAIN.families:
        seed = 4242
        while (spec := tb.generate_variant("insurance", code, seed)).checks.rubric:  # a rubric needs a judge
            seed += 1
        assert spec.split == "train"
        info = tb.run_episode(tb.ThinkingboxEnv(spec), tb.OracleAgent())
        assert info["verdict"] == 1.0, (code, json.dumps(info["checks"]))

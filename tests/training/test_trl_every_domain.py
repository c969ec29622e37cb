"""Every family of every discovered domain through the TRL environment class, as GRPOTrainer drives it.

GRPO on a domain cannot start when TRL cannot read a tool's type hints (neobank's
``expires_on: IsoDate | None`` once raised ``TypeHintParsingException``), so each domain's
schemas are extracted with transformers' own ``get_json_schema`` after ``reset``, and one
train variant per family is replayed: the golden trajectory earns 1, the same trajectory
with one write dropped earns 0.
"""

from __future__ import annotations

import json

import pytest

from thinkingbox_env.integrations.trl import REPLY_TOOL, environment_class, task_for_row, trl_tool_schemas
from thinkingbox_env.tasks.domain import domain_dirs, load_domain

pytest.importorskip("trl", reason="needs the train extra: pip install 'thinkingbox-env[train]'")
pytest.importorskip("transformers", reason="needs the train extra: pip install 'thinkingbox-env[train]'")

CASES = [(d, f) for d in sorted(domain_dirs()) for f in load_domain(d).families]


def _row(domain: str, family: str) -> dict:
    """The first train row of the family whose variant has a golden write and no rubric question (no judge here)."""
    for seed in range(7_000, 7_060):
        row = {"prompt": [{"role": "user", "content": ""}], "family": family, "seed": seed}
        spec = task_for_row(domain, row)
        toolbox = load_domain(domain).toolbox
        if not spec.checks.rubric and any(toolbox[c.name].writes for c in spec.golden):
            return row
    pytest.fail(f"{domain}/{family}: no variant without rubric questions among 60 seeds")


def _replay(adapter, spec, skip: int | None = None) -> None:
    turns = list(spec.dialogue)
    for i, call in enumerate(spec.golden):
        while turns and turns[0].before <= i:  # the questions and proposals the dialogue checks ask for
            getattr(adapter, REPLY_TOOL)(message=turns.pop(0).say)
        if i == skip:
            continue
        result = getattr(adapter, call.name)(**call.arguments)
        json.loads(result)  # every tool answer is JSON text the model can read
    while turns:
        getattr(adapter, REPLY_TOOL)(message=turns.pop(0).say)


def test_every_domain_is_discovered():
    assert {"consulting", "insurance", "neobank", "retail", "travel"} <= set(domain_dirs())


@pytest.mark.parametrize(("domain", "family"), CASES, ids=[f"{d}-{f}" for d, f in CASES])
def test_golden_earns_one_and_a_dropped_write_zero_through_the_trl_class(domain, family):
    cls = environment_class(domain)
    row = _row(domain, family)
    spec = task_for_row(domain, row)
    adapter = cls()
    assert adapter.reset(**row) == spec.user.opening
    schemas = trl_tool_schemas(cls)  # what TRL builds from the methods' hints at reset; raised for neobank
    assert {s["function"]["name"] for s in schemas} == set(cls.tool_names)
    _replay(adapter, spec)
    adapter._record_final_message(spec.golden_reply)
    assert adapter.get_reward() == 1.0, adapter._finish().get("checks")

    toolbox = load_domain(domain).toolbox
    write = next(i for i, c in enumerate(spec.golden) if toolbox[c.name].writes)
    adapter.reset(**row)
    _replay(adapter, spec, skip=write)
    adapter._record_final_message(spec.golden_reply)
    assert adapter.get_reward() == 0.0, f"dropping golden write {spec.golden[write].name} still passed"

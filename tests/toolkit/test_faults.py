"""A task's scheduled faults are declared on the episode's state when it starts, and the tool runner reads them there."""

from __future__ import annotations

from thinkingbox_env.tasks.lookup import load_task
from thinkingbox_env.tasks.runtime import runtime_for
from thinkingbox_env.toolkit.faults import FaultPlan

TASK = "consulting/HV003_009"  # provision_licence's first call times out


def test_a_state_started_for_a_task_with_faults_carries_its_plan():
    runtime = runtime_for(load_task(TASK))
    fault = runtime.spec.faults[0]
    state = runtime.new_state()
    try:
        assert isinstance(state.faults, FaultPlan)
        calls = [c for c in runtime.spec.golden if c.name == fault.tool]
        first = runtime.domain.toolbox.call(state, fault.tool, calls[0].arguments)
        assert (first.ok, first.content, first.error_kind) == (False, {"error": fault.error}, "transient")
        again = runtime.domain.toolbox.call(state, fault.tool, calls[0].arguments)
        assert again.error_kind != "transient"
    finally:
        state.close()


def test_a_state_started_without_a_plan_fails_no_call():
    runtime = runtime_for(load_task(TASK))
    fault = runtime.spec.faults[0]
    state = runtime.template.new_episode()
    try:
        assert state.faults is None
        call = next(c for c in runtime.spec.golden if c.name == fault.tool)
        assert runtime.domain.toolbox.call(state, fault.tool, call.arguments).error_kind != "transient"
    finally:
        state.close()

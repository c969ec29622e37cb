"""Reading a benchmark clone: task files by ``ast`` only, the merge rule, servers, release list, precise errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from thinkingbox_env.tbbench import TBBench, TBBenchFormatError, merge_init, parse_task_module

DATA = Path(__file__).resolve().parents[1] / "data" / "tbbench"
TASK_FILE = "dataset/tests/toy_shop_tasks.py"


@pytest.fixture
def clone(tmp_path):
    """A writable copy of the tiny clone, for tests that break one file."""
    target = tmp_path / "clone"
    shutil.copytree(DATA, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_merge_concatenates_lists_merges_dicts_and_replaces_nulls():
    base = {"a": {"x": 1, "y": [1]}, "b": None, "c": [1], "d": "keep", "e": 5}
    init = {"a": {"y": [2], "z": 3}, "b": {"k": 1}, "c": [2, 3], "e": None, "f": "new"}
    assert merge_init(base, init) == {"a": {"x": 1, "y": [1, 2], "z": 3}, "b": {"k": 1}, "c": [1, 2, 3],
                                      "d": "keep", "e": 5, "f": "new"}
    assert base["a"]["y"] == [1]  # inputs untouched


def test_task_file_is_parsed_not_executed():
    module = parse_task_module(DATA / TASK_FILE)
    assert module.scenario == "toy_shop"
    # the function bodies raise if run; the plain-docstring helper is not a task
    assert sorted(module.tests) == ["test_cancel_pending", "test_lookup_shipped"]


def test_task_merges_init_into_the_scenario_world_state():
    task = TBBench(DATA, "python").task(f"tbbench/{TASK_FILE}:test_cancel_pending")
    shop = task.world_state["shop"]
    assert shop["labels"] == ["base", "cancel"]  # lists concatenated
    assert shop["data_patch"] == {"orders": {"O1": {"status": "pending"}}}  # the scenario's null replaced
    assert shop["orders"]["O1"] == {"status": "shipped", "total": 40}  # the patch is the server's to apply
    assert "sources" not in task.server_config("shop") and "sources" in shop
    assert [c.name for c in task.golden] == ["get_order", "cancel_order"]
    assert task.rubrics() == ["Does the response confirm that order O1 was cancelled?"]
    assert task.query.startswith("Please cancel my order O1")
    assert "<DONE>" in task.system_prompt and "Toy Shop policy" in task.policy
    assert task.tools == ["get_order", "cancel_order", "search_policy"]
    assert task.full_id == f"tbbench/{TASK_FILE}:test_cancel_pending" and task.domain == "tbbench"


def test_user_context_becomes_facts_the_scripted_user_releases_when_asked():
    from thinkingbox_env.users import ScriptedUser

    task = TBBench(DATA, "python").task(f"{TASK_FILE}:test_cancel_pending")
    user = ScriptedUser()
    user.reset(task.user, 0)
    reply = user.reply([{"role": "assistant", "content": "What is the reason for the cancellation?"}])
    assert "ordered by mistake" in reply and "O1" not in reply


def test_release_list_and_servers(tmp_path):
    bench = TBBench(DATA, "/venv/bin/python")
    assert bench.release_tasks() == [f"{TASK_FILE}:test_cancel_pending", f"{TASK_FILE}:test_lookup_shipped"]
    shop = bench.servers["shop"]
    assert shop.command == ("/venv/bin/python", "servers/toy_shop_server.py")
    assert dict(shop.env) == {"TOY_SHOP_MODE": "test"}


def _rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize(("edit", "task", "expected"), [
    ((TASK_FILE, "query: Please cancel", "quer: Please cancel"), "test_cancel_pending",
     ["toy_shop_tasks.py", "task 'test_cancel_pending'", "field 'query'"]),
    ((TASK_FILE, "      shop:\n        data_patch", "      warehouse:\n        data_patch"), "test_cancel_pending",
     ["task 'test_cancel_pending'", "field 'init.warehouse'", "no such server"]),
    ((TASK_FILE, "- name: get_order\n              arguments: {order_id: O1}", "- arguments: {order_id: O1}"),
     "test_cancel_pending", ["init.shop.golden_test_case.tool_interactions[0]", "tool 'name'"]),
    ((TASK_FILE, "scenario: toy_shop", "scenario: no_such_scenario"), "test_cancel_pending",
     ["no_such_scenario.yaml", "scenario not found"]),
    (("dataset/scenario/toy_shop.yaml", "bot_instructions:", "policy:"), "test_lookup_shipped",
     ["toy_shop.yaml", "field 'bot_instructions'"]),
    (("servers/servers.yaml", "shop:", "store:"), "test_lookup_shipped",
     ["toy_shop.yaml", "field 'world_state.shop'", "servers.yaml"]),
    ((TASK_FILE, "    query: Where is", "    query: [Where is"), "test_lookup_shipped",
     ["toy_shop_tasks.py", "task 'test_lookup_shipped'", "not valid"]),
])
def test_broken_input_names_file_task_and_field(clone, edit, task, expected):
    rel, old, new = edit
    _rewrite(clone / rel, old, new)
    with pytest.raises(TBBenchFormatError) as err:
        TBBench(clone, "python").task(f"{TASK_FILE}:{task}")
    for part in expected:
        assert part in str(err.value)


def test_unknown_test_and_malformed_ids_are_named():
    bench = TBBench(DATA, "python")
    with pytest.raises(TBBenchFormatError, match="'test_nope'.*found: test_cancel_pending, test_lookup_shipped"):
        bench.task(f"{TASK_FILE}:test_nope")
    with pytest.raises(TBBenchFormatError, match="expected 'file.py:test_name'"):
        bench.task("dataset/tests/toy_shop_tasks:test_cancel_pending")
    with pytest.raises(TBBenchFormatError, match="inside"):
        bench.task("../../conftest.py:st030")


def test_release_list_entry_must_name_a_test(clone):
    (clone / "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml").write_text("- just_a_file.py\n")
    with pytest.raises(TBBenchFormatError, match=r"\[0\].*file.py:test_name"):
        TBBench(clone, "python").release_tasks()


# --------------------------------------------------------------------------- the release's own shapes


def _release_layout(clone: Path) -> None:
    """Rearrange the tiny clone the way the published release lays out its files."""
    folder = clone / "dataset/test_case/toy_shop"
    folder.mkdir(parents=True)
    text = (clone / TASK_FILE).read_text()
    # the scenario block after the imports, as in the release: not the module docstring
    text = text.replace('"""!\nscenario: toy_shop\n"""\n', 'import json\n\nfrom somewhere import Judge\n\n"""!\nscenario: toy_shop\n"""\n', 1)
    (folder / "toy_shop_group1.py").write_text(text)
    (clone / TASK_FILE).unlink()
    agent = clone / "dataset/agent/default.yaml"
    agent.write_text(agent.read_text().replace("system_prompt:", "system_instructions:"))
    scenario = clone / "dataset/scenario/toy_shop.yaml"
    scenario.write_text(scenario.read_text()
                        .replace("- source: cancellation.md\n        text: Orders", "- name: cancellation.md\n        snippets:\n"
                                 "          - Orders")
                        .replace("- source: returns.md\n        text: Returns", "- name: returns.md\n        snippets:\n"
                                 "          - Returns are accepted within 30 days of delivery.\n          - Returns"))


def test_release_layout_bare_names_late_scenario_block_system_instructions_and_snippets(clone):
    _release_layout(clone)
    module = parse_task_module(clone / "dataset/test_case/toy_shop/toy_shop_group1.py")
    assert ast_docstring_is_not_the_block(clone / "dataset/test_case/toy_shop/toy_shop_group1.py")
    assert module.scenario == "toy_shop"
    task = TBBench(clone, "python").task("toy_shop_group1.py:test_cancel_pending")
    assert task.file == "toy_shop_group1.py" and task.scenario == "toy_shop"
    assert task.system_prompt.startswith("You are a customer support agent")
    assert task.sources() == [
        {"source": "cancellation.md", "text": "Orders can be cancelled while they are pending. Shipped orders cannot be cancelled; "
                                              "offer a return instead."},
        {"source": "returns.md", "text": "Returns are accepted within 30 days of delivery."},
        {"source": "returns.md", "text": "Returns are accepted within 30 days of delivery, with the receipt."},
    ]


def ast_docstring_is_not_the_block(path: Path) -> bool:
    import ast

    return ast.get_docstring(ast.parse(path.read_text())) is None


def test_a_shared_block_is_merged_into_every_test_and_several_blocks_merge(clone):
    _release_layout(clone)
    path = clone / "dataset/test_case/toy_shop/toy_shop_group1.py"
    text = path.read_text().replace('"""!\nscenario: toy_shop\n"""\n', '"""!\nscenario: toy_shop\ntags: [shop]\n"""\n\n"""!\ntags: [v1]\n"""\n')
    path.write_text(text)
    module = parse_task_module(path)
    assert module.scenario == "toy_shop"
    assert all(spec["tags"] == ["shop", "v1"] for spec in module.tests.values())


@pytest.mark.parametrize(("edit", "expected"), [
    (("dataset/scenario/toy_shop.yaml", "- name: returns.md", "- title: returns.md"), ["sources[1].title", "unknown field"]),
    (("dataset/scenario/toy_shop.yaml", "- name: returns.md\n        snippets:\n          - Returns are accepted within 30 days of delivery.",
      "- name: returns.md\n        snippets:\n          - {text: no}"), ["sources[1].snippets", "list of strings"]),
    (("dataset/agent/default.yaml", "system_instructions:", "instructions_for_the_system:"), ["default.yaml", "system_instructions"]),
    (("dataset/test_case/toy_shop/toy_shop_group1.py", '"""!\nscenario: toy_shop\n"""', '"""!\n- toy_shop\n"""'),
     ["toy_shop_group1.py", "'!' block must be a YAML mapping"]),
])
def test_release_shapes_that_are_off_name_file_and_field(clone, edit, expected):
    _release_layout(clone)
    rel, old, new = edit
    _rewrite(clone / rel, old, new)
    with pytest.raises(TBBenchFormatError) as err:
        TBBench(clone, "python").task("toy_shop_group1.py:test_cancel_pending")
    for part in expected:
        assert part in str(err.value)


def test_a_bare_name_must_be_found_once(clone):
    _release_layout(clone)
    with pytest.raises(TBBenchFormatError, match="no such task file"):
        TBBench(clone, "python").task("toy_shop_group9.py:test_cancel_pending")
    other = clone / "dataset/test_case/other"
    other.mkdir()
    shutil.copy(clone / "dataset/test_case/toy_shop/toy_shop_group1.py", other / "toy_shop_group1.py")
    with pytest.raises(TBBenchFormatError, match="ambiguous.*other/toy_shop_group1.py.*toy_shop/toy_shop_group1.py"):
        TBBench(clone, "python").task("toy_shop_group1.py:test_cancel_pending")


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"]


def test_release_user_context_drops_the_simulator_rules_and_groups_facts_into_three_turns():
    from thinkingbox_env.tbbench.user_facts import user_spec
    from thinkingbox_env.users import ScriptedUser

    context = ("Rules:\n\nDo not invent or provide any data not present in the provided context.\n\n"
               "If asked for the same info, provide it again.\n\nRemain focused, clear, and patient.\n\n"
               "If asked for additional information, you may provide:\n" +
               "\n".join(f"- {w.title()}: the {w} value" for w in WORDS))
    spec = user_spec("Help with my order", context)
    assert len(spec.facts) == 3  # eleven lines, three turns: the oracle's questions fit the ten-turn cap
    assert not any("invent" in f.text or "patient" in f.text for f in spec.facts)
    user = ScriptedUser()
    user.reset(spec, 0)
    reply = user.reply([{"role": "assistant", "content": "Could you tell me: echo?"}])
    assert "echo value" in reply and "delta value" in reply  # a group comes as one turn, several facts together

"""Task specs, the registry, families and the train/test guard."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import thinkingbox_env as tb
from thinkingbox_env.contracts.spec import SpecError, dump_task, load_task_file
from thinkingbox_env.envs.registration import gym_id
from thinkingbox_env.tasks.domain import load_domain
from thinkingbox_env.tasks.lookup import UnknownTaskError

DATA = Path(__file__).resolve().parents[1] / "data"


def test_unknown_task_suggests_close_matches():
    with pytest.raises(UnknownTaskError, match="closest matches: retail/ST030_001"):
        tb.make("retail/ST030_01")
    with pytest.raises(UnknownTaskError, match="<domain>/<task>"):
        tb.make("ST030_001")


def test_list_tasks_filters():
    retail = tb.list_tasks(domain="retail")
    assert retail and all(t.startswith("retail/") for t in retail)
    assert tb.list_tasks(domain="retail", split="test") == retail
    assert tb.list_tasks(split="train") == []
    with pytest.raises(UnknownTaskError, match="unknown domain"):
        tb.list_tasks(domain="bakery")
    with pytest.raises(ValueError):
        tb.list_tasks(split="dev")


def test_every_frozen_task_is_a_test_task_made_by_its_family():
    """Regenerating a frozen task from its family and seed writes the frozen file byte for byte.

    The guard of every change to the families and the authoring kit: the task set stays what was frozen.
    """
    for task_id in tb.list_tasks():
        spec = tb.load_task(task_id)
        assert spec.split == "test"
        regenerated = load_domain(spec.domain).family(spec.family).instance(spec.seed, "test", int(spec.id.rsplit("_", 1)[1]))
        assert regenerated.content_key() == spec.content_key(), task_id
        frozen = load_domain(spec.domain).path.parent.parent / "task_specs" / spec.domain / f"{spec.id}.yaml"
        if frozen.is_file():  # a checkout (an installed package reads its own copy)
            assert dump_task(regenerated) == frozen.read_text(encoding="utf-8"), task_id


def _write(tmp_path, data, name="ST999_001.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d.pop("golden_reply"), "field 'golden_reply'"),
        (lambda d: d["user"].update(facts=[{"text": "x", "unlock": []}]), "field 'user.facts.0.unlock'"),
        (lambda d: d.update(split="validation"), "field 'split'"),
        (lambda d: d.update(colour="red"), "field 'colour'"),
        (lambda d: d["golden"].append({"name": "x", "args": {}}), "field 'golden."),
        (lambda d: d.update(checks={"sql": [{"name": "s", "query": "DELETE FROM tickets"}]}), "single SELECT"),
        (lambda d: d.update(checks={"dialogue": [{"name": "d", "must": ["(unclosed"]}]}), "not a valid regex"),
    ],
)
def test_broken_specs_name_file_task_and_field(tmp_path, mutate, message):
    data = tb.load_task("retail/ST030_001").model_dump(mode="json")
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(SpecError) as err:
        load_task_file(path, "retail")
    text = str(err.value)
    assert str(path) in text and "ST030_001" in text and message in text


def test_invalid_yaml_and_wrong_domain_are_reported(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: [unclosed")
    with pytest.raises(SpecError, match="not valid YAML"):
        load_task_file(bad)
    data = tb.load_task("retail/ST030_001").model_dump(mode="json")
    with pytest.raises(SpecError, match="field 'domain'"):
        load_task_file(_write(tmp_path, data), "insurance")


def test_a_patch_naming_an_unknown_table_or_row_fails_clearly():
    data = tb.load_task("retail/ST030_001").model_dump(mode="json")
    data["patch"]["insert"]["spaceships"] = [{"id": 1}]
    with pytest.raises(Exception, match="unknown table 'spaceships'"):
        tb.ThinkingboxEnv(tb.TaskSpec.model_validate(data)).reset()
    data = tb.load_task("retail/ST030_001").model_dump(mode="json")
    data["patch"]["update"] = [{"table": "orders", "key": {"id": "ORD-NOPE"}, "set": {"status": "shipped"}}]
    with pytest.raises(Exception, match="matched 0 rows"):
        tb.ThinkingboxEnv(tb.TaskSpec.model_validate(data)).reset()


def test_families_generate_unlimited_distinct_train_variants():
    seen = set()
    families = load_domain("retail").families.values()
    for fam in families:
        for seed in range(1000, 1010):
            spec = tb.generate_variant("retail", fam.code, seed)
            assert spec.split == "train"
            seen.add(spec.content_key())
    assert len(seen) == 10 * len(families)


def test_a_train_variant_never_equals_a_test_task():
    """Seed 1 of ST030 draws the case of the frozen ST030_001; the test task opens with a held-out template, so they differ."""
    test = tb.load_task("retail/ST030_001")
    variant = tb.generate_variant("retail", "ST030", 1)
    assert variant.content_key() != test.content_key()
    assert variant.origin.opening != test.origin.opening
    env = tb.make_variant("retail", "membership_upgrade", 1)
    assert tb.run_episode(env, tb.OracleAgent())["verdict"] == 1.0


def test_a_second_domain_is_only_a_folder(monkeypatch):
    monkeypatch.setenv("THINKINGBOX_PATH", str(DATA))
    assert "library/LB001_001" in tb.list_tasks()
    env = tb.make("library/LB001_001")
    info = tb.run_episode(env, tb.OracleAgent())
    assert info["verdict"] == 1.0
    assert info["diff"]["loans"]["inserted"][0]["id"] == "LN-1"
    genv = gym.make(gym_id("library/LB001_001"))
    genv.reset(seed=0)
    genv.close()
    from thinkingbox_env.eval.validate import validate_task

    assert validate_task(tb.load_task("library/LB001_001")).ok


def _loaded(tmp_path, mutate):
    data = tb.load_task("retail/ST030_001").model_dump(mode="json")
    mutate(data)
    path = _write(tmp_path, data)
    return path, load_task_file(path, "retail")


@pytest.mark.parametrize(
    "mutate,field,message",
    [
        (lambda d: d["golden"].insert(0, {"name": "refund_everything", "arguments": {}}), "golden.0.name", "unknown tool 'refund_everything'"),
        (lambda d: d["golden"].insert(0, {"name": "get_order", "arguments": {"order": "x"}}), "golden.0.arguments", "not valid for tool 'get_order'"),
        (lambda d: d["patch"]["update"].append({"table": "orders", "key": {"id": "ORD-NOPE"}, "set": {"status": "x"}}), "patch", "matched 0 rows"),
        (lambda d: d["checks"]["sql"].append({"name": "typo", "query": "SELECT count(*) FROM orderz"}), "checks.sql.", "check 'typo' cannot run"),
        (lambda d: d["checks"]["sql"].append({"name": "two", "query": "SELECT 1, 2"}), "checks.sql.", "one value"),
        # well-formed arguments naming an order that does not exist: the golden replay at load finds it
        (lambda d: d["golden"].insert(0, {"name": "get_order", "arguments": {"order_id": "ORD-404404"}}), "golden.0",
         "golden action 0 get_order(order_id='ORD-404404') fails when replayed"),
    ],
)
def test_a_broken_spec_fails_when_its_task_is_loaded_naming_file_task_and_field(tmp_path, mutate, field, message):
    path, spec = _loaded(tmp_path, mutate)
    with pytest.raises(SpecError) as err:
        tb.ThinkingboxEnv(spec)  # at load: before any reset, episode or verdict
    text = str(err.value)
    assert str(path) in text and "retail/ST030_001" in text and f"field '{field}" in text and message in text


def test_a_golden_call_on_a_missing_id_never_reaches_step(tmp_path):
    """Once a GoldenError escaped step() when the first episode ended; now the task does not load at all."""
    path, spec = _loaded(tmp_path, lambda d: d["golden"].append({"name": "get_order", "arguments": {"order_id": "ORD-404404"}}))
    with pytest.raises(SpecError, match=r"field 'golden\.\d+'.*ORD-404404"):
        tb.make(spec)
    from thinkingbox_env.tasks.runtime import runtime_for

    with pytest.raises(SpecError):  # a second load is refused the same way, not cached as checked
        runtime_for(spec)


def test_a_spec_sql_check_cannot_read_host_files(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-4417")
    query = f"SELECT content LIKE 'TOP%' FROM read_text('{secret}')"
    path, spec = _loaded(tmp_path, lambda d: d["checks"]["sql"].append({"name": "peek", "query": query}))
    with pytest.raises(SpecError) as err:
        tb.ThinkingboxEnv(spec)
    assert "checks.sql." in str(err.value) and "disabled" in str(err.value)
    assert "TOP-SECRET-4417" not in str(err.value)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('{p}')",
        "SELECT * FROM read_text('{p}')",
        "SELECT * FROM glob('{d}/*')",
        "SELECT * FROM read_json('http://127.0.0.1:9/x')",
        "SELECT 1 FROM (SELECT current_setting('enable_external_access') AS v) WHERE v",
    ],
)
def test_no_query_of_a_spec_or_tool_reaches_files_or_the_network(tmp_path, sql):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\nTOP-SECRET-4417\n")
    state = tb.make("retail/ST030_001").runtime.new_state()
    try:
        rows = state.query(sql.format(p=secret, d=tmp_path))
        assert rows == []  # only the settings probe runs, and it shows access is off
    except Exception as exc:  # noqa: BLE001 - any refusal will do, as long as nothing leaks
        assert "TOP-SECRET-4417" not in str(exc)
    finally:
        state.close()
    from thinkingbox_env.state import _Process

    with pytest.raises(Exception, match="Cannot change configuration"):
        _Process.connection().cursor().execute("SET enable_external_access = true")


def test_an_extra_task_folder_adds_to_the_bundled_tasks(tmp_path, monkeypatch):
    bundled = tb.list_tasks("retail")
    extra = tmp_path / "task_specs" / "retail"
    extra.mkdir(parents=True)
    data = tb.load_task("retail/ST030_001").model_dump(mode="json")
    data["id"] = "ST999_001"
    (extra / "ST999_001.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.setenv("THINKINGBOX_PATH", str(tmp_path))
    now = tb.list_tasks("retail")
    assert set(now) == set(bundled) | {"retail/ST999_001"} and len(now) == len(bundled) + 1
    assert tb.load_task("retail/ST999_001").id == "ST999_001"


def test_a_check_that_breaks_only_on_the_final_state_is_unevaluated_not_an_agent_failure(tmp_path):
    """Loading ran the query on the start state; if it fails on the end state the spec is at fault."""
    boom = ("SELECT CAST((SELECT reason FROM store_credits WHERE reason = 'goodwill' "
            "ORDER BY id DESC LIMIT 1) AS INTEGER) IS NULL")
    path, spec = _loaded(tmp_path, lambda d: d["checks"]["sql"].append({"name": "boom", "query": boom}))
    env = tb.ThinkingboxEnv(spec)  # loads: the query runs (no goodwill credit yet)
    env.reset(seed=0)
    customer = env.unwrapped.state.query_one("SELECT id FROM customers ORDER BY id LIMIT 1")["id"]
    env.step({"name": "issue_store_credit", "arguments": {"customer_id": customer, "amount": 5.0, "reason": "goodwill"}})
    *_, info = env.step("Done. <DONE>")
    assert info["checks"]["sql:boom"] is None and "sql:boom" in info["unevaluated"]
    detail = next(d for d in info["check_details"] if d["name"] == "sql:boom")["detail"]
    assert detail.startswith("spec error")
    env.close()


def test_freeze_refuses_an_instance_whose_golden_fails_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """A family whose golden names an id that does not exist is caught when frozen, not when first played."""
    from thinkingbox_env.cli.main import main

    fam = load_domain("retail").family("ST030")
    real = type(fam).instance

    def broken(self, seed, split="train", number=None):
        spec = real(self, seed, split, number)
        spec.golden.append(spec.golden[0].model_copy(update={"name": "get_order", "arguments": {"order_id": "ORD-404404"},
                                                             "why": {}, "expect_error": None}))
        return spec

    monkeypatch.setattr(type(fam), "instance", broken)
    out = tmp_path / "specs"
    assert main(["freeze", "retail", "--family", "ST030", "--count", "1", "--out", str(out)]) != 0
    said = capsys.readouterr()
    text = said.out + said.err
    assert "not freezing" in text and "retail/ST030_001" in text and "golden." in text and "ORD-404404" in text
    assert not out.exists() or not list(out.glob("*.yaml"))

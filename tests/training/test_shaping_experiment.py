"""The shaping experiment's machinery, two GRPO steps per arm on a tiny model: every arm trains and is measured.

The shipped CPU config is read as it is and shrunk (model, warm start, steps, one seed, one
held-out variant and one test task), so the run is the experiment's own code path, not a
copy: a locally built Qwen3, a warm start, GRPO per arm with its reward, evaluations through
the evaluation library, the JSON of curves and the plots.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from thinkingbox_env.eval.run_files import read_rows

pytest.importorskip("torch")
pytest.importorskip("trl")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[2]
CPU_CONFIG = ROOT / "training" / "experiments" / "shaping_cpu.yaml"


def _load(name: str):
    import importlib.util

    path = ROOT / "training" / "experiments" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"thinkingbox_training_{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def shaping():
    return _load("shaping")


@pytest.fixture(scope="module")
def shaping_config():
    return _load("shaping_config")


def _tiny(shaping_config):
    data = yaml.safe_load(CPU_CONFIG.read_text(encoding="utf-8"))
    return shaping_config.parse_config(shaping_config.apply_overrides(data, TINY))


TINY = [
        "seeds=[0]", "model={hidden: 32, layers: 1, heads: 4, kv_heads: 2, vocab: 600}",
        "warm_start.variants_per_family=2", "warm_start.max_steps=6", "warm_start.batch_size=2",
        "grpo.max_steps=2", "grpo.variants_per_family=2", "grpo.num_generations=2", "grpo.per_device_train_batch_size=2",
        "grpo.max_completion_length=96", "grpo.max_tool_calling_iterations=3",
        "eval.every=2", "eval.heldout_variants_per_family=1", "eval.seen_variants_per_family=1",
        "eval.test_tasks=[retail/ST004_001]", "eval.max_new_tokens=16",
]


@pytest.mark.timeout(600)
def test_every_arm_trains_two_steps_logs_its_components_and_the_run_writes_json_and_plots(shaping_config, tmp_path):
    cfg = _tiny(shaping_config)
    assert [a.name for a in cfg.arms] == ["verdict", "checks", "progress", "curriculum"]
    # the one command, in a process of its own: a run sets the process's torch threads and task sources
    script = ROOT / "training" / "experiments" / "shaping.py"
    proc = subprocess.run([sys.executable, str(script), "--config", str(CPU_CONFIG), "--out", str(tmp_path), "--set", *TINY],
                          capture_output=True, text=True, cwd=ROOT, timeout=540)
    assert proc.returncode == 0, proc.stderr[-4000:]

    saved = json.loads((tmp_path / "results.json").read_text())
    assert set(saved["arms"]) == {a.name for a in cfg.arms}
    heldout, test, seen = saved["splits"]["heldout"], saved["splits"]["test"], saved["splits"]["seen"]
    assert len(heldout) == 1 and heldout[0].startswith("variant/retail/ST004/") and test == ["retail/ST004_001"]
    assert len(seen) == 1 and seen != heldout
    components = [f"rewards/reward_{n}/mean" for n in ("arm", "verdict", "effects", "no_collateral", "dialogue", "progress",
                                                        "checks")]
    for arm in cfg.arms:
        run = saved["arms"][arm.name]["seeds"]["0"]
        assert [h["step"] for h in run["train"]] == [1, 2]
        for h in run["train"]:
            missing = [k for k in components + ["frac_reward_zero_std", "shaping/zero_std_groups_verdict",
                                                "shaping/closing_words", "shaping/verdict_share"] if k not in h]
            assert not missing, (arm.name, missing)
        # the arm trains on its own mix: a(t) is logged, and the curriculum moves it to the verdict
        shares = [h["shaping/verdict_share"] for h in run["train"]]
        expected = {"verdict": [1.0, 1.0], "checks": [0.5, 0.5], "progress": [0.5, 0.5], "curriculum": [0.2, 1.0]}
        assert shares == pytest.approx(expected[arm.name]), (arm.name, shares)
        # the trained reward is a(t) * verdict + (1 - a(t)) * shaping, as logged by the components
        for h in run["train"]:
            a = h["shaping/verdict_share"]
            shaping_value = {"verdict": 0.0, "progress": h["rewards/reward_progress/mean"]}.get(
                arm.name, h["rewards/reward_checks/mean"])
            assert h["rewards/reward_arm/mean"] == pytest.approx(a * h["rewards/reward_verdict/mean"] + (1 - a) * shaping_value,
                                                                 abs=1e-5), (arm.name, h)
        # evaluated at step 0 (the warm start) and at the last step on every split, through the evaluation library
        assert [e["step"] for e in run["evals"]] == [0, 2]
        for ev in run["evals"]:
            for split in ("heldout", "test", "seen"):
                m = ev[split]
                assert m["pass1"]["tasks"] == 1 and m["system_errors"] == 0
                assert "effect:tickets:update" in m["checks"] and m["tokens_per_episode"] > 0
        rows = read_rows(tmp_path / "arms" / arm.name / "seed0" / "eval_step2" / "heldout.jsonl")
        assert [r["task_id"] for r in rows] == heldout
        assert rows[0]["config"]["agent"]["tools"] == cfg.tools  # evaluated with the tools it was trained with

    curves = saved["summary"]["curves"]
    for arm in cfg.arms:
        assert list(curves[arm.name]["heldout"]["pass1"]) == ["0", "2"]
        assert curves[arm.name]["test"]["checks"]
    assert "minus_verdict" in saved["summary"]["final"]["checks"]["heldout"]
    plots = {p.name for p in (tmp_path / "plots").glob("*.png")}
    assert plots == {"pass1.png", "checks_heldout.png", "checks_test.png", "checks_seen.png", "training.png"}
    for name in plots:
        assert (tmp_path / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # each check's difference to the verdict arm, per task; the report rebuilds the same from the kept rows
    per_check = saved["summary"]["final"]["checks"]["heldout"]["checks_minus_verdict"]
    assert "effect:tickets:update" in per_check and per_check["effect:tickets:update"]["tasks"] == 1
    assert all(set(v) == {"mean", "ci95", "tasks"} and -1 <= v["mean"] <= 1 for v in per_check.values())
    report = _load("shaping_report")
    for ev in saved["arms"]["checks"]["seeds"]["0"]["evals"]:
        for split in ("heldout", "test", "seen"):
            del ev[split]["per_task_checks"]  # as a run written before the field existed
    (tmp_path / "results.json").write_text(json.dumps(saved))
    assert report.main([str(tmp_path), "--rows"]) == 0
    rebuilt = json.loads((tmp_path / "results.json").read_text())["summary"]["final"]["checks"]["heldout"]
    assert rebuilt["checks_minus_verdict"] == per_check


def test_a_bad_config_is_refused_by_key_before_anything_runs(shaping, shaping_config, tmp_path, capsys):
    data = yaml.safe_load(CPU_CONFIG.read_text(encoding="utf-8"))
    with pytest.raises(shaping_config.ConfigError, match=r"grpo: unknown keys \['stepz'\]"):
        shaping_config.parse_config(shaping_config.apply_overrides(data, ["grpo.stepz=3"]))
    assert "stepz" not in data["grpo"]  # overrides leave the loaded mapping as it was
    bad_arm = {**data, "arms": [{"name": "x", "shaping": "bonus"}]}
    with pytest.raises(shaping_config.ConfigError, match="arm 'x': shaping must be one of"):
        shaping_config.parse_config(bad_arm)
    ramp = {**data, "arms": [{"name": "c", "shaping": "checks", "verdict_share": [0.2, 1.5]}]}
    with pytest.raises(shaping_config.ConfigError, match="verdict_share must be a number in"):
        shaping_config.parse_config(ramp)
    with pytest.raises(shaping_config.ConfigError, match="warm_start.shared must be true or false, got 'maybe'"):
        shaping_config.parse_config(shaping_config.apply_overrides(data, ["warm_start.shared=maybe"]))
    with pytest.raises(shaping_config.ConfigError, match=r"model.value_pieces must be one of \['whole', 'characters', 'chunks'\], got 'bytes'"):
        shaping_config.parse_config(shaping_config.apply_overrides(data, ["model.value_pieces=bytes"]))
    with pytest.raises(shaping_config.ConfigError, match="warm_start.induction_steps must be a whole number >= 0, got -3"):
        shaping_config.parse_config(shaping_config.apply_overrides(data, ["warm_start.induction_steps=-3"]))
    with pytest.raises(shaping_config.ConfigError, match="warm_start.lr_scheduler_type must be one of .*'cosine'.*got 'wavy'"):
        shaping_config.parse_config(shaping_config.apply_overrides(data, ["warm_start.lr_scheduler_type=wavy"]))
    with pytest.raises(SystemExit):
        shaping.main(["--config", str(CPU_CONFIG), "--out", str(tmp_path / "o"), "--arms", "nope"])
    assert "no arms named ['nope']" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.timeout(600)
def test_a_shared_warm_start_is_trained_once_and_every_seed_starts_from_it(tmp_path):
    script = ROOT / "training" / "experiments" / "shaping.py"
    tiny = [item for item in TINY if not item.startswith("seeds=")]
    args = ["--set", *tiny, "seeds=[0, 1]", "warm_start.shared=true", "grpo.max_steps=1", "eval.every=1",
            "warm_start.induction_steps=2", "warm_start.induction_batch_size=2"]
    proc = subprocess.run([sys.executable, str(script), "--config", str(CPU_CONFIG), "--out", str(tmp_path),
                           "--arms", "verdict", *args], capture_output=True, text=True, cwd=ROOT, timeout=540)
    assert proc.returncode == 0, proc.stderr[-4000:]
    saved = json.loads((tmp_path / "results.json").read_text())
    assert sorted(p.name for p in (tmp_path / "warm").iterdir()) == ["seed0"]
    warm = saved["warm_start"]
    assert warm["0"]["warm_seed"] == warm["1"]["warm_seed"] == 0 and warm["0"]["metrics"] == warm["1"]["metrics"]
    # the induction stage ran once, before the conversations, and its copy accuracy is kept
    assert [r["step"] for r in warm["0"]["induction"]] == [1, 2] == [r["step"] for r in warm["1"]["induction"]]
    assert all(0 <= r["copy"]["tokens"] <= 1 for r in warm["0"]["induction"])
    for seed in ("0", "1"):
        run = saved["arms"]["verdict"]["seeds"][seed]
        assert [h["step"] for h in run["train"]] == [1] and [e["step"] for e in run["evals"]] == [0, 1]
    # a run stopped after its first seed resumes: the finished seed is kept as written, the rest trains
    interrupted = dict(saved, arms={"verdict": {"seeds": {"0": saved["arms"]["verdict"]["seeds"]["0"]}}})
    (tmp_path / "results.json").write_text(json.dumps(interrupted))
    resumed = subprocess.run([sys.executable, str(script), "--config", str(CPU_CONFIG), "--out", str(tmp_path),
                              "--arms", "verdict", *args], capture_output=True, text=True, cwd=ROOT, timeout=540)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    after = json.loads((tmp_path / "results.json").read_text())
    assert after["resumed"] == {"verdict": [0]}
    assert after["arms"]["verdict"]["seeds"]["0"] == saved["arms"]["verdict"]["seeds"]["0"]
    rerun = after["arms"]["verdict"]["seeds"]["1"]
    assert [h["step"] for h in rerun["train"]] == [1] and rerun["seconds"] != saved["arms"]["verdict"]["seeds"]["1"]["seconds"]
    # a rerun with the same settings reuses the model, whether or not it is shared; other settings keep no seed
    again = subprocess.run([sys.executable, str(script), "--config", str(CPU_CONFIG), "--out", str(tmp_path),
                            "--arms", "verdict", "--set", *tiny, "seeds=[0]", "grpo.max_steps=1", "eval.every=1",
                             "warm_start.induction_steps=2", "warm_start.induction_batch_size=2"],
                           capture_output=True, text=True, cwd=ROOT, timeout=540)
    assert again.returncode == 0, again.stderr[-4000:]
    final = json.loads((tmp_path / "results.json").read_text())
    assert final["warm_start"]["0"]["reused"] is True and "resumed" not in final

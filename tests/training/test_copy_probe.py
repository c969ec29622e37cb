"""The copy probe: its induction sequences, and both measurements run end to end on tiny models."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def probe():
    path = ROOT / "training" / "experiments" / "copy_probe.py"
    spec = importlib.util.spec_from_file_location("thinkingbox_training_copy_probe", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_an_induction_sequence_marks_exactly_the_predictable_part_of_its_repeat(probe):
    rows = probe.induction_batch(random.Random(3), list(range(50)), 20, length=64, span=10)
    assert len(rows) == 20
    for ids, mask in rows:
        marked = [i for i, m in enumerate(mask) if m]
        assert len(ids) == len(mask) == 64 and len(marked) == 9 and marked == list(range(marked[0], marked[0] + 9))
        # the marked tokens and the one before them repeat an earlier stretch of the sequence
        start = marked[0] - 1
        sources = [s for s in range(start - 10 + 1) if ids[s:s + 10] == ids[start:start + 10]]
        assert sources, "the repeat has no source"
    assert probe.induction_batch(random.Random(3), list(range(50)), 20, length=64, span=10) == rows


def test_the_induction_measurement_trains_and_records_copy_accuracy(probe, tmp_path):
    import torch

    out = tmp_path / "induction.json"
    threads, state = torch.get_num_threads(), torch.random.get_rng_state()
    assert probe.main(["induction", "--hidden", "32", "--layers", "1", "--vocab", "40", "--steps", "2", "--every", "1",
                       "--batch", "4", "--out", str(out)]) == 0
    # the process keeps its thread count and random state (later training in the same process depends on them)
    assert torch.get_num_threads() == threads and torch.equal(torch.random.get_rng_state(), state)
    records = json.loads(out.read_text())["records"]
    assert [r["step"] for r in records] == [1, 2]
    for r in records:
        assert r["stage"] == "induction" and 0 <= r["copy"]["tokens"] <= 1 and r["loss"] > 0
    with pytest.raises(SystemExit):
        probe.main(["induction"])
    with pytest.raises(SystemExit):
        probe.main(["induction", "--steps", "2", "--every", "0"])


def _tiny_config(tmp_path):
    """The CPU shaping config with a model and warm start small enough for a test."""
    config = yaml.safe_load((ROOT / "training" / "experiments" / "shaping_cpu.yaml").read_text(encoding="utf-8"))
    config["model"] = {"hidden": 32, "layers": 1, "heads": 4, "kv_heads": 2, "vocab": 600, "value_pieces": "chunks"}
    config["warm_start"].update(variants_per_family=3, batch_size=2)
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.mark.timeout(300)
def test_the_conversation_measurement_reports_held_out_and_seen_digit_accuracy(probe, tmp_path):
    path = _tiny_config(tmp_path)
    out = tmp_path / "conversations.json"
    assert probe.main(["conversations", "--config", str(path), "--steps", "2", "--every", "1", "--heldout", "2",
                       "--induction_steps", "1", "--batch", "2", "--out", str(out)]) == 0
    records = json.loads(out.read_text())["records"]
    assert [(r["stage"], r["step"]) for r in records] == [("induction", 1), ("conversations", 1), ("conversations", 2)]
    for r in records[1:]:
        for split in ("heldout", "seen"):
            assert set(r[split]) == {"tokens", "all_right", "digit_tokens"}
            assert 0 <= r[split]["digit_tokens"] <= 1


@pytest.mark.timeout(300)
def test_the_conversation_measurement_can_train_on_every_token(probe, tmp_path):
    path = _tiny_config(tmp_path)
    losses = {}
    for loss in ("assistant", "all"):
        out = tmp_path / f"{loss}.json"
        assert probe.main(["conversations", "--config", str(path), "--steps", "1", "--every", "1", "--heldout", "2",
                           "--loss", loss, "--out", str(out)]) == 0
        record = json.loads(out.read_text())["records"][0]
        assert record["stage"] == "conversations" and 0 <= record["heldout"]["digit_tokens"] <= 1
        losses[loss] = record["loss"]
    # same model, same batch: the loss differs only by which tokens it covers (the tool schemas and results too)
    assert losses["all"] != losses["assistant"]
    with pytest.raises(SystemExit):
        probe.main(["conversations", "--config", str(path), "--loss", "some"])

"""The tiny local model a CPU training run starts from: refusals of a bad config, by name.

Building the model itself is covered by the documented command in docs/training.md
(tests/test_docs.py runs it) and by the training tests that start from it.
"""

from __future__ import annotations

import pytest

from thinkingbox_env.integrations.tiny_qwen import main, save_tiny_checkpoint


def test_a_bad_config_is_refused_by_name_before_anything_is_built(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--config", str(tmp_path / "missing.yaml"), str(tmp_path / "m")])
    assert exc.value.code == 2 and "no such config" in capsys.readouterr().err
    config = tmp_path / "c.yaml"
    config.write_text("domains: [retail]\nfamilies: [ST004]\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        main(["--config", str(config), str(tmp_path / "m")])
    assert "families item 'ST004' must be DOMAIN:CODE" in capsys.readouterr().err
    with pytest.raises(ValueError, match="vocab >= 300"):
        save_tiny_checkpoint(tmp_path / "m", vocab=10)
    assert not (tmp_path / "m").exists()

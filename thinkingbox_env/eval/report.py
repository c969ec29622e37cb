"""``thinkingbox report``: one self-contained HTML file for one or more runs.

The file opens offline: no scripts, fonts or styles are fetched, and the plots
are inline SVG drawn here from the metrics (a plotting library would add a heavy
dependency for four simple charts, and its web output would need a script from a
CDN). It holds the leaderboard, pass@k and pass^k curves per run, the domain
failure-rate heatmap (100 - pass@1), failure-category bars, and for every task
links to the transcripts of its trials, which are embedded further down.
"""

from __future__ import annotations

import html
import re
from typing import Any

from ..checks import FAILURE_CATEGORIES
from .metrics import row_outcome, summarize
from .submission import run_task_set
from .transcript import cut as cut_text
from .transcript import render_trace

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
CATEGORY_COLOURS = {"followed_injection": "#8c564b", "tool_usage": "#d62728", "no_state_changing_action": "#ff7f0e",
                    "incomplete_user_resolution": "#9467bd", "wrong_state_update": "#1f77b4", "context_overflow": "#bcbd22",
                    "none": "#7f7f7f"}
MAX_TEXT = 1500

e = html.escape


def _anchor(run: str, task: str, trial: int) -> str:
    return "tr-" + re.sub(r"[^A-Za-z0-9_-]", "_", f"{run}-{task}-{trial}")


# --------------------------------------------------------------------------- SVG charts


def line_chart(svg_id: str, title: str, series: dict[str, list[tuple[float, float]]], x_label: str, y_label: str,
               dashed: set[str] | None = None, width: int = 520, height: int = 320,
               colours: dict[str, str] | None = None) -> str:
    """Lines over 0..100 % against integer x values, with axes, ticks and a legend.

    ``colours`` fixes each series' colour, so one run keeps its colour across plots.
    """
    left, right, top, bottom = 52, 150, 28, 44
    pw, ph = width - left - right, height - top - bottom
    xs = [x for pts in series.values() for x, _ in pts] or [1]
    x_min, x_max = min(xs), max(xs)
    span = (x_max - x_min) or 1

    def px(x: float) -> float:
        return left + (x - x_min) / span * pw

    def py(y: float) -> float:
        return top + ph - y / 100 * ph

    parts = [f'<svg class="plot" id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{e(title)}">',
             f'<text x="{left}" y="16" class="title">{e(title)}</text>']
    y: float  # grid lines are whole percentages, the plotted points below are not
    for y in range(0, 101, 20):
        parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{py(y):.1f}" y2="{py(y):.1f}" class="grid"/>'
                     f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end" class="tick">{y}</text>')
    step = max(1, round(span / 10))
    x = x_min
    while x <= x_max:
        parts.append(f'<text x="{px(x):.1f}" y="{top + ph + 16}" text-anchor="middle" class="tick">{x:g}</text>')
        x += step
    parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}" class="axis"/>'
                 f'<line x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}" class="axis"/>'
                 f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle" class="label">{e(x_label)}</text>'
                 f'<text x="14" y="{top + ph / 2}" text-anchor="middle" class="label" '
                 f'transform="rotate(-90 14 {top + ph / 2})">{e(y_label)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        if colours and name in colours:
            colour = colours[name]
        else:
            colour = PALETTE[i % len(PALETTE)] if not dashed or name not in dashed else PALETTE[(i - 1) % len(PALETTE)]
        dash = ' stroke-dasharray="5 4"' if dashed and name in dashed else ""
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        parts.append(f'<polyline class="series" points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}>'
                     f"<title>{e(name)}</title></polyline>")
        for x, y in pts:
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="2.5" fill="{colour}"><title>{e(name)} k={x:g}: {y:.2f}%</title></circle>')
        ly = top + 12 + i * 16
        parts.append(f'<line x1="{left + pw + 10}" x2="{left + pw + 28}" y1="{ly}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash}/>'
                     f'<text x="{left + pw + 32}" y="{ly + 4}" class="legend">{e(name[:20])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _heat_colour(failure: float) -> str:
    """White (0 % failing) to dark red (100 %)."""
    t = max(0.0, min(1.0, failure / 100))
    r = round(255 - t * (255 - 139))
    g = round(255 - t * 255)
    b = round(255 - t * 255)
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap(svg_id: str, rows: list[str], cols: list[str], values: dict[tuple[str, str], float | None]) -> str:
    """Runs by domains; each cell is 100 - pass@1 in that domain."""
    cell_w, cell_h, left, top = 96, 30, 170, 60
    width, height = max(left + cell_w * max(len(cols), 1) + 10, 340), top + cell_h * max(len(rows), 1) + 10
    parts = [f'<svg class="plot" id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="domain failure-rate heatmap">',
             '<text x="4" y="16" class="title">failure rate % (100 - pass@1) by domain</text>']
    for j, c in enumerate(cols):
        parts.append(f'<text x="{left + j * cell_w + cell_w / 2}" y="{top - 8}" text-anchor="middle" class="tick">{e(c)}</text>')
    for i, r in enumerate(rows):
        y = top + i * cell_h
        parts.append(f'<text x="{left - 6}" y="{y + cell_h / 2 + 4}" text-anchor="end" class="tick">{e(r[:24])}</text>')
        for j, c in enumerate(cols):
            v = values.get((r, c))
            fill = "#eeeeee" if v is None else _heat_colour(v)
            ink = "#000" if v is None or v < 55 else "#fff"
            label = "-" if v is None else f"{v:.1f}"
            parts.append(f'<rect class="cell" x="{left + j * cell_w}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="{fill}">'
                         f"<title>{e(r)} / {e(c)}: {label}</title></rect>"
                         f'<text x="{left + j * cell_w + cell_w / 2}" y="{y + cell_h / 2 + 4}" text-anchor="middle" '
                         f'class="value" fill="{ink}">{label}</text>')
    parts.append("</svg>")
    return "".join(parts)


def category_bars(svg_id: str, shares: dict[str, dict[str, float]], failed: dict[str, int]) -> str:
    """One stacked horizontal bar per run: the shares of the failure categories among its failed trials."""
    left, top, bar_h, bar_w = 170, 40, 24, 420
    cats = list(FAILURE_CATEGORIES) + ["none"]
    height = top + (bar_h + 10) * max(len(shares), 1) + 44
    width = left + bar_w + 20
    parts = [f'<svg class="plot" id="{svg_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="failure categories">',
             '<text x="4" y="16" class="title">failure categories, % of failed trials</text>']
    for i, (run, s) in enumerate(shares.items()):
        y = top + i * (bar_h + 10)
        parts.append(f'<text x="{left - 6}" y="{y + bar_h / 2 + 4}" text-anchor="end" class="tick">{e(run[:24])} ({failed[run]})</text>')
        x = float(left)
        for c in cats:
            w = s.get(c, 0.0) * bar_w
            if w <= 0:
                continue
            parts.append(f'<rect class="bar" x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{CATEGORY_COLOURS[c]}">'
                         f"<title>{e(run)}: {c} {100 * s[c]:.1f}%</title></rect>")
            if w > 34:
                parts.append(f'<text x="{x + w / 2:.1f}" y="{y + bar_h / 2 + 4}" text-anchor="middle" class="value" fill="#fff">'
                             f"{100 * s[c]:.0f}</text>")
            x += w
    for j, c in enumerate(cats):
        lx, ly = 4 + (j % 3) * 200, height - 30 + (j // 3) * 16
        parts.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{CATEGORY_COLOURS[c]}"/>'
                     f'<text x="{lx + 14}" y="{ly}" class="legend">{c.replace("_", " ")}</text>')
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------- HTML


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}.pass{color:#2a7d2a}.fail{color:#b22}.err{color:#b8860b}.unj{color:#777}
.plots{display:flex;flex-wrap:wrap;gap:16px}svg.plot{background:#fff;border:1px solid #e4e4e4}
svg .title{font-size:13px;font-weight:600}svg .tick,svg .legend{font-size:11px}svg .label{font-size:12px}
svg .value{font-size:11px}svg .grid{stroke:#eee}svg .axis{stroke:#888}
details{margin:4px 0;border:1px solid #e4e4e4;padding:4px 8px}details:target{border-color:#1f77b4}
.tr{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;white-space:pre-wrap;word-break:break-word}
.tr .a{color:#1f4e9c}.tr .u{color:#2a7d2a}.tr .c{color:#8a4baf}.tr .r{color:#666}.tr .x{color:#b22}.tr .t{color:#999}
a.trial{margin-right:4px;text-decoration:none}
"""

# Opens the transcript a link points to, and marks how many plots were laid out (checked by the tests).
SCRIPT = """
function openTarget(){var id=location.hash.slice(1);if(!id)return;var d=document.getElementById(id);if(d&&d.tagName==='DETAILS')d.open=true;}
window.addEventListener('hashchange',openTarget);openTarget();
var drawn=0;document.querySelectorAll('svg.plot').forEach(function(s){var r=s.getBoundingClientRect();
var marks=s.querySelectorAll('polyline.series,rect.cell,rect.bar');var ok=false;
marks.forEach(function(m){var b=m.getBBox();if(b.width>0||b.height>0)ok=true;});if(r.width>0&&r.height>0&&ok)drawn++;});
document.body.setAttribute('data-plots-drawn',String(drawn));
"""


# how a trial's link is marked in the per-run tables: css class and symbol
OUTCOME_MARKS = {"pass": ("pass", "&#10003;"), "fail": ("fail", "&#10007;"), "unjudged": ("unj", "?"), "system_error": ("err", "!")}


def _pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}"


def _user_replies(summary: dict[str, Any]) -> str:
    """The simulated user's flagged replies as ``quoted / cut of replies``; ``-`` where no user checked its replies."""
    ur = summary.get("user_replies") or {}
    if not ur.get("trials"):
        return "-"
    return f"{ur['quoted_prompt']} / {ur['cut']} of {ur['replies']}"


def _model_of(rows: list[dict[str, Any]]) -> str:
    cfg = (rows[0].get("config") or {}).get("agent", {}) if rows else {}
    return str(cfg.get("model") or cfg.get("kind") or "?")


def _persona_of(rows: list[dict[str, Any]]) -> str:
    """The simulated user's persona of a run (rows written before personas existed used the plain user)."""
    personas = {str((r.get("user") or {}).get("persona") or "plain") for r in rows}
    return ", ".join(sorted(personas)) or "plain"


def robustness_table(runs: dict[str, list[dict[str, Any]]], summaries: dict[str, dict[str, Any]]) -> str:
    """pass@1 of each run beside the plain-persona run of the same model, so a persona's cost is read as a difference.

    Users who misremember, change their request or hurry are a test dimension of their own: the same agent
    is run once per persona, and this table lines the runs up by model.
    """
    by_model: dict[str, dict[str, str]] = {}
    for name, rows in runs.items():
        by_model.setdefault(_model_of(rows), {})[name] = _persona_of(rows)
    if all(set(p.values()) <= {"plain"} for p in by_model.values()):
        return ""
    out = ['<h2>Simulated-user robustness</h2><table id="persona-robustness"><tr><th class="l">model</th><th class="l">run</th>'
           '<th class="l">persona</th><th>pass@1 %</th><th>vs plain (points)</th></tr>']
    for model, named in sorted(by_model.items()):
        plain = [n for n, persona in named.items() if persona == "plain"]
        base = summaries[plain[0]]["pass@1"]["overall"]["value"] if plain else None
        for name, persona in sorted(named.items(), key=lambda kv: (kv[1] != "plain", kv[1], kv[0])):
            value = summaries[name]["pass@1"]["overall"]["value"]
            delta = "-" if base is None or value is None or persona == "plain" else f"{100 * (value - base):+.1f}"
            out.append(f'<tr><td class="l">{e(model)}</td><td class="l">{e(name)}</td><td class="l">{e(persona)}</td>'
                       f"<td>{_pct(value)}</td><td>{delta}</td></tr>")
    out.append("</table>")
    return "".join(out)


def _transcript_html(row: dict[str, Any]) -> str:
    def cut(x: Any) -> str:
        return e(cut_text(x, MAX_TEXT))

    out = []
    for t in render_trace(row.get("trace") or [], MAX_TEXT):
        text = e(t.text)
        if t.kind == "reasoning":
            out.append(f'<span class="t">(reasoning) {text}</span>')
        elif t.kind == "said":
            cls = {"ASSISTANT": "a", "USER": "u"}.get(t.speaker, "r")
            out.append(f'<span class="{cls}"><b>{e(t.speaker)}:</b> {text}</span>')
        elif t.kind == "call":
            mark = "" if t.error is None else f' <span class="x">[{e(t.error)}]</span>'
            out.append(f'<span class="c">call {e(t.name)}({text})</span>{mark}')
        else:
            out.append(f'<span class="r">  result {text}</span>')
    if row.get("system_error"):
        out.append(f'<span class="x">system error ({e(str(row["system_error"].get("where")))}): {e(row["system_error"].get("message", ""))}</span>')
    if row.get("diff") is not None:
        out.append("<b>final diff:</b> " + (cut(row["diff"]) if row["diff"] else "no changes"))
    for d in row.get("check_details") or []:
        if d["passed"] is not True:
            what = "failed check" if d["passed"] is False else "unevaluated check"
            out.append(f'<span class="x">{what} {e(d["name"])}: {e(str(d.get("detail", "")))}</span>')
    return "\n".join(out)


def build_report(runs: dict[str, list[dict[str, Any]]], title: str = "thinkingbox evaluation report") -> str:
    """The whole report as one HTML string."""
    summaries = {name: summarize(rows) for name, rows in runs.items()}
    domains = sorted({d for s in summaries.values() for d in s["pass@1"]["by_domain"]})
    body = [f"<h1>{e(title)}</h1>",
            f"<p>{len(runs)} run(s). pass@1 is micro-averaged over trials; intervals are 95% task-cluster bootstrap "
            "intervals; system-error trials and unjudged trials (whose only open checks are rubric questions no judge "
            "answered) are left out of every rate and counted separately. Dialogue unverified: trials with a dialogue "
            "check no reader could decide (its verdict rests on what was decided), counted in the rates and shown apart "
            "with the passes among them.</p>"]

    # leaderboard: rates of runs over different task sets are not comparable, so the leaderboard says so, by task set
    task_sets = {name: run_task_set(rows) for name, rows in runs.items()}
    if len(set(task_sets.values())) > 1:
        groups: dict[str, list[str]] = {}
        for name, digest in task_sets.items():
            groups.setdefault(digest[:12] if digest else "unknown (rows without task hashes)", []).append(name)
        shown = "; ".join(f"task set {digest}: {', '.join(names)}" for digest, names in groups.items())
        body.append(f'<p class="err" id="task-sets">These runs are over different task sets, so their rates are not '
                    f"comparable: {e(shown)}. Compare runs of one task set (thinkingbox submit prepare names it).</p>")
    head = "".join(f"<th>{e(d)}</th>" for d in domains)
    body.append('<h2>Leaderboard</h2><table id="leaderboard"><tr><th class="l">run</th><th class="l">agent</th><th>task set</th><th>tasks</th>'
                f"<th>trials</th><th>pass@1 %</th><th>95% CI</th>{head}<th>pass@n %</th><th>pass^n %</th>"
                "<th>0/n</th><th>n/n</th><th>system errors</th><th>unjudged</th><th>dialogue unverified (passes)</th>"
                "<th>judge answers unparsed</th>"
                "<th>user replies quoting the prompt / cut</th></tr>")
    order = sorted(summaries, key=lambda n: -(summaries[n]["pass@1"]["overall"]["value"] or 0))
    for name in order:
        s = summaries[name]
        o = s["pass@1"]["overall"]
        cells = "".join(f"<td>{_pct(s['pass@1']['by_domain'][d]['value']) if d in s['pass@1']['by_domain'] else '-'}</td>"
                        for d in domains)
        pk = s.get("pass_k") or {}
        n = str(s.get("trials_per_task") or "")
        at_n = _pct(pk["pass@k"][n]) if pk and n in pk.get("pass@k", {}) else "-"
        hat_n = _pct(pk["pass^k_plugin"][n]) if pk and n in pk.get("pass^k_plugin", {}) else "-"
        body.append(f'<tr><td class="l"><a href="#run-{e(name)}">{e(name)}</a></td><td class="l">{e(_model_of(runs[name]))}</td>'
                    f"<td>{e((task_sets[name] or '-')[:12])}</td><td>{o['tasks']}</td><td>{o['trials']}</td><td><b>{_pct(o['value'])}</b></td>"
                    f"<td>{_pct(o['ci95'][0])}-{_pct(o['ci95'][1])}</td>{cells}<td>{at_n}</td><td>{hat_n}</td>"
                    f"<td>{s['tasks_never_passed']}</td><td>{s['tasks_always_passed']}</td><td>{s['system_errors']['count']}</td>"
                    f"<td>{s['unjudged']['count']}</td><td>{s['unverified']['count']} ({s['unverified']['passed']})</td>"
                    f"<td>{s['judge']['unparsed']}</td><td>{_user_replies(s)}</td></tr>")
    body.append("</table>")

    body.append(robustness_table(runs, summaries))

    # curves: each run keeps one colour in every plot
    run_colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(runs)}
    colours: dict[str, str] = {}
    at_k: dict[str, list[tuple[float, float]]] = {}
    hat_k: dict[str, list[tuple[float, float]]] = {}
    dashed: set[str] = set()
    refused = []
    for name in order:
        pk = summaries[name].get("pass_k")
        if not pk:
            refused.append(f"{name}: {summaries[name].get('pass_k_refused', 'no trials')}")
            continue
        at_k[name] = [(int(k), 100 * v) for k, v in pk["pass@k"].items()]
        hat_k[f"{name} plug-in"] = [(int(k), 100 * v) for k, v in pk["pass^k_plugin"].items()]
        hat_k[f"{name} unbiased"] = [(int(k), 100 * v) for k, v in pk["pass^k"].items()]
        dashed.add(f"{name} unbiased")
        colours.update({name: run_colour[name], f"{name} plug-in": run_colour[name], f"{name} unbiased": run_colour[name]})
    body.append('<h2>Repeated trials</h2><div class="plots">')
    body.append(line_chart("pass-at-k", "pass@k (unbiased)", at_k, "k", "%", colours=colours))
    body.append(line_chart("pass-hat-k", "pass^k (solid: plug-in, dashed: unbiased)", hat_k, "k", "%", dashed=dashed,
                           colours=colours))
    body.append("</div>")
    for line in refused:
        body.append(f'<p class="err">pass@k / pass^k not shown for {e(line)}</p>')
    for name in order:  # the tasks whose unjudged trials kept them out of the curves (metrics.summarize)
        left = summaries[name].get("pass_k_tasks_left_out") or []
        if left and summaries[name].get("pass_k"):
            body.append(f"<p>{e(name)}: pass@k / pass^k over the {summaries[name]['tasks'] - len(left)} tasks whose every "
                        f"trial was judged; {len(left)} task(s) with unjudged trials left out ({e(', '.join(left[:10]))}"
                        f"{' ...' if len(left) > 10 else ''})</p>")

    # heatmap and failure categories
    values = {(name, d): 100 * (1 - summaries[name]["pass@1"]["by_domain"][d]["value"])
              for name in order for d in domains if d in summaries[name]["pass@1"]["by_domain"]}
    body.append('<h2>Domains and failures</h2><div class="plots">')
    body.append(heatmap("failure-heatmap", order, domains, values))
    body.append(category_bars("failure-categories", {n: summaries[n]["failure_categories"]["overall"] for n in order},
                              {n: summaries[n]["failure_categories"]["failed_trials"] for n in order}))
    body.append("</div>")

    # task x run pass table, after the plots so that they are seen first
    tasks = sorted({r["task_id"] for rows in runs.values() for r in rows})
    body.append('<h2>Tasks by run</h2><table id="task-by-run"><tr><th class="l">task</th>'
                + "".join(f"<th>{e(n)}</th>" for n in runs) + "</tr>")
    for task in tasks:
        run_cells: list[str] = []
        for rows in runs.values():
            outcomes = [row_outcome(r) for r in rows if r["task_id"] == task and r.get("status") == "ok"]
            judged = [o for o in outcomes if o != "unjudged"]
            unjudged = len(outcomes) - len(judged)
            if not judged:
                run_cells.append('<td class="unj">unjudged</td>' if unjudged else "<td>-</td>")
                continue
            passed = judged.count("pass")
            cls = "pass" if passed == len(judged) else "fail" if passed == 0 else ""
            extra = f" (+{unjudged} unjudged)" if unjudged else ""
            run_cells.append(f'<td class="{cls}">{passed}/{len(judged)}{extra}</td>')
        body.append(f'<tr><td class="l">{e(task)}</td>{"".join(run_cells)}</tr>')
    body.append("</table>")

    # per-run task tables with links, then the transcripts
    for name in order:
        rows = sorted(runs[name], key=lambda r: (r["task_id"], r["trial"]))
        body.append(f'<h2 id="run-{e(name)}">Tasks of {e(name)}</h2><table class="tasks"><tr><th class="l">task</th>'
                    '<th>passed</th><th class="l">trials (transcripts)</th></tr>')
        by_task: dict[str, list[dict[str, Any]]] = {}
        for r in rows:
            by_task.setdefault(r["task_id"], []).append(r)
        for task, trs in by_task.items():
            judged = [row_outcome(r) for r in trs if row_outcome(r) in ("pass", "fail")]
            passed = judged.count("pass")
            links = []
            for r in trs:
                cls, mark = OUTCOME_MARKS[row_outcome(r)]
                links.append(f'<a class="trial {cls}" href="#{_anchor(name, task, r["trial"])}" '
                             f'title="trial {r["trial"]}: {e(str(r.get("failure_category") or r.get("status")))}">{r["trial"]}{mark}</a>')
            body.append(f'<tr><td class="l">{e(task)}</td><td>{passed}/{len(judged)}</td><td class="l">{"".join(links)}</td></tr>')
        body.append("</table>")
        body.append(f"<h2>Transcripts of {e(name)}</h2>")
        for r in rows:
            outcome = row_outcome(r)
            verdict = f"fail: {r.get('failure_category')}" if outcome == "fail" else outcome.replace("_", " ")
            body.append(f'<details id="{_anchor(name, r["task_id"], r["trial"])}"><summary>{e(r["task_id"])} trial {r["trial"]} '
                        f'({e(verdict)})</summary><div class="tr">{_transcript_html(r)}</div></details>')

    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{CSS}</style></head><body>" + "\n".join(body)
            + f"<script>{SCRIPT}</script></body></html>")

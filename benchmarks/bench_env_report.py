"""bench_env.py's report: the targets every figure is held to, and the table printed at the end of a run."""

from __future__ import annotations

from typing import Any

# Targets: (key, label, unit, limit). Every target is an upper bound.
TARGETS: list[tuple[str, str, str, float]] = [
    ("reset_ms_median", "reset latency (median)", "ms", 10.0),
    ("tool_step_ms_median", "any tool step (median)", "ms", 2.0),
    ("read_step_ms_median", "read tool step (median)", "ms", 2.0),
    ("cold_read_step_ms_median", "read tool step, cold (median)", "ms", 2.0),
    ("write_step_ms_median", "write tool step (median)", "ms", 2.0),
    ("verdict_ms_median", "verdict step (median)", "ms", 10.0),
    ("oracle_cpu_ms_per_episode", "oracle episode CPU time", "ms", 50.0),
    ("live_episodes_rss_increase_mib", "RSS increase, live episodes", "MiB", 2048.0),
    ("episode_cpu_ms_median", "CPU per oracle episode (median)", "ms", 6.0),
    ("episode_cpu_ms_p95", "CPU per oracle episode (p95)", "ms", 9.0),
    ("fresh_variant_first_episode_ms_median", "first episode, fresh variant", "ms", 15.0),
    ("live_episode_kib", "RSS per live episode", "KiB", 200.0),
]


def evaluate_targets(values: dict[str, float | None]) -> list[dict[str, Any]]:
    rows = []
    for key, label, unit, limit in TARGETS:
        v = values.get(key)
        rows.append({
            "key": key, "label": label, "unit": unit, "target": limit, "value": v,
            "pass": None if v is None else bool(v <= limit),
        })
    return rows


def fmt(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def print_report(res: dict[str, Any]) -> None:
    env = res["environment"]
    print()
    print(f"thinkingbox_env benchmark: domain '{res['domain']}', {res.get('tasks', 0)} tasks in sections 1-4")
    print(f"python {env['python']} | duckdb {env['duckdb']} | gymnasium {env['gymnasium']} | "
          f"thinkingbox_env {env['thinkingbox_env']}")
    print(f"platform.processor() = {env['processor']!r} | CPU model: {env['cpu_model']} | "
          f"os.cpu_count() = {env['cpu_count']}")
    print(f"load average at start: {env['loadavg_at_start']} | at end: {res.get('loadavg_at_end')}")
    print()

    for section, title in (("latency", "Latencies"), ("latency_cold", "Latencies with a cold read cache")):
        if section not in res:
            continue
        lat = res[section]
        print(f"{title} ({lat['rounds']} rounds over the tasks, time.perf_counter)")
        print(f"  {'operation':<22}{'n':>7}{'median ms':>12}{'p95 ms':>10}{'mean ms':>10}{'max ms':>10}")
        for key, label in (("reset", "reset (steady state)"), ("read_step", "read tool step"),
                           ("write_step", "write tool step"), ("tool_step", "any tool step"), ("verdict", "verdict step")):
            s = lat[key]
            print(f"  {label:<22}{s['n']:>7}{fmt(s['median_ms'], 3):>12}{fmt(s['p95_ms'], 3):>10}"
                  f"{fmt(s['mean_ms'], 3):>10}{fmt(s['max_ms'], 3):>10}")
        print()
    if res.get("fast_path_hits"):
        st = res.get("statements", {})
        print(f"Statements answered in Python (the fast path), per shape, over the whole run "
              f"({st.get('read', 0)} reads, {st.get('write', 0)} writes asked)")
        for shape, n in sorted(res["fast_path_hits"].items(), key=lambda kv: -kv[1]):
            base = st.get("read" if shape.startswith("read") else "write", 0)
            share = f"{100 * n / base:5.1f}% of {'reads' if shape.startswith('read') else 'writes'}" if base else ""
            print(f"  {shape:<22}{n:>9}   {share}")
        print()
    if "cold_start" in res:
        cs = res["cold_start"]
        print(f"Cold start ({cs['runs']} fresh processes; torch installed: {cs['torch_installed']}, "
              f"loaded by the episode: {cs['torch_loaded']})")
        for key, label in (("import_ms", "import thinkingbox_env"), ("make_ms", "first make()"),
                           ("first_episode_ms", "first oracle episode"), ("second_task_ms", "second task (make + episode)")):
            print(f"  {label:<30} median {cs[key]['median']:8.1f} ms   max {cs[key]['max']:8.1f} ms")
        print()
    if "throughput" in res:
        th = res["throughput"]
        print(f"Oracle episodes ({th['episodes']} episodes, run_episode + OracleAgent)")
        print(f"  episodes per second      {th['episodes_per_s']:.1f}")
        print(f"  wall time per episode    {th['wall_ms_per_episode']:.2f} ms")
        print(f"  CPU time per episode     {th['cpu_ms_per_episode']:.2f} ms")
        print()
    if "episode_cpu" in res:
        ec = res["episode_cpu"]
        print(f"CPU per oracle episode ({ec['rounds']} rounds over {len(ec['task_ids'])} tasks, time.process_time)")
        print(f"  tasks: {', '.join(ec['task_ids'])}")
        print(f"  {'phase':<22}{'n':>7}{'median ms':>12}{'p95 ms':>10}{'mean ms':>10}{'max ms':>10}")
        rows = [("whole episode", ec["episode"])] + [(k, v) for k, v in ec["phases"].items()]
        for label, s in rows:
            print(f"  {label:<22}{s['n']:>7}{fmt(s['median_ms'], 3):>12}{fmt(s['p95_ms'], 3):>10}"
                  f"{fmt(s['mean_ms'], 3):>10}{fmt(s['max_ms'], 3):>10}")
        print("  slowest tasks (median ms): " + ", ".join(f"{t} {ms:.2f}" for t, ms in ec["slowest_tasks_median_ms"]))
        if ec.get("phase_replays_below_1"):
            print(f"  ({ec['phase_replays_below_1']} phase-by-phase replays below verdict 1.0: they skip the dialogue "
                  "that process rules ask for; not oracle failures)")
        print()
    for mode, title in (("template", "only template reads memoised (a trajectory that is new from its first write)"),
                        ("off", "the statement memo off (every statement to DuckDB)")):
        if f"episode_cpu_memo_{mode}" not in res:
            continue
        ec = res[f"episode_cpu_memo_{mode}"]
        print(f"CPU per oracle episode with {title}")
        print(f"  {'phase':<22}{'n':>7}{'median ms':>12}{'p95 ms':>10}{'mean ms':>10}{'max ms':>10}")
        for label, s in [("whole episode", ec["episode"])] + [(k, v) for k, v in ec["phases"].items()]:
            print(f"  {label:<22}{s['n']:>7}{fmt(s['median_ms'], 3):>12}{fmt(s['p95_ms'], 3):>10}"
                  f"{fmt(s['mean_ms'], 3):>10}{fmt(s['max_ms'], 3):>10}")
        print()
    if "fresh_variants" in res:
        fv = res["fresh_variants"]
        print(f"Fresh training variants ({fv['variants']}, warm process, time.process_time)")
        for key, label in (("generate", "generate the spec"), ("first_episode", "first episode")):
            s = fv[key]
            print(f"  {label:<22}median {fmt(s['median_ms'], 2)} ms   p95 {fmt(s['p95_ms'], 2)} ms   max {fmt(s['max_ms'], 2)} ms")
        print()
    if "fresh_variants_against" in res:
        fa = res["fresh_variants_against"]
        print(f"Fresh training variants, draw by draw against {fa['other_tree']} ({fa['variants']}, process CPU time)")
        for name in ("this tree", "other"):
            s = fa[name]["first_episode"]
            print(f"  {name:<12}first episode median {fmt(s['median_ms'], 2)} ms   p95 {fmt(s['p95_ms'], 2)} ms   "
                  f"max {fmt(s['max_ms'], 2)} ms   oracle failures {fa[name]['oracle_failures']}")
        r = fa["other_over_this"]
        print(f"  other / this tree: median {r['median']:.2f}x, p95 {r['p95']:.2f}x")
        print()
    if "grpo" in res:
        g = res["grpo"]
        print(f"GRPO-shaped groups ({g['groups']} groups of {g['group_size']} episodes of one fresh variant)")
        print(f"  CPU per group            median {fmt(g['group']['median_ms'], 1)} ms, p95 {fmt(g['group']['p95_ms'], 1)} ms")
        print(f"  CPU per episode          {fmt(g['cpu_ms_per_episode'], 2)} ms (spec generation included)")
        print(f"  episodes per CPU second  {fmt(g['episodes_per_cpu_s'], 1)}")
        print()
    if "memory" in res:
        mem = res["memory"]
        print(f"Memory ({mem['episodes']} live episodes, VmRSS)")
        print(f"  RSS after warm-up        {fmt(res.get('warmup', {}).get('rss_mib'), 1)} MiB")
        print(f"  baseline RSS             {fmt(mem['baseline_rss_mib'], 1)} MiB")
        print(f"  RSS with episodes live   {fmt(mem['rss_after_mib'], 1)} MiB")
        print(f"  increase                 {fmt(mem['rss_increase_mib'], 1)} MiB "
              f"({fmt(mem['kib_per_episode'], 1)} KiB per episode)")
        print(f"  RSS after closing them   {fmt(mem['rss_after_close_mib'], 1)} MiB")
        print(f"  time to build them       {mem['build_s']:.1f} s")
        if "memory_memo_off" in res:
            off = res["memory_memo_off"]
            print(f"  with the statement memo off: {fmt(off['rss_increase_mib'], 1)} MiB "
                  f"({fmt(off['kib_per_episode'], 1)} KiB per episode)")
        print()

    print("Targets")
    print(f"  {'metric':<32}{'measured':>12}{'target':>14}  result")
    for row in res["targets"]:
        status = "n/a" if row["pass"] is None else ("PASS" if row["pass"] else "FAIL")
        target = f"<= {row['target']:g} {row['unit']}"
        print(f"  {row['label']:<32}{fmt(row['value']) + ' ' + row['unit']:>12}{target:>14}  {status}")
    bad = res["oracle_failures"]
    if bad:
        print(f"\nWARNING: {bad} oracle episode(s) did not reach verdict 1.0")
    print(f"\nTotal run time {res['total_s']:.1f} s")

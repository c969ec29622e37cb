"""Every domain has the same shape: one suite, run over every discovered domain (the library test domain included).

A new domain that passes this file plugs into the engine, the evaluator and
training without further work; a domain that drifts from the shape fails here
with the file, tool or family named.
"""

from __future__ import annotations

import ast
import inspect
import typing
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

import thinkingbox_env as tb
from thinkingbox_env.eval.validate import validate_task
from thinkingbox_env.judging.judge import RubricJudge
from thinkingbox_env.state import DomainDatabase, ToolContext
from thinkingbox_env.tasks import lookup
from thinkingbox_env.tasks.domain import REQUIRED_FILES, load_domain

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
DOCS = ROOT / "docs" / "domains"
SHIPPED = sorted(p.name for p in (ROOT / "domains").iterdir() if (p / "domain.yaml").is_file())
TEST_ONLY = sorted(p.name for p in (DATA / "domains").iterdir() if (p / "domain.yaml").is_file())
DOMAINS = SHIPPED + TEST_ONLY
DOC_HEADINGS = ["## Statistics", "## Backend systems, tables and tools", "## Policy and knowledge base",
                "## Families and branches", "## Validation"]
SEEDS_VALIDATED = 2  # full validation per family (each runs a dozen episodes)
SEEDS_GENERATED = 10  # generation only: test-disjoint and database-free


@pytest.fixture(autouse=True)
def _test_domains_on_path(monkeypatch):
    monkeypatch.setenv("THINKINGBOX_PATH", str(DATA))


def _families(domain: str) -> list[tuple[str, str]]:
    path = (ROOT / "domains" / domain) if domain in SHIPPED else (DATA / "domains" / domain)
    tree = ast.parse((path / "families" / "__init__.py").read_text())
    listed = next(n for n in tree.body if isinstance(n, ast.AnnAssign | ast.Assign) and "FAMILIES" in ast.unparse(n))
    return [(domain, ast.unparse(c.func)) for c in ast.walk(listed) if isinstance(c, ast.Call)]


FAMILY_PARAMS = [pytest.param(d, cls, id=f"{d}-{cls}") for d in DOMAINS for d, cls in _families(d)]


def _code(domain: str, cls: str) -> str:
    return next(f.code for f in load_domain(domain).families.values() if type(f).__name__ == cls)


def test_domains_are_discovered():
    assert {"retail", "insurance"} <= set(SHIPPED) and "library" in TEST_ONLY


@pytest.mark.parametrize("domain", DOMAINS)
def test_required_files_are_present(domain):
    d = load_domain(domain)
    missing = [f for f in (*REQUIRED_FILES, "families/_base.py") if not (d.path / f).is_file()]
    missing += [f"{folder}/" for folder in ("seed", "kb") if not (d.path / folder).is_dir()]
    assert not missing, f"{d.path} lacks {missing}"
    groups = [p for p in (d.path / "families").glob("*.py") if p.stem not in ("__init__", "_base")]
    assert groups, f"{d.path / 'families'} has no workflow-group module"


@pytest.mark.parametrize("domain", DOMAINS)
def test_families_write_tasks_with_the_authoring_kit(domain):
    """One builder: every task body comes from a TaskDraft; a shipped domain's own draft is families/_draft.py."""
    import importlib

    from thinkingbox_env.authoring import TaskDraft

    d = load_domain(domain)
    for path in sorted((d.path / "families").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "TaskBody":
                raise AssertionError(f"{path}:{node.lineno} builds a {node.func.id} itself instead of a TaskDraft's body()")
    if domain in SHIPPED:
        assert (d.path / "families" / "_draft.py").is_file(), f"{d.path / 'families'} has no _draft.py"
        module = importlib.import_module(f"{type(d.family(next(iter(d.families)))).__module__.rsplit('.', 1)[0]}._draft")
        drafts = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, TaskDraft) and v is not TaskDraft]
        assert drafts, f"{module.__name__} defines no TaskDraft subclass"
    spec = next(iter(d.families.values())).instance(1, "train")
    assert spec.origin is not None and spec.origin.branches


@pytest.mark.parametrize("domain", DOMAINS)
def test_families_import_rules_never_tools(domain):
    d = load_domain(domain)
    for path in sorted((d.path / "families").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                assert node.module != "tools", f"{path} imports tools; shared rules belong in rules.py"


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_tool_is_documented_and_typed(domain):
    box = load_domain(domain).toolbox
    for name, t in box.tools.items():
        assert t.description.strip(), f"{domain} tool {name} has no description"
        hints = typing.get_type_hints(t.fn)
        first = next(iter(inspect.signature(t.fn).parameters))
        if name != "end_conversation":
            assert hints.get(first) is ToolContext, f"{domain} tool {name}: parameter '{first}' must be typed ToolContext"
        for arg, schema in t.parameters["properties"].items():
            assert schema.get("description"), f"{domain} tool {name}: argument '{arg}' is not described in its docstring"


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_clock_and_the_catalogue_come_from_the_domain_files(domain):
    d = load_domain(domain)
    rules = d.module("rules")
    assert d.spec.clock == rules.NOW, f"{d.path / 'rules.py'}: NOW must be the clock of domain.yaml"
    for fam in d.families.values():
        assert fam.now == d.spec.clock


@pytest.mark.parametrize("domain", DOMAINS)
def test_family_codes_are_unique_and_families_are_described(domain):
    fams = load_domain(domain).families  # raises on a code used twice
    listed = _families(domain)
    assert len(fams) == len(listed), f"{domain}: a family code is listed twice"
    for code, fam in fams.items():
        assert code and fam.name and fam.branches, f"{domain}/{code}: needs code, name and branches"
        assert type(fam).__module__.split(".")[-1] not in ("__init__", "_base", "families"), \
            f"{domain}/{code}: a family lives in its workflow-group module"


@pytest.mark.parametrize("domain", DOMAINS)
def test_generating_variants_builds_no_database(domain, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("generating a variant built a task template")

    monkeypatch.setattr(DomainDatabase, "build_task_template", refuse)
    forbidden = lookup.test_task_keys(domain)
    for code in load_domain(domain).families:
        keys = {tb.generate_variant(domain, code, seed).content_key() for seed in range(1, SEEDS_GENERATED + 1)}
        assert not keys & forbidden, f"{domain}/{code}: a variant reproduces a test task"
        assert len(keys) > 1, f"{domain}/{code}: every seed draws the same task"


@pytest.fixture(scope="module")
def yes_judge():
    """A local judge endpoint that accepts every rubric, so variants with a rubric validate everything else."""
    with FakeOpenAI(lambda body: "VERDICT: YES\nREASON: scripted.") as server:
        yield RubricJudge(model="judge", base_url=server.base_url, api_key="k", max_retries=0)


@pytest.mark.parametrize("domain, cls", FAMILY_PARAMS)
def test_variants_of_every_family_validate(domain, cls, yes_judge):
    code = _code(domain, cls)
    for seed in range(1, SEEDS_VALIDATED + 1):
        spec = tb.generate_variant(domain, code, seed)
        result = validate_task(spec, judge=yes_judge if spec.checks.rubric else None)
        assert result.ok, (spec.full_id, result.problems)


@pytest.mark.parametrize("domain", DOMAINS)
def test_ids_the_golden_run_creates_are_predicted_without_a_database(domain):
    """The prediction families use equals the sequences the engine's template hands out."""
    d = load_domain(domain)
    fam = next(iter(d.families.values()))
    for spec in [tb.load_task(t) for t in tb.list_tasks(domain=domain)[:5]]:
        template = d.db.build_task_template(f"{spec.full_id} (conformance)", spec.patch)
        try:
            state = template.new_episode()
            expected = {t: state.next_id(t) for t in template.sequence_starts}
            state.close()
        finally:
            template.drop()
        assert fam.next_ids(spec.patch) == expected, spec.full_id


@pytest.mark.parametrize("domain", SHIPPED)
def test_the_docs_page_has_the_standard_headings(domain):
    page = DOCS / f"{domain}.md"
    assert page.is_file(), f"{page} is missing"
    text = page.read_text()
    missing = [h for h in DOC_HEADINGS if not any(line.strip() == h for line in text.splitlines())]
    assert not missing, f"{page} lacks {missing}"
    positions = [text.index(f"\n{h}\n") for h in DOC_HEADINGS]
    assert positions == sorted(positions), f"{page}: the standard headings are out of order"


def test_every_shipped_domain_has_tests_with_the_same_file_names():
    names = {d: sorted(p.name for p in (ROOT / "tests" / "domains" / d).glob("test_*.py")) for d in SHIPPED}
    expected = ["test_by_hand.py", "test_families.py", "test_rules.py", "test_task_set_v3.py", "test_tools.py"]
    assert all(n == expected for n in names.values()), names


@pytest.mark.parametrize("domain", SHIPPED)
def test_every_write_that_sets_a_declared_date_role_is_where_the_claims_read_it(domain):
    """A date role of claims.yaml (an effective date, an end date) lists every write tool that takes that date;
    one left out makes the oracle's own closing fail claims:roles whenever that tool sets the date it states."""
    import inspect

    import yaml

    from thinkingbox_env.tasks.domain import load_domain

    box = load_domain(domain).toolbox
    roles = (yaml.safe_load((ROOT / "domains" / domain / "claims.yaml").read_text()) or {}).get("roles") or {}
    missing = []
    for role, spec in roles.items():
        if spec["kind"] != "date":
            continue
        keys = set(spec.get("keys") or [role.split(".")[-1]])
        for name in box.tools:
            if box[name].writes and keys & set(inspect.signature(box[name].fn).parameters) and name not in spec["tools"]:
                missing.append((role, name))
    assert not missing, missing

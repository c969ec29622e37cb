"""``thinkingbox new``: a sixth domain started from the template domain, frozen and ready to validate.

Copying the template by hand left a domain half-renamed (its ``domain.yaml`` still naming the
template, no frozen tasks, no data root on the search path), and the first error a newcomer
met was about that, not about the domain. The command writes a complete domain under a data
root, freezes its test tasks with the same load-time checks ``freeze`` runs, and says the
one variable that puts the root on the search path.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
from pathlib import Path
from typing import Any

from ..tasks.domain import _PACKAGE_DIR, PATH_VARIABLE, domain_dirs
from .common import UserError, add_command, console

TEMPLATE_NAME = "library"
_NAME = re.compile(r"[a-z][a-z0-9_]{1,39}")


def template_dir() -> Path:
    """The template domain: bundled in a wheel, ``tests/data/domains/library`` in a checkout."""
    for candidate in (_PACKAGE_DIR / "_bundled" / "template" / TEMPLATE_NAME,
                      _PACKAGE_DIR.parent / "tests" / "data" / "domains" / TEMPLATE_NAME):
        if (candidate / "domain.yaml").is_file():
            return candidate
    raise UserError("the template domain is missing from this installation (reinstall thinkingbox-env)")


def write_domain(name: str, root: Path, title: str | None = None) -> Path:
    """Copy the template to ``root/domains/<name>`` under its new name; refuse a name or folder already taken."""
    if not _NAME.fullmatch(name):
        raise UserError(f"domain name {name!r}: use 2-40 lowercase letters, digits or '_', starting with a letter "
                        "(it becomes the first part of every task id)")
    if name in domain_dirs():
        raise UserError(f"a domain named {name!r} already exists ({domain_dirs()[name]}); choose another name")
    target = root / "domains" / name
    specs = root / "task_specs" / name
    for folder in (target, specs):
        if folder.exists() and any(folder.iterdir()):
            raise UserError(f"{folder} already exists and is not empty; choose another --root or name")
    shutil.copytree(template_dir(), target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), dirs_exist_ok=True)
    manifest = target / "domain.yaml"
    text = manifest.read_text(encoding="utf-8")
    text = re.sub(r"(?m)^name: .*$", f"name: {name}", text, count=1)
    text = re.sub(r"(?m)^title: .*$", f"title: {title or name.replace('_', ' ').capitalize() + ' (new domain)'}", text,
                  count=1)
    manifest.write_text(text, encoding="utf-8")
    return target


def cmd_new(args: argparse.Namespace) -> int:
    """Write the domain, put its root on this process's search path, and freeze its test tasks."""
    from .tasks import cmd_freeze

    root = Path(args.root).resolve()
    target = write_domain(args.name, root, args.title)
    roots = [p for p in os.environ.get(PATH_VARIABLE, "").split(os.pathsep) if p]
    if str(root) not in roots:
        os.environ[PATH_VARIABLE] = os.pathsep.join([str(root), *roots])
    freeze = argparse.Namespace(domain=args.name, out=str(root / "task_specs" / args.name), family=[], count=None, force=False)
    try:
        cmd_freeze(freeze)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)  # no half-made domain is left behind to shadow a retry
        raise
    console.print(f"wrote the {args.name} domain to {target}", highlight=False)
    console.print("next:", highlight=False)
    console.print(f"  export {PATH_VARIABLE}={root}", highlight=False)
    console.print(f"  thinkingbox validate {args.name}", highlight=False)
    console.print(f"  thinkingbox validate {args.name} --variants 20", highlight=False)
    console.print(f"  thinkingbox run {args.name}/LB001_001", highlight=False)
    console.print("then grow it as docs/architecture.md ('How to add a domain') describes.", highlight=False)
    return 0


def add_new_command(sub: Any) -> None:
    """Register ``new``; it sits beside ``freeze`` and ``validate``, the commands its output is meant for next."""
    p = add_command(sub, "new", "start a new domain from the template domain",
                    "Write a new domain (policy, schema, seed data, tools, rules, verdicts, claims and two task families: a request showing every task dimension and a two-request conversation) "
                    "under ROOT/domains/NAME, copied from the template domain, and freeze its test tasks under "
                    f"ROOT/task_specs/NAME. Put ROOT on {PATH_VARIABLE} to use it.",
                    ["thinkingbox new stacks --root ./my_domains",
                     f"{PATH_VARIABLE}=./my_domains thinkingbox validate stacks"])
    p.add_argument("name", help="the domain's name: lowercase letters, digits and '_'")
    p.add_argument("--root", default=".", help="the data root to write domains/NAME and task_specs/NAME into (default: .)")
    p.add_argument("--title", help="the domain's title in domain.yaml")
    p.set_defaults(func=cmd_new)

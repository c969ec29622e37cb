"""Opening templates split by the split that may draw them, so test tasks open in words no training variant uses."""

from __future__ import annotations

import string
from typing import Any


class Openings:
    """A family's opening templates, split so that test tasks open in words no training variant uses.

    Templates are ``str.format`` strings over the task's facts. The held-out ones are drawn only
    for the test split, so the test set measures generalisation to new requests, not to new names.
    """

    def __init__(self, family_code: str, templates: dict[str, str], held_out: tuple[str, ...] | None = None,
                 minimum: int = 6) -> None:
        if len(templates) < minimum:
            raise ValueError(f"family {family_code}: {len(templates)} opening templates, at least {minimum} are needed")
        held = tuple(held_out) if held_out is not None else tuple(list(templates)[-2:])
        unknown = [h for h in held if h not in templates]
        if unknown:
            raise ValueError(f"family {family_code}: held-out openings {unknown} are not templates")
        if not held or len(held) == len(templates):
            raise ValueError(f"family {family_code}: both splits need at least one opening template")
        self.family_code = family_code
        self.templates = dict(templates)
        self.held_out = held

    def ids(self, split: str) -> list[str]:
        """The template ids a split may draw, in declaration order."""
        if split == "test":
            return list(self.held_out)
        return [t for t in self.templates if t not in self.held_out]

    def pick(self, rng: Any, split: str, **fields: Any) -> tuple[str, str]:
        """(opening text, origin id) drawn for ``split``; a template naming a missing field is an authoring error."""
        chosen = rng.choice(self.ids(split))
        try:
            text = self.templates[chosen].format(**fields)
        except KeyError as exc:
            raise ValueError(f"family {self.family_code}: opening '{chosen}' needs field {exc.args[0]!r}") from exc
        return text, f"{self.family_code}/{chosen}"


def template_fields(template: str) -> set[str]:
    """The ``str.format`` fields a template names."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


class StoryOpenings:
    """Opening templates grouped by the story they tell, each group split into training and held-out ones.

    An opening must never contradict the task's records or facts: a faulty device is told only where
    the record holds it as faulty, a project is named only where the request has one. So a branch
    names its story and passes ``None`` for a value it cannot offer; templates naming such a value
    are not drawn.
    """

    def __init__(self, code: str, stories: dict[str, tuple[dict[str, str], tuple[str, ...]]], minimum: int = 4) -> None:
        self.code = code
        self.stories = {name: Openings(f"{code}.{name}", templates, held_out=held, minimum=minimum)
                        for name, (templates, held) in stories.items()}

    def pick(self, rng: Any, split: str, story: str = "request", **values: Any) -> tuple[str, str]:
        """(opening text, origin id) for ``split``, among the story's templates whose every value is offered."""
        openings = self.stories[story]
        offered = {k for k, v in values.items() if v is not None}
        usable = [t for t in openings.ids(split) if template_fields(openings.templates[t]) <= offered]
        if not usable:
            raise ValueError(f"family {self.code}: no {split} opening of story '{story}' fits the values {sorted(offered)}")
        chosen = rng.choice(usable)
        return openings.templates[chosen].format(**values), f"{self.code}/{story}.{chosen}"

    def held_out_count(self) -> int:
        return sum(len(o.held_out) for o in self.stories.values())

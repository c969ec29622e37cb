"""The task dimensions, declared once: which instances of a family carry a planted instruction or a recovery.

A family writes one workflow; the dimensions cut across every family of a domain. A *planted
instruction* (injection) hides an instruction aimed at the assistant in a record the golden reads;
a *recovery* makes the correct path meet a failure first (the customer misremembers an id, a
write times out once) and go on from it; a *two-request conversation* is a ``combined`` family
whose instances join two requests with :meth:`TaskDraft.then`.

Which seeds carry a dimension is a rule every domain used to write as its own arithmetic. Here
the rule is data: a :class:`Schedule` of one of the few kinds the domains use, and one function,
:func:`carries`, that decides it for a family instance. The kinds reproduce the decisions the
domains made before, down to the random stream each one reads, because frozen test tasks are
``family.instance(seed, "test", number)`` and must keep their bytes when a domain moves to the kit.

A domain declares its schedules as constants in its ``families`` package, validated by
:func:`declare`, rather than in ``domain.yaml``: a keyed draw names the random stream the
generator reads, and a band split names the branches of generator code that read it, so the
declaration sits next to the code it steers and is checked when that code is imported (a malformed
schedule fails the import of the domain with its name, before any task is generated).

Two-request conversations need no per-seed schedule: a domain offers them as its ``combined``
family (every instance joins two requests), so how many there are is that family's ``test_count``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Union

# the dimensions a domain may declare a schedule for
DIMENSIONS = ("injection", "recovery")


def _check(ok: bool, name: str, message: str) -> None:
    if not ok:
        raise ValueError(f"schedule {name!r}: {message}")


@dataclass(frozen=True)
class Period:
    """Every ``every`` consecutive seeds, the ones whose remainder is in ``remainders`` carry the dimension.

    Exists because a period spreads the dimension evenly over a family's frozen tasks (seeds 1..n):
    a family with five test tasks and ``every=5`` has exactly one. ``add_number`` adds a number the
    domain passes to the seed first (insurance passes the family's own number), so the same period
    falls on different seeds in different families and no seed carries the dimension everywhere.
    """

    every: int
    remainders: tuple[int, ...] = (0,)
    add_number: bool = False
    name: str = "period"

    def __post_init__(self) -> None:
        _check(isinstance(self.every, int) and self.every >= 1, self.name, f"every must be a whole number of seeds >= 1, got {self.every!r}")
        _check(bool(self.remainders), self.name, "remainders is empty, so no seed would carry it")
        bad = [r for r in self.remainders if not isinstance(r, int) or not 0 <= r < self.every]
        _check(not bad, self.name, f"remainders {bad} are not remainders of division by {self.every}")

    def decide(self, seed: int, number: int = 0) -> bool:
        return (seed + (number if self.add_number else 0)) % self.every in self.remainders


@dataclass(frozen=True)
class Keyed:
    """A draw with probability ``rate`` from a random stream keyed by the family code, the dimension and the seed.

    Exists because a keyed stream depends on the seed alone: nothing the family draws before or
    after moves it, so a family's generator can change without changing which seeds carry the
    dimension, and the generator may keep reading the same stream (:meth:`stream`) for the
    dimension's own choices. ``key`` is formatted with ``code``, ``dimension`` and ``seed``;
    seeds in ``never`` carry nothing and draw nothing (the first instance of a family kept plain
    for examples and smoke tests).
    """

    rate: float
    key: str = "{code}:{dimension}:{seed}"
    dimension: str = "injection"
    never: tuple[int, ...] = ()
    name: str = "keyed"

    def __post_init__(self) -> None:
        _check(isinstance(self.rate, (int, float)) and 0.0 <= self.rate <= 1.0, self.name, f"rate must lie in [0, 1], got {self.rate!r}")
        _check("{seed}" in self.key, self.name, f"key {self.key!r} does not name {{seed}}, so every seed would draw the same")
        _check(self.dimension in DIMENSIONS, self.name, f"dimension {self.dimension!r} is not one of {DIMENSIONS}")

    def stream(self, code: str, seed: int) -> random.Random:
        """The keyed random stream of this family instance (fresh: the draw is its first number)."""
        return random.Random(self.key.format(code=code, dimension=self.dimension, seed=seed))

    def decide(self, code: str, seed: int, rng: random.Random | None = None) -> bool:
        """Whether the instance carries it; ``rng``: the instance's :meth:`stream`, when the caller goes on reading it."""
        if seed in self.never:
            return False
        return (rng if rng is not None else self.stream(code, seed)).random() < self.rate


@dataclass(frozen=True)
class BySplit:
    """One schedule for test instances and another for training variants.

    Exists because a test set wants the dimension spread evenly (a :class:`Period`), while
    training variants are drawn from unbounded seeds and a rate (:class:`Keyed`) keeps their share
    independent of which seeds a trainer happens to draw.
    """

    test: Schedule
    train: Schedule
    name: str = "by_split"

    def __post_init__(self) -> None:
        for part in (self.test, self.train):
            _check(isinstance(part, (Period, Keyed)), self.name, f"a split's schedule must be a Period or Keyed, got {type(part).__name__}")


@dataclass(frozen=True)
class Bands:
    """One roll in [0, 1) split into bands: a roll below a band's upper bound is eligible for it.

    Exists for recoveries, which come in kinds that exclude each other (a misremembered id, a
    transient fault): one roll decides which kind an instance tries, and the bands' widths are the
    kinds' rates. Bounds are cumulative and increasing, so a roll eligible for one band is eligible
    for every later one; a generator tries the eligible kinds in order and falls through to the next
    where a kind does not apply to the instance (no order to misremember). The roll comes from a
    keyed stream (``key`` set, see :class:`Keyed`) or, where ``key`` is empty, from the family's own
    random stream at the point the generator asks, so a domain that always drew it there keeps its
    stream.
    """

    bounds: tuple[tuple[str, float], ...]
    key: str = ""
    dimension: str = "recovery"
    never: tuple[int, ...] = field(default=())
    name: str = "bands"

    def __post_init__(self) -> None:
        _check(bool(self.bounds), self.name, "declares no bands")
        names = [b for b, _ in self.bounds]
        _check(len(set(names)) == len(names), self.name, f"band names repeat: {names}")
        cuts = [c for _, c in self.bounds]
        _check(all(isinstance(c, (int, float)) and 0.0 <= c <= 1.0 for c in cuts), self.name, f"bounds must lie in [0, 1], got {cuts}")
        _check(all(a <= b for a, b in zip(cuts, cuts[1:])), self.name, f"bounds must increase, got {cuts}")
        _check(not self.key or "{seed}" in self.key, self.name, f"key {self.key!r} does not name {{seed}}")
        _check(self.dimension in DIMENSIONS, self.name, f"dimension {self.dimension!r} is not one of {DIMENSIONS}")

    def stream(self, code: str, seed: int) -> random.Random:
        """The keyed stream of the roll (only for bands with a ``key``)."""
        _check(bool(self.key), self.name, "has no key: its roll comes from the family's own stream")
        return random.Random(self.key.format(code=code, dimension=self.dimension, seed=seed))

    def roll(self, code: str, seed: int, rng: random.Random | None = None) -> float:
        """The roll: the next number of ``rng`` (the family's stream, or the keyed stream the caller holds), else of the keyed stream."""
        if rng is None:
            rng = self.stream(code, seed)
        return rng.random()

    def eligible(self, roll: float) -> tuple[str, ...]:
        """The bands ``roll`` falls under, in declared order."""
        return tuple(b for b, cut in self.bounds if roll < cut)

    def band(self, roll: float) -> str | None:
        """The first band ``roll`` falls under, or None."""
        found = self.eligible(roll)
        return found[0] if found else None


Schedule = Union[Period, Keyed, BySplit]


def carries(schedule: Schedule, *, code: str, seed: int, split: str = "train", number: int | None = None,
            rng: random.Random | None = None) -> bool:
    """Whether the instance of family ``code`` drawn from ``seed`` in ``split`` carries the dimension.

    ``number`` is the offset a :class:`Period` with ``add_number`` adds to the seed (0 when not given). ``rng`` is the keyed stream of a :class:`Keyed` schedule when the caller
    goes on drawing from it.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    if isinstance(schedule, BySplit):
        schedule = schedule.test if split == "test" else schedule.train
    if isinstance(schedule, Period):
        return schedule.decide(seed, number or 0)
    if isinstance(schedule, Keyed):
        return schedule.decide(code, seed, rng)
    raise TypeError(f"not a schedule: {schedule!r}")


def declare(domain: str, **schedules: Schedule | Bands) -> dict[str, Schedule | Bands]:
    """A domain's schedules by dimension, checked: each names a known dimension and is a schedule of the kit.

    A malformed declaration is refused with the domain and the dimension it names, so the mistake
    shows when the domain's families are imported rather than as a shifted task set.
    """
    out: dict[str, Schedule | Bands] = {}
    for dimension, schedule in schedules.items():
        if dimension not in DIMENSIONS:
            raise ValueError(f"domain {domain!r}: unknown dimension {dimension!r}; the kit knows {', '.join(DIMENSIONS)}")
        if not isinstance(schedule, (Period, Keyed, BySplit, Bands)):
            raise ValueError(f"domain {domain!r}: the {dimension} schedule is a {type(schedule).__name__}, not a Period, Keyed, "
                             "BySplit or Bands")
        if isinstance(schedule, (Keyed, Bands)) and schedule.dimension != dimension:
            raise ValueError(f"domain {domain!r}: the {dimension} schedule draws from the {schedule.dimension} stream")
        out[dimension] = schedule
    return out


__all__ = ["DIMENSIONS", "Bands", "BySplit", "Keyed", "Period", "Schedule", "carries", "declare"]

"""The sums and differences grounded_values accepts, asked by membership, are exactly the listed ones."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkingbox_env.checks.grounded_values import _derived
from thinkingbox_env.reading.values import money_norm

cents = st.integers(min_value=1, max_value=2_000_000).map(lambda c: Decimal(c).scaleb(-2))
amounts = st.lists(cents, max_size=25, unique=True).map(lambda xs: tuple(sorted(xs)))


def listed(money: tuple[Decimal, ...], fees: tuple[Decimal, ...]) -> set[tuple[str, str]]:
    """Every sum and difference of two amounts (an amount with itself, or with a fee), written out."""
    out = set()
    for i, a in enumerate(money):
        for b in money[i:] + fees:
            out.add(("money", money_norm(a + b)))
            out.add(("money", money_norm(abs(a - b))))
    return out


def _derived_of(money: tuple[Decimal, ...], fees: tuple[Decimal, ...]):
    return _derived(money, fees, (), True, (), (), (), frozenset(), ())


@settings(max_examples=300, deadline=None)
@given(money=amounts, fees=amounts, asked=st.lists(st.integers(min_value=-3_000_000, max_value=5_000_000), max_size=30))
def test_membership_matches_the_listed_sums(money, fees, asked):
    expected = listed(money, fees)
    derived = _derived_of(money, fees)
    keys = {("money", money_norm(Decimal(c).scaleb(-2))) for c in asked} | expected
    keys |= {("money", "-0.00"), ("money", "0.00"), ("money", "12.5"), ("money", "1E+3"), ("money", "NaN"), ("date", "2026-01-01")}
    for key in keys:
        assert (key in derived) == (key in expected), key


def test_sums_of_catalogue_amounts_are_not_listed():
    money = tuple(Decimal(c).scaleb(-2) for c in range(1_000, 31_000, 100))  # 300 prices
    derived = _derived_of(money, (Decimal("4.99"),))
    assert not derived.listed  # answered by membership, not by 90,000 keys
    assert ("money", "25.00") in derived and ("money", money_norm(money[0] + money[-1])) in derived
    assert ("money", "14.99") in derived  # 10.00 + 4.99
    assert ("money", "0.01") not in derived  # no two amounts a cent apart


def test_amounts_too_long_to_add_exactly_are_listed():
    huge = Decimal("1" * 30 + ".00")
    derived = _derived_of((Decimal("1.00"), huge), ())
    assert derived.listed == frozenset(listed((Decimal("1.00"), huge), ()))
    assert ("money", "2.00") in derived

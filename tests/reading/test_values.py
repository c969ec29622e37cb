"""The value library: the same value in any format, never a value inside another one."""

from datetime import date

import pytest

from thinkingbox_env.reading.values import _with_separator, extract_values, parse_value, same_value, words_to_number

CLOCK = date(2026, 3, 2)
IDS = (r"ORD-\d+", r"CUS-\d+")


def keys(text: str) -> list[tuple[str, str]]:
    return [v.key for v in extract_values(text, CLOCK, IDS)]


@pytest.mark.parametrize("text", ["$50", "$50.00", "50 dollars", "USD 50", "fifty dollars", "a refund of 50.00"])
def test_money_formats_are_one_value(text: str) -> None:
    assert ("money", "50.00") in keys(text)


@pytest.mark.parametrize("text", ["2026-03-16", "March 16, 2026", "16 March 2026", "Mar 16", "March 16th", "3/16"])
def test_date_formats_are_one_value(text: str) -> None:
    assert keys(text) == [("date", "2026-03-16")]


def test_durations_and_number_words() -> None:
    assert keys("seven days") == keys("7 days") == keys("a week") == [("duration", "7 day")]
    assert keys("10 business days") == [("duration", "10 business day")]
    assert words_to_number("twenty-three") == 23
    assert words_to_number("one hundred and five") == 105
    assert words_to_number("refund") is None


def test_ids_ignore_case_and_separators() -> None:
    assert keys("ord-100001, ORD 100001 and ORD100001") == [("id", "ORD100001")] * 3


def test_an_english_word_that_is_an_id_prefix_does_not_swallow_the_number_after_it() -> None:
    # a travel-style payment-method id: "5 pm 12 March" is a time and a date
    ids = (r"PM-\d+", r"INC-\d+")
    found = [v.key for v in extract_values("It leaves at 5 pm 12 March; Acme inc 2024.", CLOCK, ids)]
    assert ("date", "2026-03-12") in found and ("number", "2024") in found
    assert not any(k == "id" for k, _ in found)
    # the id itself is still found however the agent separates it
    written = "PM-12, pm-12, pm_12, PM 12 and PM12"
    assert [v.key for v in extract_values(written, CLOCK, ids)] == [("id", "PM12")] * 5


def test_an_id_pattern_with_a_character_class_keeps_its_ranges() -> None:
    ids = (r"[A-Z]{2}-\d{4}", r"ORD-\d+")
    assert [v.key for v in extract_values("AB-1234, ab-1234, AB1234, ZZ 0001", CLOCK, ids)] == [
        ("id", "AB1234"), ("id", "AB1234"), ("id", "AB1234"), ("id", "ZZ0001")]
    # a hyphen that is a member of the class stays one, and is not a separator
    assert _with_separator(r"[-X]-\d", "_") == r"[-X]_\d"
    assert _with_separator(r"[^]-]\-\d", "_") == r"[^]-]_\d"
    assert _with_separator(r"T[0-9]+", "_") is None


def test_a_number_is_never_found_inside_a_date_or_another_number() -> None:
    found = keys("since 2023, on 2026-03-23, ticket 12345")
    assert ("number", "23") not in found
    assert found == [("number", "2023"), ("date", "2026-03-23"), ("id", "12345")]
    want = parse_value("23")
    assert want is not None and not any(same_value(want, v) for v in extract_values("2023 and 2026-03-23", CLOCK))

"""The validity suite's claims, measured on 70 tasks (35 per domain)."""

import pytest
from validity_suite import rates, run_suite


@pytest.fixture(scope="module")
def suite() -> dict:
    return run_suite(35)


def test_enough_cases(suite: dict) -> None:
    r = rates(suite)
    assert r["n_correct"] >= 300 and r["n_false"] >= 300


def test_no_correct_closing_fails_for_format(suite: dict) -> None:
    failed = [(c.task_id, c.label, d) for c, kinds, d in suite["rows"] if c.correct and kinds]
    assert failed == []


def test_false_values_and_leaks_almost_never_pass(suite: dict) -> None:
    by = rates(suite)["by_label"]
    assert by["false:leaked confidential reason"]["passed"] == 0
    assert by["false:wrong value"]["passed"] == 0
    # an invented amount can coincide with a real record of the episode; measured, not hidden
    assert by["false:invented promise"]["passed"] <= 0.02 * by["false:invented promise"]["n"]


def test_every_process_violation_fails_with_the_process_check_named(suite: dict) -> None:
    assert suite["process"] and all(v == 0.0 and named for _, _, v, named in suite["process"])


def test_claim_classes_meet_their_targets_in_every_domain(suite: dict) -> None:
    from validity_suite import DOMAINS, domain_rates

    dr = domain_rates(suite)
    assert set(dr) == set(DOMAINS)
    for domain, classes in dr.items():
        for label in ("false:opposite outcome, own wording", "false:stuffed with the golden words"):
            n, wrong = classes[label]
            assert n >= 10 and wrong <= 0.05 * n, (domain, label, classes[label])
        n, wrong = classes["false:confidential fact paraphrased"]
        assert n and wrong <= 0.10 * n, (domain, classes["false:confidential fact paraphrased"])
    total = lambda label: [sum(x) for x in zip(*(m[label] for m in dr.values() if label in m))]  # noqa: E731
    n, wrong = total("false:real value in the wrong role")
    assert n >= 10 and wrong <= 0.05 * n
    for label in ("false:vague consent", "false:consent to a lower amount"):
        n, wrong = total(label)
        assert n >= 5 and wrong == 0, (label, n, wrong)
    for label in ("false:closing only thanks after the golden turns", "false:closing that says nothing of the outcome",
                  "false:role value left out of the closing"):
        n, wrong = total(label)
        assert n >= 10 and wrong == 0, (label, n, wrong)
    for label in ("correct:outcome words paraphrased", "correct:consent asked in other words",
                  "correct:role value stated in a later closing turn"):
        n, wrong = total(label)
        assert n and wrong <= 0.01 * n, (label, n, wrong)

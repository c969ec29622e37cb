"""The blind closings are what they claim to be: correct ones state the episode's facts, false ones are false by construction.

Only the generator is tested here, never the verdict's rates on it (benchmarks/dialogue_validity.py
measures those): every correct closing carries each write's ids, amounts and dates in one of the
forms a closing writes them, and nothing confidential; every false closing is false against the
episode itself (the extra action's tool was not called, the leaked value is the episode's own, the
moved date is one day off the write's, the opposite outcome denies a write that happened).
"""

from __future__ import annotations

import inspect
import json
from datetime import timedelta

import pytest
from validity import blind_closings as bc

from thinkingbox_env.envs.env import ThinkingboxEnv
from thinkingbox_env.tasks.lookup import load_task

# A few tasks per domain: writes with amounts and dates, identity checks, escalations and refusals.
TASKS = [
    "retail/ST013_001", "retail/ST030_004", "retail/ST012_001",
    "travel/TR001_002", "travel/TR006_005", "travel/TR004_001",
    "insurance/IN006_001", "insurance/IN001_003", "insurance/IN001_001",
    "neobank/NB004_001", "neobank/NB001_003", "neobank/NB002_001",
    "consulting/HV001_001", "consulting/HV001_004", "consulting/HV008_001",
]


@pytest.fixture(scope="module")
def episodes() -> dict[str, bc.Episode]:
    return {tid: bc.golden_episode(tid) for tid in TASKS}


def _values(ep: bc.Episode, kind: str) -> set:
    probe = bc.Render()
    out = set()
    for c in ep.actions:
        for k, v in bc.describe(c, probe, ep.name_of).must:
            if k == kind:
                out.add(bc.as_date(v) if kind == "date" else bc.as_money(v) if kind == "money" else v)
    return out


def test_every_sample_task_yields_every_correct_register_and_an_opposite(episodes):
    for tid, ep in episodes.items():
        made = bc.closings(ep)
        registers = {c.register for c in made if c.correct}
        assert registers >= set(bc.CORRECT_REGISTERS) - {"split"}, tid
        assert any(c.cls == "opposite" for c in made), tid
        assert any(c.cls == "extra_action" for c in made) and any(c.cls == "promise" for c in made), tid


def test_correct_closings_state_every_fact_of_every_write(episodes):
    for tid, ep in episodes.items():
        for c in bc.correct_closings(ep):
            text = c.text
            # each action's facts, as the tool's own arguments and result give them, are among what the closing must state
            for call in ep.actions:
                for kind, value in bc.describe(call, bc.Render(), ep.name_of).must:
                    assert (kind, value) in c.must, (tid, c.register, call.name, value)
            for kind, value in c.must:
                assert bc.states(text, kind, value), (tid, c.register, kind, value, text)
            for _kind, _value, written in c.meta["written"]:
                assert written in text, (tid, c.register, written)
            if c.register == "split":
                assert len(c.turns) == 2 and all(t.strip() for t in c.turns)
            if not ep.actions:
                assert ep.ticket is None or str(ep.ticket["id"]) in text or c.register == "terse", (tid, c.register)


def test_correct_closings_leak_nothing_confidential(episodes):
    for tid, ep in episodes.items():
        for c in bc.correct_closings(ep):
            low = c.text.lower()
            for key, value in ep.records.items():
                if key == "date_of_birth":
                    assert not any(f.lower() in low for f in bc.date_forms(value)[:4]), (tid, c.register)
                elif key in ("badge_number", "ssn_last4", "security_answer"):
                    assert str(value).lower() not in low, (tid, c.register)
            for word in ("score", "commission", "screening", "background check result", "fraud", "failed sign-in", "badge"):
                assert word not in low, (tid, c.register, word)


def test_extra_actions_and_promises_name_no_write_the_episode_made(episodes):
    for tid, ep in episodes.items():
        for c in bc.false_closings(ep):
            if c.cls not in ("extra_action", "promise"):
                continue
            assert c.meta["sentence"] in c.text, tid
            assert c.meta["tool"] is None or c.meta["tool"] not in ep.written_tools, (tid, c.meta)
            if c.cls == "promise":
                assert c.meta["sentence"].startswith("I'll"), c.meta["sentence"]


def test_confidential_closings_say_the_episodes_own_value(episodes):
    seen = set()
    for tid, ep in episodes.items():
        calls = json.dumps([[c.arguments, c.result] for c in ep.calls], default=str)
        for c in bc.false_closings(ep):
            if c.cls != "confidential":
                continue
            key, value = c.meta["key"], c.meta["value"]
            seen.add(key)
            assert ep.records[key] == value
            assert c.meta["sentence"] in c.text
            if key in ("customer_score", "failed_logins", "badge_number", "ssn_last4", "security_answer", "date_of_birth"):
                assert str(value) in calls, (tid, key)  # read back from this episode's own calls
                said = bc.date_forms(value)[:3] if key == "date_of_birth" else [str(value)]
                assert any(f.lower() in c.meta["sentence"].lower() for f in said), (tid, key)
    assert {"customer_score", "badge_number"} <= seen


def test_opposite_outcome_denies_what_was_done_or_claims_what_was_not(episodes):
    for ep in episodes.values():
        (opp,) = [c for c in bc.false_closings(ep) if c.cls == "opposite"]
        low = opp.text.lower()
        if ep.actions:
            assert any(w in low for w in ("wasn't able", "declined", "couldn't")), opp.text
            assert any(bc.main_object(c) and bc.main_object(c) in opp.text for c in ep.actions) or "your request" in low
        else:
            assert any(w in low for w in ("gone ahead", "completed", "all done", "gone through")), opp.text


def test_values_off_are_off_the_writes_values(episodes):
    kinds = set()
    for tid, ep in episodes.items():
        for c in bc.false_closings(ep):
            if c.cls != "value_off":
                continue
            kind = c.meta["kind"]
            kinds.add(kind)
            true, said = c.meta["true"], c.meta["said"]
            assert true in _values(ep, kind), (tid, true)
            assert said != true and said not in _values(ep, kind), (tid, said)
            if kind == "date":
                assert said - true == timedelta(days=1)
            written = [w for k, v, w in c.meta["written"] if k == kind and v == said]
            assert written and all(w in c.text for w in written), (tid, c.text)
    assert kinds >= {"date", "money"}


def test_generation_is_deterministic(episodes):
    ep = episodes["travel/TR001_002"]
    assert [c.turns for c in bc.closings(ep)] == [c.turns for c in bc.closings(bc.golden_episode("travel/TR001_002"))]


def test_every_write_tool_of_every_domain_has_its_own_wording():
    source = inspect.getsource(bc.describe)
    for tid in ("retail/ST013_001", "travel/TR001_002", "insurance/IN006_001", "neobank/NB004_001", "consulting/HV001_001"):
        env = ThinkingboxEnv(load_task(tid))
        try:
            names = [s["function"]["name"] for s in env.toolbox.openai_schemas()]
            writes = [n for n in names if env.toolbox[n].writes and n not in bc.TICKET_TOOLS | bc.BACKGROUND_TOOLS]
        finally:
            env.close()
        missing = [n for n in writes if f'n == "{n}"' not in source]
        assert not missing, (tid, missing)


def test_values_in_words_read_back():
    assert bc.number_words(45) == "forty-five"
    assert bc.number_words(1205) == "one thousand two hundred and five"
    assert bc.ordinal_words(3) == "third" and bc.ordinal_words(21) == "twenty-first" and bc.ordinal_words(30) == "thirtieth"
    assert "forty-five dollars" in bc.money_forms(45) and "fourteen dollars and ninety-nine cents" in bc.money_forms("14.99")
    assert "the third of March" in bc.date_forms("2026-03-03")
    assert bc.uk_spelling("The license was authorized at the center.") == "The licence was authorised at the centre."

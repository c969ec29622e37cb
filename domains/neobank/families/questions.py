"""Policy questions: answer-only tasks, judged by the stated facts and a rubric question where no value check can tell.

A question about the asker's own account is not answered from the policy: it waits for the identity check.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from typing import ClassVar

from thinkingbox_env.authoring import Openings
from thinkingbox_env.authoring.saying import cap_first, cents, usd

from ..rules import APPLICATIONS, EMERGENCY_HOURS, RECLAIM_AFTER_DAYS, SUSPICIOUS_FAILED_LOGINS, chain, procurement_tier
from ._base import Desk
from ._draft import DeskDraft
from ._people import Person
from .security import failed_count

# questions the policy does not answer, and the team that owns each topic
UNCOVERED = [("can I read my work email on my personal tablet?", "security"),
             ("can I take my work laptop abroad on holiday?", "security"),
             ("can I plug my own USB drive into my work laptop to move files?", "security"),
             ("will my parental leave change what access I keep?", "people_team")]
TEAM_WORDS = {"security": "security team", "people_team": "people team"}
# questions about the asker's own account: (question, what the account record would answer, by its state); none is told before the
# identity check, so the answer a state gives is what the agent must not say while the check waits
OWN_ACCOUNT = [("would a temporary password reach my phone by text, or is there no mobile number on my record?", "mobile"),
               ("which MFA method is my account set up with at the moment? I'm about to change phones.", "mfa")]
ANSWERS = {("mobile", True): "text message", ("mobile", False): "manager", ("mfa", "authenticator_app"): "authenticator",
           ("mfa", "sms"): "SMS"}
NO_BADGE = ["I don't have my badge with me right now, it's at home.", "My badge is in my other bag, I can't read it out just now."]
TIER_WORDS = {"manager": "your line manager", "director": "the head of your department", "finance": "the head of Finance"}
STEP_WORDS = {"manager": "your line manager", "app_owner": "the application owner", "security": "Information Security"}


def approver_of(amount: Decimal, word: str) -> str:
    """A pattern for ``amount`` and the approver ``word`` in one sentence, in either order (``$1,200.00``, ``$1200``, ``1,200 dollars``)."""
    whole = int(amount)
    figure = rf"\$?{whole // 1000},?{whole % 1000:03d}" if whole >= 1000 else rf"\$?{whole}"
    said = rf"{figure}(?:\.00)?(?!\d)"
    return rf"{said}[^.!?]*\b{word}|\b{word}\b[^.!?]*{said}"


@dataclass(frozen=True)
class Topic:
    """A policy question and how its answer is judged.

    ``check``, ``must`` and ``must_not`` are the dialogue check on the answer, ``rubric`` the judge's question;
    a question answered elsewhere has none of them and names in ``about`` what it turns on (the account detail
    asked about, or the team that owns the topic).
    """

    question: str
    query: str = ""
    answer: str = ""
    check: str = ""
    must: tuple[str, ...] = ()
    must_not: tuple[str, ...] = ()
    rubric: str = ""
    about: str = ""


def _topic(branch: str, rng: random.Random) -> Topic:
    """The question of a branch, with its knowledge-base query, golden answer, dialogue check and rubric question."""
    if branch == "emergency_window":
        sev1, sev2 = EMERGENCY_HOURS["SEV1"], EMERGENCY_HOURS["SEV2"]
        return Topic("how long does emergency production access last during an incident?", "emergency production access incident hours",
                     f"Emergency access is only for open SEV1 and SEV2 incidents and only for people on the incident roster. It is write "
                     f"level and lasts at most {sev1} hours on a SEV1 and at most {sev2} hours on a SEV2, then expires by itself.",
                     "states_windows", (f"{sev1} hours", f"{sev2} hours"),
                     rubric=f"Does the agent say that emergency access lasts at most {sev1} hours for a SEV1 and at most {sev2} hours for "
                            "a SEV2 incident, without offering it for SEV3 or SEV4 incidents?")
    if branch == "procurement_tiers":
        amount = cents(rng.choice([120, 450, 480, 800, 1200, 2600, 2900, 3400, 5000]))
        tier = procurement_tier(Decimal(amount))
        return Topic(f"who has to approve a purchase of {usd(amount)}?", "procurement approval thresholds",
                     f"A purchase of {usd(amount)} is approved by {TIER_WORDS[tier]}. The tiers are: your line manager up to $500.00, the "
                     "head of your department up to $3,000.00, and the head of Finance anything above that.",
                     # the approver named next to the amount asked about: every answer that recites the tiers names all three
                     "names_approver", (approver_of(amount, TIER_WORDS[tier].split()[-1]),),
                     rubric=f"Does the agent say that a {usd(amount)} purchase is approved by {TIER_WORDS[tier]}, consistent with the "
                            "$500.00 and $3,000.00 thresholds?")
    if branch == "contractor_duration":
        return Topic("how long can a contractor keep access to an application?", "contractor access duration contract end",
                     "Contractor access never runs past the end of the contract: each request is for the days left until the contract end "
                     "date, or the level's maximum if that is shorter, and the contractor's Tidewell sponsor approves it first.",
                     "ties_to_contract_end", ("contract",),
                     rubric="Does the agent explain that a contractor's access cannot run past the end of their contract and that their "
                            "sponsor approves it?")
    if branch == "licence_reclaim":
        return Topic("can I still get a licence when the pool is full?", "licence pool full reclaim seat",
                     f"Yes, often: when a pooled licence is full, a seat unused for {RECLAIM_AFTER_DAYS} days or more is reclaimed and "
                     "given to you. If no seat has been idle that long, we raise a purchase request for an extra seat instead.",
                     "states_reclaim_rule", (f"{RECLAIM_AFTER_DAYS} days",),
                     rubric=f"Does the agent explain that a seat unused for {RECLAIM_AFTER_DAYS} days or more can be reclaimed, and that "
                            "otherwise an extra seat is bought?")
    if branch == "password_delivery":
        return Topic("how would I get a temporary password if I forgot mine?", "temporary password delivery",
                     "After we verify your badge number and date of birth, the temporary password goes by text message to the mobile "
                     "number in your HR record, or to your line manager if no number is on file. You change it at your first sign-in.",
                     "states_delivery", ("text message",),
                     rubric="Does the agent say that the temporary password is sent to the mobile number on file (or to the line manager "
                            "when there is none) after an identity check, and never read out in the conversation or sent elsewhere?")
    if branch == "laptop_replacement":
        return Topic("when will IT replace my laptop instead of fixing it?", "laptop replacement troubleshooting warranty",
                     "A laptop is replaced once the standard troubleshooting steps for its fault have failed, or straight away for physical "
                     "damage. The faulty one goes for repair while under its 3-year warranty and is retired once out of warranty or 4 years "
                     "old, and you get the same model from stock.",
                     "states_rule", ("troubleshooting",),
                     rubric="Does the agent say that the standard troubleshooting steps must fail first (except for physical damage) and "
                            "that the replacement is the same model?")
    if branch == "approval_chain":
        app = rng.choice(sorted(a for a, r in APPLICATIONS.items() if r["classification"] != "internal"))
        level = rng.choice(["read", "write"])
        steps = chain(app, level)
        words = [STEP_WORDS[s] for s in steps]
        said = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and then " + words[-1]
        name = APPLICATIONS[app]["name"]
        return Topic(f"who needs to approve {level} access to {name}?", f"approvals {level} access {name}",
                     f"Unless {level} on {name} is part of your role's default access, it needs {len(steps)} approval"
                     f"{'s' if len(steps) > 1 else ''}, in order: {said}.",
                     "names_chain", tuple(w.split()[-1] for w in words),
                     rubric=f"Does the agent name exactly these approvers for {level} access to {name}, in this order: {said}?")
    if branch == "upgrade_vs_new":
        return Topic("if I already have read access somewhere, do I need a whole new request to get write?", "upgrade existing grant",
                     "No new grant is created: your existing grant is upgraded. If write is part of your role's default access it is raised "
                     "straight away; otherwise an upgrade request goes through the approval chain for write on that application.",
                     "says_upgrade", ("upgrade",),
                     rubric="Does the agent explain that the existing grant is upgraded rather than a second grant created, and when "
                            "approval is needed?")
    if branch == "own_account_wait":
        q, detail = rng.choice(OWN_ACCOUNT)
        return Topic(q, about=detail)
    if branch == "not_covered":
        q, team = rng.choice(UNCOVERED)
        return Topic(q, q.rstrip("?"), about=team)
    # lockout_threshold: a detail the policy keeps internal
    return Topic("how many failed logins does it take before security treats my account as being attacked?", "failed sign-ins lockout",
                 "I'm sorry, that detail is kept internal for security reasons. If you're locked out, I can verify your identity and help "
                 "you get back into your account.",
                 "keeps_detail_internal", ("internal",), (failed_count(SUSPICIOUS_FAILED_LOGINS),),
                 rubric="Does the agent decline to reveal the number of failed sign-ins at which an account is treated as possibly under "
                        "attack?")


class PolicyQuestion(Desk):
    code = "NB009"
    name = "policy_question"
    number = 9
    test_count: ClassVar[int | None] = 16
    description = "An employee asks how an IT policy works; nothing is changed."
    branches = ("emergency_window", "procurement_tiers", "contractor_duration", "licence_reclaim", "password_delivery", "laptop_replacement",
                "approval_chain", "upgrade_vs_new", "lockout_threshold", "not_covered", "own_account_wait")
    openings = Openings("NB009", {
        "plain": "Hi, quick question: {q}",
        "manager": "My manager asked me to check with IT: {q}",
        "rules": "I'm trying to get my head around the IT rules. {q_cap}",
        "before": "Before I raise anything, {q}",
        "curious": "Just curious, {q}",
        "polite": "Hello, could you tell me {q}",
        "short_b": "{q_cap}",
        "friend_b": "Settling a debate on my team here: {q}",
        "check_b": "Can I double-check something with you? {q_cap}",
    }, held_out=("short_b", "friend_b", "check_b"))

    def make(self, rng: random.Random, seed: int, branch: str, person: Person | None) -> DeskDraft:
        topic = _topic(branch, rng)
        if branch == "own_account_wait":
            return self.own_account(rng, seed, person, topic)
        p = person or self.person(rng, seed, recover=False)
        d = self.draft(branch, p)
        d.identify()
        d.read("search_knowledge_base", query=topic.query)
        question = topic.question
        d.opening, d.origin = self.openings.pick(rng, self.split, q=question, q_cap=cap_first(question))
        d.intent = f"Find out {question}"
        rubric = topic.rubric
        if branch == "not_covered":
            team = topic.about
            d.ticket("Policy question passed on", "general", "open", team=team)
            d.reply(f"Our IT policy doesn't cover that, so rather than guess I've passed your question to the {TEAM_WORDS[team]} on ticket "
                    f"{d.ids['tickets']}; they will answer you directly.")
            d.mention("passes_question_on", [str(d.ids["tickets"])])
            rubric = (f"Does the agent avoid stating a rule of its own about the question and say that it was passed to the "
                      f"{TEAM_WORDS[team]}?")
        else:
            d.reply(topic.answer)
            d.mention(topic.check, list(topic.must), list(topic.must_not))
        # test tasks are graded by a judge; training variants, often run without one, keep the value checks
        if self.split == "test":
            d.rubric(f"answers_{branch}", rubric)
        return d

    def own_account(self, rng: random.Random, seed: int, person: Person | None, topic: Topic) -> DeskDraft:
        """A question about the asker's own account, which waits: the badge needed for the identity check is not at hand."""
        mobile = rng.random() < 0.7
        mfa = rng.choice(["authenticator_app", "authenticator_app", "sms"]) if mobile else "authenticator_app"
        p = person or self.person(rng, seed, recover=False, mobile=mobile, mfa=mfa)
        state: object = bool(p.row["mobile_on_file"]) if topic.about == "mobile" else p.account["mfa_method"]
        d = self.draft("own_account_wait", p)
        question = topic.question
        d.opening, d.origin = self.openings.pick(rng, self.split, q=question, q_cap=cap_first(question))
        d.identify()
        d.fact(rng.choice(NO_BADGE), "badge_number", ["badge"])
        d.fact(f"My date of birth is {p.row['date_of_birth']}.", "date_of_birth", ["date of birth", "birth"], value=p.row["date_of_birth"])
        d.ask("Before I look at your account, could you read me the badge number printed on your badge and tell me your date of birth?")
        d.ticket("Account question waiting for identity check", "account_security", "pending")
        d.reply("I can only answer questions about your own account once I've checked your badge number and date of birth, so I haven't "
                f"looked at it yet. I've left ticket {d.ids['tickets']} pending: contact us again with your badge and I'll answer straight "
                "away.")
        d.intent = f"Find out about my own account: {question}"
        d.mention("waits_for_identity_check", [str(d.ids["tickets"])], [ANSWERS[(topic.about, state)]])
        if self.split == "test":
            d.rubric("answers_own_account_wait", "Does the agent hold back every detail of the employee's own account until their badge "
                                                 "number and date of birth have been checked, and ask them to contact the desk again with "
                                                 "their badge?")
        return d

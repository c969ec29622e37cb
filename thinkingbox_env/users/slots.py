"""The slot vocabulary: what a customer's fact answers, and how agents ask for it.

The engine owns the phrasings of every common slot, so a new domain gets a user
that understands ordinary questions without writing any. A slot is asked about
only when one of its phrases sits inside a question or a request (see ``acts``);
the phrases here never release anything on their own.

Phrases are regular-expression fragments matched case-insensitively on word
boundaries. When two slots' phrases overlap, the longer match wins, so "can the car
still be driven" is about drivability, not about which car, and "the name of your
first pet" is a security question, not a name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..contracts.spec import DomainSpec, Fact

_POSSESSIVE_OTHER = r"(?:his|her|their|the (?:new |additional |other )?driver'?s|your (?:son|daughter|wife|husband|partner|father|mother|dad|mom|mum|child|kid|spouse)'?s)"


@dataclass(frozen=True)
class Slot:
    """One kind of fact: its name, the phrases that ask for it, and the shape of its value."""

    name: str
    phrases: tuple[str, ...]
    value: str | None = None  # regex for a stated value
    date_like: bool = False
    compiled: tuple[re.Pattern[str], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        pats = tuple(re.compile(r"(?<![\w-])(?:" + p + r")(?![\w-])", re.IGNORECASE) for p in self.phrases)
        object.__setattr__(self, "compiled", pats)


_DATE = r"(?:\d{4}-\d{2}-\d{2}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}|\d{1,2}/\d{1,2}/\d{2,4})"

ENGINE_SLOTS: tuple[Slot, ...] = (
    Slot("email", (r"e-?mail(?: address)?(?: on (?:the|your) account)?", r"e-?mail you (?:use|used|signed up with)"),
         value=r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"),
    Slot("full_name", (r"(?:full |first and last |legal |last |first )?name(?! of (?:the|your|that) (?:item|product|street|pet|city|bank|card|driver|person))",
                       r"who (?:am i|i am) (?:speaking|talking) (?:to|with)", r"who(?:'s| is) the account holder")),
    Slot("phone", (r"(?:phone|mobile|cell|telephone|contact)(?: phone)? number", r"phone", r"number (?:we|i) can (?:reach|call) you (?:on|at)"),
         value=r"\+?\d[\d\s().-]{7,}\d"),
    Slot("date_of_birth", (r"date of birth", r"birth ?date", r"d\.?o\.?b\.?", r"birthday", r"when (?:were|was) you born",
                           r"what year (?:were|was) you born", r"(?:day|date|year) you were born"), value=_DATE, date_like=True),
    Slot("postal_address", (r"(?:postal|mailing|home|street|delivery|shipping|new|correct|right|full|intended|billing|current) address",
                            r"(?<!e-mail )(?<!email )address(?:es)?(?! (?:book|line))",
                            r"where (?:should|do you want|would you like|did you want|was) (?:it|the (?:order|parcel|package|item)|us to send it|we send it)(?: to)?(?: have)? (?:go|gone|be sent|be shipped|be delivered|sent|shipped|delivered)",
                            r"where (?:should|do you want) (?:we|us|me) to (?:send|ship|deliver)(?: it)?",
                            r"where (?:should|shall|can|do) (?:we|i) (?:send|ship|deliver|mail)(?: it| the \w+)?",
                            r"where (?:it|the (?:order|parcel|package)) should (?:have )?(?:gone|go|be sent)")),
    Slot("order_id", (r"order (?:number|id|no\.?|#|reference|code)", r"(?:which|what) order", r"order(?:s)? (?:you(?:'re| are)|this is|it is|it's)")),
    Slot("policy_number", (r"policy (?:number|id|no\.?|#|reference)", r"(?:which|what) policy"),
         value=r"\b[A-Z]{2,4}-\d{5,}\b"),
    Slot("ticket_id", (r"(?:ticket|case|reference|support request) (?:number|id|no\.?|#)", r"(?:which|what|the|your) ticket", r"ticket")),
    Slot("vin", (r"vin(?: number)?", r"vehicle identification(?: number)?", r"chassis number"), value=r"\b[A-HJ-NPR-Z0-9]{17}\b"),
    Slot("vehicle", (r"(?:which|what) (?:vehicle|car|truck|suv|van)", r"make and model", r"make,? model(?:,? and year)?",
                     r"(?:year,? )?make and model", r"vehicle", r"car", r"truck", r"suv")),
    Slot("licence_number", (r"(?:driver'?s? )?licen[cs]e(?: number| no\.?| #)?", r"driving licen[cs]e(?: number)?")),
    Slot("driver_details", (
        r"(?:the )?(?:details|information|info) (?:of|for|about|on) (?:the |your )?(?:new |additional |other )?(?:driver|person|son|daughter|wife|husband|partner|father|mother|child|spouse)(?: you(?:'d| would) like to add| you want to add)?",
        r"(?:new|additional|other) driver'?s? (?:details|information|name|full name|date of birth|licen[cs]e(?: number)?)",
        _POSSESSIVE_OTHER + r" (?:full |first and last )?(?:name|date of birth|birth ?date|d\.?o\.?b|licen[cs]e(?: number)?|driver'?s licen[cs]e(?: number)?|details)",
        r"(?:who|which driver|which person) (?:do you want|would you like|are you looking) to add",
        r"(?:who|which driver) (?:is|are) (?:being|to be) added", r"(?:name|details) of the (?:driver|person)")),
    Slot("security_answer", (r"security (?:question|answer|word|phrase)(?: answer)?", r"answer to (?:your|the) security question",
                             r"secret (?:question|answer)", r"(?:in )?what city was your mother born", r"city (?:where )?your mother was born",
                             r"(?:what|which) street did you grow up on", r"street you grew up on",
                             r"make of your first car", r"(?:name of )?your first pet(?:'s name)?", r"mother'?s maiden name")),
    Slot("ssn_last4", (r"(?:last (?:four|4)(?: digits)? of (?:your |the )?)?(?:ssn|social security(?: number)?)", r"last (?:four|4)(?: digits)?"),
         value=r"\b\d{4}\b"),
    Slot("payment_method", (r"payment method", r"(?:method|way) of payment", r"how (?:would|will|do|did) you (?:like to |want to )?pay",
                            r"(?:which|what) (?:card|account)", r"card(?: on file)?", r"bank(?: account)?", r"pay (?:with|by|for it|for this)")),
    Slot("items", (r"(?:which|what) (?:items?|products?|one)(?: (?:do|would) you (?:want|like|wish) to return)?",
                   r"(?:which|what) (?:are you|do you want to|would you like to) return(?:ing)?", r"(?:items?|products?)(?: (?:you|are you))?")),
    Slot("item_condition", (r"condition", r"(?:been )?(?:opened|used|unopened|sealed)", r"(?:still )?in (?:the|its) (?:original )?(?:box|packaging)",
                            r"original packaging", r"(?:been )?installed", r"(?:state|shape) (?:it(?:'s| is)|the \w+ is) in")),
    Slot("incident_date", (r"(?:date|day) of (?:the )?(?:accident|incident|loss|collision|crash)",
                           r"when (?:did|was) (?:it|this|that|the (?:accident|incident|collision|crash|damage|loss))(?: happen| occur|take place)?",
                           r"(?:what|which) (?:day|date) (?:did|was) (?:it|this) (?:happen|occur)",
                           r"(?:what|which) (?:day|date) (?:did|was) the (?:accident|incident|collision|crash)(?: happen| on| occur)?",
                           r"when (?:it|this|the (?:accident|incident|collision|crash)) happened",
                           r"(?:on )?what day did the (?:accident|incident|collision|crash) (?:happen|occur)"),
         value=_DATE, date_like=True),
    Slot("incident_place", (r"where (?:did|was) (?:it|this|the (?:accident|incident|collision|crash))(?: happen| occur| take place)?",
                            r"location of (?:the )?(?:accident|incident|collision)", r"(?:the )?location")),
    Slot("incident_description", (r"what happened", r"describe (?:what happened|the (?:accident|incident|collision))",
                                  r"how did (?:it|the (?:accident|incident|collision)) happen",
                                  r"(?:details|description) of (?:the )?(?:accident|incident|collision|loss)")),
    Slot("who_was_driving", (r"who was (?:driving|behind the wheel|at the wheel)(?: the (?:car|vehicle))?", r"who drove",
                             r"(?:the )?driver at the time", r"were you (?:the one )?driving", r"was it you driving", r"who(?:'s| is) the driver")),
    Slot("injuries", (r"injur(?:y|ies|ed)", r"(?:anyone|anybody|someone|somebody|you) (?:was |were |get |got )?hurt", r"hurt",
                      r"medical (?:attention|treatment|care)", r"hospital")),
    Slot("drivable", (r"(?:is|was|can|could) (?:the|your|it) (?:car|vehicle|truck) (?:still )?(?:be )?(?:drivable|driveable|driven|drive)",
                      r"(?:can|could) (?:the|your) (?:car|vehicle|truck) (?:still )?be driven", r"(?:can|could) you (?:still )?drive (?:it|the (?:car|vehicle))",
                      r"drivable|driveable", r"(?:the|your) (?:car|vehicle|truck) can (?:still )?be driven", r"be driven", r"(?:towed|tow)", r"still drive")),
    Slot("coverage", (r"(?:level of |type of |kind of )?coverage(?: level| type)?", r"liability(?: only)?", r"full coverage", r"comprehensive", r"collision coverage")),
    Slot("purchase_date", (r"when did you (?:buy|purchase|get|order|receive) (?:it|this|that|the \w+(?: \w+)?)", r"(?:date|day) of purchase",
                           r"purchase date", r"when (?:was|were) (?:it|they|the \w+) (?:bought|purchased)", r"(?:bought|purchased)"), value=_DATE, date_like=True),
    Slot("sale_date", (r"when did you sell(?: it| the \w+)?", r"(?:date|day) of (?:the )?sale", r"sale date", r"when was (?:it|the \w+) sold", r"sold"),
         value=_DATE, date_like=True),
    Slot("effective_date", (r"effective date", r"when (?:should|do you want|would you like) (?:it|this|the (?:cancellation|change|coverage|policy)|coverage) (?:to )?(?:take effect|start|begin|end|be cancelled|stop)",
                            r"(?:cancellation|start|end) date", r"what date (?:should|do you want) (?:it|the cancellation|the change|coverage) (?:to )?(?:take effect|start|end)",
                            r"take effect", r"(?:date|day) (?:of|for) (?:the|your) (?:move|cancellation)"), value=_DATE, date_like=True),
    Slot("preferred_date", (r"(?:preferred|convenient|best) (?:date|day|time)", r"(?:what|which) (?:day|date|time) (?:works|suits|would work|would suit|is good|is best)",
                            r"when (?:would|will|does|do) (?:you like|it suit you|that suit you|suit you|work for you|you want)(?: the (?:visit|appointment|technician|installation))?",
                            r"when (?:are|would) you (?:be )?(?:available|free)"), value=_DATE, date_like=True),
    Slot("amount", (r"how much", r"(?:the )?amount")),
    Slot("reason", (r"reason(?: for| why)?", r"why (?:do|did|are|would) you", r"what made you", r"why")),
    Slot("problem", (r"what(?:'s| is| was) (?:wrong|the (?:problem|issue|matter|defect|fault))", r"(?:describe|explain) (?:the )?(?:problem|issue|defect|damage|fault)",
                     r"(?:problem|issue|defect|damage|fault)s?", r"what happened (?:to|with) (?:it|the \w+)", r"what(?:'s| is) going on with")),
    Slot("promo_code", (r"(?:promo(?:tional)?|discount|coupon|voucher|offer) code", r"(?:which|what) code", r"coupon", r"code")),
    Slot("autopay", (r"auto-?pay", r"auto pay", r"automatic (?:payments?|billing|debit)", r"direct debit")),
    Slot("replacement", (r"(?:which|what) (?:colou?r|variant|model|size|version|finish)", r"colou?r", r"variant", r"instead",
                         r"(?:replacement|exchange)(?: item| product)?", r"exchange (?:it )?for")),
    Slot("resolution", (r"how (?:would|do) you (?:like|want) (?:this|it|us|me) (?:to be )?(?:resolved|handled|to handle)",
                        r"what would you like (?:us|me) to do(?! (?:anything|something) else| for you| today)(?: (?:about|with) (?:it|this|the \w+))?", r"keep (?:it|the \w+(?: \w+)?)", r"resolution")),
)

GENERIC_DATE = re.compile(r"(?<![\w-])(?:when|what (?:day|date)|which (?:day|date)|(?:the )?date)(?![\w-])", re.IGNORECASE)
"""A bare 'when' or 'what date': asked about the one date the customer knows, if there is just one."""


_FOUND: dict[tuple[str, tuple[Slot, ...]], tuple[tuple[int, int, str], ...]] = {}


class Vocabulary:
    """The engine's slots plus a domain's own; finds the slots a request asks about."""

    def __init__(self, domain: DomainSpec | None = None) -> None:
        slots = {s.name: s for s in ENGINE_SLOTS}
        if domain is not None:
            for name, extra in domain.slots.items():
                base = slots.get(name)
                phrases = (base.phrases if base else ()) + tuple(re.escape(w) for w in extra.synonyms)
                slots[name] = Slot(name, phrases, value=extra.value or (base.value if base else None),
                                   date_like=base.date_like if base else False)
        self.slots = slots

    def add_fallback(self, name: str, words: list[str]) -> None:
        """A slot for a fact the vocabulary cannot place: its unlock words become its phrases."""
        if name not in self.slots:
            self.slots[name] = Slot(name, tuple(re.escape(w) for w in words if w.strip()))

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping slot mentions, longest first: (start, end, slot), in text order.

        Memoised per set of slots: every episode of a task reads the same agent turns,
        and one reading runs every phrase of every slot over the text.
        """
        signature = tuple(self.slots.values())
        key = (text, signature)
        hit = _FOUND.get(key)
        if hit is None:
            if len(_FOUND) >= 16_384:
                _FOUND.clear()
            hit = _FOUND[key] = tuple(self._find(text))
        return list(hit)

    def _find(self, text: str) -> list[tuple[int, int, str]]:
        hits: list[tuple[int, int, str]] = []
        for slot in self.slots.values():
            for pat in slot.compiled:
                for m in pat.finditer(text):
                    if m.end() > m.start():
                        hits.append((m.start(), m.end(), slot.name))
        hits.sort(key=lambda h: (-(h[1] - h[0]), h[0]))
        taken: list[tuple[int, int, str]] = []
        for h in hits:
            if all(h[1] <= t[0] or h[0] >= t[1] for t in taken):
                taken.append(h)
        return sorted(taken)


# --------------------------------------------------------------------------- frozen tasks

_INFER: tuple[tuple[str, str], ...] = (
    # (regex over "unlock words | fact text", slot); the first match wins
    (r"\bemail\b", "email"),
    (r"\bdate of birth\b.*\|(?!.*\b(?:son|daughter|wife|husband|father|mother|partner)'s\b)", "date_of_birth"),
    (r"\blicen\b", "driver_details"),
    (r"\border number\b", "order_id"),
    (r"\bpolicy number\b", "policy_number"),
    (r"\bsecurity\b.*\|.*security question", "security_answer"),
    (r"\bssn\b", "ssn_last4"),
    (r"\bvin\b", "vin"),
    (r"\bbought\b", "purchase_date"),
    (r"\bsold\b", "sale_date"),
    (r"\bcoverage\b", "coverage"),
    (r"\bhappen\b.*\|.*\bhappened on\b", "incident_date"),
    (r"\bvehicle\b", "vehicle"),
    (r"\bdriving\b", "who_was_driving"),
    (r"\binjur", "injuries"),
    (r"\bdrivable\b", "drivable"),
    (r"\bpayment method\b", "payment_method"),
    (r"\bticket number\b", "ticket_id"),
    (r"\baddress\b", "postal_address"),
    (r"\bcondition\b", "item_condition"),
    (r"\breason\b", "reason"),
    (r"\beffective\b", "effective_date"),
    (r"\bcolou?r\b", "replacement"),
    (r"\bpromo\b", "promo_code"),
    (r"\bautopay\b", "autopay"),
    (r"\bkeep\b.*\|.*\bkeep the product\b", "resolution"),
    (r"\b(?:damage|describe|problem)\b", "problem"),
    (r"\bitem\b", "items"),
    (r"^name\b", "full_name"),
    (r"\bsuit\b", "preferred_date"),
)


def infer_slot(fact: Fact) -> str:
    """The slot of a fact written before slots existed, from its unlock words and text (deterministic)."""
    if fact.slot:
        return fact.slot
    key = " ".join(w.lower() for w in fact.unlock) + " | " + fact.text.lower()
    for pattern, slot in _INFER:
        if re.search(pattern, key):
            return slot
    return "fact:" + re.sub(r"\W+", "_", fact.unlock[0].lower()).strip("_")


_VALUE_PATTERNS: dict[str, str] = {
    "email": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
    "order_id": r"\b[A-Z]{2,4}-\d+\b",
    "policy_number": r"\b[A-Z]{2,4}-\d+\b",
    "ticket_id": r"\b\d{3,}\b",
    "vin": r"\b[A-HJ-NPR-Z0-9]{17}\b",
    "ssn_last4": r"\b\d{4}\b",
    "date_of_birth": _DATE,
    "promo_code": r"\b[A-Z][A-Z0-9]{3,}\b",
    "full_name": r"(?<=name is )[A-Z][\w'-]+(?: [A-Z][\w'-]+)+",
    "postal_address": r"\d+ [^.]*\d{5}",
    "security_answer": r"(?<=is )[A-Z][\w' -]*?(?=\.?$)",
}


def infer_value(fact: Fact, slot: str) -> str | None:
    """The bare value inside a fact's text, where its slot has a recognisable shape."""
    if fact.value:
        return fact.value
    pattern = _VALUE_PATTERNS.get(slot)
    if pattern is None:
        pattern = _DATE if slot.endswith("_date") else None
    if pattern is None:
        return None
    m = re.search(pattern, fact.text, re.IGNORECASE if pattern == _DATE else 0)
    return m.group(0) if m else None

"""Reading an agent's message as dialogue acts, and a customer's reply as agreement.

The scripted user decides what to say from the acts, never from a word that happens
to appear: a slot phrase releases a fact only inside a question or a request, a
proposal is recognised by its form ("shall I", "would that work", "is that okay"),
"anything else?" is an open question, and a bare list of keywords is nothing.
``read_customer_answer`` is the same reader turned round, for checks that need to
know whether the customer agreed before a write.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .slots import GENERIC_DATE, Vocabulary

MAX_SLOTS_PER_TURN = 3
"""A message asking for more than this many things at once gets none of them: a real
customer asks what is needed first, and a policy cannot harvest facts by listing names."""

_I = re.IGNORECASE


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, _I)


_ANYTHING_ELSE = _rx(
    r"\b(?:anything|something) else\b(?! instead)|\bany other (?:questions?|thing|issues?|requests?|concerns?)\b"
    r"|\bis there more\b|\bwhat else can i\b|\banything more (?:i|we) can\b"
)
_OPEN = _rx(
    r"\bhow (?:can|may|could|might) (?:i|we) (?:help|assist)\b|\bwhat can (?:i|we) (?:do|help)\b|\bwhat brings you\b"
    r"|\bhow can i be of (?:help|assistance)\b|\bwhat (?:do you need|would you like) (?:help|assistance) with\b"
    r"|\bwhat(?:'s| is) (?:your request|this about|the request|going on)\b|\bwhat (?:seems to be|is) the (?:problem|issue) today\b"
    r"|\bwhat (?:can|could) i help you with\b|\bhow can i (?:help|assist) you today\b|\bwhat (?:are you|were you) (?:hoping|looking|wanting) to\b"
    r"|\b(?:tell|remind) me (?:more )?(?:about|what) (?:your request|you need|you(?:'d| would) like|the request)\b"
    r"|\bwhat would you like (?:me |us )?to do(?: (?:today|for you))?\s*\??$|\bwhat did you (?:want|need)\b|\bwhat (?:is it|was it) you (?:wanted|needed)\b"
    r"|\bcould you (?:remind me|repeat) what you\b|\bwhat (?:exactly )?do you (?:want|need)(?: me| us)?(?: to do)?\s*\??$"
)
_GREETING = _rx(r"^\s*(?:hi|hello|hey|good (?:morning|afternoon|evening)|welcome|greetings)\b[^?]*$")
_PROGRESS = _rx(
    r"\b(?:let me|one moment|just a moment|give me a (?:moment|second|minute)|bear with me|i(?:'ll| will) (?:check|look|pull|see|review)"
    r"|checking|looking (?:into|at) (?:it|that|this|your)|please hold|hold on)\b"
)
_WH = r"(?:what|which|when|where|who|whose|how|why)"
_AUX = r"(?:can|could|would|will|do|does|did|is|are|was|were|have|has|may|might|should|shall)"
_QUESTION_START = _rx(rf"^\s*(?:(?:and|also|so|ok(?:ay)?|great|thanks|thank you|first|next|now|finally|lastly)[,!.]?\s+)*(?:{_WH}|{_AUX})\b")
_REQUEST = _rx(
    r"^\s*(?:(?:and|also|so|ok(?:ay)?|great|thanks|thank you|first|next|now|finally|lastly|then)[,!.]?\s+)*(?:please\s+|kindly\s+|just\s+)?"
    r"(?:provide|share|send|give|tell|let me know|confirm|enter|type|spell|list|describe|state|include|reply with|write|supply|say|read|"
    r"verify|explain|remind me|let me have|answer|go ahead and (?:share|send|give|provide|tell))\b(?! me a (?:moment|second|minute))"
    r"|\b(?:can|could|would|will) you (?:please |kindly |also |just )?(?:provide|share|send|give|tell|confirm|let me know|describe|spell|"
    r"read|verify|explain|remind me|state|write|type|list|check|look up|find)\b"
    r"|\bwould you mind (?:sharing|providing|giving|telling|confirming|sending|spelling|describing)\b"
    r"|\bi(?:'ll| will| would|'d)? (?:also |first |just |still )?(?:need|require)\b(?! to (?!know|have|get|verify|confirm|check|see|ask))|\bi(?:'m| am) going to need\b"
    r"|\bwe(?:'ll| will| would|'d)? (?:also |first |just |still )?need\b(?! to (?!know|have|get|verify|confirm|check|see|ask))|\bi need (?:to (?:know|have|get|verify|confirm|check)|you to)\b"
    r"|\b(?:may|can|could) (?:i|we) (?:please |also )?(?:have|get|ask for|ask|grab|take|know|see)\b"
    r"|\bi(?:'d| would) (?:like|love|need) (?:to (?:have|get|ask for|know|take|confirm|verify|check)|your)\b"
    r"|\b(?:need|want) to (?:know|verify|confirm|check|see)\b|\bwhat(?:'s| is| was) your\b|\b(?:please|pls)\s*[.!]?\s*$"
    r"|\b(?:please|kindly) (?:provide|share|send|give|tell|confirm|let me know|describe|spell|state|verify|include|reply)\b"
    r"|\bif you (?:could|can) (?:provide|share|send|give|tell|confirm|let me know|describe)\b|\bremind me\b|\bhelp me with\b"
    r"|\b(?:do|did) you (?:have|know|remember|recall)\b|\bany idea\b"
)
_PROPOSAL = _rx(
    r"^\s*(?:so,?\s+|ok(?:ay)?,?\s+|then,?\s+|great,?\s+|now,?\s+)?(?:shall|should) (?:i|we)\b|[:,]\s*(?:shall|should) (?:i|we)\b"
    r"|\b(?:would|do|did) you (?:like|want|wish) (?:me|us) to\b(?! do (?:for you|today))|\bwould you like (?:to (?:proceed|go ahead|continue|accept|confirm|do that|go with|take)|that)\b"
    r"|\bdo you want (?:to (?:proceed|go ahead|continue|accept|do that|go with|take)|that|this)\b"
    r"|\b(?:is|would|will|does|do|did) (?:that|this|it|these|those) (?:be )?(?:ok|okay|alright|all right|fine|acceptable|work|suit|sound|agreeable|good)\b"
    r"|\bhow does (?:that|this) sound\b|\b(?:that|this) (?:ok|okay|alright|fine) (?:with|for) you\b"
    r"|\bdo you (?:agree|accept|approve|consent|confirm|authori[sz]e)\b|\b(?:can|could) you (?:agree|accept|approve|authori[sz]e)\b"
    r"|\b(?:ok(?:ay)?|alright|all right|fine) (?:to|if i|for me to) (?:proceed|go ahead|continue|do|make|process|apply|cancel|charge|submit|file|book|set)\b"
    r"|\b(?:shall|should|can|may|could) (?:i|we) (?:go ahead|proceed|continue|move forward|process (?:it|that|this)|do (?:it|that|this))\b"
    r"|\b(?:ready|happy|ok|okay) (?:for me )?to (?:proceed|go ahead)\b|\bare you (?:happy|ok|okay|fine|comfortable|good) (?:with|for me to|if)\b"
    r"|\blet me know if you(?:'d| would) like me to\b|\bdo i have your (?:permission|consent|approval|go-ahead|ok|okay)\b"
    r"|\b(?:want|like) me to (?:go ahead|proceed|do (?:it|that|this))\b|\bis it (?:ok|okay|alright|all right|fine) (?:if|to)\b"
    r"|\b(?:please )?confirm (?:that )?(?:you(?:'d| would)? (?:like|want)|i (?:can|should|may)|you agree|you(?:'re| are) (?:happy|ok|okay))\b"
    r"|\b(?:can|could) you confirm (?:that )?(?:you(?:'d| would)? (?:like|want)|you agree|i (?:can|should|may))\b"
    r"|\bgo ahead\?\s*$|\bproceed\?\s*$|\b(?:ok|okay|agreed|deal|yes or no)\?\s*$|\bsound good\?\s*$|\bwork for you\?\s*$"
    r"|^\s*(?:i|we) (?:can|could) (?:offer|do|move|give|issue|process|set up|arrange|extend|cancel|refund|schedule|book|add|change|update|apply|send|waive|reinstate)\b"
    r"|\bthe (?:best|most|latest|earliest) (?:i|we) can (?:do|offer|give|move)\b|^\s*(?:i|we)(?:'d| would)? (?:suggest|recommend|propose)\b"
    r"|\bwould you like to (?:pay|set up|switch|add|cancel|keep|go|move|book|schedule|renew|reinstate|upgrade|use)\b"
    r"|\bmay (?:i|we) (?:cancel|process|charge|apply|submit|file|add|remove|change|update|book|schedule|issue|refund|move|extend|set up)\b"
    r"|\b(?:can|could) (?:i|we) (?:cancel|process|charge|apply|submit|file|add|remove|change|update|book|schedule|issue|refund|move|extend|set up|go with)\b"
)
_CHOICE_CUE = _rx(
    r"\b(?:would|do) you (?:prefer|rather|want|like)\b|\bwhich (?:would you|do you|one|option)\b|\b(?:prefer|choose|pick)\b|\beither\b"
    r"|\boption (?:1|one|a)\b|\bor would you\b"
)
_OR_SPLIT = _rx(r",?\s+\bor\b\s+(?!not\b|something else\b|anything else\b|someone else\b|somebody else\b)")
_CONFIRM_TAG = _rx(
    r"\b(?:is that|is this|that's|that is) (?:right|correct|accurate|still (?:right|correct|current|valid))\b|,\s*(?:right|correct)\s*\?"
    r"|\bjust to (?:confirm|check|double-check|make sure|verify)\b|\bto (?:confirm|double-check)\b|\bcan you confirm (?:that )?(?:your|the|it|this|that)\b"
    r"|\bcould you confirm (?:that )?(?:your|the|it|this|that)\b|\bplease confirm (?:that )?(?:your|the|it|this)\b|\bis (?:your|the|it|this)\b"
    r"|\bwas (?:your|the|it)\b|\bi (?:have|see|show|'ve got|found) (?:your|the|it|you|ticket|order|policy)\b|\bon file (?:as|is)\b|\bcorrect\s*\?|\bright\s*\?|\bconfirm\b"
)
_VALUE_TOKEN = re.compile(
    r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}|\b[A-Z]{2,4}-\d+\b|\b\d{4}-\d{2}-\d{2}\b|\b\d{3,}\b|\b[A-HJ-NPR-Z0-9]{17}\b"
    r"|\b(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2}\b"
    r"|\b[A-Z][A-Z0-9]{3,}\d\b|\b(?:is|as)\s+(?:[A-Z][\w'-]+)(?:\s+[A-Z][\w'-]+)*",
)
_PURE_TAG = _rx(r"^\s*(?:is (?:that|this) (?:right|correct)|(?:right|correct)|is that still (?:right|correct|current))\s*\?\s*$|,\s*is that (?:right|correct)\s*\?\s*$|,\s*(?:right|correct)\s*\?\s*$")
_CLOSING = _rx(
    r"\b(?:has|have) been\b|\bis now\b|\bare now\b|\ball set\b|\b(?:done|completed|processed|updated|cancelled|canceled|scheduled|filed|issued|refunded|booked|added|removed|applied|resolved|arranged|granted)\b"
    r"|\bi(?:'ve| have)\b|\bthank you for\b|\bthanks for\b|\b(?:have a|enjoy your) (?:great|good|nice|lovely)\b|\bgoodbye\b|\bbye\b|\btake care\b"
)
_CUE_WORDS = _rx(r"\b(?:what|which|when|where|who|how|why|your|you|please|could|can|would|need|tell|provide|share|give|confirm|is|are|do|does|did|may|i)\b")

ActKind = Literal["open", "greeting", "anything_else", "request", "proposal", "choice", "confirm", "statement", "closing", "progress"]


@dataclass
class Reading:
    """What one agent message does, as the customer understands it."""

    acts: list[ActKind] = field(default_factory=list)
    slots: list[str] = field(default_factory=list)  # asked about, in order, without repeats
    confirm_slots: list[str] = field(default_factory=list)  # stated values offered for confirmation
    options: list[str] = field(default_factory=list)  # of an either/or choice
    generic_date: bool = False  # a bare "when?" / "what date?"
    too_many: bool = False  # more slots asked at once than a customer answers
    proposal_text: str = ""

    def has(self, act: ActKind) -> bool:
        return act in self.acts


def split_sentences(text: str) -> list[str]:
    """Sentences and lines; a question mark or a full stop followed by space ends one."""
    parts: list[str] = []
    for line in re.split(r"\n+|(?<=[.!?])\s+(?=[A-Z0-9\"'(])|;\s+|\s+-\s+|\s+—\s+", text.strip()):
        line = line.strip(" \t-*•")
        if line:
            parts.append(line)
    return parts


def _is_keyword_list(sentence: str, hits: list[tuple[int, int, str]]) -> bool:
    """A sentence made only of slot phrases and separators asks for nothing."""
    if len(hits) < 2:
        return False
    rest = sentence
    for start, end, _ in sorted(hits, reverse=True):
        rest = rest[:start] + " " + rest[end:]
    words = re.findall(r"[A-Za-z']+", rest)
    return len(words) <= 1 or (len(hits) >= 3 and len(words) < len(hits))


def _options(sentence: str) -> list[str]:
    body = re.sub(r"^.*?\b(?:prefer|rather|like|want|choose|pick|between|option)\b:?\s*", "", sentence, count=1, flags=_I)
    body = body.rstrip("?.! ")
    opts = [o.strip(" ,:") for o in _OR_SPLIT.split(body) if o.strip(" ,:")]
    return opts if len(opts) >= 2 else []


def read_agent_message(text: str, vocabulary: Vocabulary) -> Reading:
    """The dialogue acts of an agent message, with the slots it asks about."""
    reading = Reading()
    slots: list[str] = []
    sentences = split_sentences(text)
    merged: list[str] = []
    for sentence in sentences:
        if merged and _PURE_TAG.match(sentence) and _VALUE_TOKEN.search(merged[-1]):
            merged[-1] = merged[-1] + " " + sentence
        else:
            merged.append(sentence)
    for sentence in merged:
        hits = vocabulary.find(sentence)
        if any(s == "driver_details" for _, _, s in hits) and not re.search(r"\byour own\b", sentence, _I):
            hits = [h for h in hits if h[2] not in ("date_of_birth", "full_name", "licence_number")
                    or re.search(r"\byour\s+$", sentence[max(0, h[0] - 6):h[0]], _I)]
        hit_slots = [s for _, _, s in hits]
        end = sentence.rstrip()[-1:]
        question = end == "?" or (end not in (".", "!") and bool(_QUESTION_START.search(sentence)))
        if _ANYTHING_ELSE.search(sentence):
            reading.acts.append("anything_else")
            continue
        if _is_keyword_list(sentence, hits):
            continue
        proposal = bool(_PROPOSAL.search(sentence))
        options = _options(sentence) if question and (" or " in sentence.lower()) and _CHOICE_CUE.search(sentence) else []
        has_value = bool(_VALUE_TOKEN.search(sentence))
        if has_value and _CONFIRM_TAG.search(sentence) and not proposal and (hit_slots or _PURE_TAG.search(sentence)):
            if not hit_slots:
                reading.acts.append("confirm")
                reading.confirm_slots.append("?")
                continue
            reading.acts.append("confirm")
            for s in hit_slots:
                if s not in reading.confirm_slots:
                    reading.confirm_slots.append(s)
            continue
        if options:
            reading.acts.append("choice")
            reading.options = options
            slots += hit_slots
            continue
        wh_question = re.match(r"^\s*(?:what|which|when|where|who|how)\b", sentence, _I) is not None
        if proposal and not (hit_slots and (wh_question or (_REQUEST.search(sentence) and not _PROPOSAL_ACTION.search(sentence)))):
            reading.acts.append("proposal")
            reading.proposal_text = (reading.proposal_text + " " + sentence).strip()
            continue
        request = question or bool(_REQUEST.search(sentence))
        if request and hit_slots:
            reading.acts.append("request")
            slots += hit_slots
            continue
        if request and GENERIC_DATE.search(sentence):
            reading.acts.append("request")
            reading.generic_date = True
            continue
        if _PROGRESS.search(sentence) and not hit_slots and not sentence.rstrip().endswith("?"):
            reading.acts.append("progress")
            continue
        if _OPEN.search(sentence):
            reading.acts.append("open")
            continue
        if _GREETING.search(sentence):
            reading.acts.append("greeting")
            continue
        if request:
            reading.acts.append("request")
            continue
        if _PROGRESS.search(sentence):
            reading.acts.append("progress")
        elif _CLOSING.search(sentence):
            reading.acts.append("closing")
        else:
            reading.acts.append("statement")
    unique = list(dict.fromkeys(slots))
    if len(unique) > MAX_SLOTS_PER_TURN:
        reading.too_many = True
        unique = []
    reading.slots = unique
    return reading


_PROPOSAL_ACTION = _rx(
    r"\b(?:cancel|refund|return|exchange|extend|move|charge|add|remove|file|submit|process|apply|book|schedule|issue|waive|reinstate|change|update|set up|go ahead|proceed)\b"
)

# --------------------------------------------------------------------------- the customer's side

_AGREE = _rx(
    r"^\s*(?:yes|yeah|yep|yup|sure|ok(?:ay)?|alright|all right|fine|of course|absolutely|certainly|definitely|agreed|correct|right|perfect|great|sounds good)\b"
    r"|^\s*(?:please )?(?:go ahead|proceed|do it|do that|do so)\b|\bthat (?:works|sounds good|is fine|'s fine)\b|\bi (?:agree|accept|consent|approve)\b"
    r"|\bplease (?:go ahead|proceed|do (?:it|that|so))\b|\bi(?:'d| would) like that\b|\bi(?:'ll| will) (?:take|go with)\b|\bi(?:'d| would) prefer\b"
)
_REFUSE = _rx(
    r"^\s*(?:no|nope|nah|not really|never|don't|do not)\b|\b(?:i )?(?:don't|do not) (?:want|agree|accept|approve|consent)\b"
    r"|\bi(?:'d| would) rather (?:not|you didn't)\b|\bplease (?:don't|do not)\b|\bi (?:can't|cannot|can not|won't|will not) (?:accept|agree|pay)\b"
    r"|\bi refuse\b|\bthat (?:doesn't|does not|won't|will not) work\b|\bhold off\b|\bwait\b"
)


def read_customer_answer(text: str) -> Literal["agree", "refuse", "unclear"]:
    """Whether a customer's reply agrees to what was proposed; refusal wins over a polite 'ok'."""
    if _REFUSE.search(text or ""):
        return "refuse"
    if _AGREE.search(text or ""):
        return "agree"
    return "unclear"


def customer_agreed(text: str) -> bool:
    """True only for a clear yes: the consent a write that needs it may rest on."""
    return read_customer_answer(text) == "agree"

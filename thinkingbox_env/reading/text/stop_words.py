"""English stop words: the function words that carry no subject.

A closing's subject terms are its words less these: "your order of the blue lamp was
refunded" keeps "order", "blue", "lamp", "refund". The list holds only closed-class words
(articles, pronouns, prepositions, conjunctions, auxiliaries, negations, a few degree and
quantity words, number words); every noun, verb and adjective a customer-service closing
uses to say what was done stays a subject word ("amount", "name", "full", "back", "move").
"""

from __future__ import annotations

# articles and determiners
_DETERMINERS = ("a", "an", "the", "another", "no")
# personal pronouns, subject and object forms
_PERSONAL = ("i", "me", "we", "us", "you", "he", "him", "she", "her", "it", "they", "them")
# possessive determiners and pronouns
_POSSESSIVE = ("my", "mine", "our", "ours", "your", "yours", "his", "hers", "its", "their", "theirs")
# reflexive pronouns
_REFLEXIVE = ("myself", "ourselves", "yourself", "yourselves", "himself", "herself", "itself", "themselves")
# indefinite pronouns and the adverbs of place and manner formed like them
_INDEFINITE = (
    "anybody", "anyone", "anything", "everybody", "everyone", "everything", "somebody", "someone", "something",
    "nobody", "none", "nothing", "anywhere", "everywhere", "somewhere", "nowhere", "anyhow", "somehow", "anyway",
    "others",
)
# demonstratives
_DEMONSTRATIVES = ("this", "that", "these", "those")
# question and relative words
_WH_WORDS = (
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether",
    "whatever", "whichever", "whoever", "whenever", "wherever", "however",
)
# prepositions and the particles of phrasal verbs
_PREPOSITIONS = (
    "about", "above", "across", "after", "against", "along", "among", "amongst", "around", "as", "at", "before",
    "behind", "below", "beneath", "beside", "besides", "between", "beyond", "by", "despite", "down", "during",
    "except", "for", "from", "in", "inside", "into", "near", "of", "off", "on", "onto", "out", "outside", "over",
    "per", "since", "through", "throughout", "till", "to", "toward", "towards", "under", "until", "up", "upon",
    "via", "with", "within", "without",
)
# coordinating and subordinating conjunctions, and the adverbs that link clauses
_CONJUNCTIONS = (
    "and", "but", "or", "nor", "so", "because", "although", "though", "while", "whereas", "if", "unless", "once",
    "therefore", "thus", "hence", "otherwise", "moreover", "furthermore", "nevertheless", "meanwhile",
)
# auxiliary verbs in all their forms, and the modals
_AUXILIARIES = (
    "be", "am", "is", "are", "was", "were", "been", "being",
    "have", "has", "had", "having",
    "do", "does", "did", "doing",
    "can", "could", "may", "might", "must", "shall", "should", "will", "would", "ought",
)
# the stems the tokenizer leaves of negated auxiliaries: "can't" is "ca" + "n't", "won't" "wo" + "n't"
_NEGATED_STEMS = ("ca", "wo")
# negation
_NEGATIONS = ("not", "never", "neither", "cannot")
# light verbs: they carry the action of a phrase ("get in touch", "take a look", "make sure") but name no subject
_LIGHT_VERBS = (
    "get", "gets", "got", "getting", "go", "goes", "went", "going", "gone", "give", "gives", "gave", "giving", "given",
    "take", "takes", "took", "taking", "taken", "make", "makes", "made", "making", "keep", "keeps", "kept", "keeping",
    "put", "puts", "putting", "see", "sees", "saw", "seeing", "seen", "say", "says", "said", "saying",
    "let", "lets", "seem", "seems", "seemed",
)
# degree, quantity, time and place words that qualify rather than name
_DEGREE = (
    "very", "too", "also", "just", "only", "more", "most", "much", "many", "few", "less", "least", "some", "any",
    "all", "each", "every", "both", "either", "several", "enough", "such", "own", "same", "other", "else", "than",
    "then", "there", "here", "now", "still", "yet", "again", "ever", "even", "already", "quite", "rather", "almost",
)
# number words: amounts that matter are written in figures, and a number word alone names no subject
_NUMBERS = (
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",
    "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
)
# clitics as the tokenizer splits them off ("don't" is "do" + "n't", "dont" is "do" + "nt")
_CLITICS = ("n't", "'d", "'ll", "'m", "'re", "'s", "'ve")
_BARE_CLITICS = ("nt", "ll", "re", "ve")

STOP_WORDS: frozenset[str] = frozenset((
    *_DETERMINERS, *_PERSONAL, *_POSSESSIVE, *_REFLEXIVE, *_INDEFINITE, *_DEMONSTRATIVES, *_WH_WORDS,
    *_PREPOSITIONS, *_CONJUNCTIONS, *_AUXILIARIES, *_LIGHT_VERBS, *_NEGATED_STEMS, *_NEGATIONS, *_DEGREE, *_NUMBERS,
    *(c.replace("'", q) for c in _CLITICS for q in ("'", "\u2018", "\u2019")), *_BARE_CLITICS,
))

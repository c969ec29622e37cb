"""Generation data of the retail families: names, streets, carriers and the products tasks draw.

Business rules (fees, windows, the catalogue itself) live in ``rules``; what is here only
makes one task's customer and parcels differ from the next one's.
"""

from __future__ import annotations

import re
from decimal import Decimal

from ..rules import CATALOG

FIRST_NAMES = [
    "Nadia", "Oskar", "Priyanka", "Mateo", "Leonie", "Kwame", "Astrid", "Farid", "Imogen", "Tomasz",
    "Chiara", "Declan", "Mirela", "Jonah", "Saoirse", "Haruto", "Beatriz", "Lucan", "Zofia", "Anders",
]
LAST_NAMES = [
    "Ferreira", "Lindgren", "Mahajan", "Quiroga", "Brandt", "Asante", "Halvorsen", "Karimi", "Whitlock", "Zielinski",
    "Rinaldi", "Gallagher", "Dumitru", "Achterberg", "Byrne", "Sakamoto", "Novaes", "Pryce", "Kowalczyk", "Strand",
]
# the products the first five families draw from (names and prices from the seed catalogue)
PRODUCT_SKUS = [
    "BW-TV55-Q", "BW-SB200", "BW-DW45", "BW-VAC-X2", "BW-HP-NC7", "BW-KT-17", "BW-LAP-14", "BW-RTR-6", "BW-MW-25", "BW-WM-8", "BW-CAB-H",
]
STREETS = ["Alder Lane", "Quarry Road", "Linden Avenue", "Harbor Street", "Mill Race Way", "Orchard Court"]
CITIES = [("Portland", "OR", "97205"), ("Tacoma", "WA", "98402"), ("Boise", "ID", "83702"), ("Eugene", "OR", "97401")]
CARRIERS = ["Parcelway", "SwiftFreight", "Northline Post"]
# colour and memory variants: never drawn as the product a task starts from
VARIANTS = frozenset({"BW-SB200-W", "BW-VAC-X2-R", "BW-HP-NC7-SV", "BW-KT-17-W", "BW-LAP-14-32"})
# what the agent may ask when it needs an address; the customer names the address when asked any of these
ADDRESS_WORDS = ["which address", "what address", "correct address", "right address", "intended", "new address",
                 "delivery address", "shipping address", "full address", "where"]

# whole numbers that product names contain ("Lumora 65-inch QLED TV"): an agent naming the product says them,
# so a confidential score never takes one of these values (it would read as the score being said)
NAME_NUMBERS = frozenset(int(n) for name, *_ in CATALOG.values() for n in re.findall(r"(?<![\d.])\d+(?![\d.])", name))


def clear_score(score: int) -> int:
    """The score, moved up past any number a product name holds (the branch's side of 40 and 80 is kept)."""
    while score in NAME_NUMBERS:
        score += 1
    return score


def item(sku: str) -> tuple[str, str, str]:
    """The (sku, name, price) triple ``RetailFamily.order`` takes."""
    name, _, price, _ = CATALOG[sku]
    return sku, name, price


PRODUCTS: list[tuple[str, str, str]] = [item(sku) for sku in PRODUCT_SKUS]


def skus(low: float = 0, high: float = 10**6, categories: tuple[str, ...] | None = None) -> list[str]:
    """Base-model SKUs priced in [low, high), optionally of some categories."""
    return [
        sku for sku, (_, cat, p, _) in CATALOG.items()
        if sku not in VARIANTS and low <= Decimal(p) < high and (categories is None or cat in categories)
    ]

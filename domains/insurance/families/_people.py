"""The people and cars an Ashgrove household is drawn from.

A household member is drawn as one person (``relative``): relationship, gender, first name
and pronouns together, so "my wife" is never followed by a man's name. VINs are built with
the check digit of ``rules``, so a drawn car passes the same VIN check the tools run.
"""

from __future__ import annotations

import random
from datetime import date
from typing import Any

from ..rules import TODAY, VIN_ALPHABET, make_vin, vin_check_digit

FEMALE_FIRST = ["Rosalind", "Ingrid", "Yasmin", "Marisol", "Wren", "Noor", "Linnea", "Perpetua", "Solveig", "Annika",
                "Matilde", "Henrietta", "Leilani", "Odette", "Sabine", "Priya", "Greta", "Ines", "Maeve", "Elodie",
                "Zara", "Nell", "Beatrix", "Juniper"]
MALE_FIRST = ["Tobias", "Emeric", "Dorian", "Caspian", "Thaddeus", "Bartholomew", "Osvaldo", "Ravi", "Ezekiel", "Florian",
              "Cyrus", "Joaquin", "Magnus", "Quincy", "Teodor", "Milo", "Soren", "Callum", "Tariq", "Bram", "Felix", "Arlo",
              "Anselm", "Hugo"]
LAST_NAMES = [
    "Abernathy", "Castellanos", "Drummond", "Eklund", "Fairweather", "Gutierrez", "Holloway", "Ishikawa", "Jankowski",
    "Kilpatrick", "Lindqvist", "Marchetti", "Nakashima", "Oyelaran", "Penhallow", "Quintero", "Rasmussen", "Szabo",
    "Thorsby", "Underhill", "Vasquez", "Wetherby", "Yamamoto", "Zelinski", "Achebe", "Bellweather", "Corcoran", "Dunmore",
]
STATES = {
    "OR": ("Oregon", "503"), "WA": ("Washington", "206"), "ID": ("Idaho", "208"), "NV": ("Nevada", "775"),
    "AZ": ("Arizona", "602"), "CO": ("Colorado", "303"), "UT": ("Utah", "801"),
}
SECURITY = [
    ("What was the name of your first pet?", ["Biscuit", "Pepper", "Juniper", "Waffles", "Captain", "Mochi"]),
    ("What street did you grow up on?", ["Alder Street", "Birchwood Lane", "Ridgecrest Drive", "Larkin Avenue"]),
    ("What was the make of your first car?", ["Datsun", "Plymouth", "Saab", "Oldsmobile", "Geo"]),
    ("In what city was your mother born?", ["Spokane", "Pueblo", "Flagstaff", "Medford", "Ogden"]),
]
CATALOG = [  # (WMI, make, model, kind)
    ("2HG", "Honda", "Civic", "sedan"), ("5FN", "Honda", "Pilot", "SUV"), ("JHM", "Honda", "Fit", "hatchback"),
    ("4T1", "Toyota", "Camry", "sedan"), ("JTD", "Toyota", "Corolla", "sedan"), ("2T3", "Toyota", "RAV4", "SUV"),
    ("5TD", "Toyota", "Highlander", "SUV"), ("1FM", "Ford", "Escape", "SUV"), ("1FT", "Ford", "F-150", "pickup"),
    ("1G1", "Chevrolet", "Malibu", "sedan"), ("3GN", "Chevrolet", "Equinox", "SUV"), ("1GC", "Chevrolet", "Silverado", "pickup"),
    ("JF1", "Subaru", "Impreza", "hatchback"), ("JF2", "Subaru", "Outback", "wagon"), ("4S4", "Subaru", "Forester", "SUV"),
    ("JM1", "Mazda", "Mazda3", "sedan"), ("JM3", "Mazda", "CX-5", "SUV"), ("KM8", "Hyundai", "Tucson", "SUV"),
    ("5NP", "Hyundai", "Elantra", "sedan"), ("5XY", "Kia", "Sorento", "SUV"), ("KNA", "Kia", "Forte", "sedan"),
    ("1N4", "Nissan", "Altima", "sedan"), ("5N1", "Nissan", "Rogue", "SUV"), ("3VW", "Volkswagen", "Jetta", "sedan"),
    ("1C4", "Jeep", "Grand Cherokee", "SUV"), ("5YJ", "Tesla", "Model 3", "sedan"),
]
COLORS = ["silver", "white", "black", "blue", "red", "gray", "green", "bronze"]
LENDERS = ["Cascade Federal Credit Union", "Sagebrush Auto Finance", "Pinecrest Bank", "Red Rock Lending"]

# relationship -> (female word, male word); a housemate has no gendered word and their own surname
RELATION_WORDS = {"spouse": ("wife", "husband"), "child": ("daughter", "son"), "sibling": ("sister", "brother"),
                  "parent": ("mother", "father"), "other_household": ("housemate", "housemate")}
RELATION_AGES = {"spouse": (24, 62), "child": (16, 22), "sibling": (18, 60), "parent": (55, 80), "other_household": (21, 60)}


def first_name(rng: random.Random, gender: int) -> str:
    return rng.choice(FEMALE_FIRST if gender == 0 else MALE_FIRST)


def person(rng: random.Random) -> dict[str, Any]:
    """The customer: a first name of their gender, a surname, an email address built from both, a date of birth."""
    gender = rng.randint(0, 1)
    first, last = first_name(rng, gender), rng.choice(LAST_NAMES)
    dom = rng.choice(["example.com", "example.net", "example.org"])
    dob = date(rng.randint(1958, 1996), rng.randint(1, 12), rng.randint(1, 28))
    return {"first": first, "last": last, "gender": gender, "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}{rng.randint(2, 98)}@{dom}", "dob": dob}


def relative(rng: random.Random, relationship: str, last: str, *, avoid: tuple[str, ...] = ()) -> dict[str, Any]:
    """A household member drawn as one person: the relationship word, the name and the pronouns agree."""
    gender = rng.randint(0, 1)
    first = first_name(rng, gender)
    while first in avoid:
        first = first_name(rng, gender)
    neutral = relationship == "other_household"
    surname = rng.choice([n for n in LAST_NAMES if n != last]) if neutral else last
    lo, hi = RELATION_AGES[relationship]
    return {
        "relationship": relationship, "gender": gender, "first": first, "full": f"{first} {surname}",
        "word": RELATION_WORDS[relationship][gender], "subj": "they" if neutral else ("she", "he")[gender],
        "obj": "them" if neutral else ("her", "him")[gender], "poss": "their" if neutral else ("her", "his")[gender],
        "dob": date(TODAY.year - rng.randint(lo, hi), rng.randint(1, 12), rng.randint(1, 28)),
    }


def license_number(rng: random.Random, state: str) -> str:
    return f"{state[0]}{rng.randint(1000000, 9999999)}"


def new_vin(rng: random.Random, wmi: str, year: int) -> str:
    """A VIN of the maker's WMI and the model year whose check digit is right."""
    vds = "".join(rng.choice(VIN_ALPHABET[:23]) for _ in range(5))
    return make_vin(wmi, vds, year, rng.choice("ABCDEFGHKLMNPRSTUVWXYZ"), f"{rng.randint(0, 999999):06d}")


def misread_vin(rng: random.Random, right: str) -> str:
    """The VIN with one character misread, so that the check digit no longer matches."""
    while True:
        pos = rng.choice([3, 4, 5, 6, 7, 11, 12, 13, 14, 15, 16])
        alt = rng.choice([c for c in VIN_ALPHABET if c != right[pos] and (pos < 11 or c.isdigit())])
        bad = right[:pos] + alt + right[pos + 1:]
        if vin_check_digit(bad) != bad[8]:
            return bad


def describe(vehicle: dict[str, Any]) -> str:
    """``silver 2021 Honda Civic``: a vehicle as the customer names it."""
    return f"{vehicle['color']} {vehicle['year']} {vehicle['make']} {vehicle['model']}"

"""A labelled retrieval set from the demo's domain (a shop's support memory), made
deterministically here instead of being stored: 2,000 notes about customers' orders and
200 queries, each with the one note that answers it.

A note: ``Order 48213 for Alice Moreno (cast-iron teapot): it arrived with a cracked lid;
we shipped a replacement.`` Notes share products, problems and resolutions, so each query
has close distractors. Three kinds of query, as an agent would ask its memory:

* ``customer`` (100): the customer's name, the product and the problem in other words
  ("Alice Moreno says the teapot's lid was broken when it came, what did we do?");
* ``order`` (60): the order number and the product ("What happened with order 48213, the
  teapot?");
* ``paraphrase`` (40): the product, the problem and the resolution all in other words, no
  name or number ("the kettle's lid came broken and we sent the money back").

``make(seed)`` returns the same set for the same seed on every machine (``random.Random``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

_FIRST = ("Alice Bob Carol Dave Erin Frank Grace Heidi Ivan Judy Karl Laura Mallory Nina Oscar "
          "Peggy Quentin Rita Sam Trent Ursula Victor Wendy Xavier Yara Zoe Amir Bianca Chen "
          "Dmitri Elena Farid Greta Hugo Ines Jonas Kemal Lena Marco Nadia")
FIRST = _FIRST.split()
_LAST = ("Moreno Schmidt Okafor Tanaka Novak Silva Larsen Dubois Kowalski Haddad Rossi "
         "Ivanova Berg Costa Nakamura Fischer Petrov Ahmed Lindqvist Garcia Muller Sato Horvat "
         "Jensen Romero Klein Popescu Weber Moretti Hansen")
LAST = _LAST.split()
PRODUCTS = ("cast-iron teapot", "green tea sampler", "charging cable", "electric kettle",
            "ceramic mug set", "loose-leaf oolong", "travel tumbler", "glass infuser",
            "bamboo tray", "matcha whisk", "espresso grinder", "milk frother",
            "wireless earbuds", "phone case", "desk lamp", "yoga mat", "water bottle",
            "backpack", "wool scarf", "rain jacket")
# (as a note says it, as a customer asks about it)
PROBLEMS = (
    ("it arrived with a cracked lid", "came broken"),
    ("the parcel never arrived", "still has not been delivered"),
    ("it was the wrong colour", "got a different colour than ordered"),
    ("it stopped working after a week", "broke down after a few days"),
    ("the invoice showed the wrong billing address", "has an address error on the bill"),
    ("it was charged twice", "paid two times for it"),
    ("a part was missing from the box", "came incomplete"),
    ("it arrived two weeks late", "was delivered much later than promised"),
    ("the size was too small", "does not fit, it is too little"),
    ("the tracking link did not work", "cannot follow the shipment online"),
)
RESOLUTIONS = (
    ("we shipped a replacement", "we sent a new one"),
    ("we refunded the full amount", "we gave the money back"),
    ("we issued a store credit voucher", "we offered credit for a later purchase"),
    ("we sent a prepaid return label", "we asked them to send it back at our cost"),
    ("we corrected the invoice", "we fixed the bill"),
    ("we escalated it to the carrier", "we opened a claim with the delivery company"),
    ("we offered a 20 percent discount", "we took a fifth off the price"),
    ("we scheduled a technician call", "we booked someone to look at it"),
)
ITEMS = 2000
QUERIES = {"customer": 100, "order": 60, "paraphrase": 40}


@dataclass(frozen=True)
class Note:
    order: int
    customer: str
    product: str
    problem: int
    resolution: int

    @property
    def text(self) -> str:
        return (f"Order {self.order} for {self.customer} ({self.product}): "
                f"{PROBLEMS[self.problem][0]}; {RESOLUTIONS[self.resolution][0]}.")


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    answer: int  # index of the note that answers it


def _query(kind: str, note: Note, rng: random.Random) -> str:
    product = note.product.split()[-1]
    asked = PROBLEMS[note.problem][1]
    if kind == "customer":
        form = rng.choice(("{c} says the {p} {a}, what did we do?",
                           "What did we tell {c} when the {p} {a}?",
                           "{c}'s {p} {a}: how was it resolved?"))
        return form.format(c=note.customer, p=product, a=asked)
    if kind == "order":
        form = rng.choice(("What happened with order {o}, the {p}?",
                           "Status of order {o} ({p})?",
                           "Any notes about order number {o} for a {p}?"))
        return form.format(o=note.order, p=product)
    return f"the {product} {asked} and {RESOLUTIONS[note.resolution][1]}"


def make(seed: int = 20, items: int = ITEMS, queries: int = sum(QUERIES.values())
         ) -> tuple[list[str], list[Query]]:
    """``(notes, queries)``: the notes' texts and the labelled queries (``items`` notes,
    ``queries`` queries split among the kinds as in :data:`QUERIES`, at least one each)."""
    rng = random.Random(seed)
    total = sum(QUERIES.values())
    per_kind = {kind: max(1, count * queries // total) for kind, count in QUERIES.items()}
    orders = rng.sample(range(10_000, 99_999), items)
    notes = [Note(orders[i], f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng.choice(PRODUCTS),
                  rng.randrange(len(PROBLEMS)), rng.randrange(len(RESOLUTIONS)))
             for i in range(items)]
    combos: dict[tuple[str, int, int], int] = {}
    names: dict[tuple[str, str, int], int] = {}
    for note in notes:
        combo = (note.product, note.problem, note.resolution)
        combos[combo] = combos.get(combo, 0) + 1
        name = (note.customer, note.product, note.problem)
        names[name] = names.get(name, 0) + 1
    unique = {  # a query's answer must be the only note that fits it
        "customer": [i for i, n in enumerate(notes)
                     if names[(n.customer, n.product, n.problem)] == 1],
        "order": list(range(items)),
        "paraphrase": [i for i, n in enumerate(notes)
                       if combos[(n.product, n.problem, n.resolution)] == 1],
    }
    labelled, used = [], set()
    for kind, count in per_kind.items():
        pool = [i for i in unique[kind] if i not in used]
        for index in rng.sample(pool, count):
            used.add(index)
            labelled.append(Query(kind, _query(kind, notes[index], rng), index))
    return [note.text for note in notes], labelled

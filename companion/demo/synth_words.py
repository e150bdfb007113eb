"""The word lists and sentence templates the synthetic vault generator (`synth`) fills its notes from.

Twenty themes of about twenty keywords each, names, places, months, and the user's and the agent's sentence
templates, split once into (text, slot) pairs so filling one stays a join.
"""

from __future__ import annotations

import re


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


THEMES: dict[str, tuple[str, ...]] = {
    "travel": _words("""itinerary ferry hostel visa layover passport railpass backpack luggage
        sleeper border campsite guidebook transfer booking airport shuttle souvenir timetable
        jetlag carriage voucher"""),
    "cooking": _words("""sourdough braise marinade risotto skillet ferment dumpling broth saffron
        brine focaccia custard chutney ramen roux paprika glaze pastry tagine pesto kimchi oven"""),
    "software": _words("""compiler refactor deploy pipeline container schema migration endpoint
        latency cache rollback linter monorepo webhook payload mutex benchmark profiler index
        query cluster release"""),
    "finance": _words("""invoice mortgage dividend pension budget ledger receipt deduction annuity
        portfolio interest loan savings premium audit payroll expense refund tariff equity bond
        broker"""),
    "fitness": _words("""interval tempo cadence squat deadlift stretch marathon treadmill
        kettlebell plank mobility warmup recovery hydration protein sprint lunge rowing stamina
        taper yoga pilates"""),
    "gardening": _words("""compost seedling mulch pruning trellis greenhouse tomato perennial aphid
        irrigation bulb hedge harvest soil fertiliser orchard lavender courgette rhubarb weeding
        shears beehive"""),
    "music": _words("""chord rehearsal metronome fretboard scale synthesizer amplifier setlist
        harmony drummer violin cello arpeggio mixing mastering vinyl chorus verse pedal tuning
        bassline studio"""),
    "health": _words("""dentist vaccine allergy prescription physio checkup bloodwork migraine
        insomnia dosage clinic referral ultrasound inhaler therapy symptom cholesterol vitamin
        posture sprain pharmacy"""),
    "home": _words("""plumbing boiler insulation radiator skirting drywall grout tiling wiring
        thermostat gutter damp ventilation skylight staircase flooring carpet cabinet hinge faucet
        extractor attic"""),
    "cars": _words("""tyre brake clutch gearbox battery charger mileage inspection windscreen
        alternator exhaust coolant dashboard lease hybrid torque wiper garage towbar odometer
        warranty mechanic"""),
    "photography": _words("""aperture shutter lens tripod exposure histogram bokeh raw portrait
        landscape flash filter prime zoom viewfinder mirrorless negative darkroom print
        composition monopod"""),
    "reading": _words("""novel chapter anthology paperback hardcover memoir essay library bookmark
        author sequel trilogy poetry audiobook ereader manuscript footnote epilogue prologue
        translation biography"""),
    "pets": _words("""kitten puppy leash kibble vet litter grooming flea crate microchip adoption
        parrot aquarium hamster collar treats kennel deworming walker tortoise terrarium"""),
    "work": _words("""standup roadmap deadline stakeholder retrospective promotion appraisal
        offsite onboarding hiring interview salary contract quarterly headcount backlog manager
        mentoring feedback handover"""),
    "education": _words("""thesis seminar lecture syllabus exam tutor scholarship semester
        coursework dissertation grading campus enrolment transcript homework quiz professor
        citation flashcards"""),
    "events": _words("""wedding venue caterer invitation guestlist florist speech decorations
        photographer playlist cake marquee seating toast anniversary reunion birthday banquet
        ceremony honeymoon"""),
    "electronics": _words("""motherboard firmware router soldering arduino breadboard resistor
        capacitor enclosure heatsink ssd ethernet antenna oscilloscope multimeter microcontroller
        relay voltage"""),
    "outdoors": _words("""crampon carabiner belay summit glacier rope bivouac trailhead switchback
        headlamp altitude ridge scramble avalanche snowshoe kayak paddle canoe portage tent stove
        compass"""),
    "languages": _words("""vocabulary grammar conjugation pronunciation tandem dialect idiom
        subjunctive accent fluency textbook listening dictation kanji hiragana declension
        phrasebook immersion subtitle"""),
    "games": _words("""chess opening endgame tournament puzzle boardgame dice campaign dungeon
        character expansion strategy rating blitz gambit console controller speedrun quest guild
        deck meeple"""),
}
"""Theme to its vocabulary; a topic draws its keywords from one theme."""
VERBS = _words("""book fix check plan order cancel compare review move sort update finish test
    schedule replace repair measure confirm draft share split postpone return renew clean paint
    install print prepare""")
"""Verbs for the `{v}` slot."""
ADJECTIVES = _words("""cheap expensive quick slow quiet noisy small large old new fragile solid
    tricky simple reliable risky urgent optional local remote early late heavy light modern classic
    careful rough""")
"""Adjectives for the `{a}` slot."""
NOUNS = _words("""weekend morning evening budget list plan friend neighbour shop office kitchen
    train car bike phone laptop email letter bill ticket form folder meeting call note reminder box
    bag key""")
"""Everyday nouns for the `{g}` slot, shared by every topic."""
FIRST_NAMES = _words("""Alice Bob Carol Dan Erin Farid Grace Hugo Ines Jonas Kira Lars Mina Noah Olga
    Pavel Quinn Rosa Sami Tara Ugo Vera Wim Xenia Yusuf Zoe Amir Bea Chen Dora Emil Fatou Gus Hana
    Ivo Jade""")
"""First names: people in the notes, and (lower-cased) the users who talk to the agent."""
LAST_NAMES = _words("""Martin Keller Nguyen Silva Novak Berg Rossi Dubois Larsen Okafor Tanaka Moreau
    Weber Kowalski Haddad Costa Jensen Petrov Yilmaz Schmidt Ortiz Fischer Lindqvist Murphy Ahmed
    Varga""")
"""Last names, paired with `FIRST_NAMES` for the people in the notes."""
PLACES = _words("""Lisbon Porto Lyon Bremen Hamburg Ghent Utrecht Bergen Tromsø Kraków Brno
    Ljubljana Trieste Bologna Seville Valencia Bilbao Galway Cork Leeds Bristol Dundee Malmö Turku
    Tartu Riga Kaunas Zadar Split Plovdiv Cluj Graz Linz Basel Lausanne Annecy Grenoble Nantes
    Rennes Bordeaux""")
"""Towns for the `{L}` slot and for topic titles."""
MONTHS = _words("""January February March April May June July August September October November
    December""")
"""Month names for the `{m}` slot."""
CODE_LETTERS = "ABCDEFGHKLMNPRSTVXZ"
"""Letters for product codes such as `KT-417` (no look-alikes such as I and O)."""

_USER_SENTENCES = (
    "Can you {v} the {w} for {P}?",
    "I think the {w} in {L} is too {a}.",
    "{P} said the {w} costs {n} euros, is that {a}?",
    "We need to {v} the {w} before {d} {m}.",
    "What about the {a} {w} we talked about?",
    "I forgot the {g} again, can you remind me about the {w}?",
    "My {g} broke, so the {w} waits until {m}.",
    "How long does the {w} usually take?",
    "Should I {v} the {w} or the {w} first?",
    "The {c} {w} arrived and it looks {a}.",
    "{P} wants the {a} {w} instead.",
    "Let's {v} the {g} next week in {L}.",
)
_AGENT_SENTENCES = (
    "The {w} for {P} is noted: {n} euros at {L}, due on {d} {m}.",
    "I'd {v} the {w} first, because the {g} depends on it.",
    "Last time you said the {w} was {a}; the {c} option is cheaper by {n} euros.",
    "The {a} {w} usually takes {d} days, so plan for {d} {m}.",
    "I added the {w} and the {w} to your list.",
    "{P} mentioned the {a} {g} near {L} that could help with the {w}.",
    "You could {v} the {w} and keep the {g} for later.",
    "That fits the {w} plan; the next step is to {v} the {g}.",
    "Remember that the {w} in {L} closes on {d} {m}.",
    "The {c} is the {a} choice if the {w} matters most.",
    "I checked: the {w} costs about {n} euros with the {g}.",
    "Good call, I'll {v} the {w} reminder for {d} {m}.",
)

Template = tuple[tuple[str, str], ...]
"""A sentence as (literal text, slot letter) pairs; the slot is empty after the last literal."""


def theme_words() -> list[str]:
    """Every theme's keywords, in a fixed order (for other generators that need plain, varied words)."""
    return [word for words in THEMES.values() for word in words]


def _compile(sentences: tuple[str, ...]) -> tuple[Template, ...]:
    """Split templates once, so filling one is a join, not a `str.format` with ten arguments."""
    out: list[Template] = []
    for sentence in sentences:
        parts = re.split(r"\{(\w)\}", sentence)
        pairs = [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        out.append((*pairs, (parts[-1], "")))
    return tuple(out)


USER_TEMPLATES = _compile(_USER_SENTENCES)
"""The user's sentence templates, split once."""
AGENT_TEMPLATES = _compile(_AGENT_SENTENCES)
"""The agent's sentence templates, split once."""

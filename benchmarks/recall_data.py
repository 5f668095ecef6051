"""The word material of the recall benchmark: people, topics, questions and filler.

``benchmarks/search_recall.py`` builds its conversations from this bank, so what a question
tests is decided here, by hand, not left to chance:

* every topic's answer sentences use one word form (``researching``, ``donated``) and its
  ``form`` question another one of the same stem, marked ``[research]``; porter stemming
  joins the two, exact matching does not (the test checks each pair against a real FTS5
  ``porter`` table). Irregular forms (went/go, ran/run, bought/buy) are never relied on;
* ``pronoun`` questions carry he/she/his/her, ``punct`` questions a possessive or a
  hyphenated word, ``date`` questions a month and year that only the session's date has:
  no message text names a month (``MONTHS`` lists the words that must never appear, and
  "may" is kept out of every sentence for the same reason);
* each topic has *near* sentences: the same person, the same topic words, other details.
  They are the distractors that bury an old answer under newer look-alikes.

Template slots: ``{name}``, ``{sub}``/``{Sub}``, ``{obj}``, ``{pos}`` (the person's
pronouns), ``{cue}`` (the detail a question names to single the fact out), ``{answer}``
(the detail asked for), ``{month}``, ``{year}``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ASSISTANT_LINES",
    "MONTHS",
    "OPENERS",
    "PEOPLE",
    "SURNAMES",
    "TOPICS",
    "USER_LINES",
    "Topic",
]

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

_WOMEN = (
    "Priya Lena Ingrid Sofia Mei Amara Keiko Nadia Yara Leila Zainab Chiara Freya Ines Astrid"
    " Elif Noor Carmen Hana Olga Beatrix Daria Fatima Helga Jana Lucia Nina Paloma Rosa Tove"
    " Vera Ximena Zofia Birgit Dalia"
)
_MEN = (
    "Omar Tomas Kwame Rafael Dmitri Jonas Mateo Felix Hugo Anders Marco Emeka Ravi Bruno Kofi"
    " Pavel Lars Tariq Stefan Diego Callum Emil Gustav Idris Kenji Magnus Otto Quentin Samir"
    " Umar Wilhelm Yusuf Anton Cyrus Ezra"
)
# (first name, "f" or "m"), alternating. None is a month or a common English word.
PEOPLE: tuple[tuple[str, str], ...] = tuple(
    person
    for pair in zip(
        ((n, "f") for n in _WOMEN.split()), ((n, "m") for n in _MEN.split()), strict=True
    )
    for person in pair
)
SURNAMES = tuple(
    [
        "Okafor",
        "Lindqvist",
        "Moreau",
        "Tanaka",
        "Brennan",
        "Kowalski",
        "Haddad",
        "Ferreira",
        "Novak",
        "Achebe",
        "Sorensen",
        "Castillo",
        "Ivanova",
        "Mwangi",
        "Rossi",
        "Nakamura",
        "Oduya",
        "Petrov",
        "Quispe",
        "Halloran",
    ]
)
"""Added to every name once the first names have all been used, so that a question about
one conversation's Priya never matches another conversation's."""


@dataclass(frozen=True)
class Topic:
    """One kind of fact: the sentences that state it, look-alikes, and one question per kind.

    ``facts`` state the fact; ``near`` are look-alikes (same person and topic words, other
    details). In ``form`` the word in brackets is another form of a word every ``facts``
    sentence uses.
    """

    key: str
    cues: tuple[str, ...]
    answers: tuple[str, ...]
    facts: tuple[str, ...]
    near: tuple[str, ...]
    form: str
    pronoun: str
    punct: str
    date: str

    def question(self, kind: str) -> str:
        """The question template of ``kind`` (``form``, ``pronoun``, ``punct``, ``date``)."""
        return str(getattr(self, kind))


def _alts(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split("|"))


TOPICS: tuple[Topic, ...] = (
    Topic(
        "research",
        _alts("garden|thesis|podcast|startup|newsletter|documentary|exhibit|zine"),
        _alts(
            "heat pumps|medieval trade routes|soil bacteria|battery recycling|coral reefs|"
            "early jazz records|tidal energy|lichen growth"
        ),
        (
            "{name} has been researching {answer} for the {cue} project.",
            "{name} says the {cue} project keeps {obj} researching {answer} most evenings.",
        ),
        (
            "{name} is researching {answer} now, for a {cue} project.",
            "{name} finished researching {answer} and wants to start the {cue} project soon.",
        ),
        form="What did {name} [research] for the {cue} project?",
        pronoun="What subject was {name} digging into, for {pos} {cue} project?",
        punct="What is the topic of {name}'s {cue} project?",
        date="What was {name} researching in {month} {year}?",
    ),
    Topic(
        "donate",
        _alts("library|hospital|theater|shelter|orchestra|hospice|choir|zoo"),
        _alts(
            "three hundred dollars|a crate of winter coats|forty picture books|"
            "a set of paint brushes|two bicycles|a box of canned soup|an old upright piano|"
            "a laptop"
        ),
        (
            "{name} donated {answer} to the {cue} fundraiser.",
            "At the {cue} fundraiser, {name} donated {answer}.",
        ),
        (
            "{name} wants to give {answer} to the {cue} fundraiser next time.",
            "The {cue} fundraiser sent {name} a thank-you note for {answer}.",
        ),
        form="What did {name} [donate] to the {cue} fundraiser?",
        pronoun="When {name} went to the {cue} fundraiser, what did {sub} give?",
        punct="What was {name}'s contribution to the {cue} fundraiser?",
        date="What did {name} donate in {month} {year}?",
    ),
    Topic(
        "adopt",
        _alts("greyhound|tabby|beagle|parrot|tortoise|corgi|rabbit|ferret"),
        _alts("Biscuit|Pepper|Mochi|Waffles|Juniper|Pickles|Noodle|Ziggy"),
        (
            "{name} adopted a {cue} and named it {answer}.",
            "{name} finally adopted a {cue}; it is called {answer}.",
        ),
        (
            "{name} keeps sending photos of {answer}, the neighbors' {cue}.",
            "{name} thinks about getting a {cue} like {answer} someday.",
        ),
        form="What is the {cue} from {name}'s [adoption] called?",
        pronoun="What did {name} call {pos} new {cue}?",
        punct="What's the name of {name}'s {cue}?",
        date="Which pet did {name} adopt in {month} {year}?",
    ),
    Topic(
        "marathon",
        _alts("Lisbon|Boston|Chicago|Berlin|Toronto|Denver|Dublin|Oslo"),
        _alts("3:41|4:05|3:58|4:22|3:29|4:47|3:15|5:02"),
        (
            "{name} finished the {cue} marathon in {answer}.",
            "The {cue} marathon went well: {name} finished in {answer}.",
        ),
        (
            "{name} is training for the {cue} marathon and hopes to break {answer}.",
            "{name} watched the {cue} marathon and thinks {sub} could do {answer} there.",
        ),
        form="What was {name}'s [finish] time at the {cue} marathon?",
        pronoun="How fast was {name} when {sub} ran {pos} {cue} marathon?",
        punct="What time did {name} post in the {cue} long-distance race?",
        date="What marathon time did {name} get in {month} {year}?",
    ),
    Topic(
        "trip",
        _alts("Kyoto|Porto|Oaxaca|Tbilisi|Reykjavik|Hanoi|Seville|Krakow"),
        _alts(
            "a tea farm|the old tram depot|a mezcal distillery|a glass workshop|"
            "the sulfur baths|a night market|a salt mine|a lighthouse"
        ),
        (
            "On the trip to {cue}, {name} visited {answer}.",
            "{name} visited {answer} while traveling in {cue}.",
        ),
        (
            "{name} wants to see {answer} if {sub} goes back to {cue}.",
            "{name} is planning a trip to {cue} and keeps talking about {answer}.",
        ),
        form="What place did {name} [visit] on the {cue} trip?",
        pronoun="What did {name} see when {sub} traveled to {cue}?",
        punct="What was the highlight of {name}'s {cue} trip?",
        date="Where did {name} travel in {month} {year}?",
    ),
    Topic(
        "bake",
        _alts("birthday|potluck|housewarming|retirement|graduation|anniversary"),
        _alts(
            "a lemon olive oil cake|forty cardamom buns|a rhubarb pie|black sesame cookies|"
            "a carrot cake|pretzel rolls|a plum galette"
        ),
        (
            "{name} baked {answer} for the {cue} party.",
            "For the {cue} party, {name} baked {answer}.",
        ),
        (
            "{name} is going to make {answer} for a {cue} party soon.",
            "Someone at the {cue} party asked {name} for the recipe for {answer}.",
        ),
        form="What did {name} [bake] for the {cue} party?",
        pronoun="What did {name} bring to the {cue} party that {sub} made {obj}self?",
        punct="What home-baked treat did {name} bring to the {cue} party?",
        date="What did {name} bake in {month} {year}?",
    ),
    Topic(
        "repair",
        _alts("van|motorbike|tractor|sailboat|scooter|pickup|camper|lawnmower"),
        _alts(
            "the clutch|a cracked radiator|the starter motor|the rudder|the brake cables|"
            "the fuel pump|the alternator"
        ),
        (
            "{name} repaired {answer} on the {cue} over the weekend.",
            "{name} spent two days on the {cue} and finally repaired {answer}.",
        ),
        (
            "{name} says the {cue} needs work again, probably {answer}.",
            "The mechanic quoted {name} a lot to fix {answer} on the {cue}.",
        ),
        form="What did {name} [repair] on the {cue}?",
        pronoun="Which part did {name} fix on {pos} {cue}?",
        punct="What was broken on {name}'s {cue}?",
        date="What did {name} repair in {month} {year}?",
    ),
    Topic(
        "learn",
        _alts("cello|pottery|welding|Portuguese|salsa|chess|calligraphy|fencing"),
        _alts("Rosalind|Mateus|Gwendolyn|Tomasz|Lucinda|Farid|Ottilie|Bastian"),
        (
            "{name} is learning {cue} from a teacher named {answer}.",
            "{name} is learning {cue} these days, with a teacher called {answer}.",
        ),
        (
            "{name} might switch {cue} teachers, maybe to {answer}.",
            "{name} practiced {cue} all week with a friend of {answer}.",
        ),
        form="Who did {name} [learn] {cue} from?",
        pronoun="Which teacher does {name} say {sub} studies {cue} with?",
        punct="Who is {name}'s {cue} teacher?",
        date="What was {name} learning in {month} {year}?",
    ),
    Topic(
        "move",
        _alts("Riverside|Greenfield|Hillcrest|Bayview|Northgate|Westbrook|Elmwood"),
        _alts("1,450 a month|2,100 a month|980 a month|1,725 a month|1,300 a month|2,450 a month"),
        (
            "{name} moved into an apartment in {cue}; the rent is {answer}.",
            "{name} moved to {cue} last week and pays {answer} for the apartment.",
        ),
        (
            "{name} looked at another apartment in {cue} asking {answer}.",
            "{name} would leave for {cue} if the rent there dropped to {answer}.",
        ),
        form="How much rent does {name} pay after [moving] to {cue}?",
        pronoun="What does {name} pay for {pos} place in {cue}?",
        punct="What is the rent on {name}'s {cue} apartment?",
        date="Where did {name} move in {month} {year}?",
    ),
    Topic(
        "plant",
        _alts("tomatoes|lavender|apple trees|blueberries|sunflowers|garlic|hops"),
        _alts(
            "along the back fence|on the balcony|in the community plot|beside the garage|"
            "in raised beds|under the kitchen window"
        ),
        ("{name} planted {cue} {answer}.", "{name} spent Saturday planting {cue} {answer}."),
        ("{name} wants more {cue} {answer} next year.", "{name} lost the {cue} {answer} to slugs."),
        form="Where did {name} [plant] the {cue}?",
        pronoun="Where did {name} say {sub} put the {cue}?",
        punct="Where are {name}'s {cue} growing?",
        date="What did {name} plant in {month} {year}?",
    ),
    Topic(
        "volunteer",
        _alts("food bank|animal rescue|literacy program|river cleanup|soup kitchen"),
        _alts(
            "every Tuesday|on Sunday mornings|twice a week|on Thursday nights|every other Saturday"
        ),
        (
            "{name} volunteered at the {cue} {answer}.",
            "{name} has volunteered at the {cue} {answer} for a while now.",
        ),
        (
            "{name} stopped going to the {cue} {answer} for a while.",
            "The {cue} asked {name} to help out {answer}.",
        ),
        form="How often does {name} [volunteer] at the {cue}?",
        pronoun="When does {name} help at the {cue}, and is {sub} still going?",
        punct="What is {name}'s schedule at the {cue}?",
        date="Where was {name} volunteering in {month} {year}?",
    ),
    Topic(
        "concert",
        _alts(
            "Velvet Harbor|Paper Lanterns|Northern Static|Cobalt Bloom|Glass Orchard|Midnight Ferry"
        ),
        _alts("85 dollars|140 dollars|62 dollars|210 dollars|98 dollars|175 dollars"),
        (
            "{name} got tickets to see {cue} for {answer}.",
            "{name} got two tickets for the {cue} concert, {answer} each.",
        ),
        (
            "{name} skipped the {cue} concert because the tickets cost {answer}.",
            "{name} is trying to get tickets for {cue} again, hopefully under {answer}.",
        ),
        form="What did a [ticket] to {cue} cost {name}?",
        pronoun="How much did {name} spend when {sub} went to see {cue}?",
        punct="What was the price of {name}'s {cue} tickets?",
        date="Which concert did {name} get tickets for in {month} {year}?",
    ),
    Topic(
        "promotion",
        _alts(
            "Halvorsen Labs|Brightline|Kestrel Foods|Meridian Bank|Aurora Health|"
            "Tidewater Logistics"
        ),
        _alts(
            "senior analyst|head of design|shift supervisor|product manager|lead engineer|"
            "regional director"
        ),
        ("{name} was promoted to {answer} at {cue}.", "{cue} promoted {name} to {answer}."),
        (
            "{name} interviewed at {cue} for {answer} but turned it down.",
            "{name} thinks {cue} will hire a new {answer} soon.",
        ),
        form="What [promotion] did {name} get at {cue}?",
        pronoun="What role did {name} say {sub} got at {cue}?",
        punct="What is {name}'s new job title at {cue}?",
        date="Where did {name} get a new role in {month} {year}?",
    ),
    Topic(
        "restaurant",
        _alts(
            "Lucky Basil|Casa Verde|the Copper Kettle|Saffron House|the Blue Door Diner|"
            "Tamarind Grill"
        ),
        _alts("green curry|mushroom risotto|fish tacos|lamb tagine|bibimbap|chicken shawarma"),
        (
            "{name} always orders the {answer} at {cue}; it is {pos} favorite dish.",
            "{name} ordered the {answer} at {cue} again, still {pos} favorite.",
        ),
        (
            "{name} tried the {answer} at {cue} and did not love it.",
            "{name} recommended {cue} to me, especially the {answer}.",
        ),
        form="What does {name} usually [order] at {cue}?",
        pronoun="Which dish does {name} prefer when {sub} eats at {cue}?",
        punct="What is {name}'s go-to dish at {cue}?",
        date="Which restaurant did {name} rave about in {month} {year}?",
    ),
    Topic(
        "plans",
        _alts("graduation|wedding|sabbatical|retirement|surgery|exams"),
        _alts(
            "a road trip along the coast|a small pottery studio|a cabin in the mountains|"
            "a cooking course in Naples|a month of sailing|a treehouse for the kids"
        ),
        (
            "{name} is planning {answer} after the {cue}.",
            "Once the {cue} is done, {name} is planning {answer}.",
        ),
        (
            "{name} talked about {answer} before the {cue}, but nothing is booked.",
            "After the {cue}, {name} might skip {answer} altogether.",
        ),
        form="What is {name}'s [plan] for after the {cue}?",
        pronoun="What does {name} want to do once {pos} {cue} is over?",
        punct="What's {name}'s big idea for after the {cue}?",
        date="What plans did {name} share in {month} {year}?",
    ),
)

OPENERS = ("", "Quick update:", "Oh, and", "Something I forgot to mention:", "Also,", "By the way,")

# Everyday talk around the facts. No month names, no "may", no topic-specific details.
USER_LINES = (
    "I slept badly last night and the coffee is not helping.",
    "Can you help me write a short note to my landlord about the heating?",
    "The weather has been grey all week.",
    "I need a reminder to call the dentist tomorrow.",
    "What is a good way to keep basil fresh?",
    "I finally cleaned out the hall closet.",
    "My phone battery drains really fast lately.",
    "Had coffee with {other} this morning, {osub} seemed tired.",
    "{other} called me about the weekend, nothing important.",
    "I want to read more books this year, any tips?",
    "The bus was late again, so I walked.",
    "Can you suggest a quick dinner with eggs and spinach?",
    "I keep forgetting to water the plants on the windowsill.",
    "She said the traffic downtown was terrible today.",
    "He told me the printer at work broke again.",
    "Her cousin is visiting, so the house is busy.",
    "His brother lent me a ladder for the gutters.",
    "I am trying to drink more water during the day.",
    "Remind me what the difference between baking soda and baking powder is.",
    "The neighbors are doing construction and it is loud.",
    "Should I replace my running shoes after a few hundred kilometers?",
    "I watched a documentary about octopuses last night.",
    "My laptop fan is making a strange noise.",
    "We might order pizza tonight.",
    "I need to renew my passport at some point.",
    "The cat next door sat on my car again.",
    "Can you explain how compound interest works?",
    "I started a puzzle with a thousand pieces.",
    "The internet went down for an hour this afternoon.",
    "{other} and I argued about a movie ending.",
)
ASSISTANT_LINES = (
    "That sounds like a lot to juggle; want me to make a short list?",
    "Thanks for telling me. I will keep that in mind.",
    "Good to hear. Is there anything you want to plan around it?",
    "Sure, here is a simple way to approach it step by step.",
    "That is frustrating. A small change at a time usually helps.",
    "Noted. Do you want a reminder for that later?",
    "Here is a quick suggestion that should not take long.",
    "It sounds like {other} has a lot going on too.",
    "I can help with that. What matters most to you here?",
    "Happy to help. Let me know how it goes.",
    "That makes sense. Anything else on your mind today?",
    "Interesting! Tell me more whenever you like.",
)

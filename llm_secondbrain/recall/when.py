"""Time in the question: "what did I decide last week about the boiler" -> the query "what did
I decide about the boiler" over the chunks dated last week, in the user's time zone.

A phrase is a period (yesterday, last week, this month, in March, March 2026, two weeks ago,
the past 3 days, last Friday) with an optional relation word before it (since, before, after,
until, in, during, between ... and ...). The words are data (`Lexicon`): another language is
another Lexicon, not more code. The grammar reads the structure (relation? + period) once for
every word list, so a new month spelling or number word is one entry.

What is a period and what is content is not always clear from the words: "the March numbers"
asks for March, "the March madness note" names a note. The parser takes both; the caller
(`SecondBrain.search`) searches without the window again when nothing in it clears the
relevance floor, so a phrase that was content never empties the answer. Words that are also
ordinary words ("may", "march") count as months only when written with a capital letter or
after a relation word ("since may"), and a bare year only after a relation word ("in 2025",
not "the 2025 budget").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone


@dataclass(frozen=True)
class Lexicon:
    """The words of one language's time phrases."""

    months: dict[str, int]
    ambiguous: frozenset[str]  # month words that are also ordinary words: capitalised or after a relation only
    weekdays: dict[str, int]  # Monday = 0
    numbers: dict[str, int]  # number words ("a week ago", "two weeks ago")
    units: dict[str, str]  # singular and plural -> day / week / month / year
    today: dict[str, int]  # a day named by its distance from today
    previous: frozenset[str]  # "last week": the calendar unit before this one
    current: frozenset[str]  # "this week": this calendar unit, so far
    rolling: frozenset[str]  # "the past 3 days", "the last week": a span ending now
    the: frozenset[str]  # the article that turns "last week" into a rolling span
    ago: frozenset[str]
    # relation words before a period: what the window keeps
    inside: frozenset[str]  # in March, during 2025, on Monday, from last week
    since: frozenset[str]  # since May: from the start of the period on
    after: frozenset[str]  # after March: from the end of the period on
    before: frozenset[str]  # before 2025: up to the start of the period
    until: frozenset[str]  # until March: up to the end of the period
    between: frozenset[str]  # between March and May, from March to May
    range_and: frozenset[str]  # the word between the two ends of a range


ENGLISH = Lexicon(
    months={**{m: i for i, m in enumerate(
        "january february march april may june july august september october november december".split(), 1)},
        **{m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)},
        "sept": 9},
    ambiguous=frozenset({"may", "march", "mar", "jan", "jun", "aug", "oct", "nov", "dec", "sep", "sept"}),
    weekdays={d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())},
    numbers={"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
             "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2,
             "a couple of": 2, "few": 3, "a few": 3},
    units={"day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month",
           "months": "month", "year": "year", "years": "year"},
    today={"today": 0, "yesterday": 1, "the day before yesterday": 2},
    previous=frozenset({"last", "previous"}),
    current=frozenset({"this", "current", "earlier this"}),
    rolling=frozenset({"last", "past"}),
    the=frozenset({"the"}),
    ago=frozenset({"ago"}),
    inside=frozenset({"in", "during", "on", "from", "of", "for"}),
    since=frozenset({"since"}),
    after=frozenset({"after"}),
    before=frozenset({"before", "prior to"}),
    until=frozenset({"until", "till", "through", "up to"}),
    between=frozenset({"between", "from"}),
    range_and=frozenset({"and", "to", "until", "till"}),
)


@dataclass(frozen=True)
class When:
    """A time phrase read from a query: the window (UTC instants, `until` exclusive, either
    open) and the query with the phrase taken out."""

    phrase: str  # as typed, relation word included: "since May"
    since: str | None
    until: str | None
    rest: str  # the query without the phrase
    shown: str = ""  # the window in the user's local dates: "2026-11-23 to 2026-11-29"
    fallback: bool = field(default=False, compare=False)  # nothing in the window matched: searched every date

    def as_dict(self) -> dict:
        """For --json and MCP: what was searched is shown scrubbed, as the query itself is."""
        from ..scrub import scrub

        return {"phrase": self.phrase, "since": self.since, "until": self.until, "window": self.shown,
                "searched": scrub(self.rest), "fallback": self.fallback}


# -- periods: (start, end) as local datetimes, end exclusive ----------------------------------

Period = tuple[datetime, datetime]


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time()).astimezone()  # the user's zone, its DST on that day


def _day(day: date) -> Period:
    return _midnight(day), _midnight(day + timedelta(days=1))


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _unit(day: date, unit: str) -> Period:
    """The calendar unit (week from Monday, month, year) holding `day`."""
    if unit == "day":
        return _day(day)
    if unit == "week":
        start = day - timedelta(days=day.weekday())
        return _midnight(start), _midnight(start + timedelta(weeks=1))
    if unit == "month":
        start = day.replace(day=1)
        return _midnight(start), _midnight(_add_months(start, 1))
    start = date(day.year, 1, 1)
    return _midnight(start), _midnight(date(day.year + 1, 1, 1))


def _back(day: date, unit: str, n: int) -> date:
    """A day in the calendar unit `n` units before the one holding `day`."""
    if unit == "day":
        return day - timedelta(days=n)
    if unit == "week":
        return day - timedelta(weeks=n)
    if unit == "month":
        return _add_months(day.replace(day=1), -n)
    return date(day.year - n, 1, 1)


def _month(month: int, year: int | None, today: date, *, strictly_past: bool = False) -> Period:
    """A month by name: in `year`, else the latest one not in the future (this month's own
    name is this month, unless `strictly_past`: "last March" in March is a year ago)."""
    if year is None:
        year = today.year if (month < today.month or (month == today.month and not strictly_past)) \
            else today.year - 1
    start = date(year, month, 1)
    return _midnight(start), _midnight(_add_months(start, 1))


# -- the grammar, built from a Lexicon ----------------------------------------------------------

NEAR = 40  # characters before a period read for its relation word ("between the", "prior to")

def _alt(words) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


class Grammar:
    """The period patterns and relation words of one Lexicon, compiled once."""

    def __init__(self, lex: Lexicon):
        self.lex = lex
        num = rf"(?P<n>\d{{1,3}}|{_alt(lex.numbers)})"
        unit = rf"(?P<unit>{_alt(lex.units)})"
        month = rf"(?P<month>{_alt(lex.months)})\.?"
        year = r"(?P<year>(?:1[89]|2[01])\d\d)"
        weekday = rf"(?P<weekday>{_alt(lex.weekdays)})"
        # (name, pattern): tried longest match first at each position
        self.periods = [(name, re.compile(rf"(?<![\w-]){pattern}(?:['’]s)?(?![\w-])", re.I)) for name, pattern in [
            ("today", rf"(?P<today>{_alt(lex.today)})"),
            ("rolling", rf"(?:(?:{_alt(lex.the)})\s+)?(?:{_alt(lex.rolling)})\s+(?:{num}\s+)?{unit}"),
            ("ago", rf"{num}\s+{unit}\s+(?:{_alt(lex.ago)})"),
            ("previous", rf"(?P<previous>{_alt(lex.previous)})\s+(?:{unit}|{month}|{weekday})"),
            ("current", rf"(?P<current>{_alt(lex.current)})\s+(?:{unit}|{month})"),
            ("month", rf"{month}(?:,?\s+{year})?"),
            ("year", year),
            ("weekday", weekday),
        ]]
        relations = {"between": lex.between, "since": lex.since, "after": lex.after,
                     "before": lex.before, "until": lex.until, "inside": lex.inside}
        self.relation = re.compile(
            rf"(?:^|(?<=\s))(?P<word>{_alt(set().union(*relations.values()))})\s+(?:(?:{_alt(lex.the)})\s+)?$", re.I)
        self.relations = relations
        self.range_and = re.compile(rf"^\s+(?:{_alt(lex.range_and)})\s+", re.I)

    def find(self, query: str, now: datetime) -> When | None:
        """The time phrase of `query`, if it holds one (the first; a range takes two)."""
        periods = list(self._periods(query, now))
        starts = {start: (end, period) for start, end, period in periods}
        for start, end, period in periods:
            relation, said, rel_start = self._relation(query[:start])
            since, until = period
            if relation == "between":
                tail = self._range_end(query, end, starts)
                if tail is not None:
                    end, until = tail
                elif said not in self.lex.inside:  # "between March" alone: not a range
                    continue
            elif relation == "since":
                until = None
            elif relation == "after":
                since, until = until, None
            elif relation == "before":
                since, until = None, since
            elif relation == "until":
                since = None
            phrase = query[rel_start:end]
            rest = _tidy(query[:rel_start] + " " + query[end:])
            return When(phrase=" ".join(phrase.split()), since=_utc(since), until=_utc(until),
                        rest=rest, shown=_shown(since, until))
        return None

    def _periods(self, query: str, now: datetime):
        """(start, end, period) of each period phrase, left to right, the longest at a
        position."""
        found = []
        for name, pattern in self.periods:
            for m in pattern.finditer(query):
                period = self._period(name, m, query, now)
                if period is not None:
                    found.append((m.start(), -(m.end() - m.start()), m.end(), period))
        found.sort()
        taken = -1
        for start, _, end, period in found:
            if start < taken:
                continue
            taken = end
            yield start, end, period

    def _relation(self, head: str) -> tuple[str | None, str, int]:
        """The relation word `head` ends with (its kind, the word, where it starts). Only the
        end of `head` is read, so a long query costs no more per period."""
        offset = max(0, len(head) - NEAR)
        m = self.relation.search(head[offset:])
        if not m:
            return None, "", len(head)
        said = " ".join(m.group("word").lower().split())
        kind = next(name for name in ("between", "since", "after", "before", "until", "inside")
                    if said in self.relations[name])
        return kind, said, offset + m.start()

    def _range_end(self, query: str, at: int, starts: dict) -> tuple[int, datetime] | None:
        """The far end of a range that a period ending at `at` opens ("... and May")."""
        m = self.range_and.match(query[at:at + NEAR])
        if not m or at + m.end() not in starts:
            return None
        end, period = starts[at + m.end()]
        return end, period[1]

    def _period(self, name: str, m: re.Match, query: str, now: datetime) -> Period | None:
        lex, today = self.lex, now.date()
        groups = {k: v.lower() for k, v in m.groupdict().items() if v}
        unit = lex.units.get(groups.get("unit", ""))
        n = _number(groups.get("n"), lex)
        if name == "today":
            return _day(today - timedelta(days=lex.today[" ".join(groups["today"].split())]))
        if name == "rolling":
            # "last week" alone is the calendar week before this one (the "previous" rule);
            # with an article or a number it is a span ending now: "the past week", "last 3 days"
            spoken = m.group(0).lower().split()
            if not (spoken[0] in lex.the or n is not None or spoken[0] not in lex.previous):
                return None
            start = _same_day_back(today, {"day": 0, "week": 0, "month": 1, "year": 12}[unit] * (n or 1))
            if unit in ("day", "week"):
                start = today - timedelta(days=(n or 1) * (7 if unit == "week" else 1))
            return _midnight(start), _midnight(today + timedelta(days=1))
        if name == "ago":
            if n is None:
                return None
            return _unit(_back(today, unit, n), unit)
        if name == "previous":
            if unit:
                return _unit(_back(today, unit, 1), unit)
            if "month" in groups:
                return _month(lex.months[groups["month"]], None, today, strictly_past=True)
            return _day(_last_weekday(today, lex.weekdays[groups["weekday"]]))
        if name == "current":
            if unit:
                return _unit(today, unit)
            return _month(lex.months[groups["month"]], today.year, today)
        if name == "month":
            word = m.group("month")
            if "year" not in groups and word.lower() in lex.ambiguous and not word[0].isupper() \
                    and not self._after_relation(query, m.start()):
                return None
            return _month(lex.months[groups["month"]], int(groups["year"]) if "year" in groups else None, today)
        if name == "year":
            if not self._after_relation(query, m.start()):
                return None  # "the 2025 budget": a bare year is a word of the note
            year = int(groups["year"])
            return _midnight(date(year, 1, 1)), _midnight(date(year + 1, 1, 1))
        if name == "weekday":
            if not self._after_relation(query, m.start()):
                return None  # "the Monday meeting" recurs: content
            return _day(_last_weekday(today, lex.weekdays[groups["weekday"]], or_today=True))
        return None

    def _after_relation(self, query: str, start: int) -> bool:
        """Is the word at `start` after a relation word, or the far end of a range ("between
        2024 and 2025")?"""
        head = query[max(0, start - 2 * NEAR):start]
        if self.relation.search(head[-NEAR:]):
            return True
        return bool(re.search(rf"(?:{_alt(self.lex.range_and)})\s+$", head, re.I)
                    and re.search(rf"(?<!\w)(?:{_alt(self.lex.between)})\s", head, re.I))


def _same_day_back(day: date, months: int) -> date:
    first = _add_months(day.replace(day=1), -months)
    last = (_add_months(first, 1) - timedelta(days=1)).day
    return first.replace(day=min(day.day, last))


def _last_weekday(today: date, weekday: int, *, or_today: bool = False) -> date:
    back = (today.weekday() - weekday) % 7
    return today - timedelta(days=back or (0 if or_today else 7))


def _number(word: str | None, lex: Lexicon) -> int | None:
    if word is None:
        return None
    if word.isdigit():
        return int(word)
    return lex.numbers.get(" ".join(word.split()))


def _utc(moment: datetime | None) -> str | None:
    return None if moment is None else moment.astimezone(timezone.utc).isoformat(timespec="seconds")


def _shown(since: datetime | None, until: datetime | None) -> str:
    first = since.date().isoformat() if since else "the beginning"
    last = (until - timedelta(seconds=1)).date().isoformat() if until else "now"
    return f"{first} to {last}" if first != last else first


def _tidy(text: str) -> str:
    """The query with the phrase cut out: no doubled spaces, no stray comma left at an end."""
    text = re.sub(r"\s+([,;?!.])", r"\1", " ".join(text.split()))
    return text.strip(" ,;")


_GRAMMARS: dict[int, Grammar] = {}


def find(query: str, now: datetime | None = None, lexicon: Lexicon = ENGLISH) -> When | None:
    """The time phrase in `query` as a window in the user's local time zone, or None.
    `now` (aware) defaults to this moment."""
    grammar = _GRAMMARS.get(id(lexicon))
    if grammar is None:
        grammar = _GRAMMARS[id(lexicon)] = Grammar(lexicon)
    return grammar.find(query, now or datetime.now().astimezone())

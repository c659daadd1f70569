#!/usr/bin/env python3
"""The time-phrase set: dated notes and conversations, and questions with a time phrase in
them (or a month that is only a word of the note), relative to the day it is built.

    python bench/when_set.py              # prints the set built for today: documents, queries

A *topic* is one subject written about at several times ("the boiler": a decision last week,
a quote in a month four months back, a service two years ago). Each of its entries is dated
inside the window of one phrase; a question about the topic with that phrase has as answers
the topic's entries whose date falls in the phrase's window (the *gold window*, computed here
by plain calendar arithmetic, apart from the parser's code). The topic's other entries say
the same kind of thing at other times: without reading the phrase they are as good a match.

Content queries name a month (or a word like "May") that belongs to the note ("the March
madness bracket"): their answer is dated outside that month, while time-topic entries are
dated inside it. The parser must not cost these their answer.

Phrase kinds (each a function of today): yesterday, this_week, last_week, weeks_ago(n),
days_ago(n), last_month, this_month, months_ago(n), month_back(n) ("in March": the month n
back, by its name alone), month_year_back(n) ("in March 2026"), last_year, years_ago(n),
in_year_back(n) ("in 2024"), before_year_back(n) ("before 2024"), since_month_back(n)
("since May"), past_days(n) ("in the past 3 days"), last_weekday(d) ("last Friday").

Dev and held-out: the conversation topics and the odd-numbered note topics were written after
the parser was frozen and are reported apart as held-out.
"""
from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

MONTHS = list(calendar.month_name)[1:]
WEEKDAYS = list(calendar.day_name)


def _add_months(day: date, n: int) -> date:
    i = day.year * 12 + day.month - 1 + n
    return date(i // 12, i % 12 + 1, 1)


@dataclass
class Phrase:
    """A phrase as typed, its gold window [first, last] (local dates, None = open) and the
    day an entry for it is dated."""

    text: str
    first: date | None
    last: date | None
    entry: date


def phrase(kind: str, n: int, today: date) -> Phrase:
    """The phrase of `kind` with parameter `n`, as of `today`."""
    monday = today - timedelta(days=today.weekday())
    if kind == "yesterday":
        d = today - timedelta(days=1)
        return Phrase("yesterday", d, d, d)
    if kind == "this_week":
        return Phrase("this week", monday, monday + timedelta(days=6), today)
    if kind == "last_week":
        start = monday - timedelta(days=7)
        return Phrase("last week", start, start + timedelta(days=6), start + timedelta(days=2))
    if kind == "weeks_ago":
        start = monday - timedelta(days=7 * n)
        words = {2: "two", 3: "three", 4: "four"}
        return Phrase(f"{words[n]} weeks ago", start, start + timedelta(days=6), start + timedelta(days=3))
    if kind == "days_ago":
        d = today - timedelta(days=n)
        return Phrase(f"{n} days ago", d, d, d)
    if kind in ("last_month", "this_month", "months_ago", "month_back", "month_year_back", "since_month_back"):
        back = {"last_month": 1, "this_month": 0}.get(kind, n)
        start = _add_months(today.replace(day=1), -back)
        end = _add_months(start, 1) - timedelta(days=1)
        entry = min(start + timedelta(days=14), today)
        name = MONTHS[start.month - 1]
        number = "a two three four five six seven eight nine ten eleven".split()[max(n - 1, 0)]
        text = {"last_month": "last month", "this_month": "this month",
                "months_ago": f"{number} month{'s' if n > 1 else ''} ago",
                "month_back": f"in {name}", "month_year_back": f"in {name} {start.year}",
                "since_month_back": f"since {name}"}[kind]
        if kind == "since_month_back":
            return Phrase(text, start, None, entry)
        return Phrase(text, start, end, entry)
    if kind == "last_year":
        y = today.year - 1
        return Phrase("last year", date(y, 1, 1), date(y, 12, 31), date(y, 6, 15))
    if kind == "years_ago":
        y = today.year - n
        return Phrase(f"{['', 'a', 'two', 'three'][n]} year{'s' if n > 1 else ''} ago", date(y, 1, 1),
                      date(y, 12, 31), date(y, 4, 10))
    if kind == "in_year_back":
        y = today.year - n
        return Phrase(f"in {y}", date(y, 1, 1), date(y, 12, 31), date(y, 9, 20))
    if kind == "before_year_back":
        y = today.year - n
        return Phrase(f"before {y}", None, date(y - 1, 12, 31), date(y - 2, 5, 5))
    if kind == "past_days":
        return Phrase(f"in the past {n} days", today - timedelta(days=n), today, today - timedelta(days=n // 2))
    if kind == "last_weekday":
        back = (today.weekday() - n) % 7 or 7
        d = today - timedelta(days=back)
        return Phrase(f"last {WEEKDAYS[n]}", d, d, d)
    raise ValueError(kind)


# A topic: (id, question with {when} where the phrase goes, entries: (phrase kind, n, text)).
# Note topics first, then conversations (a user's turn and the assistant's answer).
NOTE_TOPICS = [
    ("boiler", "what did I decide about the boiler {when}", [
        ("last_week", 0, "Decided to replace the boiler's pressure valve instead of the whole unit; plumber booked."),
        ("month_year_back", 4, "Boiler quote from Varme AS: 4,200 for a new condensing unit. Decided to wait."),
        ("in_year_back", 2, "Boiler serviced. Technician says it is fine for a few more winters; decided to keep it."),
        ("before_year_back", 2, "Bought the house; the boiler is the original one from 1998, decide later."),
    ]),
    ("standup", "notes from the team standup {when}", [
        ("yesterday", 0, "Standup: Kari blocked on the staging database, Ola finishing the export job."),
        ("weeks_ago", 2, "Standup: release slipped a day, Priya pairing with Lars on the flaky test."),
        ("month_back", 7, "Standup: everyone on the migration; daily sync moved to 9:15."),
    ]),
    ("invoicing", "what did we agree on invoicing {when}", [
        ("this_week", 0, "Agreed with Nordvik AS: invoices go out on the 1st, net 30, PDF by e-mail."),
        ("last_month", 0, "Invoicing: we agreed to bill Helix Labs monthly instead of per milestone."),
        ("last_year", 0, "Agreed invoicing terms with the accountant: net 14 for new clients."),
    ]),
    ("car", "car service {when}", [
        ("days_ago", 3, "Car service done at the garage: new brake pads, oil change, tyres rotated."),
        ("months_ago", 3, "Car service booked; the garage found a worn timing belt, replace next time."),
        ("years_ago", 2, "Car service: winter tyres fitted, battery tested weak."),
    ]),
    ("garden", "what did I plant in the garden {when}", [
        ("last_week", 0, "Garden: planted garlic cloves and tulip bulbs along the fence."),
        ("month_back", 6, "Garden: planted tomatoes, basil and two rows of carrots."),
        ("in_year_back", 1, "Garden: planted an apple tree and raspberry canes by the shed."),
    ]),
    ("dentist", "dentist appointment {when}", [
        ("last_weekday", 4, "Dentist appointment: one small filling, next check-up in a year."),
        ("month_year_back", 8, "Dentist appointment moved; cleaning done, x-rays fine."),
        ("before_year_back", 1, "Dentist appointment: wisdom tooth removed, two days off work."),
    ]),
    ("budget", "household budget review {when}", [
        ("this_month", 0, "Budget review: groceries over by 800, cut the streaming subscriptions."),
        ("months_ago", 2, "Budget review: electricity bill doubled; moved savings transfer to the 25th."),
        ("last_year", 0, "Budget review: set aside 3,000 a month for the roof repair."),
    ]),
    ("runs", "how far did I run {when}", [
        ("past_days", 3, "Run: 8 km along the river, easy pace, knee felt fine."),
        ("weeks_ago", 3, "Run: 12 km long run, hard last two kilometres."),
        ("month_year_back", 5, "Run: 5 km race, personal best 23:40."),
    ]),
    ("server", "what broke on the web server {when}", [
        ("yesterday", 0, "Web server: nginx returned 502s after the certificate renewal; restarted php-fpm."),
        ("last_month", 0, "Web server: disk filled up with old logs; set up logrotate weekly."),
        ("in_year_back", 2, "Web server: moved from the old VPS to the new host, DNS switched."),
    ]),
    ("reading", "which book was I reading {when}", [
        ("this_week", 0, "Reading: started The Left Hand of Darkness, slow first chapters."),
        ("month_back", 5, "Reading: finished Piranesi, loved the house of statues."),
        ("years_ago", 3, "Reading: Middlemarch for the book club, too long for a month."),
    ]),
    ("family", "call with mum {when}", [
        ("last_weekday", 6, "Call with mum: she wants us for Christmas, dad's hip is better."),
        ("months_ago", 4, "Call with mum: planning the summer cabin week, she booked the ferry."),
        ("last_year", 0, "Call with mum about selling the old flat; agreed to wait a year."),
    ]),
    ("health", "doctor said what about my back {when}", [
        ("last_week", 0, "Doctor: back pain is muscular, physio twice a week, no lifting for a month."),
        ("in_year_back", 1, "Doctor checked my back after the move, prescribed stretches."),
        ("before_year_back", 2, "Doctor: MRI of the back showed a mild disc bulge."),
    ]),
    ("taxes", "tax return {when}", [
        ("since_month_back", 3, "Tax return: added the home office deduction, sent to the tax office."),
        ("in_year_back", 2, "Tax return: forgot the interest on the car loan, filed a correction."),
        ("before_year_back", 2, "Tax return: first year self-employed, the accountant did it."),
    ]),
    ("hiring", "interviews for the backend role {when}", [
        ("past_days", 5, "Interviews for the backend role: Sofie strong on SQL, second round booked."),
        ("month_back", 3, "Interviews for the backend role: two candidates declined the salary."),
        ("last_year", 0, "Interviews for the backend role paused until the budget is approved."),
    ]),
    ("trip", "plans for the trip {when}", [
        ("weeks_ago", 2, "Trip planning: train to Bergen, two nights, hike Fløyen if dry."),
        ("month_year_back", 9, "Trip: booked flights to Lisbon, stayed in Alfama, day trip to Sintra."),
        ("years_ago", 2, "Trip: road trip through Lofoten, rented a cabin in Reine."),
    ]),
    ("laptop", "laptop problems {when}", [
        ("days_ago", 2, "Laptop: battery drains overnight; disabled wake on lid open."),
        ("months_ago", 5, "Laptop: replaced the SSD, reinstalled, restored from backup."),
        ("before_year_back", 1, "Laptop: bought a ThinkPad, set up full-disk encryption."),
    ]),
]

CONVERSATION_TOPICS = [
    ("sourdough", "what did the assistant say about my sourdough {when}", [
        ("yesterday", 0, "My sourdough came out flat again, what am I doing wrong?",
         "A flat loaf usually means over-proofing: shorten the bulk ferment and shape more tightly."),
        ("months_ago", 2, "How often should I feed my sourdough starter?",
         "Feed it daily at room temperature, or weekly if you keep it in the fridge."),
        ("last_year", 0, "Can I make sourdough with rye flour only?",
         "Yes, rye sourdough works, but the dough is sticky and needs a loaf tin."),
    ]),
    ("python", "python question about asyncio {when}", [
        ("last_week", 0, "Why does my asyncio task never finish?",
         "You create the task but never await it; keep a reference and await it or gather the tasks."),
        ("month_back", 4, "asyncio: how do I run blocking code without freezing the loop?",
         "Use asyncio.to_thread or loop.run_in_executor for the blocking call."),
        ("in_year_back", 1, "What is the difference between asyncio.gather and wait?",
         "gather returns results in order and raises the first error; wait gives done and pending sets."),
    ]),
    ("sql", "the SQL index advice {when}", [
        ("this_week", 0, "This query on orders by customer is slow, should I add an index?",
         "Add a composite index on (customer_id, created_at) so the sort uses it too."),
        ("weeks_ago", 4, "Does SQLite use two indexes for one query?",
         "Usually one per table; an OR may use several, otherwise make a covering index."),
        ("years_ago", 2, "How do I see if Postgres uses my index?",
         "Run EXPLAIN ANALYZE and look for an Index Scan on it."),
    ]),
    ("plants", "why are my plant leaves yellow, asked {when}", [
        ("past_days", 4, "The monstera has yellow leaves at the bottom.",
         "Lower leaves yellowing is mostly overwatering; let the top of the soil dry first."),
        ("month_year_back", 6, "My basil leaves turn yellow on the windowsill.",
         "Basil yellows from cold drafts or too little light; move it and water less."),
    ]),
    ("cv", "feedback on my CV {when}", [
        ("last_month", 0, "Can you review my CV summary for a data engineer job?",
         "Lead with the pipelines you built and their scale; cut the objective statement."),
        ("before_year_back", 1, "How long should a CV be?",
         "Two pages at most; one page early in a career."),
    ]),
    ("finance", "advice on index funds {when}", [
        ("last_weekday", 2, "Should I move my savings into an index fund?",
         "If you will not need the money for five years or more, a low-cost global index fund suits."),
        ("months_ago", 6, "What is an expense ratio?",
         "The yearly fee a fund charges, as a share of what you hold; lower is better."),
        ("last_year", 0, "Index fund or savings account for a house deposit in two years?",
         "For two years a savings account: a fund can fall just when you need the money."),
    ]),
    ("german", "German grammar question {when}", [
        ("days_ago", 4, "When do I use the dative in German?",
         "After certain prepositions like mit, nach, von and for the indirect object."),
        ("in_year_back", 2, "What is the German word order in a subordinate clause?",
         "The conjugated verb goes to the end of the clause."),
    ]),
    ("bike", "bike repair help {when}", [
        ("this_month", 0, "My bike chain skips under load.",
         "A worn chain or cassette: measure chain stretch, replace both if it is past 0.75%."),
        ("years_ago", 1, "How do I fix a flat on a tubeless tyre?",
         "Spin the wheel so the sealant finds the hole, or fit a plug."),
    ]),
]

# Content queries: a month (or a date word) is part of what the note is about; the answer is
# dated in another month.
CONTENT = [
    ("march-madness", "the March madness bracket picks", "March madness bracket: Gonzaga to win, upset pick Vermont.", 5),
    ("may-day", "photos from the May Day parade", "May Day parade photos uploaded to the family album.", 8),
    ("april-fools", "the April Fools prank ideas", "April Fools prank ideas: swap the office keyboard layouts.", 9),
    ("june-wedding", "checklist for the June wedding", "June wedding checklist: florist, seating plan, speeches.", 2),
    ("august-rush", "the August Rush soundtrack", "August Rush soundtrack: the rhapsody track is on the playlist.", 3),
    ("december-release", "the December release notes", "December release notes draft: dark mode and faster search.", 7),
    ("january-diet", "my January diet plan", "January diet plan: no sugar, three runs a week, soup lunches.", 6),
    ("october-fest", "the Oktoberfest trip to Munich in October", "Oktoberfest: tent reservation at noon, meet at the station.", 1),
    ("last-week-tonight", "notes on Last Week Tonight episode", "Last Week Tonight episode on right to repair, worth sharing.", 10),
    ("yesterday-song", "lyrics of Yesterday by the Beatles", "Yesterday by the Beatles: chords for the guitar version, capo 2.", 11),
]


def _at(day: date, hour: int = 12) -> str:
    """Local noon of `day` as the stored UTC instant."""
    from datetime import timezone

    return datetime.combine(day, time(hour)).astimezone().astimezone(timezone.utc).isoformat(timespec="seconds")


def build(today: date | None = None) -> tuple[list[dict], list[dict]]:
    """(documents, queries) as of `today`. A document: id, kind (note or conversation), ts,
    text (a conversation: user and assistant). A query: id, query, gold window (first, last
    or None), answers (document ids), class (time or content), held_out."""
    today = today or date.today()
    docs: list[dict] = []
    queries: list[dict] = []
    topics = [(t, "note") for t in NOTE_TOPICS] + [(t, "conversation") for t in CONVERSATION_TOPICS]
    for number, ((slug, question, entries), kind) in enumerate(topics):
        held_out = kind == "conversation" or number % 2 == 1
        placed = []
        for i, (pk, n, *text) in enumerate(entries):
            p = phrase(pk, n, today)
            doc_id = f"{slug}-{i}"
            docs.append({"id": doc_id, "kind": kind, "ts": _at(p.entry), "day": p.entry.isoformat(),
                         "text": text[0] if kind == "note" else text[0], "answer": text[1] if kind != "note" else None})
            placed.append((doc_id, p))
        for i, (doc_id, p) in enumerate(placed):
            answers = [d for d, q in placed if (p.first is None or q.entry >= p.first)
                       and (p.last is None or q.entry <= p.last)]
            queries.append({"id": f"{slug}-q{i}", "query": question.format(when=p.text), "class": "time",
                            "first": p.first.isoformat() if p.first else None,
                            "last": p.last.isoformat() if p.last else None,
                            "answers": answers, "held_out": held_out})
    for number, (slug, query, text, back) in enumerate(CONTENT):
        day = _add_months(today.replace(day=1), -back) + timedelta(days=9)
        docs.append({"id": slug, "kind": "note", "ts": _at(day), "day": day.isoformat(), "text": text,
                     "answer": None})
        queries.append({"id": f"{slug}-q", "query": query, "class": "content", "first": None, "last": None,
                        "answers": [slug], "held_out": number % 2 == 1})
    return docs, queries


if __name__ == "__main__":
    import json

    docs, queries = build()
    for d in docs:
        print(json.dumps(d))
    for q in queries:
        print(json.dumps(q))
    print(f"{len(docs)} documents, {len(queries)} queries "
          f"({sum(q['class'] == 'time' for q in queries)} time, {sum(q['class'] == 'content' for q in queries)} content)")

"""What a person types for a date (`--since 2026-03-01`, `7d`, `yesterday`) -> the instant the
brain compares chunk dates with.

Chunk dates (`chunks.ts`, else `chunks.created`) are stored as ISO 8601 in UTC
(`2026-03-01T08:15:00+00:00`), so an instant in that same form compares correctly as text.
A bare date means that day in the user's time zone; anything else is refused in one line,
never compared as a string (which matched nothing, or everything).
"""
from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

_RELATIVE = re.compile(r"^(\d+)\s*([hdw])$")
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
HELP = "an ISO date or datetime (2026-03-01, 2026-03-01T14:30), Nd/Nw/Nh ago (7d), today or yesterday"


def _utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


def _local_midnight(day: date) -> datetime:
    return datetime.combine(day, time()).astimezone()  # the user's zone


def parse(text: str | date, *, end: bool = False, now: datetime | None = None) -> str:
    """The UTC instant `text` names. With `end=True` a whole day (a bare date, today,
    yesterday) extends to its end: the instant is the next day's local midnight, to be
    compared with `<`. A Python caller's `date` is that bare date and a `datetime` that
    instant (naive: in the user's zone), as if typed. Raises ValueError with the accepted
    forms, and for an instant outside the years 1-9999 (`99999999d`) that dates cannot hold."""
    try:
        return _parse(text, end, now or datetime.now().astimezone())
    except _NotADate:
        raise
    except (OverflowError, ValueError):  # the arithmetic left the years datetime holds
        raise ValueError(f"date out of range: {text!r} (use {HELP}, within the years 1-9999)") from None


class _NotADate(ValueError):
    pass


def _day(day: date, end: bool) -> str:
    """A whole day in the user's zone: from its midnight, or (`end`) up to the next one."""
    return _utc(_local_midnight(day + timedelta(days=1 if end else 0)))


def _parse(text: str | date, end: bool, now: datetime) -> str:
    if isinstance(text, datetime):
        return _utc(text)  # a naive one is read in the user's zone, like a typed wall-clock time
    if isinstance(text, date):
        return _day(text, end)
    if not isinstance(text, str):
        raise _NotADate(f"not a date: {text!r} (use {HELP}; or a date or datetime)")
    raw = text.strip().lower()
    if raw in ("today", "yesterday"):
        return _day(now.date() - timedelta(days=raw == "yesterday"), end)
    if match := _RELATIVE.match(raw):
        return _utc(now - int(match.group(1)) * _UNITS[match.group(2)])
    bare_date = re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw)
    try:
        if bare_date:
            day = date.fromisoformat(raw)
        else:
            moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise _NotADate(f"not a date: {text!r} (use {HELP})") from None
    if bare_date:
        return _day(day, end)
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a wall-clock time in the user's zone
    return _utc(moment)


def normalise_stored(text: str | None) -> str | None:
    """A date found in a source (front matter, a message's Date) in the stored form; None
    when it cannot be read (the file's own date is used instead)."""
    if not text:
        return None
    try:
        return parse(text)
    except ValueError:
        return None

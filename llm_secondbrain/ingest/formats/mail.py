"""E-mail: `.eml` files (one message) and mbox mailboxes (many), one section per message.

Each message's section has its subject as title, its From, Subject and Message-ID in `meta`
(cited `inbox.mbox#<message-id>`) and its Date as the chunk's date, so `--since` finds mail by
when it was sent, not when the mailbox was last touched. The plain body is preferred over the
HTML one; attachments are listed by name, never read. Quoted replies (`> ...` lines and the
"On ... wrote:" line before them) are dropped: the message they quote is indexed on its own.
Only the standard library is used (`email` with the modern policy decodes RFC 2047 headers).
"""
from __future__ import annotations

import email
import email.errors
import email.policy
import os
import re
from datetime import timezone
from email.utils import parsedate_to_datetime

from ..readers import Section, Sections
from ..sources import Skip
from .html import visible_text

BROKEN = "broken mail messages skipped"
# A new message starts at a line beginning "From " (the rule of Python's mailbox.mbox). The
# bytes are split here rather than through mailbox.mbox, which would open the file a second
# time, past the size and file-type checks every source goes through.
_FROM_LINE = re.compile(rb"^From [^\n]*\n", re.M)
_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.M)  # mboxo/mboxrd escaping of body lines
_QUOTE = re.compile(r"^[ \t]*>")
_ATTRIBUTION = re.compile(r"^(On |Le |Am |Den |På ).*(wrote|écrit|schrieb|skrev):[ \t]*$", re.I)
_PARSE_ERRORS = (ValueError, LookupError, TypeError, AttributeError, IndexError, UnicodeError,
                 email.errors.MessageError)


def read_eml(raw: bytes, path: str) -> list[Section]:
    try:
        section = _message_section(raw, 1)
    except _PARSE_ERRORS:
        raise Skip("corrupt") from None
    if section is None:
        raise Skip("corrupt")
    return [section]


def read_mbox(raw: bytes, path: str) -> list[Section]:
    starts = [m.start() for m in _FROM_LINE.finditer(raw)]
    if not starts or raw[:starts[0]].strip():
        raise Skip("not a mailbox")
    messages = Sections()
    for number, (start, end) in enumerate(zip(starts, starts[1:] + [len(raw)]), start=1):
        body = _ESCAPED_FROM.sub(rb"\1", raw[raw.index(b"\n", start) + 1:end])
        try:
            section = _message_section(body, number)
        except _PARSE_ERRORS:
            section = None
        if section is None:
            messages.notes[BROKEN] += 1
        else:
            messages.append(section)
    if len(messages) > 1:
        # The lexical lane indexes one title per source: the first message's subject would be
        # every other message's title, so a mailbox is titled by its name.
        for section in messages:
            section.title = None
        messages[0].title = os.path.basename(path)
    return messages


def _message_section(raw: bytes, number: int) -> Section | None:
    """One message as a section, or None when it has no header a message has."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    # Each fetch of a header parses it again (the modern policy's header objects): once each.
    subject, sender, message_id, date = (message.get(h) for h in ("Subject", "From", "Message-ID", "Date"))
    if not any((subject, sender, message_id, date)):
        return None
    subject = " ".join(str(subject or "").split())
    sender = " ".join(str(sender or "").split())
    message_id = str(message_id or "").strip().strip("<>") or f"message-{number}"
    sent = _date(date)
    body = _body(message)
    attachments = ([part.get_filename() for part in message.walk() if part.get_filename()]
                   if message.is_multipart() else [])
    head = [f"Subject: {subject}" if subject else "", f"From: {sender}" if sender else "",
            f"Date: {sent}" if sent else "",
            f"Attachments: {', '.join(attachments)}" if attachments else ""]
    text = "\n".join(line for line in head if line) + "\n\n" + body
    meta = {"message_id": message_id, "from": sender, "subject": subject}
    return Section(text, meta=meta, ts=sent, title=subject or None)


def _date(value) -> str | None:
    if not value:
        return None
    try:
        sent = parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    if sent.tzinfo is None:
        sent = sent.replace(tzinfo=timezone.utc)
    return sent.astimezone(timezone.utc).isoformat(timespec="seconds")


def _body(message) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    content = part.get_content()
    if isinstance(content, bytes):
        return ""
    if part.get_content_subtype() == "html":
        content = visible_text(content)[1]
    return _without_quotes(content.replace("\r\n", "\n").replace("\r", "\n"))


def _without_quotes(text: str) -> str:
    """The message's own words: quoted lines and the attribution line before them dropped."""
    lines = text.split("\n")
    kept: list[str] = []
    for i, line in enumerate(lines):
        if _QUOTE.match(line):
            continue
        if _ATTRIBUTION.match(line.strip()) and any(_QUOTE.match(rest) for rest in lines[i + 1:i + 3]):
            continue
        kept.append(line)
    return "\n".join(kept).strip() + "\n"

"""E-mail: `.eml` files (one message) and mbox mailboxes (many), one section per message.

Each message's section has its subject as title, its From, Subject and Message-ID in `meta`
(cited `inbox.mbox#<message-id>`) and its Date as the chunk's date, so `--since` finds mail by
when it was sent, not when the mailbox was last touched. The plain body is preferred over the
HTML one; attachments are listed by name, never read. Quoted replies (`> ...` lines and the
"On ... wrote:" line before them) are dropped: the message they quote is indexed on its own.
Only the standard library is used (`email` with the modern policy decodes RFC 2047 headers).

The email package parses nested multiparts recursively, and more slowly the deeper they go (a
message nested 5,000 deep ran out of stack after 2 s): a message whose parts nest deeper than
MAX_DEPTH is not parsed at all. A damaged field costs that field, not the message: a header the
package's parser raises on is kept as written, a Date it cannot place in time leaves the message
undated, an attachment name it cannot decode is left out of the list, and a body in a charset
no codec knows is read anyway (see `_undeclared`). Whatever else the package raises on a
damaged message makes it a broken one. A mailbox stops being read at a message once the text
limit is reached.
"""
from __future__ import annotations

import email
import email.policy
import os
import re
from datetime import timezone
from email.utils import parsedate_to_datetime

from ..readers import Limits, Section, Sections
from ..sources import Skip
from .html import visible_text

MAX_DEPTH = 64  # multiparts inside multiparts; real mail nests a handful deep

BROKEN = "broken mail messages skipped"
# A new message starts at a line beginning "From " (the rule of Python's mailbox.mbox). The
# bytes are split here rather than through mailbox.mbox, which would open the file a second
# time, past the size and file-type checks every source goes through.
_FROM_LINE = re.compile(rb"^From [^\n]*\n", re.M)
_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.M)  # mboxo/mboxrd escaping of body lines
_QUOTE = re.compile(r"^[ \t]*>")
_ATTRIBUTION = re.compile(r"^(On |Le |Am |Den |På ).*(wrote|écrit|schrieb|skrev):[ \t]*$", re.I)
_BOUNDARY = re.compile(rb"""boundary\s*=\s*(?:"([^"\r\n]*)"|([^\s;"]+))""", re.I)
_DELIMITER = re.compile(rb"^--([^\r\n]*?)[ \t]*\r?$", re.M)


def read_eml(raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
    if mime_depth(raw) > MAX_DEPTH:
        raise Skip("nested too deep")
    try:
        section = _message_section(raw, 1)
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - a damaged message makes the email package raise anything
        raise Skip("corrupt") from None
    if section is None:
        raise Skip("corrupt")
    sections = Sections(limit=limits.text)
    sections.add(section)
    return sections


def read_mbox(raw: bytes, path: str, limits: Limits = Limits()) -> list[Section]:
    starts = [m.start() for m in _FROM_LINE.finditer(raw)]
    if not starts or raw[:starts[0]].strip():
        raise Skip("not a mailbox")
    messages = Sections(limit=limits.text)
    for number, (start, end) in enumerate(zip(starts, starts[1:] + [len(raw)]), start=1):
        body = _ESCAPED_FROM.sub(rb"\1", raw[raw.index(b"\n", start) + 1:end])
        section = None
        if mime_depth(body) <= MAX_DEPTH:
            try:
                section = _message_section(body, number)
            except MemoryError:
                raise
            except Exception:  # noqa: BLE001 - one damaged message, the others are read
                section = None
        if section is None:
            messages.notes[BROKEN] += 1
        elif not messages.add(section):
            break
    if len(messages) > 1:
        # The lexical lane indexes one title per source: the first message's subject would be
        # every other message's title, so a mailbox is titled by its name.
        for section in messages:
            section.title = None
        messages[0].title = os.path.basename(path)
    return messages


def mime_depth(raw: bytes, limit: int = MAX_DEPTH) -> int:
    """How deep a message's multiparts nest, from its delimiter lines alone (`--boundary`,
    closed by `--boundary--`), before the email package is trusted with it: a delimiter of an
    outer part ends the inner ones, as in a parser. Counting stops past `limit`."""
    declared = {quoted or bare for quoted, bare in _BOUNDARY.findall(raw)}
    if len(declared) <= 1:
        return len(declared)
    stack: list[bytes] = []
    deepest = 0
    for line in _DELIMITER.findall(raw):
        closing = line.endswith(b"--") and line[:-2] in declared
        boundary = line[:-2] if closing else line
        if boundary not in declared:
            continue
        if boundary in stack:
            del stack[stack.index(boundary) + 1:]
            if closing:
                stack.pop()
        elif not closing:
            stack.append(boundary)
            deepest = max(deepest, len(stack))
            if deepest > limit:
                break
    return deepest


def _message_section(raw: bytes, number: int) -> Section | None:
    """One message as a section, or None when it has no header a message has."""
    message = email.message_from_bytes(raw, policy=email.policy.default)
    # Each fetch of a header parses it again (the modern policy's header objects): once each.
    subject, sender, message_id, date = (_header(message, h) for h in ("Subject", "From", "Message-ID", "Date"))
    if not any((subject, sender, message_id, date)):
        return None
    message_id = message_id.strip("<>") or f"message-{number}"
    sent = _date(date)
    body = _body(message)
    attachments = [name for name in map(_filename, message.walk()) if name] if message.is_multipart() else []
    head = [f"Subject: {subject}" if subject else "", f"From: {sender}" if sender else "",
            f"Date: {sent}" if sent else "",
            f"Attachments: {', '.join(attachments)}" if attachments else ""]
    text = "\n".join(line for line in head if line) + "\n\n" + body
    meta = {"message_id": message_id, "from": sender, "subject": subject}
    return Section(text, meta=meta, ts=sent, title=subject or None)


def _header(message, name: str) -> str:
    """A header as one line of text. The package's header parser raises on some damaged values
    (`From: <`, `Message-ID: <a@`, a Date whose year overflows a C long): such a header is kept
    as written, so it costs its decoding, not the message."""
    try:
        value = str(message.get(name) or "")
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - IndexError, AttributeError, OverflowError, ... from the parser
        value = next((raw for key, raw in message.raw_items() if key.lower() == name.lower()), "")
        # the bytes parser keeps non-ASCII bytes as surrogates: read them back as UTF-8
        value = value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return " ".join(value.split())


def _date(value: str) -> str | None:
    """The Date in UTC, or None (the message is kept undated) when it names no instant a
    datetime holds: `31 Dec 9999 -1200` is past year 9999 in UTC. Clamping it would invent a
    send time the sender never wrote, and one that every `--since` lets through."""
    if not value:
        return None
    try:
        sent = parsedate_to_datetime(value)
        if sent.tzinfo is None:
            sent = sent.replace(tzinfo=timezone.utc)
        return sent.astimezone(timezone.utc).isoformat(timespec="seconds")
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _filename(part) -> str | None:
    """An attachment's name, or None when it cannot be decoded (an RFC 2231 name in a codec
    that only decodes strictly, such as idna, makes the package raise): one name lost, not
    the message."""
    try:
        return part.get_filename()
    except (LookupError, UnicodeError):
        return None


def _body(message) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, UnicodeError):  # a charset no codec knows, or one (idna) that cannot replace
        content = _undeclared(part.get_payload(decode=True) or b"")
    if isinstance(content, bytes):
        return ""
    if part.get_content_subtype() == "html":
        content = visible_text(content)[1]
    return _without_quotes(content.replace("\r\n", "\n").replace("\r", "\n"))


def _undeclared(payload: bytes) -> str:
    """A body whose charset no codec knows: `unknown-8bit` (RFC 1428, 8-bit text whose sender
    did not know its charset), a misspelt or made-up name. UTF-8 when the bytes are UTF-8, as
    most mail now is; else Windows-1252, which browsers read for a Latin-1 label and which
    keeps 'café' a findable word (UTF-8 with replacement would store 'caf' and a U+FFFD)."""
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError:
        return payload.decode("cp1252", "replace")


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

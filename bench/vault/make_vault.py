#!/usr/bin/env python3
"""Build the development vault: a personal knowledge base of the shape the issue describes,
from real text on this machine. Not a test; deterministic for a given machine.

    python bench/vault/make_vault.py OUT_DIR          # writes OUT_DIR/en and OUT_DIR/ja

`en/` (~380 notes): hierarchical folders (Areas/, Resources/, Meetings/, People/, Inbox/,
Daily/), YAML front matter on every note (`id`, dates, `tags`, often `title`, sometimes a
title with a colon that YAML cannot read, `aliases`), `[[wiki links]]`, stub notes of a line or
two, notes over 20 KB, and meeting transcripts. The text comes from the man pages installed
here (rendered by `man`), the docstrings of Python's standard library, the long descriptions of
the Python packages installed beside this script's interpreter and Debian's README files. A
meeting transcript is a meeting on two or three related tools whose turns are the sentences of
those tools' manuals, with a few lines of decisions. `ja/` (~120 notes): Debian's manpages-ja
(`apt-get install manpages-ja`) as Markdown notes with front matter.

The queries were written against this output and frozen (bench/vault/queries-*.jsonl, with
the digest of the vault they were written on); bench_kinds.py warns when the digest differs.
"""
from __future__ import annotations

import gzip
import hashlib
import importlib
import inspect
import os
import random
import re
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

CAP = 12_000  # a manual longer than this is cut at a section boundary (bash's is 300 KB) ...
LONG_CAP = 40_000  # ... except these, the vault's long notes
LONG = {"tar", "find", "ssh_config", "git-rebase", "journalctl", "tmux", "awk", "curl", "gpg"}
SEED = 35

TOPICS = {
    "Areas/Linux/Archiving": "tar gzip xz zstd bzip2 zip unzip".split(),
    "Areas/Linux/Remote": "ssh scp ssh-keygen ssh-agent curl wget".split() + ["ssh_config.5"],
    "Areas/Dev/Git": ("git git-rebase git-stash git-bisect git-cherry-pick git-worktree git-reflog "
                      "git-blame git-log git-merge git-reset git-revert git-clean git-submodule "
                      "git-commit git-push git-fetch git-tag git-diff git-status git-branch "
                      "git-switch git-restore git-grep git-config git-remote git-clone git-show "
                      "git-shortlog git-describe git-format-patch git-am git-archive git-gc "
                      "git-notes git-range-diff git-sparse-checkout").split()
                     + ["gitignore.5", "githooks.5", "gitattributes.5"],
    "Areas/Linux/Text": ("grep sed awk sort uniq cut paste join comm tr wc head tail tee split "
                         "csplit column fmt fold nl pr expand iconv jq diff patch cmp").split(),
    "Areas/Linux/Files": ("find xargs cp mv rm ln mkdir rmdir stat touch file chmod chown dd df du "
                          "realpath dirname basename mktemp install flock").split(),
    "Areas/Linux/Processes": "ps top kill nice renice nohup timeout watch strace tmux script".split(),
    "Areas/Linux/System": ("systemctl journalctl date locale env printenv passwd su stty tput "
                           "dpkg").split() + ["fstab.5", "hosts.5", "passwd.5"],
    "Areas/Security": "openssl gpg md5sum sha256sum base64".split(),
    "Areas/Dev/Toolchain": ("make cmake ldd nm objdump readelf strings hexdump xxd od pkg-config "
                            "python3 perl node sqlite3 psql bc factor seq shuf").split(),
}
STDLIB = ("json csv argparse pathlib datetime itertools functools collections re shutil subprocess "
          "sqlite3 logging heapq bisect textwrap difflib zipfile tarfile hashlib secrets uuid "
          "statistics fractions decimal calendar string struct threading queue contextlib "
          "dataclasses enum typing fnmatch glob tempfile shlex").split()
PACKAGES = ("click httpx sqlite-utils pytest hypothesis numpy PyYAML pluggy anyio attrs "
            "h11 certifi llm pydantic tabulate python-ulid").split()
DEBIAN_READMES = ("bash/README.gz coreutils/README.gz findutils/README.gz bc/README "
                  "e2fsprogs/README cscope/README base-files/README.FHS apt/README.md.gz "
                  "ed/README.gz fakeroot/README dbus/README.gz").split()
MEETINGS = [  # (title, tools, decision lines): the turns are the tools' own sentences
    ("Backup compression choice", ["gzip", "xz", "zstd"],
     ["Nightly dumps move to zstd; the archive copy keeps xz for its ratio.",
      "Keep gzip only where the receiving side cannot read anything else."]),
    ("Rewriting history before the release", ["git-rebase", "git-cherry-pick", "git-reflog"],
     ["Feature branches are rebased onto main, never merged back and forth.",
      "Anyone who loses commits in a rebase checks the reflog before asking for help."]),
    ("Finding the commit that broke the build", ["git-bisect", "git-log", "git-blame"],
     ["Bisect runs on the CI runner with the test script as the judge."]),
    ("Log search runbook", ["grep", "journalctl", "awk"],
     ["The runbook starts from journalctl with a unit and a time window, then narrows with grep."]),
    ("Remote access hardening", ["ssh", "ssh-keygen", "ssh-agent"],
     ["Password logins are switched off once every laptop has an ed25519 key.",
      "Agent forwarding stays off by default."]),
    ("Disk space incident review", ["df", "du", "find"],
     ["A weekly job lists files over one gigabyte that nobody touched for ninety days."]),
    ("Service supervision", ["systemctl", "journalctl", "nohup"],
     ["Long-running jobs become systemd units instead of nohup in a screen session."]),
    ("Text pipeline cleanup", ["sort", "uniq", "cut", "join"],
     ["The report job sorts once and joins on the customer column instead of three greps."]),
    ("Certificate renewal", ["openssl", "gpg"],
     ["Certificates are checked thirty days ahead with openssl; release tags are signed with gpg."]),
    ("Build system migration", ["make", "cmake", "pkg-config"],
     ["New libraries are built with cmake; make stays as the thin entry point."]),
    ("Terminal sessions on the shared box", ["tmux", "script", "stty"],
     ["Pairing sessions use one shared tmux socket; recordings are made with script."]),
    ("Binary inspection workshop", ["readelf", "objdump", "nm", "ldd"],
     ["Everyone checks a binary's dynamic dependencies before copying it to a server."]),
    ("Process troubleshooting", ["ps", "top", "strace", "kill"],
     ["Before killing a stuck process, attach strace for a minute and save the output."]),
    ("File transfer policy", ["scp", "curl", "wget"],
     ["Downloads in scripts use curl with failure on HTTP errors; scp only inside the VPN."]),
    ("Checksums for the release artifacts", ["sha256sum", "md5sum", "base64"],
     ["Release pages publish sha256 sums; md5 is no longer published."]),
    ("Scheduling maintenance windows", ["date", "timeout", "watch", "flock"],
     ["Maintenance scripts take a lock with flock so two runs never overlap."]),
    ("Data export formats", ["jq", "column", "iconv"],
     ["Exports are UTF-8 JSON; the CSV view is produced with jq for the finance team."]),
    ("Repository hygiene", ["git-clean", "git-stash", "git-worktree", "gitignore.5"],
     ["Build outputs go into the ignore file; experiments live in a separate worktree."]),
]
PEOPLE = ["Ana Lindqvist", "Bjørn Haugen", "Chen Wei", "Dara Okafor", "Emil Sørensen",
          "Farah Haddad", "Gustav Berg", "Hana Kobayashi"]


def man_text(page: str, lang: str | None = None) -> str:
    """A manual page rendered as plain text, one line per paragraph (a wide page, so no word
    is cut and no justification spaces are added)."""
    env = {**os.environ, "MANWIDTH": "1000", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
    args = ["man", "-P", "cat"]
    if lang:
        args += ["-l", page]
    else:
        name, _, section = page.partition(".")
        args += ([section, name] if section else [name])
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    text = re.sub(r".\x08", "", done.stdout)
    return text if done.returncode == 0 else ""


def man_markdown(text: str, cap: int = CAP) -> tuple[str, str]:
    """(one-line description, Markdown body) of a rendered manual: its section headings
    become `##`, subsections `###`, the rest loses the page's indentation."""
    lines = text.splitlines()
    if lines and re.match(r"^\S+\(\d\w*\)", lines[0]):
        lines = lines[1:]
    while lines and re.match(r"^\S.*\S+\(\d\w*\)\s*$", lines[-1]):  # footer
        lines.pop()
    out, describe = [], ""
    for i, line in enumerate(lines):
        if line and not line[0].isspace():
            out += ["", "## " + line.strip().title() if line.isupper() else "## " + line.strip(), ""]
        elif re.match(r"^ {3}\S", line):
            out += ["", "### " + line.strip(), ""]
        else:
            stripped = re.sub(r"^ {7}", "", line.rstrip())
            out.append(re.sub(r"(?<=\S) {2,}(?=\S)", " ", stripped))
        if not describe and i and re.match(r"^ {7}\S+.* - ", line) and out[-2:-1] in ([""], ):
            describe = line.strip().split(" - ", 1)[1]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"
    if len(body) > cap:
        cut = body.rfind("\n## ", 0, cap)
        body = body[:cut if cut > cap // 2 else cap].rstrip() + "\n"
    return describe, body


def when(rng: random.Random, start: date = date(2022, 1, 3), days: int = 900) -> date:
    return start + timedelta(days=rng.randrange(days))


def front(fields: list[tuple[str, object]], rng: random.Random) -> str:
    """YAML front matter in the styles people's tools write (block and flow lists)."""
    lines = ["---"]
    for key, value in fields:
        if value is None:
            continue
        if isinstance(value, list):
            if rng.random() < 0.5:
                lines.append(f"{key}: [{', '.join(value)}]")
            else:
                lines.append(f"{key}:")
                lines += [f"  - {v}" for v in value]
        else:
            lines.append(f"{key}: {value}")
    return "\n".join(lines + ["---", ""])


def note_id(rng: random.Random, day: date) -> str:
    return day.strftime("%Y%m%d") + f"{rng.randrange(24):02d}{rng.randrange(60):02d}"


def link_mentions(body: str, names: dict[str, str], own: str, limit: int = 3) -> str:
    """Turn the first mentions of other notes' names into wiki links, as a person linking
    their notes would (`gzip` -> `[[gzip]]`), at most `limit` of them."""
    done = 0
    for name, target in names.items():
        if name == own or done >= limit or len(name) < 3:
            continue
        pattern = re.compile(rf"(?<![\w\[/.-]){re.escape(name)}(?![\w\]/-])")
        m = pattern.search(body, body.find("\n## ") + 1 if "\n## " in body else 0)
        if m:
            link = f"[[{target}]]" if target == name else f"[[{target}|{name}]]"
            body = body[:m.start()] + link + body[m.end():]
            done += 1
    return body


def sentences(body: str) -> list[str]:
    """The prose sentences of a manual's body (no option lists, no headings, no code)."""
    out = []
    for para in body.split("\n\n"):
        para = " ".join(para.split())
        if para.startswith(("#", "-", "$", "[")) or len(para) < 60 or para.count(" ") < 8:
            continue
        out += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", para) if 40 <= len(s) <= 400]
    return out


def stdlib_markdown(name: str) -> str:
    module = importlib.import_module(name)
    parts = [inspect.getdoc(module) or ""]
    for attr in sorted(getattr(module, "__all__", None) or dir(module)):
        if attr.startswith("_"):
            continue
        obj = getattr(module, attr, None)
        if not (inspect.isfunction(obj) or inspect.isclass(obj) or inspect.isbuiltin(obj)):
            continue
        if (getattr(obj, "__module__", None) or name).lstrip("_").split(".")[0] != name:  # _bisect too
            continue
        doc = inspect.getdoc(obj)
        if not doc:
            continue
        try:
            sig = re.sub(r" at 0x[0-9a-f]+", "", str(inspect.signature(obj)))  # no addresses
        except (TypeError, ValueError):
            sig = "(...)"
        parts.append(f"### `{attr}{sig if len(sig) < 90 else '(...)'}`\n\n{doc}")
    text = "\n\n".join(p for p in parts if p).strip() + "\n"
    return text[:CAP].rsplit("\n\n", 1)[0] + "\n" if len(text) > CAP else text  # typing's is 60 KB


def package_description(name: str) -> str:
    from importlib import metadata

    try:
        meta = metadata.metadata(name)
    except metadata.PackageNotFoundError:
        return ""
    body = meta.get_payload() or meta.get("Description") or ""
    body = body.strip()
    body = body[:CAP].rsplit("\n\n", 1)[0] if len(body) > CAP else body
    return body + "\n" if len(body) > 200 else ""


def debian_readme(rel: str) -> str:
    path = Path("/usr/share/doc") / rel
    if not path.exists():
        return ""
    raw = gzip.decompress(path.read_bytes()) if rel.endswith(".gz") else path.read_bytes()
    text = raw.decode("utf-8", "replace").strip()
    return (text[:CAP].rsplit("\n\n", 1)[0] if len(text) > CAP else text) + "\n"


def write(root: Path, rel: str, text: str, written: dict) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    written[rel] = text


def build_en(root: Path) -> dict[str, str]:
    rng = random.Random(SEED)
    written: dict[str, str] = {}
    manuals: dict[str, tuple[str, str, str]] = {}  # page -> (folder, description, body)
    for folder, pages in TOPICS.items():
        for page in pages:
            describe, body = man_markdown(man_text(page), LONG_CAP if page in LONG else CAP)
            if len(body) > 400:
                manuals[page] = (folder, describe, body)
    names = {page.split(".")[0]: page.split(".")[0] for page in manuals}
    names = dict(sorted(names.items(), key=lambda kv: -len(kv[0])))  # git-rebase before git
    for page, (folder, describe, body) in manuals.items():
        name = page.split(".")[0]
        day = when(rng)
        style = rng.random()
        title = (f"{name}: {describe}" if style < 0.25 else name if style < 0.7 else None)
        h1 = None if title and rng.random() < 0.6 else f"# {name}"
        tags = [folder.split("/")[-1].lower(), rng.choice(["cli", "reference", "linux", "tools"])]
        fm = front([("id", note_id(rng, day)), ("title", title), ("created", day.isoformat()),
                    ("updated", (day + timedelta(days=rng.randrange(200))).isoformat()),
                    ("tags", tags),
                    ("aliases", [describe.split(",")[0][:40]] if describe and rng.random() < 0.2 else None),
                    ("status", rng.choice(["evergreen", "seedling", "draft"]) if rng.random() < 0.3 else None)],
                   rng)
        text = link_mentions(body, names, name)
        related = rng.sample(sorted(n for n, (f, _, _) in ((p.split(".")[0], v) for p, v in manuals.items())
                                    if f == folder and n != name), k=min(2, len(TOPICS[folder]) - 1))
        tail = "\n## Related\n\n" + "\n".join(f"- [[{r}]]" for r in related) + "\n" if related else ""
        write(root, f"{folder}/{name}.md", fm + (h1 + "\n\n" if h1 else "") + text + tail, written)

    for name in STDLIB:
        day = when(rng)
        body = stdlib_markdown(name)
        title = f"Python: the {name} module" if rng.random() < 0.5 else f"{name} (stdlib)"
        fm = front([("id", note_id(rng, day)), ("title", title), ("created", day.isoformat()),
                    ("tags", ["python", "stdlib"])], rng)
        write(root, f"Resources/Python/stdlib/{name}.md", fm + body, written)

    for name in PACKAGES:
        body = package_description(name)
        if not body:
            continue
        day = when(rng)
        fm = front([("id", note_id(rng, day)), ("title", f"{name} (package README)"),
                    ("created", day.isoformat()), ("source", f"https://pypi.org/project/{name}/"),
                    ("tags", ["python", "package"])], rng)
        write(root, f"Resources/Python/packages/{name}.md", fm + body, written)

    for rel in DEBIAN_READMES:
        body = debian_readme(rel)
        if not body:
            continue
        pkg = rel.split("/")[0]
        day = when(rng)
        fm = front([("id", note_id(rng, day)), ("created", day.isoformat()), ("tags", ["debian", "readme"])], rng)
        write(root, f"Resources/Debian/{pkg} README.md", fm + f"# {pkg} README\n\n" + body, written)

    meeting_days = []
    for i, (title, tools, decisions) in enumerate(MEETINGS):
        day = when(rng, date(2024, 1, 8), 500)
        meeting_days.append((day, title))
        people = rng.sample(PEOPLE, k=rng.choice([3, 4]))
        pool = [(t.split(".")[0], s) for t in tools if t in manuals for s in sentences(manuals[t][2])]
        rng.shuffle(pool)
        turns = pool[: rng.choice([30, 60, 90, 140])]
        lines, clock = [], 0
        for n, (tool, sentence) in enumerate(turns):
            clock += rng.randrange(15, 95)
            who = people[n % len(people)] if rng.random() < 0.6 else rng.choice(people)
            lines.append(f"**[{clock // 3600:02d}:{clock // 60 % 60:02d}:{clock % 60:02d}] "
                         f"{who.split()[0]}:** {sentence}")
        fm = front([("id", note_id(rng, day)), ("title", f"{day.isoformat()} {title}"), ("date", day.isoformat()),
                    ("type", "meeting"), ("attendees", [f"[[{p}]]" for p in people]),
                    ("tags", ["meeting", "transcript"])], rng)
        body = (f"# {title}\n\nAttendees: " + ", ".join(f"[[{p}]]" for p in people)
                + "\nTopics: " + ", ".join(f"[[{t.split('.')[0]}]]" for t in tools)
                + "\n\n## Transcript\n\n" + "\n\n".join(lines)
                + "\n\n## Decisions\n\n" + "\n".join(f"- {d}" for d in decisions)
                + "\n\n## Action items\n\n"
                + "\n".join(f"- [ ] {rng.choice(people).split()[0]}: follow up on [[{t.split('.')[0]}]]"
                            for t in tools[:2]) + "\n")
        write(root, f"Meetings/{day.year}/{day.isoformat()} {title}.md", fm + body, written)

    for person in PEOPLE:
        day = when(rng)
        went = [t for d, t in meeting_days if rng.random() < 0.3][:3]
        fm = front([("id", note_id(rng, day)), ("created", day.isoformat()), ("tags", ["person"])], rng)
        body = f"# {person}\n\n" + ("Met in " + ", ".join(f"[[{t}]]" for t in went) + ".\n" if went else "")
        write(root, f"People/{person}.md", fm + body, written)

    stub_pages = rng.sample(sorted(manuals), k=min(60, len(manuals)))
    for page in stub_pages:
        name = page.split(".")[0]
        folder, describe, _ = manuals[page]
        if not describe:
            continue
        day = when(rng)
        kind = rng.random()
        fm = front([("id", note_id(rng, day)), ("created", day.isoformat()),
                    ("tags", ["inbox"] if kind < 0.7 else ["todo"])], rng)
        if kind < 0.4:
            body = f"TODO: read up on [[{name}]] ({describe}).\n"
        elif kind < 0.7:
            body = f"{describe[0].upper() + describe[1:]}. See [[{name}]].\n"
        else:
            body = f"- [ ] try {name} for this\n"
        write(root, f"Inbox/{name} idea.md", fm + body, written)

    for day, title in sorted(meeting_days):
        fm = front([("id", note_id(rng, day)), ("date", day.isoformat()), ("tags", ["daily"])], rng)
        picks = rng.sample(sorted(manuals), k=2)
        body = (f"# {day.strftime('%A %d %B %Y')}\n\n- Meeting: [[{day.isoformat()} {title}]]\n"
                + "".join(f"- Read about [[{p.split('.')[0]}]]: {manuals[p][1]}\n" for p in picks if manuals[p][1]))
        write(root, f"Daily/{day.isoformat()}.md", fm + body, written)
    return written


JA_PAGES = ("tar gzip bzip2 xz zip unzip cpio cp mv rm ln mkdir rmdir chmod chown chgrp touch "
            "stat df du dd find xargs grep sed awk gawk sort uniq cut paste join comm tr wc head tail "
            "tee split csplit diff diff3 patch cmp od nl fold fmt pr expand unexpand iconv base64 "
            "md5sum sha256sum cksum date cal at crontab nice nohup kill ps top uptime who whoami id "
            "su sudo passwd chsh env printenv locale stty tty uname hostname ping ssh scp rsync "
            "wget curl make gcc ld as ar nm strip objdump ldd bash less more man apropos whatis "
            "file which whereis basename dirname realpath mktemp install sleep seq yes factor bc "
            "dc tsort shuf timeout watch script col column rev look units").split()


def build_ja(root: Path) -> dict[str, str]:
    rng = random.Random(SEED + 1)
    written: dict[str, str] = {}
    base = Path("/usr/share/man/ja/man1")
    for name in JA_PAGES:
        src = base / f"{name}.1.gz"
        if not src.exists():
            continue
        describe, body = man_markdown(man_text(str(src), lang="ja"), LONG_CAP if name in LONG else CAP)
        if len(body) < 300:
            continue
        day = when(rng)
        title = f"{name}: {describe}" if describe and rng.random() < 0.5 else name
        fm = front([("id", note_id(rng, day)), ("title", title), ("created", day.isoformat()),
                    ("tags", ["マニュアル", "コマンド"])], rng)
        write(root, f"コマンド/{name}.md", fm + body, written)
    return written


def digest(written: dict[str, str]) -> str:
    h = hashlib.sha256()
    for rel in sorted(written):
        h.update(rel.encode() + b"\0" + written[rel].encode() + b"\0")
    return h.hexdigest()[:16]


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    for lang, build in (("en", build_en), ("ja", build_ja)):
        root = out / lang
        if root.exists():
            import shutil

            shutil.rmtree(root)
        written = build(root)
        sizes = sorted(len(t) for t in written.values())
        print(f"{lang}: {len(written)} notes, digest {digest(written)}, "
              f"{sum(s > 20_000 for s in sizes)} over 20 KB, {sum(s < 400 for s in sizes)} under 400 chars, "
              f"{sum(sizes) // 1000} KB")


if __name__ == "__main__":
    main()

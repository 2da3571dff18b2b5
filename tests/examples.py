"""The `iwh` examples people read: every command line of the README, docs/ and the commands' --help."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "zoo" / "README.md", ROOT / "demo" / "README.md"]
# commands that write, serve or run a program: their examples name folders, buckets, clusters and scripts
# of the reader's own, and print no rows; every other command answers a question and must print rows
WRITERS = {"ingest", "capture", "dashboard", "copy", "migrate", "vacuum"}
_LINE = re.compile(r"^\s*(?:\$\s+)?(iwh\s.*)$")


def _command(line: str) -> str | None:
    """An example's command: `iwh ...` up to a `#` comment, continuation lines joined."""
    m = _LINE.match(line)
    if not m:
        return None
    text = m.group(1)
    try:
        parts = shlex.split(text, comments=True)
    except ValueError:
        return None
    return shlex.join(parts) if parts and parts[0] == "iwh" else None


def in_pages() -> list[tuple[str, str]]:
    """(page, command) of every `iwh` line inside a fenced code block of the pages."""
    out = []
    for page in PAGES:
        fenced, pending = False, ""
        for line in page.read_text().splitlines():
            if line.strip().startswith("```"):
                fenced, pending = not fenced, ""
                continue
            if not fenced:
                continue
            if pending:
                line, pending = pending + " " + line.strip(), ""
            if line.rstrip().endswith("\\"):
                pending = line.rstrip()[:-1]
                continue
            command = _command(line)
            if command:
                out.append((str(page.relative_to(ROOT)), command))
    return out


def in_help() -> list[tuple[str, str]]:
    """(command, example) of every `iwh` line of the commands' --help epilogs."""
    from inductor_warehouse.cli.main import all_commands, cli

    out = [("iwh", c) for c in map(_command, (cli.epilog or "").splitlines()) if c]
    for command in sorted(all_commands(), key=lambda c: c.name or ""):
        out += [(f"iwh {command.name}", c) for c in map(_command, (command.epilog or "").splitlines()) if c]
    return out


def command_of(example: str) -> str | None:
    """The iwh command an example runs: the first word after iwh's own options."""
    args = shlex.split(example)[1:]
    i = 0
    while i < len(args):
        if args[i] in ("--db", "--format", "--data-path", "--wait"):
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return args[i]
    return None


def is_writer(example: str) -> bool:
    return command_of(example) in WRITERS

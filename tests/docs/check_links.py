#!/usr/bin/env python3
"""Every relative link and image in README.md and docs/**/*.md resolves.

A target is a file or directory path relative to the page (or to the repository root when it
starts with '/'), optionally followed by '#anchor'; an anchor into a Markdown file (or into the
page itself, a bare '#anchor') must name one of its headings as GitHub slugs them, or an
explicit `<a name=...>` / `id=...`. Links with a scheme (https:, mailto:) are not checked here:
they need the network. Code (fenced blocks and `inline code`) is skipped, so commands that look
like links are not read as links.

Usage: check_links.py REPO_ROOT   (exit 1 with one line per broken link)
Standard library only: CTest runs it with Debian's /usr/bin/python3.
"""
import pathlib
import re
import sys
import urllib.parse

FENCE = re.compile(r"^\s{0,3}(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
# [text](target "title") and ![alt](target); the text may hold one level of brackets
# (an image inside a link: [![alt](img)](target)).
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")
REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
HTML_ATTR = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*\"([^\"]*)\"", re.I)
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"<a\s[^>]*?\b(?:name|id)\s*=\s*\"([^\"]+)\"", re.I)


def prose_lines(text):
    """(line number, line) outside fenced code blocks, with inline code blanked out."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield n, INLINE_CODE.sub(lambda c: " " * len(c.group(0)), line)


def slug(heading):
    """GitHub's anchor of a heading: the rendered text, lower case, punctuation other than
    '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)                          # inline HTML
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"(?<!\w)_+|_+(?!\w)", "", text)              # _emphasis_, not snake_case
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


_ANCHORS = {}  # Markdown file -> its anchors, read once


def anchors(path):
    cache = _ANCHORS
    if path not in cache:
        found, seen = set(), {}
        text = path.read_text(encoding="utf-8")
        fence = None
        for line in text.splitlines():
            m = FENCE.match(line)
            if m:
                fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
                continue
            if fence is not None:
                continue
            found.update(EXPLICIT_ANCHOR.findall(line))
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                found.add(s if k == 0 else f"{s}-{k}")  # repeated headings: -1, -2, ...
        cache[path] = found
    return cache[path]


def targets(text):
    for n, line in prose_lines(text):
        for m in INLINE_LINK.finditer(line):
            yield n, m.group(1)
        m = REF_DEF.match(line)
        if m:
            yield n, m.group(1)
        for m in HTML_ATTR.finditer(line):
            yield n, m.group(1)


def check(root, page):
    broken = []
    top = root.resolve()
    for n, raw in targets(page.read_text(encoding="utf-8")):
        target = raw.strip("<>")
        if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # https:, mailto:, ...
            continue
        where, _, anchor = target.partition("#")
        where = urllib.parse.unquote(where)
        if not where:
            dest = page
        elif where.startswith("/"):
            dest = root / where.lstrip("/")
        else:
            dest = page.parent / where
        dest = dest.resolve()
        label = f"{page.relative_to(root)}:{n}: {raw}"
        if dest != top and top not in dest.parents:
            broken.append(f"{label} (outside the repository)")
        elif not dest.exists():
            broken.append(f"{label} (no such file: {dest.relative_to(top)})")
        elif anchor and dest.is_file() and dest.suffix.lower() == ".md":
            if urllib.parse.unquote(anchor).lower() not in anchors(dest):
                broken.append(f"{label} (no heading for '#{anchor}' in {dest.relative_to(top)})")
    return broken


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_links.py REPO_ROOT")
    root = pathlib.Path(sys.argv[1])
    pages = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    broken, links = [], 0
    for page in pages:
        if page.is_file():
            links += sum(1 for _ in targets(page.read_text(encoding="utf-8")))
            broken += check(root, page)
    if broken:
        print(f"check_links: {len(broken)} broken link(s):")
        for b in broken:
            print("  " + b)
        sys.exit(1)
    print(f"check_links: {links} links in {len(pages)} pages, all resolve")


if __name__ == "__main__":
    main()

"""The course's one Markdown reader: which files are pages, and what a page holds (fenced code,
code spans, comments, links, headings, tables, words) and its markers (plots/README.md,
"Markers"), found, rendered and linted; which renderer makes a block or a number is the
caller's. Standard library only; who reads pages with it: plots/README.md, "The code".
"""

import re
from pathlib import Path

import facts

# -- the pages ------------------------------------------------------------------------------------

# Folders that hold no page of the course: build trees, hidden folders, caches.
SKIP_DIRS = re.compile(r"^(build.*|\..*|__pycache__|node_modules)$")


def all_pages(root):
    """Every Markdown page of the repository, sorted (build and hidden folders aside)."""
    root = Path(root)
    return [p for p in sorted(root.rglob("*.md"))
            if not any(SKIP_DIRS.match(part) for part in p.relative_to(root).parts[:-1])]


def marker_pages(root):
    """The pages the markers and the lint cover: the README, the lessons (every steps/*/*.md),
    the lab notebooks (steps/*/lab/*.md) and the exercises' pages."""
    root = Path(root)
    files = [root / "README.md"]
    for pattern in ("steps/*/*.md", "steps/*/lab/*.md", "exercises/*.md", "exercises/*/*.md"):
        files += sorted(root.glob(pattern))
    return [f for f in files if f.exists()]


def lesson_pages(root):
    """Every lesson page, in course order: each step's README.md, then its part pages (any other
    steps/NN_name/*.md whose name starts with a capital letter). Lab notebooks are not lessons."""
    pages = []
    for folder in sorted(Path(root).glob("steps/[0-9][0-9]_*")):
        names = sorted((p.name for p in folder.glob("*.md") if p.name[:1].isupper() and p.is_file()),
                       key=lambda n: (n != "README.md", n))
        pages += [folder / n for n in names]
    return pages


# -- what a page holds ----------------------------------------------------------------------------

COMMENT = re.compile(r"<!--.*?-->", re.S)
LINE_COMMENT = re.compile(r"<!--.*?-->")  # one that opens and closes on one line
# The end of a link or image, "](target)" or "](target "title")": group 1 is set for an image
# ("![alt" just before), group 2 is the target, group 3 the title.
LINK = re.compile(r"(!\[[^\[\]]*)?\]\(\s*([^()\s]+)(\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
TABLE_RULE = re.compile(r"\|[\s:|-]*-[\s:|-]*")  # the |---|:---| line under a table's header


def fence_states(lines):
    """Where each line is: "prose", "fence" (a ``` or ~~~ line that opens or closes a fenced
    block) or "code" (inside one). A block opened by ``` is closed only by ```, ~~~ by ~~~."""
    states, mark = [], None
    for line in lines:
        stripped = line.lstrip()
        if stripped.startswith(("```", "~~~")) and (mark is None or stripped.startswith(mark)):
            mark = None if mark else stripped[:3]
            states.append("fence")
        else:
            states.append("code" if mark else "prose")
    return states


def code_blocks(text):
    """[(info, lines)] of the fenced blocks of a text: "sh" for a ```sh block."""
    lines = text.split("\n")
    blocks, body = [], None
    for line, state in zip(lines, fence_states(lines)):
        if state == "fence" and body is None:
            body = []
            blocks.append((line.strip()[3:].strip(), body))
        elif state == "fence":
            body = None
        elif state == "code":
            body.append(line)
    return blocks


def code_spans(text):
    """[(start, end)] of the `inline code` spans of a text (a run of n backticks closed by the
    next run of exactly n; unmatched backticks are literal)."""
    spans, i = [], 0
    while i < len(text):
        if text[i] != "`":
            i += 1
            continue
        j = i
        while j < len(text) and text[j] == "`":
            j += 1
        k, closed = j, None
        while k < len(text):
            if text[k] == "`":
                m = k
                while m < len(text) and text[m] == "`":
                    m += 1
                if m - k == j - i:
                    closed = m
                    break
                k = m
            else:
                k += 1
        if closed is None:
            i = j
        else:
            spans.append((i, closed))
            i = closed
    return spans


def split_code(text):
    """The text cut at its code spans: [prose, code, prose, code, ..., prose]."""
    parts, pos = [], 0
    for a, b in code_spans(text):
        parts += [text[pos:a], text[a:b]]
        pos = b
    return parts + [text[pos:]]


def inside(pos, spans):
    return any(a <= pos < b for a, b in spans)


def links(text):
    """[(target, is_image)] of the Markdown links and images of a text."""
    return [(m.group(2), bool(m.group(1))) for m in LINK.finditer(text)]


def tables(lines):
    """(first line number, body rows) of each table: runs of lines starting with '|', outside
    code fences. A run whose second line is not a |---| line has no header: every line is a row."""
    found, run = [], []

    def close():
        if run:
            header = len(run) >= 2 and TABLE_RULE.fullmatch(lines[run[1]].strip())
            found.append((run[0] + 1, len(run) - 2 if header else len(run)))
            run.clear()

    for i, (line, state) in enumerate(zip(lines, fence_states(lines))):
        if state == "prose" and line.startswith("|"):
            run.append(i)
        else:
            close()
    close()
    return found


def count_words(text):
    """`wc -w` of the text once its HTML comments are gone."""
    return len(COMMENT.sub(" ", text).encode("utf-8").split())


# -- markers --------------------------------------------------------------------------------------

KINDS = r"(bench-table|profile-table|figure|results-table|pattern-table)"
OPEN = re.compile(r"^<!--\s*" + KINDS + r"\b(.*?)-->\s*$")
ALMOST = re.compile(r"^\s*<!--\s*" + KINDS + r"\b")  # to report a marker OPEN cannot read
ATTR = re.compile(r"""\s*(?:([\w.-]+)=(?:"([^"]*)"|'([^']*)'|([^\s"']+))|([^\s=]+))""")
NUM_TAG = re.compile(r"<!--\s*(/?)num\b(.*?)-->")
NUM_START = re.compile(r"<!--\s*/?num\b")
# The prose lint: a decimal followed by % or any number followed by GB/s is a measured number.
LINT_PERCENT = re.compile(r"(?<![\w.])\d[\d,]*\.\d+\s*%")
LINT_GBPS = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*GB/s")
# A line whose text, as the site shows it (comments hidden), opens with a whole number and ". "
# or ") ": the site's Markdown makes it a numbered list item, even inside a paragraph.
OPENS_AS_LIST = re.compile(r"\s*(?:[-*+]\s+)?\d{1,9}[.)](?:\s|$)")


class MarkerError(Exception):
    """A marker that cannot be rendered (an unknown attribute, a selection that finds nothing)."""


def parse_attrs(text, forms=()):
    """(form, {name: value}) of a marker's text ('diff step=05 id="a b"'): form is a leading
    bare word among `forms` ("diff", "ratio", ...) or None. A `kernel=` selector is refused."""
    tokens, pos = [], 0
    while text[pos:].strip():
        m = ATTR.match(text, pos)
        if not m or m.end() == pos:
            raise MarkerError(f"cannot read '{text[pos:].strip()}' (name=value, quote a value "
                              "with spaces)")
        if m.group(5) is not None:
            tokens.append((m.group(5), None))
        else:
            tokens.append((m.group(1), next(v for v in m.group(2, 3, 4) if v is not None)))
        pos = m.end()
    form = None
    if tokens and tokens[0][1] is None and forms:
        form = tokens.pop(0)[0]
        if form not in forms:
            known = ", ".join("num " + f for f in forms)
            raise MarkerError(f"unknown form '{form}' (num, {known})")
    attrs = {}
    for key, value in tokens:
        if value is None:
            raise MarkerError(f"'{key}' is not name=value")
        if key in attrs:
            raise MarkerError(f"'{key}' is given twice")
        if key.split(".")[-1] in ("kernel", "kernels"):
            raise MarkerError(f"'{key}=' picks kernels by their names, which may change: select "
                              "them by id (id=, ids=, vs.id=; `./stepNN --list` prints them)")
        attrs[key] = value
    return form, attrs


def check_attrs(kind, attrs, allowed, required=()):
    for name in attrs:
        if name not in allowed:
            raise MarkerError(f"{kind}: unknown attribute '{name}' (allowed: {', '.join(allowed)})")
    for name in required:
        if name not in attrs:
            raise MarkerError(f"{kind}: attribute '{name}' is required")


def parse_shapes(text):
    """facts.parse_shapes, its ValueError said as a marker's error."""
    try:
        return facts.parse_shapes(text)
    except ValueError as e:
        raise MarkerError(f"shapes: {e}")


def rewrite_nums(line, render):
    """The line with each num marker's value re-rendered by render(text); the errors; and the
    spans (start, end) the markers cover in the new line."""
    spans = code_spans(line)
    out, errors, covered, pos = [], [], [], 0
    tags = [m for m in NUM_TAG.finditer(line) if not inside(m.start(), spans)]
    starts = [m for m in NUM_START.finditer(line) if not inside(m.start(), spans)]
    if len(starts) > len(tags):
        errors.append("a num marker's tag must end with '-->' on the same line")
    k = 0
    while k < len(tags):
        tag = tags[k]
        if tag.group(1):  # a closing tag with no opening one before it
            errors.append("a '<!-- /num -->' without its opening '<!-- num ... -->'")
            k += 1
            continue
        if k + 1 >= len(tags) or not tags[k + 1].group(1):
            errors.append("a num marker must be closed by '<!-- /num -->' on the same line")
            k += 1
            continue
        close = tags[k + 1]
        old = line[tag.end():close.start()]
        try:
            value = render(tag.group(2))
        except MarkerError as e:
            errors.append(f"num: {e}")
            value = old
        start = sum(len(t) for t in out) + (tag.start() - pos)
        out.append(line[pos:tag.end()] + value + close.group(0))
        covered.append((start, start + len(tag.group(0)) + len(value) + len(close.group(0))))
        pos = close.end()
        k += 2
    out.append(line[pos:])
    return "".join(out), errors, covered


def lint_line(line, covered):
    """The measured-looking numbers typed in a line's prose: a decimal followed by % or a number
    followed by GB/s, outside inline code, HTML comments and num markers."""
    masked = list(line)
    for a, b in code_spans(line) + covered + [m.span() for m in LINE_COMMENT.finditer(line)]:
        masked[a:b] = " " * (b - a)
    text = "".join(masked)
    return [m.group(0) for pattern in (LINT_PERCENT, LINT_GBPS) for m in pattern.finditer(text)]


class Finding:
    """Something wrong in a Markdown file, at a line; lint findings are counted apart."""

    def __init__(self, line, message, lint=False):
        self.line, self.message, self.lint = line, message, lint


def rewrite(text, render, render_num=None):
    """The text with every marker block re-rendered by render(kind, text after the kind) and
    every num marker by render_num(text after "num"); the Findings (errors and lint); and the
    num values that changed, as (line, old, new)."""
    lines = text.split("\n")
    states = fence_states(lines)
    out, findings, changed, i = [], [], [], 0

    def prose(line, number):
        new = line
        covered = []
        if render_num is not None:
            new, errors, covered = rewrite_nums(line, render_num)
            findings.extend(Finding(number, e) for e in errors)
            if new != line:
                changed.append((number, line, new))
        if NUM_START.match(new.lstrip("-*+ \t")) and OPENS_AS_LIST.match(LINE_COMMENT.sub("", new)):
            findings.append(Finding(number, "a num marker opens the line and '.' or ')' follows "
                                            "its number: the site shows a numbered list; put a "
                                            "word before the marker"))
        for found in lint_line(new, covered):
            findings.append(Finding(number, f"'{found}' typed in prose: type measured numbers "
                                            "through a num marker (plots/README.md)", lint=True))
        return new

    while i < len(lines):
        line = lines[i]
        i += 1
        if states[i - 1] != "prose":
            out.append(line)
            continue
        m = OPEN.match(line)
        if not m:
            if ALMOST.match(line):
                findings.append(Finding(i, "a marker must start the line and end with '-->' "
                                           "on it"))
            out.append(prose(line, i))
            continue
        out.append(line)
        kind = m.group(1)
        close = f"<!-- /{kind} -->"
        end = next((j for j in range(i, len(lines)) if lines[j].strip() == close), None)
        if end is None:
            findings.append(Finding(i, f"{kind} has no closing '{close}'"))
            continue
        try:
            body = render(kind, m.group(2))
            out += [""] + body + [""]
        except MarkerError as e:
            findings.append(Finding(i, str(e)))
            out += lines[i:end]  # leave a block it cannot render as it is
        out.append(lines[end])
        i = end + 1
    return "\n".join(out), findings, changed


def linked_pngs(texts, figures_dir):
    """The names of the PNG files of figures_dir that the Markdown texts ({path: text}) link."""
    linked = set()
    figures_dir = Path(figures_dir).resolve()
    for path, text in texts.items():
        for target, _ in links(text):
            target = target.split("#")[0]
            if not target.endswith(".png") or "://" in target:
                continue
            resolved = (path.parent / target).resolve()
            if resolved.parent == figures_dir:
                linked.add(resolved.name)
    return linked

"""The Markdown side of the plots: finding the markers in a page, rewriting what lies between a
marker and its end with what a renderer gives, and the prose lint. plots/README.md ("Markers")
describes the syntax. Which renderer makes a block or a number is the caller's: rewrite() takes
them as functions. Standard library only.

Block markers, each on a line of its own, closed by the same name with a slash:

    <!-- bench-table steps=step04,step05 shapes=8192x8192 [ids=...] [type=f32] [batch=N] -->
    <!-- /bench-table -->

Inline number markers, opened and closed on one line; the text between the tags is the value:

    <!-- num step=step07 id=512-threads shape=8192x8192 -->95.6<!-- /num -->%

Markers inside ``` fences and inside `inline code` are examples and are left alone.
"""

import re

KINDS = r"(bench-table|profile-table|figure|results-table|pattern-table)"
OPEN = re.compile(r"^<!--\s*" + KINDS + r"\b(.*?)-->\s*$")
ALMOST = re.compile(r"^\s*<!--\s*" + KINDS + r"\b")  # to report a marker OPEN cannot read
ATTR = re.compile(r"""\s*(?:([\w.-]+)=(?:"([^"]*)"|'([^']*)'|([^\s"']+))|([^\s=]+))""")
NUM_TAG = re.compile(r"<!--\s*(/?)num\b(.*?)-->")
NUM_START = re.compile(r"<!--\s*/?num\b")
COMMENT = re.compile(r"<!--.*?-->")
# The prose lint: a decimal followed by % or any number followed by GB/s is a measured number.
LINT_PERCENT = re.compile(r"(?<![\w.])\d[\d,]*\.\d+\s*%")
LINT_GBPS = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*GB/s")


class MarkerError(Exception):
    """A marker that cannot be rendered (an unknown attribute, a selection that finds nothing)."""


def parse_tokens(text):
    """'diff step=05 id="a b"' -> [("diff", None), ("step", "05"), ("id", "a b")]."""
    tokens, pos = [], 0
    while text[pos:].strip():
        m = ATTR.match(text, pos)
        if not m or m.end() == pos:
            raise MarkerError(f"cannot read '{text[pos:].strip()}' (name=value, quote a value "
                              "with spaces)")
        if m.group(5) is not None:
            tokens.append((m.group(5), None))
        else:
            value = next(v for v in m.group(2, 3, 4) if v is not None)
            tokens.append((m.group(1), value))
        pos = m.end()
    return tokens


def parse_attrs(text, forms=()):
    """(form, {name: value}) of a marker's text: form is a leading bare word among `forms`
    ("diff", "ratio", ...) or None. An old `kernel=` selector is refused with the way out."""
    tokens = parse_tokens(text)
    form = None
    if tokens and tokens[0][1] is None and forms:
        form = tokens.pop(0)[0]
        if form not in forms:
            raise MarkerError(f"unknown form '{form}' (num, {', '.join('num ' + f for f in forms)})")
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
    shapes = []
    for item in text.split(","):
        m = re.fullmatch(r"(\d+)(?:x(\d+))?", item.strip())
        if not m:
            raise MarkerError(f"shapes: '{item}' is not ROWSxCOLS")
        shapes.append((int(m.group(1)), int(m.group(2) or m.group(1))))
    return shapes


# -- reading a line: code spans, comments, markers -----------------------------------------------

def code_spans(line):
    """[(start, end)] of the `inline code` spans of a line (a run of n backticks closed by the
    next run of exactly n)."""
    spans, i = [], 0
    while i < len(line):
        if line[i] != "`":
            i += 1
            continue
        j = i
        while j < len(line) and line[j] == "`":
            j += 1
        k, closed = j, None
        while k < len(line):
            if line[k] == "`":
                m = k
                while m < len(line) and line[m] == "`":
                    m += 1
                if m - k == j - i:
                    closed = m
                    break
                k = m
            else:
                k += 1
        if closed is None:
            i = j  # unmatched backticks are literal
        else:
            spans.append((i, closed))
            i = closed
    return spans


def inside(pos, spans):
    return any(a <= pos < b for a, b in spans)


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
    hidden = code_spans(line) + covered + [m.span() for m in COMMENT.finditer(line)]
    for a, b in hidden:
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
    out, findings, changed, i, fence = [], [], [], 0, None

    def prose(line, number):
        new = line
        covered = []
        if render_num is not None:
            new, errors, covered = rewrite_nums(line, render_num)
            findings.extend(Finding(number, e) for e in errors)
            if new != line:
                changed.append((number, line, new))
        for found in lint_line(new, covered):
            findings.append(Finding(number, f"'{found}' typed in prose: type measured numbers "
                                            "through a num marker (plots/README.md)", lint=True))
        return new

    while i < len(lines):
        line = lines[i]
        i += 1
        stripped = line.lstrip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            mark = stripped[:3]
            fence = None if fence == mark else (fence or mark)
            out.append(line)
            continue
        if fence:
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


def markdown_files(root):
    """The Markdown the markers and the lint cover: the README, the lessons (every
    steps/*/*.md), the lab notebooks (steps/*/lab/*.md) and the exercises' pages."""
    files = [root / "README.md"]
    files += sorted((root / "steps").glob("*/*.md"))
    files += sorted((root / "steps").glob("*/lab/*.md"))
    files += sorted((root / "exercises").glob("*.md"))
    files += sorted((root / "exercises").glob("*/*.md"))
    return [f for f in files if f.exists()]


def all_markdown(root):
    """Every Markdown page of the repository (build folders and hidden ones aside)."""
    found = []
    for path in sorted(root.rglob("*.md")):
        parts = path.relative_to(root).parts
        if any(p.startswith(".") or p.startswith("build") for p in parts[:-1]):
            continue
        found.append(path)
    return found


LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def linked_pngs(texts, figures_dir):
    """The names of the PNG files of figures_dir that the Markdown texts ({path: text}) link."""
    linked = set()
    figures_dir = figures_dir.resolve()
    for path, text in texts.items():
        for m in LINK.finditer(text):
            target = m.group(1).split("#")[0]
            if not target.endswith(".png") or "://" in target:
                continue
            resolved = (path.parent / target).resolve()
            if resolved.parent == figures_dir:
                linked.add(resolved.name)
    return linked

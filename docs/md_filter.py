#!/usr/bin/env python3
"""Doxygen's input filter for the Markdown pages (FILTER_PATTERNS in Doxyfile.in).

    python3 docs/md_filter.py PAGE.md     (doxygen runs it on every page; writes to stdout)

The pages are written for GitHub: links are relative to the page's own folder, headings are
reached by GitHub's anchors (#what-changed-since-step-01), folders and source files are linked
as they are. The site is flat, so this rewrites each link to where the site has it:

  - a page (any .md of the course, which are all in the site) -> `@ref` to the page's label, and
    an anchor to the label of that heading; this filter gives every page and every heading its
    label, the page's path ("steps_02_tiled_readme"; README.md is the main page, "index") and
    the page's label + "-" + GitHub's anchor of the heading;
  - a source or data file -> its browsable copy, src/<path>.html (docs/site.py writes it, with a
    line anchor per line: "#L12" works as on GitHub);
  - a folder -> its README.md, or its only page (a lab's LAB.md), or else a listing of the folder
    (src/<path>/index.html, also written by docs/site.py);
  - a figure shown on the page, ![...](../../plots/figures/x.png) -> "plots/figures/x.png":
    doxygen finds an image only by a path that ends its real path under IMAGE_PATH; a link to a
    picture -> src/<path>, a copy of it (site.py).

A link that leads nowhere is left as it is, so that the link check of the built site (site.py)
names it.

Three Markdown constructs that Doxygen prints raw are written another way (the site's check,
site.py, finds them if one gets through):
  - a link to a page whose text is code, [`../solutions/`](...): a \\ref prints the backticks, so
    the link becomes a plain URL to the page's HTML file, which Doxygen renders as code;
  - bold around code, **`make test`**: <b>...</b> instead;
  - a code span that ends in a quote, `--gtest_filter='Cpu*'`: Doxygen reads `...' as a quoted
    text and every code span after it on the page is cut wrong, so it is written ``...``;
and an option written in prose, --rows, is put in a code span, so that its -- is not an en dash.
A folded block, <details><summary>Hint 1</summary> ... </details>, is passed to the HTML as it is
(\\htmlonly[block]): Doxygen reads <details> as a paragraph of its own, which a blank line ends,
and writes the summary and the text as two empty toggles. Code blocks and `code spans` are not
touched, and no line is added or removed (doxygen's warnings keep their line numbers); a link
whose text runs over a line break and a line's comments are mended too (BROKEN_TEXT below).
"""

import functools
import os
import re
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
from markdown import (HEADING, LINE_COMMENT, LINK, SKIP_DIRS, all_pages,  # noqa: E402
                      fence_states, split_code)


def page_label(rel):
    """The label of the page at @p rel (a path from the root): README.md is the main page."""
    if rel == "README.md":
        return "index"
    return re.sub(r"[^a-z0-9]+", "_", rel[:-3].lower()).strip("_")


def github_anchor(heading):
    """GitHub's anchor of a heading's text: markup dropped, lower case, punctuation removed,
    spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def in_tree(path):
    """True when @p path (absolute, normalized) is inside the course and not in a build folder."""
    rel = os.path.relpath(path, ROOT)
    if rel == ".":
        return True
    if rel.startswith(".."):
        return False
    return not any(SKIP_DIRS.match(part) for part in rel.split(os.sep))


def folder_target(path):
    """Where a link to the folder @p path goes: its README.md, its only page, or its listing."""
    if os.path.isfile(os.path.join(path, "README.md")):
        return ("page", os.path.join(path, "README.md"))
    pages = sorted(f for f in os.listdir(path) if f.endswith(".md"))
    if len(pages) == 1:
        return ("page", os.path.join(path, pages[0]))
    return ("listing", path)


IMAGE = re.compile(r"\.(png|jpe?g|gif|svg)$", re.I)


def rewrite_url(url, page_dir, own_label, image=False):
    """The site's URL for the Markdown link target @p url of a page in @p page_dir (@p image:
    the target of an image, ![alt](url), rather than of a link)."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith("@ref"):
        return url  # http:, mailto:, ... or already a reference
    path, _, anchor = url.partition("#")
    if not path:  # "#anchor": a heading of this page
        return "@ref %s-%s" % (own_label, anchor) if anchor else url
    target = os.path.normpath(os.path.join(page_dir, path))
    if not in_tree(target) or not os.path.exists(target):
        return url  # the link check will name it
    rel = os.path.relpath(target, ROOT).replace(os.sep, "/")
    if os.path.isdir(target):
        kind, where = folder_target(target)
        if kind == "listing":
            return "src/index.html" if rel == "." else "src/%s/index.html" % rel
        target, rel = where, os.path.relpath(where, ROOT).replace(os.sep, "/")
    if rel.endswith(".md"):
        label = page_label(rel)
        return "@ref %s-%s" % (label, anchor) if anchor else "@ref " + label
    if image and rel.startswith("plots/figures/"):
        return rel
    if IMAGE.search(rel):  # a link to a picture: the picture itself, copied by site.py
        return "src/" + rel
    return "src/%s.html%s" % (rel, "#" + anchor if anchor else "")


# A line of a folded block's tags only: its opening (with its summary), its summary, its end.
DETAILS = re.compile(r"^\s*(<details(?: open)?>\s*(?:<summary>.*?</summary>)?|<summary>.*?</summary>"
                     r"|</details>)\s*$")


# A link whose text runs over a line break, "[Step\n05](x.md)": doxygen turns it into a \\ref
# whose quoted text the break cuts, and prints the rest of the paragraph, headings included, raw.
BROKEN_TEXT = re.compile(r"\[([^\[\]`]*\n[^\[\]`]*)\](\([^()\s]+(?:\s+\"[^\"]*\")?\s*\))")
# A comment on one line (a num marker's tags, LINE_COMMENT) is dropped: doxygen drops the line
# break after one that ends a line, which glues the number before it to the next word ("4.1times").


def join_link_text(m):
    """The link on one line, its line breaks (and their indentation) moved after it, so that no
    line is added or removed."""
    breaks = re.findall(r"\n[ \t]*", m.group(1))
    return "[%s]%s%s" % (re.sub(r"\s*\n[ \t]*", " ", m.group(1)), m.group(2), "".join(breaks))


def ref_as_url(ref):
    """The HTML file (and anchor) of a page label "@ref label[-anchor]": a heading's label is
    its page's label, "-", the anchor, and Doxygen writes the page to label.html."""
    target = ref[len("@ref "):]
    for page in sorted(page_labels(), key=len, reverse=True):
        if target == page:
            return page + ".html"
        if target.startswith(page + "-"):
            return "%s.html#%s" % (page, target)
    return ref


@functools.cache
def page_labels():
    """The labels of every page of the course."""
    return [page_label(p.relative_to(ROOT).as_posix()) for p in all_pages(ROOT)]


# A link's text: [text] just before its "](". Code in it needs a URL, not a \ref (see above).
CODE_LINK = re.compile(r"\[([^\[\]]*`[^\[\]]*)\]\((@ref [^()\s]+)\)")
# Bold that starts or ends with a code span.
BOLD_CODE = re.compile(r"\*\*(`[^`]*`[^*\n]*?|[^*\n]*?`[^`]*`)\*\*")
# An option in prose, --rows: outside a code span, not after a word or a dash.
OPTION = re.compile(r"(?<![\w`-])--([A-Za-z][\w-]*)")


def quote_safe_spans(text):
    """The text with each code span as Doxygen reads it right: ``...`` when it ends in a quote."""
    parts = split_code(text)
    for i in range(1, len(parts), 2):  # the odd parts are code spans
        code = parts[i]
        if code[:2] != "``" and code.endswith("'`"):
            parts[i] = "`` %s ``" % code[1:-1]
    return "".join(parts)


def rewrite_links(text, page_dir, own_label):
    """@p text (outside code blocks) rewritten as the module's docstring says; code spans
    untouched but for a closing quote."""
    parts = split_code(text)
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        parts[i] = LINK.sub(lambda m: "%s](%s%s)" % (
            m.group(1) or "", rewrite_url(m.group(2), page_dir, own_label, bool(m.group(1))),
            m.group(3) or ""), BROKEN_TEXT.sub(join_link_text, LINE_COMMENT.sub("", parts[i])))
        parts[i] = OPTION.sub(r"`--\1`", parts[i])
    text = "".join(parts)
    text = CODE_LINK.sub(lambda m: "[%s](%s)" % (m.group(1), ref_as_url(m.group(2))), text)
    text = BOLD_CODE.sub(r"<b>\1</b>", text)
    return quote_safe_spans(text)


def filter_page(path, text):
    """The page at @p path as doxygen should read it."""
    rel = os.path.relpath(os.path.abspath(path), ROOT).replace(os.sep, "/")
    label = page_label(rel)
    page_dir = os.path.dirname(os.path.abspath(path))
    out, prose, seen, first_heading = [], [], {}, True

    def flush():
        if prose:
            out.append(rewrite_links("".join(prose), page_dir, label))
            prose.clear()

    lines = text.splitlines(keepends=True)
    for line, state in zip(lines, fence_states(lines)):
        if state != "prose":
            if state == "fence":
                flush()
            out.append(line)
            continue
        m = DETAILS.match(line)
        if m:
            flush()
            out.append("\\htmlonly[block]%s\\endhtmlonly%s"
                       % (m.group(1), "\n" if line.endswith("\n") else ""))
            continue
        m = HEADING.match(line)
        if m and "{#" not in line:
            flush()
            heading = rewrite_links(m.group(2), page_dir, label)
            if first_heading and len(m.group(1)) == 1:
                # The title: its label names the page (the main page is named by doxygen).
                tag = "" if label == "index" else " {#%s}" % label
            else:
                anchor = github_anchor(m.group(2))
                n = seen.get(anchor, 0)
                seen[anchor] = n + 1
                tag = " {#%s-%s}" % (label, anchor if n == 0 else "%s-%d" % (anchor, n))
            first_heading = False
            out.append("%s %s%s%s" % (m.group(1), heading, tag, "\n" if line.endswith("\n") else ""))
            continue
        prose.append(line)
    flush()
    return "".join(out)


def filter_comments(text):
    """A header as doxygen should read it: an option in a /// or ///< comment, --help, in a code
    span, as in the pages (`md_filter.py --comments FILE`, FILTER_PATTERNS for *.hpp, *.cuh)."""
    out = []
    for line in text.splitlines(keepends=True):
        at = line.find("///")
        if at >= 0:
            parts = split_code(line[at:])
            parts[::2] = [OPTION.sub(r"`--\1`", p) for p in parts[::2]]
            line = line[:at] + "".join(parts)
        out.append(line)
    return "".join(out)


def main():
    if sys.argv[1] == "--comments":
        with open(sys.argv[2], encoding="utf-8") as f:
            sys.stdout.write(filter_comments(f.read()))
        return
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        sys.stdout.write(filter_page(path, f.read()))


if __name__ == "__main__":
    main()

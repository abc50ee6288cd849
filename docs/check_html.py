#!/usr/bin/env python3
"""The docs site's text, read as a learner sees it: what Doxygen left unrendered.

    python3 docs/check_html.py HTML_DIR       every page of the built site (build_docs.sh runs it)
    python3 docs/check_html.py --self-test    the checks on pages made here, planted artifacts

On the visible text of every page (code blocks and inline code aside; the browsable copies of
the sources under src/ aside), it finds:
  - a raw Doxygen command: `@section name Title`, `@image html x.png`, `\\ref label`, ... (a
    heading or a figure that Doxygen printed as text instead of rendering);
  - a number glued to the next word: `4.1times`, `0.3points`, `16,352,822to` (a line break lost
    after a marker), where shapes (`8192x8192`), units (`50MB`, `1e9`), ordinals and hex stay
    allowed.
Each is printed with its page and the text around it; the exit code is 1 when there is one.
"""

import os
import re
import sys
from html.parser import HTMLParser

COMMANDS = ("section", "subsection", "subsubsection", "page", "mainpage", "image", "ref",
            "anchor", "brief", "details", "param", "tparam", "return", "returns", "file", "code",
            "endcode", "verbatim", "endverbatim", "note", "warning", "see", "link", "endlink",
            "copydoc", "snippet", "include", "htmlonly", "endhtmlonly")
RAW = re.compile(r"(?<![\w@\\/.])[@\\](" + "|".join(COMMANDS) + r")\b")
# A number, then letters with no space: decimals and thousands always count; a whole number only
# before a word of two letters or more that is no unit, ordinal or shape.
GLUED = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)([A-Za-z][A-Za-z]*)")
UNITS = {"b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "ms", "us", "ns", "s", "d", "k", "m",
         "g", "st", "nd", "rd", "th", "x", "e", "bit", "bits", "f", "u", "ull", "ll", "l"}
SKIP = {"pre", "code", "tt", "script", "style", "kbd", "samp"}


class Text(HTMLParser):
    """The visible text of a page outside code: pre, code, ... and Doxygen's div.fragment."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.parts = [], []

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "hr", "meta", "link", "input"):
            return
        classes = (dict(attrs).get("class") or "").split()
        code = tag in SKIP or (tag == "div" and "fragment" in classes)
        self.stack.append((tag, code or bool(self.stack and self.stack[-1][1])))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching tag
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not self.stack or not self.stack[-1][1]:
            self.parts.append(data)

    def text(self):
        return "".join(self.parts)


def glued(match, text):
    number, word = match.group(1), match.group(2)
    after = text[match.end():match.end() + 1]
    if number.startswith("0") and word.startswith("x"):  # 0xFF
        return False
    if set(word.lower()) == {"x"} or (word.lower().startswith("x") and after.isdigit()):
        return False  # 8192x8192, 32x, RTX 40xx
    if word.lower() == "e" and after.isdigit():
        return False  # 1e9
    if "." in number or "," in number:
        return word.lower() not in UNITS
    return len(word) >= 2 and word.lower() not in UNITS


def check_text(text):
    """[(what, the text around it)] of one page's visible text."""
    found = []
    for m in RAW.finditer(text):
        found.append(("raw Doxygen command", text[max(0, m.start() - 20):m.end() + 40]))
    for m in GLUED.finditer(text):
        if glued(m, text):
            found.append(("number glued to a word", text[max(0, m.start() - 30):m.end() + 10]))
    return found


def check(html_dir):
    """[(page, what, context)] over every page of the site (src/ aside)."""
    problems = []
    for folder, dirs, files in os.walk(html_dir):
        dirs[:] = sorted(d for d in dirs if not (folder == html_dir and d == "src"))
        for name in sorted(files):
            if not name.endswith(".html"):
                continue
            path = os.path.join(folder, name)
            page = Text()
            with open(path, encoding="utf-8", errors="replace") as f:
                page.feed(f.read())
            page.close()
            for what, context in check_text(page.text()):
                problems.append((os.path.relpath(path, html_dir), what,
                                 " ".join(context.split())))
    return problems


def self_test():
    """The checks find what they must on planted pages and leave legitimate text alone; the
    link check of site.py refuses a file:line link (`--self-test`, a CPU test, no doxygen)."""
    import tempfile
    planted = ('<p>Step 05 tests it, see <a href="file:line">file:line</a> and '
               '<a href="fine.html#top">this</a>.</p>\n'
               '<p>@section steps_03-every-size Every size</p>\n'
               '<p>@image html plots/figures/sizes_step03.png "every kernel"</p>\n'
               '<p>It runs at 67.0% and 64.1%: 4.1times the classic kernel, 0.3points '
               'behind, 16,352,822to write.</p>\n')
    fine = ('<p id="top">8192x8192 float32, 2x faster, RTX 40xx, 1e9 bytes, 50MB L2, the 2nd run, 0xFF, 3.35 '
            'TB/s, float4, sm_90, a 2D grid, 4.1 times.</p>\n<pre>@image in code</pre>\n'
            '<div class="fragment"><div class="line">\\ref x 4.1times</div></div>\n'
            '<p><code>@section kept</code> and after the fragment.</p>\n')
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in (("planted.html", planted), ("fine.html", fine)):
            with open(os.path.join(tmp, name), "w") as f:
                f.write(f"<html><body>{body}</body></html>")
        found = check(tmp)
        import importlib.util  # docs/site.py, the link check ("site" is also Python's module)
        spec = importlib.util.spec_from_file_location(
            "docs_site", os.path.join(os.path.dirname(os.path.abspath(__file__)), "site.py"))
        links = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(links)
        broken = [link for _, link, _ in links.check(tmp)]
    if broken != ["file:line"]:
        failed.append(f"the link check found {broken}, wanted ['file:line']")
    got = sorted((p, c.split()[0] if w.startswith("raw") else c) for p, w, c in found)
    kinds = sorted((p, w) for p, w, _ in found)
    want = [("planted.html", "number glued to a word")] * 3 + \
           [("planted.html", "raw Doxygen command")] * 2
    if kinds != want:
        failed.append(f"found {kinds}, wanted {want}: {got}")
    for what in ("4.1times", "0.3points", "16,352,822to", "@section", "@image"):
        if not any(what in c for _, _, c in found):
            failed.append(f"missed {what}")
    for line in failed:
        print(f"check_html: {line}")
    print(f"check_html: {'FAILED' if failed else 'ok'}")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    problems = check(sys.argv[1])
    for page, what, context in problems:
        print(f"docs: {page}: {what}: ...{context}...")
    if problems:
        print(f"docs: {len(problems)} artifacts in the site's text (a Markdown construct Doxygen "
              "did not render; docs/md_filter.py rewrites the pages for it)")
        return 1
    print("docs: no raw Doxygen command or glued number in the site's text")
    return 0


if __name__ == "__main__":
    sys.exit(main())

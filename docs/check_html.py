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
    allowed;
  - raw Markdown: `**` that did not turn bold (`**` around a code span), a backtick (a code span
    Doxygen broke, as a `'` before its closing backtick does, or a code span in a link's text),
    a link left as `[text](target)`;
  - an option's `--` turned into an en dash (`–rows`), the text glued to the dash;
and in code (inline code and code blocks), an en dash: a command that would not copy as typed;
and a figure (<img>) without alt text.
Each is printed with its page and the text around it; the exit code is 1 when there is one.
What only a browser shows (a hint that does not fold, a figure past the column, the headings'
order and sizes) is check_browser.py's, which also runs these rules on the rendered text.
"""

import os
import re
import sys
from html.parser import HTMLParser

COMMANDS = ("section", "subsection", "subsubsection", "page", "mainpage", "image", "ref",
            "anchor", "brief", "details", "param", "tparam", "return", "returns", "file", "code",
            "endcode", "verbatim", "endverbatim", "note", "warning", "see", "link", "endlink",
            "copydoc", "snippet", "include", "htmlonly", "endhtmlonly", "p", "c", "a", "b", "e",
            "em")
RAW = re.compile(r"(?<![\w@\\/.])[@\\](" + "|".join(COMMANDS) + r")\b")
# A number, then letters with no space: decimals and thousands always count; a whole number only
# before a word of two letters or more that is no unit, ordinal or shape.
GLUED = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)([A-Za-z][A-Za-z]*)")
UNITS = {"b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "ms", "us", "ns", "s", "d", "k", "m",
         "g", "st", "nd", "rd", "th", "x", "e", "bit", "bits", "f", "u", "ull", "ll", "l"}
# Doxygen's own pictures (the tree view's arrows, the search box, its logo): decoration.
DOXYGEN_ICONS = {"doxygen.svg", "doxygen.png", "search/mag_sel.svg", "mag_sel.svg", "closed.png",
                 "open.png", "sync_on.png", "sync_off.png", "mag.svg"}
SKIP = {"pre", "code", "tt", "script", "style", "kbd", "samp"}
# (** before a parameter's name, char **argv in a signature, is C++.)
MARKDOWN = ((re.compile(r"\*\*(?!\s*\w+\s*[,)])"), "raw Markdown bold (**)"),
            (re.compile(r"`"), "raw backtick (a code span not rendered)"),
            (re.compile(r"\]\(\S"), "raw Markdown link"),
            (re.compile(r"\u2013(?=[A-Za-z])"), "en dash glued to a word (an option's --)"),
            (re.compile("\u2018[^\u2019\n]*'[^\u2019\n]*\u2019"),
             "code read as a quote (a ' before a closing backtick)"))
# In code: a link md_filter rewrote (it rewrites prose only), so a code span that Doxygen cut.
CODE_MARKDOWN = ((re.compile("\u2013"), "en dash in code (a -- that will not copy)"),
                 (re.compile(r"\]\((src/|@ref )"), "raw Markdown link in code (a code span cut)"))


class Text(HTMLParser):
    """The visible text of a page outside code: pre, code, ... and Doxygen's div.fragment."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.parts, self.code, self.no_alt = [], [], [], []

    def handle_starttag(self, tag, attrs):
        if tag == "img" and not (dict(attrs).get("alt") or "").strip() and \
                "usemap" not in dict(attrs):  # a class diagram has its text beside it
            self.no_alt.append(dict(attrs).get("src") or "")
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
        if self.stack and self.stack[-1][0] in ("script", "style"):
            return
        if not self.stack or not self.stack[-1][1]:
            self.parts.append(data)
        else:
            self.code.append(data)

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


def check_text(text, code=""):
    """[(what, the text around it)] of one page's visible text (and of its code)."""
    found = []
    for pattern, what in MARKDOWN:
        for m in pattern.finditer(text):
            found.append((what, text[max(0, m.start() - 30):m.end() + 30]))
    for pattern, what in CODE_MARKDOWN:
        for m in pattern.finditer(code):
            found.append((what, code[max(0, m.start() - 30):m.end() + 30]))
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
            found = check_text(page.text(), "".join(page.code))
            found += [("figure without alt text", src) for src in page.no_alt
                      if not os.path.basename(src) in DOXYGEN_ICONS]
            for what, context in found:
                problems.append((os.path.relpath(path, html_dir), what,
                                 " ".join(context.split())))
    return problems


def self_test():
    """The checks find what they must on planted pages (each artifact the course's pages once
    showed, as Doxygen printed it) and leave legitimate text alone; the link check of site.py
    refuses a file:line link (`--self-test`, a CPU test, no doxygen)."""
    import tempfile
    planted = ('<p>Step 05 tests it, see <a href="file:line">file:line</a> and '
               '<a href="fine.html#top">this</a>.</p>\n'
               '<p>@section steps_03-every-size Every size</p>\n'
               '<p>@image html plots/figures/sizes_step03.png "every kernel"</p>\n'
               '<p>It runs at 67.0% and 64.1%: 4.1times the classic kernel, 0.3points '
               'behind, 16,352,822to write.</p>\n')
    fine = ('<p id="top">8192x8192 float32, 2x faster, RTX 40xx, 1e9 bytes, 50MB L2, the 2nd '
            'run, 0xFF, 3.35 TB/s, float4, sm_90, a 2D grid, 4.1 times.</p>\n<pre>@image in code</pre>\n'
            '<div class="fragment"><div class="line">\\ref x 4.1times</div></div>\n'
            '<p><code>@section kept</code> and after the fragment.</p>\n')
    fine += ('<p>a &ndash; b, <code>a*b</code>, <b><code>make test</code></b>, x@p.org, '
             '<code>./step01 --rows 8</code>, <a href="fine.html"><code>../x/</code></a>, '
             'run_main (int argc, char **argv, const StepInfo &amp;step), char ** argv)</p>\n'
             '<div class="image"><img src="f.png" alt="a figure"/></div>\n')
    # Each artifact as Doxygen 1.9 printed it from the course's pages, one page each.
    artifacts = {
        "bold.html": ('<p>**<code>no usable CUDA device</code>** (exit 3)</p>',
                      "raw Markdown bold (**)"),
        "star.html": ("<p>&lsquo;./build/bin/step01_test --gtest_filter='Cpu*&rsquo;<code>, "
                      "after adding your shape to</code>CpuStep01Launcher<code>in [test.cu]"
                      "(src/steps/01_naive/test.cu.html). -</code>./step01</p>",
                      "code read as a quote (a ' before a closing backtick)"),
        "star_link.html": ("<p>shape to</code>CpuStep01Launcher<code>in [test.cu]"
                           "(src/steps/01_naive/test.cu.html). -</code>./step01</p>",
                           "raw Markdown link in code (a code span cut)"),
        "dash.html": ("<p><code>./step01 &ndash;rows 8192 &ndash;cols 128</code></p>",
                      "en dash in code (a -- that will not copy)"),
        "dash_prose.html": ("<p>the &ndash;help text</p>",
                            "en dash glued to a word (an option's --)"),
        "link.html": ('<p>The answers are in <a class="el" href="fine.html">`../solutions/`</a>.'
                      '</p>', "raw backtick (a code span not rendered)"),
        "at_p.html": ('<p>Why this build cannot run on the device "@p device" of compute '
                      'capability</p>', "raw Doxygen command"),
        "alt.html": ('<div class="image"><img src="sizes.png" alt=""/><div class="caption">'
                     'Every kernel</div></div>', "figure without alt text"),
    }
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (body, _) in artifacts.items():
            with open(os.path.join(tmp, "artifact_" + name), "w") as f:
                f.write(f"<html><body>{body}</body></html>")
        for name in ("f.png", "sizes.png"):
            open(os.path.join(tmp, name), "wb").close()
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
    for name, (_, what) in artifacts.items():
        if not any(p == "artifact_" + name and w == what for p, w, _ in found):
            failed.append(f"missed the {what} of artifact_{name}")
    found = [f for f in found if not f[0].startswith("artifact_")]
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
    print("docs: no raw Markdown or Doxygen markup, glued number, en dash in code or figure "
          "without alt text in the site's text")
    return 0


if __name__ == "__main__":
    sys.exit(main())

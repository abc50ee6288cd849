#!/usr/bin/env python3
"""The docs site after doxygen: the browsable copies of the sources, then the checks of every
page as HTML (what needs a browser to see is check_browser.py's).

    python3 docs/site.py HTML_DIR             write the copies, then check every page
    python3 docs/site.py --self-test          the checks on planted pages (a CPU test, no doxygen)

1. A lesson links the files it talks about (transpose.cuh, main.cu, step.toml, bench.py, a
   folder); docs/md_filter.py pointed those links at src/<path>.html and src/<folder>/index.html.
   This writes those pages from the course's files: a file as numbered lines, one anchor per
   line ("#L12"), under a path whose folders lead to their listings and to the main page; a
   folder as a list of its files and folders, each a page of its own. A file that is not text
   is copied as it is, beside a page that links it.
2. A figure's alt text: Doxygen writes a Markdown image, ![caption](x.png), as <img alt="">
   with the caption in a div after it; the caption becomes the alt text (what a screen reader
   says, and what shows where the picture does not load); and the figure becomes a link to its
   file, so that a click opens at full size what the page shows scaled to its column (site.css).
3. The links: every href and src of every page of HTML_DIR that is not on the web (http:,
   https:, mailto:) or a script must name a file of the site that exists (a file: or other
   scheme never does), and an #anchor must be an id or name in that file.
4. The text a learner reads (code and the copies under src/ aside): what Doxygen printed raw
   instead of rendering it (a Doxygen command such as `@section` or `\\ref`, Markdown such as
   `**` around code or a `[text](target)` link, an option's `--` turned into an en dash), a
   number glued to the next word (`4.1times`: a line break lost after a marker); in code, an
   en dash (a command that would not copy as typed); and a figure without alt text. The rules
   are MARKDOWN, CODE_MARKDOWN, RAW and GLUED below, each finding named as it is printed.
Each finding is printed with its page; the exit code is 1 when there is one.
"""

import html
import os
import re
import shutil
import sys
from html.parser import HTMLParser

from md_filter import ROOT, SKIP_DIRS  # the course's root, and the folders that are no page's
# The web, and Doxygen's own scripts (javascript:void(0)): not checked here.
EXTERNAL = re.compile(r"^(https?:|mailto:|javascript:|//)", re.I)
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # any other (file:line, ...): broken

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link href="{up}doxygen.css" rel="stylesheet" type="text/css">
<style>
body {{ margin: 0 1.5em; }}
.srcnav {{ margin: 1em 0; font-size: 95%; }}
table.src {{ border-collapse: collapse; font: 13px/1.4 monospace; }}
table.src td {{ padding: 0 0.8em 0 0; vertical-align: top; white-space: pre; }}
table.src td.n {{ color: #999; text-align: right; user-select: none; }}
table.src td.n a {{ color: #999; text-decoration: none; }}
table.src tr:target {{ background: #fff3b0; }}
ul.listing {{ font: 14px/1.6 monospace; }}
</style></head>
<body>
<div class="srcnav"><a href="{up}index.html">The transpose course</a> / {crumbs}</div>
<h1>{title}</h1>
{body}
</body></html>
"""


def crumbs(rel, up):
    """"steps / 01_naive / main.cu", each folder a link to its listing."""
    parts = rel.split("/") if rel else []
    links = []
    for i, part in enumerate(parts):
        if i + 1 < len(parts):
            links.append('<a href="%ssrc/%s/index.html">%s</a>'
                         % (up, "/".join(parts[: i + 1]), html.escape(part)))
        else:
            links.append(html.escape(part))
    return " / ".join(links)


def is_text(data):
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def source_page(html_dir, rel):
    """src/<rel>.html: the file at <rel> with numbered, anchored lines (or a plain copy)."""
    with open(os.path.join(ROOT, rel), "rb") as f:
        data = f.read()
    out = os.path.join(html_dir, "src", rel + ".html")
    up = "../" * (rel.count("/") + 1)
    if not is_text(data):  # an image or other binary: the page is the file itself
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out[: -len(".html")], "wb") as f:
            f.write(data)
        body = '<p><a href="%s">%s</a></p>' % (html.escape(os.path.basename(rel)),
                                               html.escape(rel))
    else:
        rows = ['<tr id="L%d"><td class="n"><a href="#L%d">%d</a></td><td>%s</td></tr>'
                % (n, n, n, html.escape(line))
                for n, line in enumerate(data.decode("utf-8").splitlines(), 1)]
        body = '<table class="src">\n%s\n</table>' % "\n".join(rows)
        # A header of common/ has Doxygen's page too: harness.cuh -> harness_8cuh.html.
        api = os.path.basename(rel).replace("_", "__").replace(".", "_8") + ".html"
        if rel.startswith("common/") and os.path.isfile(os.path.join(html_dir, api)):
            body = '<p>Its API reference: <a href="%s%s">%s</a></p>\n%s' % (
                up, api, html.escape(os.path.basename(rel)), body)
    write(out, PAGE.format(title=html.escape(rel), up=up, crumbs=crumbs(rel, up), body=body))


def listing_page(html_dir, rel, pending):
    """src/<rel>/index.html: the folder's files and folders; each joins @p pending."""
    folder = os.path.join(ROOT, rel)
    up = "../" * (rel.count("/") + 2 if rel else 1)
    items = []
    for name in sorted(os.listdir(folder)):
        if SKIP_DIRS.match(name):
            continue
        child = (rel + "/" + name) if rel else name
        if os.path.isdir(os.path.join(folder, name)):
            items.append('<li><a href="%s/index.html">%s/</a></li>' % (name, html.escape(name)))
            pending.append(("dir", child))
        else:
            items.append('<li><a href="%s.html">%s</a></li>' % (name, html.escape(name)))
            pending.append(("file", child))
    body = '<ul class="listing">\n%s\n</ul>' % "\n".join(items)
    write(os.path.join(html_dir, "src", rel, "index.html"),
          PAGE.format(title=html.escape(rel or "the course") + "/", up=up,
                      crumbs=crumbs(rel, up), body=body))


# The text rules (4. above).
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
CODE_TAGS = {"pre", "code", "tt", "script", "style", "kbd", "samp"}
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


class Page(HTMLParser):
    """A page's ids and names, its links (href, src), its figures without alt text, and its
    visible text apart from its code (pre, code, ... and Doxygen's div.fragment)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links, self.no_alt = set(), [], []
        self.stack, self.text, self.code = [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append(a[key])
        if tag == "img" and not (a.get("alt") or "").strip() and \
                "usemap" not in a:  # a class diagram has its text beside it
            self.no_alt.append(a.get("src") or "")
        if tag in ("br", "img", "hr", "meta", "link", "input"):
            return
        code = tag in CODE_TAGS or (tag == "div" and "fragment" in (a.get("class") or "").split())
        self.stack.append((tag, code or bool(self.stack and self.stack[-1][1])))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching tag
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self.stack and self.stack[-1][0] in ("script", "style"):
            return
        (self.code if self.stack and self.stack[-1][1] else self.text).append(data)


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


def text_problems(page):
    """[(what, the text around it)] of one parsed page's text, code and figures."""
    text, code, found = "".join(page.text), "".join(page.code), []
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
    found += [("figure without alt text", src) for src in page.no_alt
              if os.path.basename(src) not in DOXYGEN_ICONS]
    return found


def parse(path, cache):
    if path not in cache:
        parser = Page()
        with open(path, encoding="utf-8", errors="replace") as f:
            parser.feed(f.read())
        cache[path] = parser
    return cache[path]


def html_files(html_dir):
    for folder, dirs, files in os.walk(html_dir):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".html"):
                yield os.path.join(folder, name)


def write_sources(html_dir):
    """Writes every src/ page that a page links to (and, for a folder, what it lists)."""
    pending, done = [], set()
    for page in html_files(html_dir):
        for link in parse(page, {}).links:
            m = re.match(r"^src/(.*?)(/index\.html|\.html)?(#.*)?$", link)
            if m:
                kind = {"/index.html": "dir", ".html": "file", None: "raw"}[m.group(2)]
                pending.append((kind, m.group(1)))
    while pending:
        kind, rel = pending.pop()
        rel = rel.strip("/")
        if (kind, rel) in done:
            continue
        done.add((kind, rel))
        target = os.path.join(ROOT, rel)
        if kind == "dir" and os.path.isdir(target):
            listing_page(html_dir, rel, pending)
        elif kind == "file" and os.path.isfile(target):
            source_page(html_dir, rel)
        elif kind == "raw" and os.path.isfile(target):  # a picture linked as itself
            os.makedirs(os.path.dirname(os.path.join(html_dir, "src", rel)), exist_ok=True)
            shutil.copyfile(target, os.path.join(html_dir, "src", rel))
        else:
            continue
        parent = os.path.dirname(rel)
        if parent:  # the path above each page links its folders' listings
            pending.append(("dir", parent))
    return len(done)


FIGURE = re.compile(r'(<img [^>]*?alt=")("[^>]*>\s*<div class="caption">\s*)(.*?)(\s*</div>)', re.S)


# A figure of a page, not yet a link.
FIGURE_IMG = re.compile(r'(<div class="image">\s*)(<img src="([^"]*)"[^>]*>)')

DIAGRAM = re.compile(r'((Inheritance diagram for [^<]*?):</div>\s*<div class="dyncontent">\s*'
                     r'<div class="center">\s*)<img src="([^"]*)" alt=""/>')


def alt_texts(html_dir):
    """Gives every figure with a caption its caption as alt text, and makes every figure a
    link to its file; how many alt texts it gave."""
    count = 0
    for page in html_files(html_dir):
        with open(page, encoding="utf-8") as f:
            text = f.read()
        new, n = FIGURE.subn(lambda m: "%s%s%s%s%s" % (
            m.group(1), html.escape(html.unescape(re.sub(r"<[^>]+>", "", m.group(3))).strip(),
                                    quote=True), m.group(2), m.group(3), m.group(4)), text)
        # A class's inheritance diagram: its heading, "Inheritance diagram for X:", says it.
        new, k = DIAGRAM.subn(lambda m: '%s<img src="%s" alt="%s"/>' % (
            m.group(1), m.group(3), m.group(2)), new)
        n += k
        new, links = FIGURE_IMG.subn(r'\1<a href="\3">\2</a>', new)
        if n or links:
            with open(page, "w", encoding="utf-8") as f:
                f.write(new)
            count += n
    return count


def check(html_dir):
    """([(page, link, why)] for every broken link, [(page, what, context)] for every artifact in
    the text) of the site."""
    cache, broken, artifacts = {}, [], []
    for path in html_files(html_dir):
        page = parse(path, cache)
        for link in page.links:
            if not link or EXTERNAL.match(link):
                continue
            if SCHEME.match(link):
                broken.append((path, link, "not a page, a file or an anchor of the site"))
                continue
            target, _, anchor = link.partition("#")
            target = target.split("?")[0]
            target = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target \
                else path
            if not os.path.exists(target):
                broken.append((path, link, "no such file"))
            elif anchor and target.endswith(".html") and anchor not in parse(target, cache).ids:
                broken.append((path, link, "no anchor '%s' there" % anchor))
        rel = os.path.relpath(path, html_dir)
        if not rel.startswith("src" + os.sep):
            artifacts += [(rel, what, " ".join(context.split()))
                          for what, context in text_problems(page)]
    return broken, artifacts


def self_test():
    """The checks find what they must on planted pages (each artifact the course's pages once
    showed, as Doxygen printed it) and leave legitimate text alone."""
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
        broken, found = check(tmp)
    broken = [link for _, link, _ in broken]
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
        print(f"site: {line}")
    print(f"site: self-test {'FAILED' if failed else 'ok'}")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    html_dir = sys.argv[1]
    n = write_sources(html_dir)
    print("docs: %d browsable copies of files and folders in %s/src" % (n, html_dir))
    print("docs: %d figures given their caption as alt text" % alt_texts(html_dir))
    broken, artifacts = check(html_dir)
    for page, link, why in broken:
        print("docs: broken link in %s: %s (%s)" % (os.path.relpath(page, html_dir), link, why))
    for page, what, context in artifacts:
        print(f"docs: {page}: {what}: ...{context}...")
    if broken:
        print("docs: %d broken links (each page's Markdown link is rewritten by docs/md_filter.py)"
              % len(broken))
    else:
        print("docs: every link of %d pages resolves" % sum(1 for _ in html_files(html_dir)))
    if artifacts:
        print(f"docs: {len(artifacts)} artifacts in the site's text (a Markdown construct Doxygen "
              "did not render; docs/md_filter.py rewrites the pages for it)")
    else:
        print("docs: no raw Markdown or Doxygen markup, glued number, en dash in code or figure "
              "without alt text in the site's text")
    return 1 if broken or artifacts else 0


if __name__ == "__main__":
    sys.exit(main())

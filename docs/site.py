#!/usr/bin/env python3
"""The docs site after doxygen: the browsable copies of the sources, then the link check.

    python3 docs/site.py HTML_DIR             write the copies, then check every link
    python3 docs/site.py HTML_DIR --check     check only

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
3. The check: every href and src of every page of HTML_DIR that is not on the web (http:,
   https:, mailto:) or a script must name a file of the site that exists (a file: or other
   scheme never does), and an #anchor must be an id or name in that file. Each broken link is
   printed with its page; the exit code is 1 when there is one.
"""

import html
import os
import re
import shutil
import sys
from html.parser import HTMLParser

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = re.compile(r"^(build.*|\..*|__pycache__|node_modules)$")
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


class Links(HTMLParser):
    """The ids and names of a page, and its links (href, src)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key])
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append(a[key])


def parse(path, cache):
    if path not in cache:
        parser = Links()
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
    """[(page, link, why)] for every broken link of the site."""
    cache, broken = {}, []
    for page in html_files(html_dir):
        for link in parse(page, cache).links:
            if not link or EXTERNAL.match(link):
                continue
            if SCHEME.match(link):
                broken.append((page, link, "not a page, a file or an anchor of the site"))
                continue
            path, _, anchor = link.partition("#")
            path = path.split("?")[0]
            target = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(target):
                broken.append((page, link, "no such file"))
            elif anchor and target.endswith(".html") and anchor not in parse(target, cache).ids:
                broken.append((page, link, "no anchor '%s' there" % anchor))
    return broken


def main():
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] != "--check"):
        sys.exit(__doc__)
    html_dir = sys.argv[1]
    if len(sys.argv) == 2:
        n = write_sources(html_dir)
        print("docs: %d browsable copies of files and folders in %s/src" % (n, html_dir))
        print("docs: %d figures given their caption as alt text" % alt_texts(html_dir))
    broken = check(html_dir)
    for page, link, why in broken:
        print("docs: broken link in %s: %s (%s)" % (os.path.relpath(page, html_dir), link, why))
    if broken:
        print("docs: %d broken links (each page's Markdown link is rewritten by docs/md_filter.py)"
              % len(broken))
        return 1
    print("docs: every link of %d pages resolves" % sum(1 for _ in html_files(html_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The docs site as a browser shows it: each page of the course rendered in headless Chromium.

    python3 docs/check_browser.py HTML_DIR       the course's pages of the built site
                                                 (build_docs.sh runs it after site.py)
    python3 docs/check_browser.py --self-test    the rules on planted pages, one page each

site.py checks the HTML that Doxygen wrote (its links and its text); a browser reads it again,
mends what is not valid HTML its own way and lays it out, and that is what the learner sees.
So this reads the DOM after the page has loaded, its scripts run and its figures decoded, in a
1280 x 900 window, and fails on:
  - a folded block, <details>, whose <summary> is not its first child, or with nothing after
    its summary (a hint that opens to nothing, a toggle named "Details");
  - a picture (<img>) wider than the text column (a figure cut at the window's edge);
  - a heading out of order: a level skipped on the way down (an h3 right after an h1, an h2
    before any h1, below the page title), or a heading as large as the page title or larger.
The pages checked are those the course writes (every .md: lessons, labs, exercises, the
instructors' page, the plots' pages), about 40: not Doxygen's reference of common/ and its
source listings, which hold no page of the course and would take ten times as long.

Where Chromium is not installed (`make deps` installs it), this says so in one line and exits 77
(CTest's skip); CHROMIUM=/path/to/chrome names another build of it. Each page is loaded from
its file in an iframe of one page that runs the rules, so one browser start checks the whole
site.
"""

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SKIP = 77
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Runs in the driver page once every iframe (a page of the site, 1280 x 900) has loaded: the
# findings of each page, as JSON in <pre id="course-check">.
RULES_JS = r"""
function meaningful(node) {
  return node.nodeType === 1 || (node.nodeType === 3 && node.data.trim() !== "");
}
function label(el) {
  return (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 60);
}
function checkPage(doc, win) {
  const found = [];
  const contents = doc.querySelector("div.contents");
  if (!contents) return [["page without content", "no div.contents"]];
  for (const d of contents.querySelectorAll("details")) {
    const nodes = Array.from(d.childNodes).filter(meaningful);
    const summary = d.querySelector(":scope > summary");
    if (!nodes.length || nodes[0].tagName !== "SUMMARY") {
      found.push(["<details> whose <summary> is not its first child",
                  summary ? label(summary) : "no summary: " + label(d)]);
    } else if (nodes.length === 1) {
      found.push(["<details> with nothing but its summary", label(summary)]);
    }
  }
  const style = win.getComputedStyle(contents);
  const column = contents.clientWidth - parseFloat(style.paddingLeft) -
                 parseFloat(style.paddingRight);
  for (const img of contents.querySelectorAll("img")) {
    const width = img.getBoundingClientRect().width;
    if (width > column + 0.5) {
      found.push(["image wider than its column", img.getAttribute("src") + ": " +
                  Math.round(width) + " px in a column of " + Math.round(column) + " px"]);
    }
  }
  const title = doc.querySelector("div.headertitle .title");
  const titleSize = title ? parseFloat(win.getComputedStyle(title).fontSize) : Infinity;
  let previous = 0;  // the page title
  const large = [];
  for (const h of contents.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const level = Number(h.tagName[1]);
    if (level > previous + 1) {
      found.push(["heading level out of order", "h" + level + " '" + label(h) + "' after " +
                  (previous ? "h" + previous : "the page title")]);
    }
    const size = parseFloat(win.getComputedStyle(h).fontSize);
    if (size >= titleSize) {
      large.push("h" + level + " '" + label(h) + "' " + size + " px");
    }
    previous = level;
  }
  if (large.length) {  // a style sets it for every heading of a level: one line a page
    found.push(["heading as large as the page title", large[0] + ", the title " + titleSize +
                " px" + (large.length > 1 ? " (and " + (large.length - 1) + " more)" : "")]);
  }
  return found;
}
function runChecks() {
  const results = {};
  for (const frame of document.querySelectorAll("iframe")) {
    const page = frame.getAttribute("data-page");
    try {
      results[page] = checkPage(frame.contentDocument, frame.contentWindow);
    } catch (e) {
      results[page] = [["page not checked", String(e)]];
    }
  }
  document.getElementById("course-check").textContent = JSON.stringify(results);
}
window.addEventListener("load", () => setTimeout(runChecks, 100));
"""

DRIVER_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><style>
iframe {{ display: block; width: 1280px; height: 900px; border: 0; }}
</style></head><body>
<pre id="course-check"></pre>
{frames}
<script>{script}</script>
</body></html>
"""


def find_browser():
    """The path of Chromium (or Chrome), or None."""
    override = os.environ.get("CHROMIUM")
    if override:
        return shutil.which(override)
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser, html_dir, pages):
    """{page: [[what, where]]} of @p pages, from Chromium's DOM."""
    frames = "\n".join('<iframe data-page="%s" src="%s"></iframe>' % (
        html.escape(p, quote=True), html.escape(Path(html_dir, p).resolve().as_uri(), quote=True))
        for p in pages)
    with tempfile.TemporaryDirectory() as tmp:
        driver = Path(tmp, "course_check.html")
        driver.write_text(DRIVER_PAGE.format(frames=frames, script=RULES_JS), encoding="utf-8")
        # --allow-file-access-from-files: the driver page reads the DOM of the pages it loads
        # (file: pages may not, by default). --no-sandbox: Chromium refuses to start as root
        # with its sandbox, and containers run as root; the pages are the course's own.
        # --disable-dev-shm-usage: a container's /dev/shm (64 MB) is too small for 40 pages of
        # figures. A profile of its own, so that two checks at once (ctest -j) do not share one.
        # The virtual time budget lets the pages' scripts and the rules run before the DOM is
        # written out; it passes only while nothing loads.
        cmd = [browser, "--headless", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
               "--no-first-run", "--disable-extensions", "--hide-scrollbars",
               "--allow-file-access-from-files", "--user-data-dir=" + str(Path(tmp, "profile")),
               "--window-size=1280,900", "--virtual-time-budget=20000", "--dump-dom",
               driver.as_uri()]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    m = re.search(r'<pre id="course-check">(.*?)</pre>', run.stdout, re.S)
    if run.returncode != 0 or not m or not m.group(1).strip():
        err = (run.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError("%s gave no result (exit %d): %s" % (browser, run.returncode, err))
    return json.loads(html.unescape(m.group(1)))


def check(browser, html_dir, pages):
    """[(page, what, where)] over @p pages of @p html_dir."""
    return [(page, what, where) for page, found in sorted(render(browser, html_dir, pages).items())
            for what, where in found]


def course_pages(html_dir):
    """The site's pages made from the course's .md files, in the order of their names."""
    from md_filter import page_labels
    return sorted(label + ".html" for label in set(page_labels())
                  if os.path.isfile(os.path.join(html_dir, label + ".html")))


# One page per rule, as the site once showed it or as it could; each must give its finding and
# nothing else, and the page "fine.html" none. The pages have Doxygen's frame: header, contents.
PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; font: 14px sans-serif; }}
div.contents {{ width: 800px; padding: 0 8px; }}
div.headertitle .title {{ font-size: 28px; }}
h1 {{ font-size: 22px; }} h2 {{ font-size: 19px; }} h3 {{ font-size: 16px; }}
{style}</style></head><body>
<div class="header"><div class="headertitle"><div class="title">{title}</div></div></div>
<div class="contents">{body}</div></body></html>
"""
PLANTED = {
    # Doxygen 1.9 on a hint: the summary alone in one toggle, the text in a second one.
    "details_split.html": (
        "", '<p><details>\n<summary>Hint 1: the grid</summary></details>\n</p>\n'
            '<p><details>\nBlocks go along each row. </details></p>',
        ["<details> with nothing but its summary",
         "<details> whose <summary> is not its first child"]),
    "details_late_summary.html": (
        "", "<details><p>The text first.</p><summary>Hint 2</summary></details>",
        ["<details> whose <summary> is not its first child"]),
    "wide_image.html": (
        "", '<h1>A figure</h1><div class="image"><img src="wide.svg" alt="a wide figure"/></div>',
        ["image wider than its column"]),
    "heading_skip.html": (
        "", "<h1>The idea</h1><p>Text.</p><h3>A detail</h3><p>Text.</p>",
        ["heading level out of order"]),
    "heading_large.html": (
        "h1 { font-size: 32px; }", "<h1>The idea</h1><p>Text.</p>",
        ["heading as large as the page title"]),
    "fine.html": (
        "div.image img { max-width: 100%; height: auto; }",
        '<p>Intro.</p><h1>The idea</h1><h2>In short</h2><p>Text.</p><h1>The figure</h1>'
        '<div class="image"><a href="wide.svg"><img src="wide.svg" alt="a wide figure"/></a>'
        '</div><details><summary>Hint 1: the grid</summary><p>Blocks go along each row.</p>'
        '</details>', []),
}


def self_test(browser):
    """Each rule finds its planted page, and the fine page passes (`--self-test`, a CPU test)."""
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "wide.svg"), "w") as f:
            f.write('<svg xmlns="http://www.w3.org/2000/svg" width="2000" height="40">'
                    '<rect width="2000" height="40" fill="#48c"/></svg>')
        for name, (style, body, _) in PLANTED.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(PAGE.format(style=style, title="Step 99 — a planted page", body=body))
        found = check(browser, tmp, sorted(PLANTED))
    for page, what, where in found:
        print("check_browser: %s: %s: %s" % (page, what, where))
    for name, (_, _, want) in PLANTED.items():
        got = sorted({what for page, what, _ in found if page == name})
        if got != sorted(want):
            failed.append("%s gave %s, wanted %s" % (name, got, sorted(want)))
    for line in failed:
        print("check_browser: " + line)
    print("check_browser: %s" % ("FAILED" if failed else "ok: every rule found its planted page"))
    return 1 if failed else 0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    browser = find_browser()
    if not browser:
        print("docs: browser check skipped: chromium is not installed (make deps installs it)")
        return SKIP
    try:
        if sys.argv[1] == "--self-test":
            return self_test(browser)
        html_dir = sys.argv[1]
        pages = course_pages(html_dir)
        problems = check(browser, html_dir, pages)
    except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        print("docs: the browser check failed to run: %s" % e)
        return 1
    for page, what, where in problems:
        print("docs: %s: %s: %s" % (page, what, where))
    if problems:
        print("docs: %d problems in %d pages rendered by %s" % (len(problems), len(pages),
                                                               os.path.basename(browser)))
        return 1
    print("docs: %d pages rendered by %s: every hint folds as one toggle, every figure fits its "
          "column, headings in order" % (len(pages), os.path.basename(browser)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

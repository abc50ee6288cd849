#!/bin/sh
# Builds the Doxygen site and checks it (`make docs`, and the test docs_build):
#   sh docs/build_docs.sh DOXYFILE HTML_DIR
# 1. doxygen DOXYFILE: a warning fails it (WARN_AS_ERROR); docs/md_filter.py rewrites the pages;
# 2. docs/site.py HTML_DIR: the browsable copies of the files the pages link, then every link
#    and the text of every page checked as HTML; a finding fails it;
# 3. docs/check_browser.py HTML_DIR: the course's pages rendered in headless Chromium; a finding
#    fails it. Without Chromium it says so in one line, and the site is still built.
# Exit 77, which CTest reports as a skip, where doxygen or python3 is not installed.
for tool in doxygen python3; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "docs_build skipped: $tool is not installed (make deps installs it)"
    exit 77
  fi
done
doxygen "$1" || exit 1
python3 "$(dirname "$0")/site.py" "$2" || exit 1
python3 "$(dirname "$0")/check_browser.py" "$2"
rc=$?
[ $rc -eq 77 ] && exit 0  # no browser: the site is built and checked as HTML
exit $rc

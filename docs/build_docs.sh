#!/bin/sh
# Builds the Doxygen site and checks it (`make docs`, and the test docs_build):
#   sh docs/build_docs.sh DOXYFILE HTML_DIR
# doxygen (a warning fails it: WARN_AS_ERROR), then site.py and check_browser.py, whose
# docstrings say what each writes and checks; a finding of either fails it.
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

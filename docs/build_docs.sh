#!/bin/sh
# The docs test: build the Doxygen site from the configuration $1; a warning fails it (the
# configuration says WARN_AS_ERROR = FAIL_ON_WARNINGS). Exit 77, which CTest reports as a skip,
# where doxygen is not installed.
if ! command -v doxygen >/dev/null 2>&1; then
  echo "docs_build skipped: doxygen is not installed (apt-get install doxygen)"
  exit 77
fi
exec doxygen "$1"

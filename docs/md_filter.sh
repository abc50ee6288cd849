#!/bin/sh
# Doxygen's input filter for the Markdown pages (FILTER_PATTERNS in Doxyfile.in).
# A lesson links its figures relative to its own folder, "../../plots/figures/x.png", which is
# what GitHub follows. Doxygen only recognises an image by a path that ends the file's real path
# under IMAGE_PATH, so the leading "../" parts go: "plots/figures/x.png". Nothing else changes,
# and every line stays where it was (warnings keep their line numbers).
exec sed -e 's#\](\(\.\./\)*plots/figures/#](plots/figures/#g' "$1"

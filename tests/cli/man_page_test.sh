#!/usr/bin/env bash
# Renders docs/redlock.1 as a reader sees it (man -l, from Debian's man-db)
# and checks the text: the key prefix and RESOURCE are two words, not
# "PRESOURCE", and groff has nothing to warn about.
# Usage: man_page_test.sh PATH/TO/redlock.1
set -euo pipefail

page=${1:?usage: man_page_test.sh PATH/TO/redlock.1}
if ! command -v man >/dev/null; then
  echo "man_page_test: 'man' is missing: install man-db (scripts/deps.sh does)" >&2
  exit 1
fi

warnings=$(mktemp)
trap 'rm -f "$warnings"' EXIT
# Plain text at a fixed width, every run of blanks and line ends one space.
rendered=$(MANWIDTH=80 MAN_KEEP_FORMATTING= man --warnings -l "$page" 2>"$warnings" |
  tr -s ' \n\t' '   ')

status=0
if [[ -s "$warnings" ]]; then
  echo "man_page_test: groff warns:" >&2
  cat "$warnings" >&2
  status=1
fi
if [[ "$rendered" != *"redlock - a distributed lock"* ]]; then
  echo "man_page_test: the page did not render (no NAME line)" >&2
  status=1
fi
if [[ "$rendered" == *PRESOURCE* ]]; then
  echo "man_page_test: the rendered page says PRESOURCE" >&2
  status=1
fi
phrase="the key of RESOURCE is the prefix P followed by RESOURCE"
if [[ "$rendered" != *"$phrase"* ]]; then
  echo "man_page_test: the rendered page lacks \"$phrase\"" >&2
  status=1
fi
exit "$status"

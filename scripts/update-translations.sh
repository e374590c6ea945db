#!/usr/bin/env bash
# Refreshes the translation catalogue from the sources: every tr() / translate() string of the
# GUI (app/gui) and of the renderer (app/render) goes into resources/translations/attnscope_zh_CN.ts;
# strings that left the sources are dropped. New strings come in unfinished: translate them in Qt
# Linguist (`linguist resources/translations/attnscope_zh_CN.ts`, Debian's qt6-tools-dev-tools) or
# by editing the <translation> elements, then run the tst_translations test.
#
#   scripts/update-translations.sh            update the catalogue in place
#   scripts/update-translations.sh OUT.ts     write the updated catalogue to OUT.ts instead (the test
#                                             does this, into a temporary folder)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
catalogue="$root/resources/translations/attnscope_zh_CN.ts"
out="${1:-$catalogue}"

lupdate="${LUPDATE:-}"
if [ -z "$lupdate" ]; then
  for candidate in /usr/lib/qt6/bin/lupdate "$(command -v lupdate6 || true)" "$(command -v lupdate || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then lupdate="$candidate"; break; fi
  done
fi
if [ -z "$lupdate" ]; then
  echo "update-translations: lupdate not found (install qt6-l10n-tools, or set LUPDATE)" >&2
  exit 2
fi

if [ "$out" != "$catalogue" ]; then
  cp "$catalogue" "$out"
  chmod u+w "$out"
fi
# -I: lupdate reads the headers to give each class its full context (attnscope::MainWindow);
# -locations none: no line numbers, so the catalogue changes only when a text does.
cd "$root"
"$lupdate" -silent -locations none -no-obsolete -target-language zh_CN -I "$root" app/gui app/render -ts "$out"
if [ "$out" = "$catalogue" ]; then
  unfinished=$(grep -c 'type="unfinished"' "$out" || true)
  echo "update-translations: $out updated; $unfinished message(s) still need a translation"
  if [ "$unfinished" -gt 0 ]; then
    # Each untranslated source text, one per line (a <source> followed by an unfinished translation).
    grep -B2 'type="unfinished"' "$out" | grep '<source>' | sed 's/^ *<source>/  /; s/<\/source>$//' || true
  fi
fi

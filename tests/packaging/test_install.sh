#!/usr/bin/env bash
# test_install.sh BUILD_DIR VERSION: `cmake --install` into an empty prefix gives the two
# programs, a desktop entry desktop-file-validate accepts, metainfo appstreamcli accepts, a
# MIME type update-mime-database reads, and every icon size; the installed CLI runs.
set -euo pipefail
build=$1 version=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
id=io.github.attnscope.AttnScope
share=$prefix/share
for f in bin/attnscope bin/attnscope-cli share/applications/$id.desktop share/metainfo/$id.metainfo.xml \
         share/mime/packages/$id.xml share/icons/hicolor/scalable/apps/$id.svg \
         share/attnscope/models/tiny-gpt2/model.safetensors share/attnscope/models/tiny-gpt2/vocab.json \
         share/attnscope/models/tiny-qwen3/config.json share/attnscope/models/tiny-qwen3/model.safetensors \
         share/attnscope/models/tiny-qwen3/tokenizer.json share/attnscope/models/tiny-qwen3/tokenizer_config.json \
         share/attnscope/models/tiny-qwen3/README.md share/attnscope/models/tiny-marian-en-zh/source.spm \
         share/attnscope/models/tiny-marian-en-zh/target.spm share/attnscope/models/tiny-marian-en-zh/README.md; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
[ -x "$prefix/bin/attnscope" ] && [ -x "$prefix/bin/attnscope-cli" ] || fail "programs not executable"
# The installed CLI runs the installed example model.
"$prefix/bin/attnscope-cli" tokenize "$share/attnscope/models/tiny-gpt2" --text "Hello world" | grep -q '"ids"' ||
  fail "the installed example model does not tokenize"
# The installed CLI translates with the installed translation example (libsentencepiece found).
"$prefix/bin/attnscope-cli" model "$share/attnscope/models/tiny-marian-en-zh" --text "The cat is under the table." \
  --out "$prefix/translation" --backend cpu | grep -q 'translation: 猫在桌子下面。' ||
  fail "the installed translation example does not translate"
# The Chinese example's files are the source tree's, byte for byte.
here=$(cd "$(dirname "$0")/../.." && pwd)
for f in config.json model.safetensors tokenizer.json tokenizer_config.json; do
  cmp -s "$here/resources/models/tiny-qwen3/$f" "$share/attnscope/models/tiny-qwen3/$f" ||
    fail "installed tiny-qwen3/$f differs from the source tree's"
done

desktop-file-validate "$share/applications/$id.desktop" || fail "desktop-file-validate rejects the desktop entry"
grep -qx 'MimeType=application/x-attnscope-project;' "$share/applications/$id.desktop" || fail "no MimeType"
grep -qx "Icon=$id" "$share/applications/$id.desktop" || fail "Icon= is not $id"
appstreamcli validate --no-net "$share/metainfo/$id.metainfo.xml" || fail "appstreamcli rejects the metainfo"
grep -q "<release version=\"$version\"" "$share/metainfo/$id.metainfo.xml" || fail "no release entry for $version"

# The MIME database built from the installed XML maps *.attnscope.json to the project type.
update-mime-database "$share/mime" || fail "update-mime-database rejects the MIME XML"
grep -q 'application/x-attnscope-project:\*\.attnscope\.json' "$share/mime/globs2" ||
  fail "*.attnscope.json is not in the MIME globs"

# Every PNG size is a PNG of that size (width and height from the IHDR chunk).
for size in 16 32 48 64 128 256; do
  png=$share/icons/hicolor/${size}x${size}/apps/$id.png
  [ -f "$png" ] || fail "no ${size}x${size} icon"
  dims=$(od -An -tu1 -j16 -N8 "$png" | awk '{print $3*256+$4 "x" $7*256+$8}')
  [ "$dims" = "${size}x${size}" ] || fail "$png is $dims, not ${size}x${size}"
done

out=$(env -u LD_LIBRARY_PATH QT_QPA_PLATFORM=offscreen "$prefix/bin/attnscope-cli" --version)
[[ $out == *"$version"* ]] || fail "installed attnscope-cli --version says '$out', not $version"
echo "install: OK ($prefix)"

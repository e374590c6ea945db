#!/usr/bin/env bash
# test_deb.sh BUILD_DIR VERSION: `cpack -G DEB` from the build's CPack configuration gives a
# package named attnscope, section science, with library dependencies from dpkg-shlibdeps and
# the CJK font, that holds the programs, desktop entry, metainfo and icons; extracted, its CLI
# runs. The package is written to a temporary folder, not the build tree.
set -euo pipefail
build=$1 version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/out" --config CPackConfig.cmake >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/out/attnscope_"$version"_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no attnscope_${version}_*.deb in $(ls "$work/out")"

info=$(dpkg-deb -I "$deb")
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = attnscope ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version)"
[ "$(field Section)" = science ] || fail "Section: $(field Section)"
depends=$(field Depends)
for dep in libqt6widgets6 libqt6svg6 libc6 fonts-wqy-microhei; do
  [[ $depends == *"$dep"* ]] || fail "Depends lacks $dep: $depends"
done
[[ $(field Recommends) == *mesa-vulkan-drivers* ]] || fail "Recommends lacks mesa-vulkan-drivers"
[[ $(field Recommends) == *qt6-translations-l10n* ]] || fail "Recommends lacks qt6-translations-l10n (Qt's own dialogs in Chinese)"

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
id=io.github.attnscope.AttnScope
for f in usr/bin/attnscope usr/bin/attnscope-cli usr/share/applications/$id.desktop \
         usr/share/metainfo/$id.metainfo.xml usr/share/mime/packages/$id.xml \
         usr/share/icons/hicolor/scalable/apps/$id.svg usr/share/icons/hicolor/48x48/apps/$id.png \
         usr/share/icons/hicolor/256x256/apps/$id.png; do
  grep -qx "\./$f" <<<"$contents" || fail "the package lacks $f"
done

dpkg-deb -x "$deb" "$work/root"
out=$(env -u LD_LIBRARY_PATH QT_QPA_PLATFORM=offscreen "$work/root/usr/bin/attnscope-cli" --version)
[[ $out == *"$version"* ]] || fail "extracted attnscope-cli --version says '$out'"
echo "deb: OK ($(basename "$deb"), $(stat -c %s "$deb") bytes)"
echo "$info" | grep -E '^ (Depends|Recommends):'

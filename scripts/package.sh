#!/usr/bin/env bash
# Builds the Debian package for other machines: a portable Release build (ATTNSCOPE_NATIVE=OFF,
# the default; the `native` preset tunes to the build machine's CPU) without the tests, then
# `cpack -G DEB` and the same checks as the packaging_deb test. Result: build/package/*.deb.
# Usage: scripts/package.sh [--check-install]  (--check-install: apt-get --simulate installs it)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/package -G Ninja -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_NATIVE=OFF \
  -DATTNSCOPE_BUILD_TESTS=OFF -DATTNSCOPE_WERROR=ON >/dev/null
cmake --build build/package --parallel "${JOBS:-2}"
version=$(sed -n 's/^project(AttnScope VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
tests/packaging/test_deb.sh build/package "$version"
(cd build/package && cpack -G DEB >/dev/null)
deb=$(ls build/package/attnscope_"$version"_*.deb)
echo "package: $deb"
if [ "${1:-}" = --check-install ]; then
  # Resolves the dependencies against this machine's package lists without installing anything.
  apt-get install --simulate -q "./$deb" | tail -3
fi

#!/usr/bin/env bash
# Installs everything AttnScope builds, runs and tests with, from Debian 12's packages.
# Run as root (or with sudo). Safe to run again: installed packages are left as they are.
set -euo pipefail

packages=(
  # toolchain
  g++ cmake ninja-build pkg-config ccache
  # a faster linker than GNU ld for the hundred programs the build links (used when present)
  lld
  # the format check (part of the test suite) and the fuzz targets (clang's libFuzzer)
  clang-format clang libclang-rt-14-dev
  # libraries
  qt6-base-dev qt6-base-dev-tools libqt6svg6-dev libeigen3-dev nlohmann-json3-dev zlib1g-dev
  # SentencePiece: Marian translation models' source.spm / target.spm tokenizers
  libsentencepiece-dev
  # OpenBLAS: the CPU engine's GEMMs (core/Gemm.h opens libopenblas.so.0 at run time and falls
  # back to Eigen without it); the -dev package for bench_gemm's EIGEN_USE_BLAS variant
  libopenblas0-pthread libopenblas-dev
  # translations: CMake's qt_add_translations (qt6-tools-dev), lupdate and lrelease
  # (qt6-l10n-tools), and Qt's own catalogues, qtbase_zh_CN.qm for the standard dialogs
  qt6-tools-dev qt6-l10n-tools qt6-translations-l10n
  # Vulkan: headers and loader, the GLSL compiler, Mesa's lavapipe (a CPU Vulkan driver, so the
  # GPU path runs everywhere) and the Khronos validation layer the GPU tests enable
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  # GUI tests in a real X window, and rasterising exported PDFs
  xvfb xauth poppler-utils fonts-dejavu-core
  # the real tokenizer.json fixtures are stored xz-compressed (tests/fixtures/tokenizers)
  xz-utils
  # a CJK font: Chinese token labels in the GUI and in figures (also a dependency of the .deb)
  fonts-wqy-microhei
  # the packaging test: validating the installed desktop entry and AppStream metainfo, and
  # dpkg-shlibdeps (dpkg-dev) for `cpack -G DEB`
  desktop-file-utils appstream dpkg-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"

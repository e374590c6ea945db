#!/usr/bin/env bash
# Sets up, builds and starts AttnScope on a built-in example (the README's run command).
# Extra arguments go to the application, e.g. another project file.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake --preset release
cmake --build --preset release --parallel "$(nproc)"
example=resources/examples/self-attention-tutorial.attnscope.json
if [ -x build/release/bin/attnscope ]; then
  exec build/release/bin/attnscope "${@:-$example}"
fi
exec build/release/bin/attnscope-cli show "${@:-$example}"

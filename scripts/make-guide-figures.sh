#!/usr/bin/env bash
# Draws the figures of Help > Guide (resources/guide/*.png) with attnscope-cli render: head.png,
# heads.png and mask.png for the English guide, head_zh.png, heads_zh.png and mask_zh.png, with
# the figures' own words in Chinese, for guide_zh.html. Run it after a change to how figures look
# and commit the images; tst_help draws them again and fails when the committed ones are stale.
#
#   scripts/make-guide-figures.sh CLI [OUTDIR]    CLI: build/ci/bin/attnscope-cli; OUTDIR:
#                                                 resources/guide (the default)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cli="$1"
out="${2:-$root/resources/guide}"
examples="$root/resources/examples"
mkdir -p "$out"

draw() { # LANGUAGE FILE PROJECT TITLE RENDER-OPTIONS...
  local language="$1" file="$2" project="$3" title="$4"
  shift 4
  "$cli" render "$examples/$project" --language "$language" --title "$title" --dpi 110 --backend cpu \
    --out "$out/$file" "$@" >/dev/null
}

draw en head.png self-attention-tutorial.attnscope.json "One head: who attends to whom" --view head --head 0
draw en heads.png multihead-causal.attnscope.json "Two heads of causal self-attention" --view heads
draw en mask.png padding-mask.attnscope.json "Padding: real tokens never attend to <pad>" --view mask
draw zh_CN head_zh.png self-attention-tutorial.attnscope.json "一个头：谁关注谁" --view head --head 0
draw zh_CN heads_zh.png multihead-causal.attnscope.json "因果自注意力的两个头" --view heads
draw zh_CN mask_zh.png padding-mask.attnscope.json "填充：真实词元从不关注 <pad>" --view mask

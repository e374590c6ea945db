#!/usr/bin/env bash
# Draws the figures of Help > Guide (resources/guide/*.png) with attnscope-cli render: head.png,
# heads.png, mask.png and the five of "Today's attention" for the English guide, and NAME_zh.png,
# with the figures' own words in Chinese, for guide_zh.html. Run it after a change to how figures look
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
# Section 6, today's attention: one figure per concept, from resources/examples/modern-attention.
modern=modern-attention
draw en gqa.png $modern/2-grouped-query.attnscope.json "Grouped-query: 4 query heads, 2 key/value heads" --view heads
draw en rope.png $modern/4-rope.attnscope.json "RoPE: scores repeat along the diagonals" --view head --head 0 \
  --quantity scores
draw en window.png $modern/5-sliding-window.attnscope.json "A sliding window of 4 keys" --view mask
draw en sink.png $modern/6-sink.attnscope.json "Sinks: head 0's rows sum to less than 1" --view heads
draw en softcap.png $modern/7-softcap.attnscope.json "Soft-capped at 2" --view head --head 0
draw zh_CN gqa_zh.png $modern/2-grouped-query.attnscope.json "分组查询：4 个查询头，2 个键值头" --view heads
draw zh_CN rope_zh.png $modern/4-rope.attnscope.json "RoPE：分数沿对角线重复" --view head --head 0 \
  --quantity scores
draw zh_CN window_zh.png $modern/5-sliding-window.attnscope.json "4 个键的滑动窗口" --view mask
draw zh_CN sink_zh.png $modern/6-sink.attnscope.json "汇点：头 0 每行之和小于 1" --view heads
draw zh_CN softcap_zh.png $modern/7-softcap.attnscope.json "软上限为 2" --view head --head 0

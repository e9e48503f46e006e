#!/usr/bin/env bash
# The view in Chinese (LC_ALL=zh_CN.UTF-8) at 80x24, 120x40 and 200x60: the
# labels are translated and laid out in display columns, so nothing is cut
# or out of line: the heading and the info line whole, the status line's
# hint (its right part) whole, the panel's labels in line and its lines
# within the screen, the help's descriptions in one column and whole, the
# overview's role names, the message for a terminal too small.
# Skipped (77) only when no zh_CN.UTF-8 locale exists and none can be made.
. "$(dirname "$0")/lib.sh"

zh=$(locale -a 2>/dev/null | grep -i -m1 -E '^zh_CN\.utf-?8$')
if [ -z "$zh" ]; then
	mkdir -p "$tmpdir/locale"
	if localedef -i zh_CN -f UTF-8 "$tmpdir/locale/zh_CN.UTF-8" 2>/dev/null; then
		export LOCPATH="$tmpdir/locale"
		zh=zh_CN.UTF-8
	else
		echo "no zh_CN.UTF-8 locale and localedef cannot make one: skipping"
		exit 77
	fi
fi

text='他说北京的天气很好 today'
ntok=$("$bin" --dump --format tsv --text "$text" --model "$model_masked" |
	awk -F'\t' 'NR > 1 && $1 == 0 && $2 == 0 && $3 == 0' | wc -l)
role='(前字|后字|自身|首字|分隔符|重复|归纳|局部|广泛|左 [2-8]|右 [2-8]|关键字 [^ ]+( [^ ]+)?|同文字|对行|镜像|词首)'
# a role with its score (two that both fit), or "unclear" with a share
titled="($role( / $role)? [0-9]\.[0-9]{2}|不明：[0-9]+% $role)"
named="($role( / $role)?|不明(：[0-9]+% $role)?)" # a tile's, the score where it fits

# wait_tiles_named N: until N tiles of the overview are titled with a role
# and its score (10 s at most).
wait_tiles_named() {
	local i=0
	while [ $i -lt 200 ]; do
		[ "$(screen | grep -oE "L[01] H[0-3] $named" | wc -l)" -ge "$1" ] &&
			return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

last_line() { # the status line, trailing blanks removed
	screen | tail -1 | sed 's/ *$//'
}
# ends_with WHAT LINE SUFFIX
ends_with() {
	check "$1: '$2' ends with '$3'" test "${2%"$3"}" != "$2"
}
# whole LINE TEXT COLS: TEXT is on LINE and ends inside the screen.
whole() {
	local c
	c=$(col_of "$1" "$2")
	[ "$c" -ge 0 ] && [ $((c + $(col_of "$2@" "@"))) -le "$3" ]
}

# Scrolling cells: the panel stays beside them at 80x24 (with fitting cells
# it steps aside for the map's labels there).
for size in "80 24" "120 40" "200 60"; do
	set -- $size
	cols=$1 rows=$2
	tui_start "$cols" "$rows" TERM=xterm-256color LC_ALL="$zh" -- --model "$model_masked" \
		--cells scroll --text "$text"
	expect_screen "$ntok 个词元" || continue
	wait_result
	at="${cols}x$rows"
	check "$at: input line label" test "$(line 0)" = "文本> $text"
	check "$at: heading whole" \
		grep -qE '^第 0 层  注意力头 0  （层 0-1，头 0-3）  '"$titled"'  掩码' \
		<<<"$(line 2)"
	check "$at: the colour bar's scale translated" grep -qE ' 按行 +(│|$)' <<<"$(line 3)"
	check "$at: status line starts with the mode" grep -q '^ 输入 | ' <<<"$(last_line)"
	ends_with "$at: status hint whole" "$(last_line)" "Enter：方向键移到热图 | F1 帮助"
	check "$at: status line has the result's time" \
		grep -qE "\| [0-9]+\.[0-9] ms \|" <<<"$(last_line)"
	if [ "$cols" -ge 120 ]; then
		check "$at: status line has the model, the head and the tokens" \
			grep -qE "^ 输入 \| golden fwd_masked .*\| 第 0 层 头 0 \| $ntok 个词元 \|" <<<"$(last_line)"
	fi

	keys Enter
	check "$at: the map's mode" wait_for_re '^ 热图 \| ' || continue
	ends_with "$at: map status hint whole" "$(last_line)" "方向键移动，打字编辑文本 | F1 帮助"
	check "$at: status line starts with the map's name" grep -q '^ 热图 | ' <<<"$(last_line)"
	yq=$(screen | grep -n '│查询Q 0 他' | head -1 | cut -d: -f1)
	yk=$(screen | grep -n '│键K   0 他' | head -1 | cut -d: -f1)
	yw=$(screen | grep -n '│权重   0\.' | head -1 | cut -d: -f1)
	check "$at: panel shows Query, Key and weight" test -n "$yq" -a -n "$yk" -a -n "$yw"
	[ -n "$yq" ] && [ -n "$yk" ] && [ -n "$yw" ] || continue
	bar=$(col_of "$(line $((yq - 1)))" "│")
	check "$at: panel border in one column" \
		test "$(col_of "$(line $((yk - 1)))" "│")" = "$bar" -a \
		"$(col_of "$(line $((yw - 1)))" "│")" = "$bar"
	check "$at: Query and Key characters in one column" \
		test "$(col_of "$(line $((yq - 1)))" "0 他 U+")" = "$(col_of "$(line $((yk - 1)))" "0 他 U+")"
	ent=$(screen | grep -o '熵 [0-9.]* nats（最大 [0-9.]*）' | head -1)
	check "$at: entropy line whole" test -n "$ent"
	[ -n "$ent" ] && check "$at: entropy line inside the screen" whole "$(screen | grep -F "$ent")" "$ent" "$cols"
	check "$at: rank line" grep -qE '│排名   第 [0-9]+/[0-9]+（行内）' <<<"$(screen)"
	check "$at: prediction heading" grep -q '│位置 0 的预测（掩码）' <<<"$(screen)"

	keys F1
	expect_screen "attnview 按键：可打印的键输入文字。" || continue
	# The help's body and its status line may reach the terminal in two
	# writes: wait for the hint, then check that it ends the line whole.
	wait_for "任意键：返回 | Ctrl-Q 退出" || true
	ends_with "$at: help status hint whole" "$(last_line)" "任意键：返回 | Ctrl-Q 退出"
	check "$at: help heading" grep -q '^任何位置' <<<"$(line 1)"
	d1=$(col_of "$(screen | grep -F '帮助（本屏幕）')" "帮助（本屏幕）")
	d2=$(col_of "$(screen | grep -F '退出（有文本时先询问）')" "退出（有文本时先询问）")
	d3=$(col_of "$(screen | grep -F '所有注意力头的总览（打开/关闭）')" "所有注意力头的总览（打开/关闭）")
	check "$at: help descriptions in one column ($d1 $d2 $d3)" test "$d1" -gt 0 -a "$d1" = "$d2" -a "$d2" = "$d3"
	# The mouse's lines last (scrolled to on small screens): translated
	# names, their descriptions after the widest, whole.
	for _ in 1 2 3 4; do
		screen | grep -q '点击注意力头' && break
		keys PageDown
		sleep 0.2
	done
	expect_screen "点击注意力头" || continue
	lm=$(screen | grep -F '点击注意力头')
	check "$at: help mouse line whole" whole "$lm" "总览：选中它；再点：打开" "$cols"
	lq=$(screen | grep -F '点击标签')
	check "$at: help mouse description whole" whole "$lq" "它的查询 (Query) 行或键 (Key) 列" "$cols"
	check "$at: mouse descriptions in one column" \
		test "$(col_of "$lm" "总览：选中它")" = "$(col_of "$lq" "它的查询")"
	if [ "$cols" -ge 120 ]; then
		check "$at: the help's scroll hint whole" \
			grep -q '。Up/Down/PageUp/PageDown 滚动；其他键关闭。' <<<"$(line 0)"
	fi
	keys Escape
	wait_gone "attnview 按键" || fail "$at: the help does not close"

	keys F3
	check "$at: overview heading" wait_for "总览：2 层 x 4 个注意力头，刻度 倍数"
	# The roles come from the worker (JOB_ROLES) after the tiles: wait for them.
	check "$at: overview tiles named with roles" wait_tiles_named 4
	wait_for "方向键选择，Enter 打开，打字编辑文本 | F1 帮助" || true
	ends_with "$at: overview status hint whole" "$(last_line)" \
		"方向键选择，Enter 打开，打字编辑文本 | F1 帮助"
done

# Too small: the message wrapped in columns, not cut inside a character.
tui_start 30 8 LC_ALL="$zh" -- --model "$model_masked"
check "too small: message" wait_for "终端太小（30x8）：attnview"
check "too small: the rest on the next line" wait_for "至少需要 50x14。"
check "too small: what to do" wait_for "请放大终端，或按 Ctrl-Q 退出。"
check "too small: no broken character" sh -c '! tmux -L "$1" capture-pane -p | grep -q "�"' _ "$sock"

finish

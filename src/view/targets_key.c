/* The patching targets' key (Alt-D): the status line asks for the two
 * characters of the logit difference D = z(a) - z(b) that patching (Alt-X)
 * measures, a then b; typing the second sets them, Enter with none goes
 * back to the default (where the texts differ in one place, their two
 * characters; else each text's top-1), Esc leaves them as they were.
 * Its state is the view's tp (state.h). */
#include "attnview/i18n.h"
#include "panel.h"
#include "screen.h"

#include <stdio.h>

void targets_prompt_open(view *v)
{
	v->tp.active = true;
	v->tp.n = 0;
}

bool targets_prompt_shown(const view *v)
{
	return v->tp.active;
}

/* The targets chosen (n 2) or the default (n 0): patching again. */
static void set_targets(view *v, int n)
{
	v->tp.active = false;
	patch_set_targets(v, n == 2, v->tp.cps);
	if (n == 2) {
		char a[32], b[32];
		cp_glyph(v->tp.cps[0], a);
		cp_glyph(v->tp.cps[1], b);
		set_notice(v, _("patching measures D = z(%s) - z(%s) (Alt-D: others)"), a, b);
	} else {
		set_notice(v, "%s", _("patching's characters: the default again"));
	}
	if (v->page != PAGE_PATCH)
		do_action(v, ACT_PATCH, 0);
}

bool targets_prompt_key(view *v, int ch, bool is_code)
{
	if (!v->tp.active)
		return false;
	if (!is_code && (ch == 27 || ch == CTRL('q'))) {
		v->tp.active = false;
		set_notice(v, "%s", _("patching's characters unchanged"));
	} else if ((!is_code && (ch == '\r' || ch == '\n')) || (is_code && ch == KEY_ENTER)) {
		if (v->tp.n == 0)
			set_targets(v, 0);
	} else if ((is_code && ch == KEY_BACKSPACE) || (!is_code && (ch == 127 || ch == 8))) {
		v->tp.n = v->tp.n > 0 ? v->tp.n - 1 : 0;
	} else if (!is_code && ch >= 0x20 && !(ch & ALT_BIT)) {
		v->tp.cps[v->tp.n++] = (uint32_t)ch;
		if (v->tp.n == 2)
			set_targets(v, 2);
	}
	return true;
}

void draw_targets_prompt(view *v, int y)
{
	style s = st(A_REVERSE, 0), b = st(A_REVERSE | A_BOLD, 0);
	fill(y, 0, COLS, s);
	int x = put_str(y, 0, COLS, b, _(" Patching: D = z(a) - z(b), type a then b: "));
	for (int i = 0; i < 2; i++) {
		if (i < v->tp.n)
			x += put_glyph(y, x, v->tp.cps[i], b);
		else
			x = put_str(y, x, COLS - x, s, "_");
		x = put_str(y, x, COLS - x, s, " ");
	}
	put_str(y, x, COLS - x, s, _(" Enter: the default, Esc: cancel"));
}

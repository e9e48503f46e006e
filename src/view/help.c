/* The help screen: every binding of keys.h, grouped by where it applies,
 * and the mouse. Up/Down/PageUp/PageDown scroll, any other key closes. */
#include "attnview/i18n.h"
#include "screen.h"

#include <stdlib.h>
#include <string.h>

static const char *section_name(unsigned ctx)
{
	return ctx == KC_ALL				  ? _("Everywhere")
	       : ctx == (KC_INPUT | KC_MAP)		  ? _("Input line and heatmap")
	       : ctx == (KC_INPUT | KC_MAP | KC_OVERVIEW) ? _("Input line and heatmap")
	       : ctx == KC_INPUT			  ? _("Input line")
	       : ctx == KC_MAP ? _("Heatmap (after Enter; typing goes back to the text)")
			       : _("Overview (typing edits the text)");
}

bool help_build(view *v)
{
	v->help = calloc(VIEW_NKEYS * 2 + 32, sizeof *v->help);
	if (!v->help)
		return false;
	int n = 0;
	const char *section = NULL;
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const key_binding *b = &view_keys[i];
		const char *sec = section_name(b->ctx);
		if (sec != section && (!section || strcmp(sec, section) != 0)) {
			v->help[n].heading = true;
			v->help[n++].text = sec;
			section = sec;
		}
		if (!b->name)
			continue;
		if (!b->help && n > 0 && !v->help[n - 1].heading) {
			/* Another key of the group above (test_keys checks it does the
			 * same); past VIEW_HELP_KEYS_W the names go on below, the
			 * description staying on the group's first line. */
			help_line *h = &v->help[n - 1];
			size_t len = strlen(h->names);
			if (len + 2 + strlen(b->name) <= VIEW_HELP_KEYS_W) {
				snprintf(h->names + len, sizeof h->names - len, ", %s", b->name);
				continue;
			}
			snprintf(h->names + len, sizeof h->names - len, ",");
		}
		snprintf(v->help[n].names, sizeof v->help[n].names, "%s", b->name);
		v->help[n++].text = b->help ? _(b->help) : "";
	}
	v->help[n].heading = true;
	v->help[n++].text = _("Mouse");
	for (size_t i = 0; i < sizeof view_mouse_help / sizeof view_mouse_help[0]; i++) {
		snprintf(v->help[n].names, sizeof v->help[n].names, "%s", _(view_mouse_help[i][0]));
		v->help[n++].text = _(view_mouse_help[i][1]);
	}
	v->nhelp = n;
	/* Descriptions start after the widest names (in columns: the mouse's
	 * are translated), so none is cut. */
	v->help_keys_w = 0;
	for (int i = 0; i < n; i++)
		if (!v->help[i].heading && str_width(v->help[i].names) > v->help_keys_w)
			v->help_keys_w = str_width(v->help[i].names);
	v->help_line_w = 0;
	for (int i = 0; i < n; i++) {
		int w = v->help[i].heading ? str_width(v->help[i].text)
					   : 2 + v->help_keys_w + 2 + str_width(v->help[i].text);
		if (w > v->help_line_w)
			v->help_line_w = w;
	}
	return true;
}

static void help_layout(view *v)
{
	(void)v;
}

static void help_draw(view *v)
{
	int cols = COLS, rows = LINES - 2;
	int tx =
	    put_str(0, 0, cols, st(A_BOLD, 0), _("attnview keys: a printable key always types. "));
	/* Whole or not at all (the status line says how to leave). */
	const char *how = _("Up/Down/PageUp/PageDown scroll; any other key closes.");
	if (tx + str_width(how) <= cols)
		put_str(0, tx, cols - tx, st(A_DIM, 0), how);
	/* Two columns when the list is longer than the screen and both fit
	 * whole; else one, scrolled. */
	int ncol = v->nhelp > rows && cols >= 2 * (v->help_line_w + 1) ? 2 : 1;
	int colw = cols / ncol;
	/* The second column starts at the middle, or a line earlier so that
	 * no heading ends the first. */
	int half = (v->nhelp + 1) / 2;
	if (half > 1 && v->help[half - 1].heading)
		half--;
	int total = ncol == 2 ? v->nhelp - half : v->nhelp;
	if (v->help_scroll > total - rows)
		v->help_scroll = total - rows;
	if (v->help_scroll < 0)
		v->help_scroll = 0;
	for (int c = 0; c < ncol; c++) {
		int first = c * half * (ncol == 2);
		int end = ncol == 2 && c == 0 ? half : v->nhelp;
		for (int i = 0; i < rows && first + v->help_scroll + i < end; i++) {
			const help_line *h = &v->help[first + v->help_scroll + i];
			int y = 1 + i, x0 = c * colw;
			if (h->heading) {
				put_str(y, x0, colw - 1, accent(v, A_BOLD), h->text);
				continue;
			}
			/* Two columns between the names and their description. */
			put_str(y, x0 + 2, v->help_keys_w, st(A_BOLD, 0), h->names);
			int x = x0 + 2 + v->help_keys_w + 2;
			put_str(y, x, colw - 1 - (x - x0), plain(), h->text);
		}
	}
}

/* Scrolling keys scroll; quitting goes to the key table (it asks first);
 * any other key closes the help (a printable one is typed, actions.c). */
static bool help_key(view *v, int ch, bool is_code)
{
	int page = LINES - 3;
	if (is_code && (ch == KEY_DOWN || ch == KEY_NPAGE))
		v->help_scroll += ch == KEY_DOWN ? 1 : page;
	else if (is_code && (ch == KEY_UP || ch == KEY_PPAGE))
		v->help_scroll -= ch == KEY_UP ? 1 : page;
	else if ((!is_code && ch == CTRL('q')) || (is_code && ch == KEY_F(10)))
		return false;
	else
		v->focus = v->help_return;
	return true;
}

static void help_mouse(view *v, const MEVENT *ev)
{
	if (ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
		v->focus = v->help_return;
}

const screen_ops help_screen = {
    .name = N_("HELP"),
    .keys = KC_ALL, /* only quitting reaches the table: help_key takes the rest */
    .text_visible = false,
    .layout = help_layout,
    .draw = help_draw,
    .key = help_key,
    .mouse = help_mouse,
};

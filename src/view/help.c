/* The help screen: every binding of keys.h, grouped by where it applies,
 * the mouse, the colours and what each head role says. Up/Down/PageUp/PageDown scroll, any other key closes. */
#include "attnview/i18n.h"
#include "screen.h"

#include <stdlib.h>
#include <string.h>

typedef struct help_line {
	char names[64];
	const char *text;
	bool heading;
	bool colours; /* its text says the terminal's colours (help_colours) */
} help_line;

/* What each head role says, as the heading and the panel name it: a claim
 * about the rows' strongest keys that one can check in the picture
 * (attnview(1), HEAD ROLES, has the counts behind each). */
static const char *const role_help[][2] = {
    {N_("previous"), N_("most rows look at the character before them")},
    {N_("next"), N_("most rows look at the character after them")},
    {N_("self"), N_("most rows look at themselves")},
    {N_("first"), N_("most rows look at the first character")},
    {N_("2 left, 3 right"), N_("most rows look that many places away")},
    {N_("local"), N_("most rows look within two places of themselves")},
    {N_("keyword"), N_("most rows look at one or two characters, wherever (� any unknown)")},
    {N_("delimiter"), N_("rows look at their phrase's nearest space or mark")},
    {N_("word start"), N_("rows look at the first character of their own word")},
    {N_("duplicate"), N_("rows look at another copy of their own character")},
    {N_("induction"), N_("rows look just after an earlier copy of themselves")},
    {N_("line-parallel"), N_("rows look at their place in the line before or after")},
    {N_("mirror"), N_("rows look across an anti-diagonal (key c - row i)")},
    {N_("same script"), N_("rows look at characters of their own script")},
    {N_("broad"), N_("rows spread their weight: no key stands out")},
    {N_("unclear"), N_("no role holds for half the rows beyond chance; the closest is named")},
};

/* The lines, built once from keys.h, and where the screen is. */
typedef struct help_state {
	help_line *lines;
	int n;
	int keys_w; /* widest line of key names: the description column */
	int line_w; /* widest help line, names and description */
	int scroll;
} help_state;

static help_state *help_of(const view *v)
{
	return v->screen[SCREEN_HELP];
}

/* Opened (F1) at its top. */
static void help_opened(view *v)
{
	help_of(v)->scroll = 0;
}

/* A group of keys' heading: where they apply, a screen's from its row. */
static const char *section_name(unsigned ctx)
{
	static const char *const screen_keys[SCREEN_N] = {
#define SCREEN_KEYS_(id, ops, title) [SCREEN_##id] = title,
	    VIEW_SCREENS(SCREEN_KEYS_)
#undef SCREEN_KEYS_
	};
	for (int i = 0; i < SCREEN_N; i++)
		if (ctx == KC_OF(i) && screen_keys[i])
			return _(screen_keys[i]);
	return ctx == KC_ALL				  ? _("Everywhere")
	       : ctx == (KC_ALL | KC_TEXT)		  ? _("Editing the text, everywhere")
	       : ctx == (KC_INPUT | KC_MAP)		  ? _("Input line and heatmap")
	       : ctx == (KC_INPUT | KC_MAP | KC_OVERVIEW) ? _("Input line and heatmap")
							  : _("Input line");
}

/* The help lines of the key table and the mouse, and their widths. */
static bool help_init(view *v, void *state)
{
	help_state *hs = state;
	(void)v;
	const size_t nroles = sizeof role_help / sizeof role_help[0];
	help_line *lines = hs->lines = calloc(VIEW_NKEYS * 2 + 34 + nroles, sizeof *hs->lines);
	if (!lines)
		return false;
	int n = 0;
	const char *section = NULL;
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const key_binding *b = &view_keys[i];
		const char *sec = section_name(b->ctx);
		if (sec != section && (!section || strcmp(sec, section) != 0)) {
			lines[n].heading = true;
			lines[n++].text = sec;
			section = sec;
		}
		if (!b->name)
			continue;
		if (!b->help && n > 0 && !lines[n - 1].heading) {
			/* Another key of the group above (test_keys checks it does the
			 * same); past VIEW_HELP_KEYS_W the names go on below, the
			 * description staying on the group's first line. */
			help_line *h = &lines[n - 1];
			size_t len = strlen(h->names);
			if (len + 2 + strlen(b->name) <= VIEW_HELP_KEYS_W) {
				snprintf(h->names + len, sizeof h->names - len, ", %s", b->name);
				continue;
			}
			snprintf(h->names + len, sizeof h->names - len, ",");
		}
		snprintf(lines[n].names, sizeof lines[n].names, "%s", b->name);
		lines[n++].text = b->help ? _(b->help) : "";
	}
	lines[n].heading = true;
	lines[n++].text = _("Mouse");
	for (size_t i = 0; i < sizeof view_mouse_help / sizeof view_mouse_help[0]; i++) {
		snprintf(lines[n].names, sizeof lines[n].names, "%s", _(view_mouse_help[i][0]));
		lines[n++].text = _(view_mouse_help[i][1]);
	}
	/* How to get 24-bit colour, said once for every terminal (the info
	 * line says it at the start only where the terminal says it has it). */
	lines[n].heading = true;
	lines[n++].text = _("Colours");
	snprintf(lines[n].names, sizeof lines[n].names, "%s", _("24-bit colour"));
	lines[n].colours = true; /* the longest of help_colours' texts */
	lines[n++].text = _("COLORTERM=truecolor, if the terminal has it (now 256)");
	lines[n].heading = true;
	lines[n++].text = _("Head roles: where most rows look");
	for (size_t i = 0; i < nroles; i++) {
		snprintf(lines[n].names, sizeof lines[n].names, "%s", _(role_help[i][0]));
		lines[n++].text = _(role_help[i][1]);
	}
	hs->n = n;
	/* Descriptions start after the widest names (in columns: the mouse's
	 * are translated), so none is cut. */
	hs->keys_w = 0;
	for (int i = 0; i < n; i++)
		if (!lines[i].heading && str_width(lines[i].names) > hs->keys_w)
			hs->keys_w = str_width(lines[i].names);
	hs->line_w = 0;
	for (int i = 0; i < n; i++) {
		int w = lines[i].heading ? str_width(lines[i].text)
					   : 2 + hs->keys_w + 2 + str_width(lines[i].text);
		if (w > hs->line_w)
			hs->line_w = w;
	}
	return true;
}

/* The colours line: what the terminal draws with now. */
static const char *help_colours(const view *v)
{
	switch (v->col.mode) {
	case CM_DIRECT:
		return _("on");
	case CM_256:
		return _("COLORTERM=truecolor, if the terminal has it (now 256)");
	case CM_SHADE:
		return _("needs a 256-colour TERM first (xterm-256color; now: shades)");
	default:
		return _("none: NO_COLOR is set, or the terminal has no colours");
	}
}

static void help_finish(void *state)
{
	free(((help_state *)state)->lines);
}

static void help_layout(view *v)
{
	(void)v;
}

static void help_draw(view *v)
{
	help_state *h0 = help_of(v);
	int cols = COLS, rows = LINES - 2;
	int tx =
	    put_str(0, 0, cols, st(A_BOLD, 0), _("attnview keys: a printable key types text. "));
	/* Whole or not at all (the status line says how to leave). */
	const char *how = _("Up/Down/PageUp/PageDown scroll; any other key closes.");
	if (tx + str_width(how) <= cols)
		put_str(0, tx, cols - tx, st(A_DIM, 0), how);
	/* Two columns when the list is longer than the screen and both fit
	 * whole; else one, scrolled. */
	int ncol = h0->n > rows && cols >= 2 * (h0->line_w + 1) ? 2 : 1;
	int colw = cols / ncol;
	/* The second column starts at the middle, or a line earlier so that
	 * no heading ends the first. */
	int half = (h0->n + 1) / 2;
	if (half > 1 && h0->lines[half - 1].heading)
		half--;
	/* Scrolled as far as the longer column needs (the first may be). */
	int total = ncol == 2 ? (half > h0->n - half ? half : h0->n - half) : h0->n;
	if (h0->scroll > total - rows)
		h0->scroll = total - rows;
	if (h0->scroll < 0)
		h0->scroll = 0;
	for (int c = 0; c < ncol; c++) {
		int first = c * half * (ncol == 2);
		int end = ncol == 2 && c == 0 ? half : h0->n;
		for (int i = 0; i < rows && first + h0->scroll + i < end; i++) {
			const help_line *h = &h0->lines[first + h0->scroll + i];
			int y = 1 + i, x0 = c * colw;
			if (h->heading) {
				put_str(y, x0, colw - 1, accent(v, A_BOLD), h->text);
				continue;
			}
			/* Two columns between the names and their description. */
			put_str(y, x0 + 2, h0->keys_w, st(A_BOLD, 0), h->names);
			int x = x0 + 2 + h0->keys_w + 2;
			/* Cut where the screen is narrow, and said so ("…"); the
			 * manual has every line whole. */
			put_str_cut(y, x, colw - 1 - (x - x0), plain(),
				    h->colours ? help_colours(v) : h->text);
		}
	}
}

/* Scrolling keys scroll; quitting goes to the key table (it asks first);
 * any other key closes the help, a printable one too (it is not typed: the
 * help hides the text). */
static bool help_key(view *v, int ch, bool is_code)
{
	help_state *h0 = help_of(v);
	int page = LINES - 3;
	if (is_code && (ch == KEY_DOWN || ch == KEY_NPAGE))
		h0->scroll += ch == KEY_DOWN ? 1 : page;
	else if (is_code && (ch == KEY_UP || ch == KEY_PPAGE))
		h0->scroll -= ch == KEY_UP ? 1 : page;
	else if ((!is_code && ch == CTRL('q')) || (is_code && ch == KEY_F(10)))
		return false;
	else
		screen_back(v);
	return true;
}

static void help_mouse(view *v, const MEVENT *ev)
{
	if (ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
		screen_back(v);
}

const screen_ops help_screen = {
    .name = N_("HELP"),
    .hint = N_("any key: back | Ctrl-Q quit"),
    .text_visible = false, /* only quitting reaches the key table: help_key takes the rest */
    .toggle = ACT_HELP,
    .opened = help_opened,
    .passing = true,
    .state_size = sizeof(help_state),
    .init = help_init,
    .finish = help_finish,
    .layout = help_layout,
    .draw = help_draw,
    .key = help_key,
    .action = NULL,
    .mouse = help_mouse,
};

/* Keys and clicks: the key table of keys.h decides what a key does where;
 * the actions it names are carried out here, in four groups (focus and
 * screens, the cursor, heads and layers, editing the text). */
#include "attnview/i18n.h"
#include "panel.h"
#include "screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

void move_row(view *v, int d)
{
	int n = view_n(v);
	v->hv.qrow += d;
	if (v->hv.qrow >= n)
		v->hv.qrow = n - 1;
	if (v->hv.qrow < 0)
		v->hv.qrow = 0;
	request_pred(v);
}

static void move_col(view *v, int d)
{
	int n = view_n(v);
	v->hv.kcol += d;
	if (v->hv.kcol >= n)
		v->hv.kcol = n - 1;
	if (v->hv.kcol < 0)
		v->hv.kcol = 0;
}

/* Heads, then the summaries after them (matrix.h): Tab goes round all. */
static void set_head(view *v, int l, int h)
{
	int L = nlayers(v), H = nheads(v) + SEL_EXTRA;
	v->layer = ((l % L) + L) % L;
	v->head = ((h % H) + H) % H;
}

static bool do_focus(view *v, view_action act)
{
	switch (act) {
	case ACT_QUIT:
		/* Quitting loses the text: with text, the second Ctrl-Q quits. */
		if (v->le.n == 0 || v->confirm_quit)
			v->quit = true;
		else
			v->confirm_quit = true;
		return true;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		return true;
	case ACT_FOCUS_MAP:
		v->focus = FOCUS_ON(SCREEN_MAP);
		return true;
	case ACT_FOCUS_INPUT:
		v->focus = FOCUS_TYPING;
		return true;
	case ACT_VALUES:
		v->values = !v->values;
		return true;
	case ACT_FIGURE:
		figure_prompt_open(v);
		return true;
	case ACT_WRITE:
		writing_toggle(v);
		return true;
	case ACT_TEMPERATURE:
		writing_temperature(v);
		return true;
	case ACT_TARGETS:
		targets_prompt_open(v);
		return true;
	default:
		return screen_toggle(v, act);
	}
}

/* Ablation: the head on the map off or on again; the text goes again with
 * the new set of heads. */
static void toggle_ablation(view *v)
{
	if (view_sel(v) != SEL_HEAD) {
		set_notice(v, _("ablation switches heads off: choose a head first (Tab)"));
		return;
	}
	uint8_t *off = &v->topts.ablate[v->layer * nheads(v) + v->head];
	*off = !*off;
	v->nablated += *off ? 1 : -1;
	v->topts.any_ablated = v->nablated > 0;
	text_changed(v);
	set_notice(v,
		   *off ? ngettext("layer %d head %d off; %d head off",
				   "layer %d head %d off; %d heads off", v->nablated)
			: ngettext("layer %d head %d on again; %d head off",
				   "layer %d head %d on again; %d heads off", v->nablated),
		   v->layer, v->head, v->nablated);
}

/* The panel on screen at the map's last layout. */
static bool panel_shown(const view *v)
{
	return v->focus.screen == SCREEN_MAP && view_map_geom(v)->panel_w > 0;
}

/* Show the panel (F5, or a page's key where it was hidden): beside the map
 * even where it had stepped aside for the map's columns (the map scrolls
 * then), or say why it cannot be and what to do. */
static void show_panel(view *v, const char *page)
{
	bool aside = v->panel && v->have && view_map_geom(v)->panel_w == 0;
	v->panel = v->panel_forced = true;
	if (v->focus.screen != SCREEN_MAP) {
		set_notice(v, _("%s: the panel is beside the map (Esc goes back to it)"), page);
		return;
	}
	if (!VIEW_PANEL_FITS(COLS))
		set_notice(v, _("the panel needs %d columns, this terminal has %d: widen it"),
			   VIEW_PANEL_W + 1 + VIEW_MIN_MAP_W, COLS);
	else if (aside)
		set_notice(v, _("%s: the panel is beside the map, which scrolls now (F5 hides it)"),
			   page);
	else
		v->notice[0] = '\0';
}

/* A panel page's key (panel.h): its page on, or off when it is on screen;
 * the panel shown where it was hidden. */
static bool page_key(view *v, view_action act)
{
	for (int i = 0; i < PAGE_N; i++) {
		if (panel_pages[i]->act != act)
			continue;
		bool shown = panel_shown(v);
		v->page = shown && v->page == (page_id)i ? PAGE_DETAILS : (page_id)i;
		if (!shown)
			show_panel(v, _(panel_pages[i]->name));
		return true;
	}
	return false;
}

/* How the map looks: scale, panel, cell size, colours, words, comparison. */
static bool do_look(view *v, view_action act)
{
	switch (act) {
	case ACT_SCALE:
		v->scale = (scale_kind)((v->scale + 1) % SCALE_NKINDS);
		set_notice(v, _("colour scale: %s"), scale_title(v->scale));
		return true;
	case ACT_PANEL:
		if (panel_shown(v)) {
			v->panel = v->panel_forced = false;
			set_notice(v, _("details panel hidden (F5 shows it)"));
		} else
			show_panel(v, _("details"));
		return true;
	case ACT_CELLS:
		v->cells = (heat_cells)((v->cells + 1) % CELLS_NMODES);
		set_notice(v, _("cells: %s"), heat_cells_title(v->cells));
		return true;
	case ACT_RAMP:
		colors_set_ramp(&v->col, (cm_ramp)((v->col.ramp + 1) % RAMP_NRAMPS));
		set_notice(v, _("colours: %s"), colormap_ramp_name(v->col.ramp));
		return true;
	case ACT_WORDS:
		v->words = !v->words;
		/* The marks change what the model reads: the text goes again. */
		text_changed(v);
		set_notice(v, "%s",
			   v->words ? _("word view: words at spaces and punctuation, or at |")
				    : _("character view"));
		return true;
	case ACT_PIN:
		toggle_pin(v);
		return true;
	case ACT_CONTRIB:
		v->contrib = !v->contrib;
		/* The norms come with the attention: the text goes again. */
		text_changed(v);
		set_notice(v, "%s",
			   v->contrib ? _("value contributions: A[i][j] |v_j W_O|, per row")
				      : _("attention weights"));
		return true;
	case ACT_ABLATE:
		toggle_ablation(v);
		return true;
	default:
		return page_key(v, act);
	}
}

static bool do_cursor(view *v, view_action act)
{
	int rows = view_map_geom(v)->heat.vis_rows;
	int page = rows > 1 ? rows - 1 : 1;
	switch (act) {
	case ACT_UP:
	case ACT_DOWN:
		move_row(v, act == ACT_UP ? -1 : 1);
		return true;
	case ACT_LEFT:
	case ACT_RIGHT:
		move_col(v, act == ACT_LEFT ? -1 : 1);
		return true;
	case ACT_PAGE_UP:
	case ACT_PAGE_DOWN:
		move_row(v, act == ACT_PAGE_UP ? -page : page);
		return true;
	case ACT_FIRST_ROW:
	case ACT_LAST_ROW:
		move_row(v, act == ACT_FIRST_ROW ? -v->hv.qrow : 1 << 30);
		return true;
	case ACT_FIRST_COL:
	case ACT_LAST_COL:
		move_col(v, act == ACT_FIRST_COL ? -v->hv.kcol : 1 << 30);
		return true;
	default:
		return false;
	}
}

static bool do_head(view *v, view_action act, int key)
{
	int H = nheads(v);
	switch (act) {
	case ACT_NEXT_HEAD:
	case ACT_PREV_HEAD:
		set_head(v, v->layer, v->head + (act == ACT_NEXT_HEAD ? 1 : -1));
		return true;
	case ACT_NEXT_LAYER:
	case ACT_PREV_LAYER:
		set_head(v, v->layer + (act == ACT_NEXT_LAYER ? 1 : -1), v->head);
		return true;
	case ACT_HEAD_NUMBER: {
		int h = (key & ~ALT_BIT) - '0';
		if (h < H)
			v->head = h;
		else
			set_notice(v, _("head %d does not exist: this model has %d heads, 0 to %d"),
				   h, H, H - 1);
		return true;
	}
	default:
		return false;
	}
}

static bool do_edit(view *v, view_action act)
{
	lineedit *le = &v->le;
	bool changed = false;
	/* Moving the text cursor from the map goes back to it, as typing does. */
	if (v->focus.screen == SCREEN_MAP && act >= ACT_EDIT_LEFT && act <= ACT_EDIT_END)
		v->focus = FOCUS_TYPING;
	switch (act) {
	case ACT_EDIT_LEFT:
		lineedit_left(le);
		return true;
	case ACT_EDIT_RIGHT:
		lineedit_right(le);
		return true;
	case ACT_EDIT_HOME:
		lineedit_home(le);
		return true;
	case ACT_EDIT_END:
		lineedit_end(le);
		return true;
	case ACT_EDIT_BACKSPACE:
		changed = lineedit_backspace(le);
		break;
	case ACT_EDIT_DELETE:
		changed = lineedit_delete(le);
		break;
	case ACT_EDIT_CLEAR:
		changed = lineedit_clear(le);
		break;
	case ACT_EDIT_KILL_END:
		changed = lineedit_kill_end(le);
		break;
	case ACT_EDIT_DELETE_WORD:
		changed = lineedit_delete_word(le);
		break;
	default:
		return false;
	}
	if (changed)
		text_changed(v);
	return true;
}

void do_action(view *v, view_action act, int key)
{
	/* The screen's own (the overview's arrows and scale), then the view's. */
	const screen_ops *s = view_screen(v);
	if (act == ACT_NONE || (s->action && s->action(v, act)))
		return;
	if (do_focus(v, act) || do_look(v, act) || do_cursor(v, act) || do_head(v, act, key))
		return;
	do_edit(v, act);
}

static void handle_mouse(view *v)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	const screen_ops *s = view_screen(v);
	if (!s->text_visible) {
		s->mouse(v, &ev);
		return;
	}
	if (v->too_small)
		return;
#ifdef BUTTON5_PRESSED
	if (ev.bstate & BUTTON5_PRESSED) {
		move_row(v, 3);
		return;
	}
#endif
	if (ev.bstate & BUTTON4_PRESSED) {
		move_row(v, -3);
		return;
	}
	if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return;
	if (ev.y == Y_INPUT) {
		if (ev.x >= v->field_x)
			lineedit_click(&v->le, ev.x - v->field_x);
		v->focus = FOCUS_TYPING;
		return;
	}
	s->mouse(v, &ev);
}

/* Bracketed paste: everything between the markers is text, Enter included. */
static bool handle_paste(view *v, int ch, bool is_code)
{
	if (is_code && ch == VIEW_KEY_PASTE_BEGIN) {
		v->pasting = true;
		v->paste.n = 0;
		return true;
	}
	if (!v->pasting)
		return is_code && ch == VIEW_KEY_PASTE_END;
	if (is_code && ch == VIEW_KEY_PASTE_END) {
		v->pasting = false;
		if (v->focus.screen != SCREEN_HELP)
			v->focus = FOCUS_TYPING;
		/* A file's final line break is not part of its text (as for
		 * --dump --input), and a pasted file ends with one. */
		while (v->paste.n &&
		       (v->paste.v[v->paste.n - 1] == '\n' || v->paste.v[v->paste.n - 1] == '\r'))
			v->paste.n--;
		if (v->paste.n)
			insert_text(v, v->paste.v, v->paste.n);
		return true;
	}
	if (is_code && ch == KEY_ENTER)
		ch = '\n', is_code = false;
	if (!is_code && !cp_buf_push(&v->paste, (uint32_t)ch))
		set_notice(v, _("out of memory while pasting"));
	return true;
}

/* A printable key types, wherever the text is: from the map it goes back
 * to the text cursor; the overview stays and follows the text. (The help
 * and the timeline hide the text: there it is a key like any other.) */
static bool type_key(view *v, int ch, bool is_code)
{
	if (is_code || ch < 0x20 || ch == 0x7f || (ch & ALT_BIT) || !view_screen(v)->text_visible)
		return false;
	if (v->focus.screen == SCREEN_MAP)
		v->focus = FOCUS_TYPING;
	uint32_t cp = (uint32_t)ch;
	insert_text(v, &cp, 1);
	return true;
}

void handle_key(view *v, int ch, bool is_code)
{
	if (is_code && ch == KEY_RESIZE)
		return;	       /* the next draw lays out for the new size */
	v->color_note = false; /* said once, until the first key */
	if (writing_on(v)) {
		writing_stop(v, NULL); /* any key stops the model writing, and only that */
		return;
	}
	if (handle_paste(v, ch, is_code))
		return;
	if (figure_prompt_key(v, ch, is_code) || targets_prompt_key(v, ch, is_code))
		return;
	if (is_code && ch == KEY_MOUSE) {
		handle_mouse(v);
		return;
	}
	/* A pending "quit?" is answered by the next key: y, Ctrl-Q or F10
	 * quits (Ctrl-C too: view.c), n or Escape stays and does nothing else,
	 * any other key stays and does what it does. */
	bool confirming = v->confirm_quit;
	v->confirm_quit = false;
	if (confirming && !is_code && (ch == 'y' || ch == 'Y')) {
		v->quit = true;
		return;
	}
	if (confirming && !is_code && (ch == 'n' || ch == 'N' || ch == 27))
		return;
	if (type_key(v, ch, is_code))
		return;
	const screen_ops *s = view_screen(v);
	if (s->key && s->key(v, ch, is_code))
		return;
	unsigned ctx = v->focus.typing ? KC_INPUT : KC_OF(v->focus.screen);
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const key_binding *b = &view_keys[i];
		/* A screen that hides the text does not edit it either. */
		if ((b->ctx & KC_TEXT) && !s->text_visible)
			continue;
		if (b->key == ch && b->is_code == is_code && (b->ctx & ctx)) {
			if (!v->focus.typing)
				v->notice[0] = '\0';
			v->confirm_quit = confirming && b->act == ACT_QUIT;
			do_action(v, b->act, ch);
			return;
		}
	}
}

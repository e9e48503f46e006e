/* The lines around the screens: the input line, the info line, the status
 * line, and the message for a terminal too small for any screen. */
#include "attnview/i18n.h"
#include "screen.h"

#include <stdio.h>
#include <string.h>

style accent(view *v, attr_t a)
{
	return ui_style(&v->col, UI_ACCENT, a);
}

style token_style(view *v, const token *t, attr_t a)
{
	if (t->unknown)
		return ui_style(&v->col, UI_UNKNOWN, a | A_UNDERLINE);
	return st(a, 0);
}

int put_head_title(view *v, int y, int x, int maxw, int layer, int head)
{
	int end = x + maxw;
	x = put_fmt(y, x, end - x, st(A_BOLD, 0), _("Layer %d  Head %d"), layer, head);
	if (v->topts.ablate[layer * nheads(v) + head])
		x = put_str(y, x, end - x, accent(v, A_BOLD), _(" OFF"));
	return put_fmt(y, x, end - x, st(A_DIM, 0), _("  (layers 0-%d, heads 0-%d)"),
		       nlayers(v) - 1, nheads(v) - 1);
}

void draw_input(view *v)
{
	bool on = v->focus.typing;
	put_str(Y_INPUT, 0, 6, on ? accent(v, A_BOLD) : st(A_DIM, 0), _("text> "));
	lineedit *le = &v->le;
	/* A text wider than the field keeps the last column for ">", as "<"
	 * says there is more on the left: a cut text does not read whole. */
	const bool wide = lineedit_width(le, 0, le->n) + 1 > v->field_w;
	lineedit_fit(le, wide ? v->field_w - 1 : v->field_w);
	int x = v->field_x, end = wide ? COLS - 1 : COLS;
	size_t i = le->scroll;
	for (; i < le->n; i++) {
		uint32_t cp = le->cps[i];
		int w = lineedit_cp_width(cp);
		if (x + w > end)
			break;
		style s = plain();
		if (i >= v->cut_cp)
			s = ui_style(&v->col, UI_CUT, A_DIM);
		if (cp == ' ')
			fill(Y_INPUT, x, 1, s);
		else
			put_glyph(Y_INPUT, x, cp, s);
		x += w;
	}
	if (le->scroll > 0)
		put_str(Y_INPUT, v->field_x - 1, 1, st(A_DIM, 0), "<");
	if (i < le->n)
		put_str(Y_INPUT, COLS - 1, 1, st(A_DIM, 0), ">");
}

void draw_info(view *v)
{
	int cols = COLS;
	if (v->color_note) {
		put_str(Y_INFO, 0, cols, accent(v, A_BOLD), v->col.why);
		return;
	}
	if (v->notice[0]) {
		put_str(Y_INFO, 0, cols, accent(v, A_BOLD), v->notice);
		return;
	}
	if (writing_on(v)) {
		char what[160];
		writing_describe(v, what, sizeof what);
		put_str(Y_INFO, 0, cols, accent(v, A_BOLD), what);
		return;
	}
	if (v->error[0]) {
		put_fmt(Y_INFO, 0, cols, accent(v, A_BOLD), _("inference failed: %s"), v->error);
		return;
	}
	if (v->le.n == 0) {
		put_str(Y_INFO, 0, cols, st(A_DIM, 0),
			_("Type some text (Chinese, English, emoji...). Enter: go to the map. "
			  "F1: help."));
		return;
	}
	int unk = 0;
	for (int i = 0; i < v->ntok; i++)
		unk += v->toks[i].unknown;
	int x = 0;
	/* The cut-off notice first: it is the one that changes what is shown. */
	if (v->ntot > v->ntok)
		x = put_fmt(
		    Y_INFO, x, cols - x, accent(v, A_BOLD),
		    _("cut off after %d tokens (the model's context): %d ignored, dimmed  "),
		    v->context, v->ntot - v->ntok);
	x = put_fmt(Y_INFO, x, cols - x, plain(), ngettext("%d token", "%d tokens", v->ntok),
		    v->ntok);
	if (unk)
		put_fmt(Y_INFO, x, cols - x, token_style(v, &(token){.unknown = true}, 0),
			_("  %d unknown (underlined)"), unk);
}

/* What the keys do here, the way back to typing first. */
static const char *status_hint(const view *v)
{
	return v->focus.typing ? _("Enter: arrows on the map | F1 help") : _(view_screen(v)->hint);
}

void draw_status(view *v)
{
	int y = LINES - 1, cols = COLS;
	style s = st(A_REVERSE, 0);
	if (figure_prompt_shown(v)) {
		draw_figure_prompt(v, y);
		return;
	}
	if (targets_prompt_shown(v)) {
		draw_targets_prompt(v, y);
		return;
	}
	fill(y, 0, cols, s);
	if (v->confirm_quit) {
		put_str(
		    y, 0, cols, st(A_REVERSE | A_BOLD, 0),
		    _(" Quit? The text will be lost. y: quit, n: stay"));
		return;
	}
	/* Quoted as --info shows it: a model file's name may hold anything. */
	char mname[120];
	av_quote(v->m->meta.name && v->m->meta.name[0] ? v->m->meta.name : _("model"), mname,
		 sizeof mname);
	char name[256], short_name[160], step[96];
	model_step_label(v->m, step, sizeof step);
	snprintf(name, sizeof name, "%s%s%s%s%s", mname, step[0] ? " (" : "", step,
		 step[0] ? ")" : "", v->reloading ? _(" loading...") : "");
	snprintf(short_name, sizeof short_name, "%s%s", mname,
		 v->reloading ? _(" loading...") : "");
	const char *mode = v->focus.typing ? _("TYPE") : _(view_screen(v)->name);
	char ms[32] = "";
	if (v->have)
		snprintf(ms, sizeof ms, " | %.1f ms", v->res_ms);
	const char *done = figure_prompt_done(v);
	const char *hint = writing_on(v) ? _("writing: any key stops")
			   : done[0]	     ? done
					     : status_hint(v);
	char where[96], count[48], line[VIEW_MAX_PATH * 4 + 16 + 512];
	sel_where(v, false, where, sizeof where);
	snprintf(count, sizeof count, ngettext("%d token", "%d tokens", v->ntok), v->ntok);
	/* The hint for the keys stays whole: on a narrow terminal (or in a
	 * language with longer words) the model's step goes first, then the
	 * layer and head (the heading has them), the model's name, the token
	 * count (the info line has it) and the result's time. Which go is
	 * decided as if the time were as wide as a result of seconds, so the
	 * line keeps its fields however long a result took. */
	int slack = v->have ? (int)strlen(" | 9999.9 ms") - str_width(ms) : 0;
	for (int drop = 0; drop < 6; drop++) {
		const char *nm = drop == 0 ? name : drop < 3 ? short_name : "";
		snprintf(line, sizeof line, " %s%s%s%s%s%s%s%s | %s", mode, nm[0] ? " | " : "", nm,
			 drop < 2 ? " | " : "", drop < 2 ? where : "", drop < 4 ? " | " : "",
			 drop < 4 ? count : "", drop < 5 ? ms : "", hint);
		if (str_width(line) + (drop < 5 && slack > 0 ? slack : 0) <= cols)
			break;
	}
	put_str_cut(y, 0, cols, s, line); /* a hint wider than the terminal ends in "…" */
	/* The mark matters more than the end of the status text: it overwrites
	 * it when the line is full (a long model name, a narrow terminal). */
	if (v->busy_shown && cols >= 26)
		put_str(y, cols - 13, 13, st(A_REVERSE | A_BOLD, 0), _("computing... "));
}

void draw_too_small(view *v)
{
	(void)v;
	char msg[160];
	snprintf(msg, sizeof msg, _("Terminal too small (%dx%d): attnview needs at least %dx%d."),
		 COLS, LINES, VIEW_MIN_COLS, VIEW_MIN_LINES);
	/* Wrap the message to the width we have, in columns: at the last space
	 * that fits, or (Chinese has none) after the last character that does. */
	int y = LINES / 2 - 1, w = COLS > 0 ? COLS : 1;
	const char *p = msg;
	while (*p && y < LINES) {
		size_t take = 0, sp = 0;
		int cw = 0;
		for (const char *q = p; *q;) {
			const char *at = q;
			int c = utf8_next(&q);
			cw += cp_display_width((uint32_t)c, NULL);
			if (cw > w && take > 0)
				break;
			if (c == ' ')
				sp = (size_t)(at - p);
			take = (size_t)(q - p);
		}
		if (p[take] && sp > 0)
			take = sp;
		char line[sizeof msg];
		memcpy(line, p, take);
		line[take] = '\0';
		put_str(y < 0 ? 0 : y, 0, w, st(A_BOLD, 0), line);
		p += take;
		while (*p == ' ')
			p++;
		y++;
	}
	if (y < LINES)
		put_str(y, 0, w, plain(), _("Enlarge it, or Ctrl-Q to quit."));
}

/* The figure key (Ctrl-S): what the screen shows, written as an SVG, PNG or
 * PDF file. The status line becomes a prompt holding a file name that does
 * not exist yet (in the folder and format of --figure-dir/--figure-format,
 * or of the last figure written); Enter writes it, Esc gives up. A name
 * edited into one that exists is replaced only after a "y". The figure is
 * the one `attnview --export` makes for the same text and options, from the
 * same result (figure_from_result, value contributions included); a
 * comparison with a pinned map, which only the view has, comes from the
 * map's matrix.
 * Writing happens here, on the interface thread: it takes 0.1-0.4 s (the
 * first PNG or PDF also starts fontconfig), and the status line says so
 * before it starts. */
#include "attnview/i18n.h"
#include "screen.h"

#include "attnview/figure.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The prompt on the status line, and where new figures go. */
struct fig_prompt {
	bool active, asking, writing;
	lineedit le;			   /* the file name */
	char dir[1024];			   /* folder of new names ("": the current one) */
	int format;			   /* fig_format of new names */
	char msg[sizeof(av_error) + 64];   /* on the prompt: an error, an answer */
	char done[VIEW_MAX_PATH * 4 + 16]; /* "wrote PATH", on the status line until a key */
	int cursor_x;			   /* the prompt's cursor column, -1: none */
};

bool figure_prompt_init(view *v, const char *dir, int format)
{
	struct fig_prompt *fp = v->fig = calloc(1, sizeof *v->fig);
	if (!fp)
		return false;
	if (dir)
		snprintf(fp->dir, sizeof fp->dir, "%s", dir);
	fp->format = format >= 0		     ? format
		     : fig_format_available(FIG_PNG) ? FIG_PNG
						     : FIG_SVG;
	fp->cursor_x = -1;
	return true;
}

void figure_prompt_finish(view *v)
{
	if (v->fig)
		lineedit_finish(&v->fig->le);
	free(v->fig);
	v->fig = NULL;
}

bool figure_prompt_shown(const view *v)
{
	return v->fig->active || v->fig->writing;
}

int figure_prompt_cursor(const view *v)
{
	return v->fig->active ? v->fig->cursor_x : -1;
}

const char *figure_prompt_done(const view *v)
{
	return v->fig->done;
}

/* The text the model read (word marks taken out), as UTF-8. */
static char *text_utf8(const view *v)
{
	char *s = malloc(v->cps.n * 4 + 1), *p = s;
	for (size_t i = 0; s && i < v->cps.n; i++)
		p += cp_to_utf8(v->cps.v[i], p);
	if (s)
		*p = '\0';
	return s;
}

const char *figure_model_name(const view *v)
{
	return v->m->meta.name && v->m->meta.name[0] ? v->m->meta.name : "model";
}

/* The map's matrix as it is drawn (a difference from the pinned map, or
 * value contributions), with titles saying so. */
static figure *figure_of_map(view *v, const char *text, av_error *err)
{
	heat_src s;
	if (!view_matrix(v, &s)) {
		av_fail(err, _("nothing on the map to write"));
		return NULL;
	}
	fig_label *fl = malloc((size_t)s.m.n * sizeof *fl);
	figure *f = fl ? figure_create(1, 1, err) : NULL;
	if (!fl)
		av_fail(err, _("out of memory"));
	bool ok = f != NULL;
	for (int i = 0; ok && i < s.m.n; i++)
		fl[i] = (fig_label){s.labels[i].text, s.labels[i].cp, s.labels[i].unknown};
	ok = ok && figure_set_tile(f, 0, &s.m, fl, s.diverging ? SCALE_DIFF : v->scale,
				   s.diverging ? RAMP_DIVERGING : v->col.ramp, NULL, err);
	char sel[48], title[256], sub[512];
	if (view_sel(v) == SEL_HEAD)
		snprintf(sel, sizeof sel, "head %d", v->head);
	else
		sel_describe(v, sel, sizeof sel);
	char layer[16] = "All layers";
	if (view_sel(v) != SEL_ALL)
		snprintf(layer, sizeof layer, "Layer %d", v->layer);
	int len = snprintf(title, sizeof title, "%s, %s%s%s", layer, sel, v->words ? ", words" : "",
			   view_map_kind(v) == SEL_CONTRIB ? ", value contributions" : "");
	if (view_pin(v)->on && len >= 0 && (size_t)len < sizeof title)
		snprintf(title + len, sizeof title - (size_t)len, " minus pinned (%s)", view_pin(v)->what);
	if (s.diverging)
		snprintf(sub, sizeof sub, "%s, difference by position: \"%s\"", figure_model_name(v),
			 text);
	else
		snprintf(sub, sizeof sub, "%s, %s scale (%s), %s: \"%s\"", figure_model_name(v),
			 scale_name(v->scale), scale_unit(v->scale),
			 colormap_ramp_name(scale_diverging(v->scale) ? RAMP_DIVERGING : v->col.ramp),
			 text);
	ok = ok && figure_set_titles(f, title, sub, err);
	if (ok)
		f->values = v->values;
	free(fl);
	if (!ok) {
		figure_destroy(f);
		return NULL;
	}
	return f;
}

/* With heads switched off the result is the ablated model's: the title
 * says which. */
static bool title_ablation(const view *v, figure *f, av_error *err)
{
	if (!v->nablated)
		return true;
	char title[512];
	int len = snprintf(title, sizeof title, "%s, heads off:", f->title ? f->title : "");
	for (int l = 0; l < nlayers(v); l++)
		for (int h = 0; h < nheads(v); h++)
			if (v->topts.ablate[l * nheads(v) + h] && len >= 0 && (size_t)len < sizeof title)
				len += snprintf(title + len, sizeof title - (size_t)len, " L%d H%d", l,
						h);
	char *sub = f->subtitle ? strdup(f->subtitle) : NULL;
	bool ok = figure_set_titles(f, title, sub, err);
	free(sub);
	return ok;
}

/* A figure made, its titles saying which heads are off, written. */
static bool write_made(view *v, figure *f, const char *path, bool replace, av_error *err)
{
	bool ok = f && title_ablation(v, f, err) && figure_write(f, path, replace, err);
	figure_destroy(f);
	return ok;
}

bool figure_write_result(view *v, fig_request q, const char *path, bool replace,
			 av_error *err)
{
	/* Every head it reads is in (the overview's and a summary's may be on
	 * their way from the worker: request_jobs), or it would be computed
	 * here, holding the screen. */
	int l0 = 0, l1 = nlayers(v);
	bool every = q.show == SEL_OVERVIEW || view_sel_layers(v, &l0, &l1);
	if (v->have && (v->r.partial || (every && !view_heads_ready(v, l0, l1))))
		return av_fail(err, _("the text is still being computed: write the figure once it is"));
	char *text = text_utf8(v);
	if (!text)
		return av_fail(err, _("out of memory"));
	q.layer = v->layer;
	q.head = view_sel(v) == SEL_HEAD ? v->head : 0;
	q.marks = v->has_marks && v->r.n == v->ntok ? v->wmarks : NULL;
	q.ramp = v->col.ramp;
	q.values = v->values;
	q.model_name = figure_model_name(v);
	q.text = text;
	figure *f = figure_from_result(&v->r, &q, err);
	free(text);
	return write_made(v, f, path, replace, err);
}

bool figure_write_map(view *v, const char *path, bool replace, av_error *err)
{
	if (v->have && v->r.partial)
		return av_fail(err, _("the text is still being computed: write the figure once it is"));
	char *text = text_utf8(v);
	if (!text)
		return av_fail(err, _("out of memory"));
	figure *f = figure_of_map(v, text, err);
	free(text);
	return write_made(v, f, path, replace, err);
}

/* ---- the prompt ------------------------------------------------------------ */

void figure_prompt_open(view *v)
{
	const screen_ops *s = view_screen(v);
	char stem[96], path[VIEW_MAX_PATH * 4];
	if (!s->figure_name || !s->figure_name(v, stem, sizeof stem))
		return;
	if (!v->fig->le.cps && !lineedit_init(&v->fig->le, VIEW_MAX_PATH)) {
		set_notice(v, _("out of memory for the file name"));
		return;
	}
	if (!fig_free_path(path, sizeof path, v->fig->dir, stem, (fig_format)v->fig->format)) {
		set_notice(v, _("no free file name for %s in %s"), stem,
			   v->fig->dir[0] ? AV_Q(v->fig->dir) : _("this folder"));
		return;
	}
	/* The name as codepoints, unchanged (no normalisation: it is a path). */
	uint32_t cps[VIEW_MAX_PATH];
	size_t n = 0;
	for (const char *p = path; *p && n < VIEW_MAX_PATH;)
		cps[n++] = (uint32_t)utf8_next(&p);
	lineedit_set(&v->fig->le, cps, n, NULL);
	v->fig->active = true;
	v->fig->asking = false;
	v->fig->msg[0] = '\0';
}

/* The folder and format of a name written, for the next one. */
static void remember(view *v, const char *path, fig_format fmt)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	if (slash == path)
		n = 1; /* "/x.png": the root */
	if (n >= sizeof v->fig->dir)
		n = 0;
	memcpy(v->fig->dir, path, n);
	v->fig->dir[n] = '\0';
	v->fig->format = fmt;
}

/* On the prompt, and whole on the info line. */
static void prompt_error(view *v, const char *msg)
{
	snprintf(v->fig->msg, sizeof v->fig->msg, "%s", msg);
	set_notice(v, "%s", msg);
}

static void write_figure(view *v, const char *path, bool replace)
{
	av_error err;
	fig_format fmt;
	if (!fig_format_of(path, &fmt, &err)) {
		prompt_error(v, err.msg);
		return; /* the prompt stays: fix the name */
	}
	struct stat st;
	if (!replace && stat(path, &st) == 0) {
		v->fig->asking = true;
		return;
	}
	/* Say what is happening before the 0.1-0.4 s it takes. */
	snprintf(v->fig->msg, sizeof v->fig->msg, _("writing %s ..."), AV_Q(path));
	v->fig->writing = true;
	draw_status(v);
	wnoutrefresh(stdscr);
	doupdate();
	v->fig->writing = false;
	double t0 = av_now_ms();
	if (!view_screen(v)->figure(v, path, replace, &err)) {
		prompt_error(v, err.msg);
		return;
	}
	long long kb = stat(path, &st) == 0 ? ((long long)st.st_size + 1023) / 1024 : 0;
	set_notice(v, _("wrote %s (%s, %lld KB, %.0f ms)"), AV_Q(path), fig_format_ext(fmt), kb,
		   av_now_ms() - t0);
	snprintf(v->fig->done, sizeof v->fig->done, _("wrote %s"), AV_Q(path));
	remember(v, path, fmt);
	v->fig->active = false;
}

/* Keys while the prompt is open; every key is the prompt's. */
bool figure_prompt_key(view *v, int ch, bool is_code)
{
	v->fig->done[0] = '\0'; /* "wrote FILE" stays until the next key */
	if (!v->fig->active)
		return false;
	lineedit *le = &v->fig->le;
	if (v->fig->asking) {
		v->fig->asking = false;
		char *path = lineedit_utf8(le, NULL);
		if (path && !is_code && (ch == 'y' || ch == 'Y'))
			write_figure(v, path, true);
		else
			snprintf(v->fig->msg, sizeof v->fig->msg, "%s",
				 _("not replaced: edit the name"));
		free(path);
		return true;
	}
	v->fig->msg[0] = '\0';
	if (!is_code && (ch == 27 || ch == CTRL('q') || ch == CTRL('g'))) {
		v->fig->active = false;
		set_notice(v, _("no figure written"));
		return true;
	}
	if ((!is_code && (ch == '\r' || ch == '\n')) || (is_code && ch == KEY_ENTER)) {
		char *path = lineedit_utf8(le, NULL);
		if (!path)
			snprintf(v->fig->msg, sizeof v->fig->msg, "%s", _("out of memory"));
		else if (!path[0])
			snprintf(v->fig->msg, sizeof v->fig->msg, "%s", _("give a file name"));
		else
			write_figure(v, path, false);
		free(path);
		return true;
	}
	if (is_code) {
		switch (ch) {
		case KEY_LEFT: lineedit_left(le); break;
		case KEY_RIGHT: lineedit_right(le); break;
		case KEY_HOME: lineedit_home(le); break;
		case KEY_END: lineedit_end(le); break;
		case KEY_BACKSPACE: lineedit_backspace(le); break;
		case KEY_DC: lineedit_delete(le); break;
		default: break;
		}
		return true;
	}
	switch (ch) {
	case 127:
	case CTRL('h'): lineedit_backspace(le); break;
	case CTRL('a'): lineedit_home(le); break;
	case CTRL('e'): lineedit_end(le); break;
	case CTRL('b'): lineedit_left(le); break;
	case CTRL('f'): lineedit_right(le); break;
	case CTRL('d'): lineedit_delete(le); break;
	case CTRL('u'): lineedit_clear(le); break;
	case CTRL('k'): lineedit_kill_end(le); break;
	case CTRL('w'): lineedit_delete_word(le); break;
	default:
		if (ch >= 0x20 && !(ch & ALT_BIT)) {
			uint32_t cp = (uint32_t)ch;
			lineedit_insert(le, &cp, 1, NULL);
		}
		break;
	}
	return true;
}

/* The status line while the prompt is open, and the column of the cursor
 * in the name (-1: no cursor, a question is asked). */
void draw_figure_prompt(view *v, int y)
{
	int *cursor_x = &v->fig->cursor_x;
	style s = st(A_REVERSE, 0), b = st(A_REVERSE | A_BOLD, 0);
	fill(y, 0, COLS, s);
	*cursor_x = -1;
	if (v->fig->writing) {
		put_str(y, 0, COLS, b, v->fig->msg);
		return;
	}
	if (v->fig->asking) {
		char *path = lineedit_utf8(&v->fig->le, NULL);
		put_fmt(y, 0, COLS, b, _(" %s exists. Replace it? y: yes, any other key: no"),
			path ? AV_Q(path) : _("the file"));
		free(path);
		return;
	}
	const char *label = _(" Write figure (.svg .png .pdf): ");
	int x = put_str(y, 0, COLS, b, label);
	/* The name gets what the message leaves, but at least 20 columns; an
	 * error is also on the info line, whole. */
	const char *hint = v->fig->msg[0] ? v->fig->msg : _("Enter: write, Esc: cancel");
	lineedit *le = &v->fig->le;
	int need = lineedit_width(le, 0, le->n) + 2, room = COLS - x;
	int hint_w = str_width(hint) + 2;
	int field_w = room - hint_w;
	if (field_w < need)
		field_w = need < room ? need : room;
	if (field_w < 20)
		field_w = room < 20 ? room : 20;
	if (field_w < 4)
		return;
	int cur = lineedit_fit(le, field_w);
	int cx = x;
	for (size_t i = le->scroll; i < le->n; i++) {
		int w = lineedit_cp_width(le->cps[i]);
		if (cx + w > x + field_w)
			break;
		/* As the text line draws its characters (draw_input): an invisible
		 * one as its stand-in, in the width the line editor counts. */
		if (le->cps[i] == ' ')
			fill(y, cx, 1, s);
		else
			put_glyph(y, cx, le->cps[i], s);
		cx += w;
	}
	if (field_w < room)
		put_str(y, x + field_w, room - field_w, v->fig->msg[0] ? b : s, hint);
	*cursor_x = x + cur;
}

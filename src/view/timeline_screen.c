/* The timeline screen (Alt-H): how the model's heads formed while it
 * trained, from the records of its training timeline (timeline.h). At the
 * chosen recorded step (Left/Right or [ ], Home/End): the losses, and every
 * head with the role its recorded scores give it then; the loss curve over
 * the steps, and per head a sparkline of that role's score and one of its
 * entropy, the chosen step bright among dim columns (a dotted line above the
 * loss curve)
 * and the phase change (the first record where the labeller names the head
 * whose induction score rises most an induction head, timeline_phase_change)
 * in the accent colour. The heads are
 * reconstructed from the recorded statistics. Where the run kept the model
 * of a step (--keep-steps: timeline_kept_path beside the model file, or
 * beside the one it was kept beside when the file is a kept one; marked on
 * the curve's axis), Enter has the worker load it as it loads a reloaded
 * file (reload.c) and the view shows that step's weights on the same text;
 * the screen keeps the final model's timeline meanwhile, and Enter at the
 * last record loads the final model again. */
#include "attnview/i18n.h"
#include "attnview/lab_positions.h"
#include "attnview/timeline.h"
#include "screen.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TLS_FINAL UINT64_MAX /* shown: the final model */

typedef struct tls_state {
	size_t rec;	/* the chosen record */
	int top;	/* first head line shown */
	const model *m; /* the model rec is of (a reload starts at its end) */
	int curve_y, curve_x, curve_w, curve_rows; /* the loss curve, for clicks */
	/* The kept models: kept[r] says record r has one (for kept_of's
	 * timeline and count). While a step's model is shown (shown, not
	 * TLS_FINAL) final_tl is the final model's timeline, copied. */
	uint8_t *kept;
	const timeline *kept_of;
	size_t kept_n;
	uint64_t shown, pending; /* the step shown; the one being loaded */
	bool loading;
	timeline *final_tl;
	char owner[4200]; /* final_path of a kept model opened as such */
} tls_state;

static tls_state *tls_of(const view *v)
{
	return v->screen[SCREEN_TIMELINE];
}

static const timeline *tl_of(const view *v)
{
	const tls_state *s = tls_of(v);
	if (s->final_tl)
		return s->final_tl;
	return v->m ? v->m->timeline : NULL;
}

/* The final model's file, beside which the kept models are (NULL: the
 * built-in model): the file opened, or the model beside which it was kept
 * when it is a kept one (--model OUT --step S, or its path). */
static const char *final_path(const view *v)
{
	if (!v->watching)
		return NULL;
	tls_state *s = tls_of(v);
	const char *path = v->watch[0].path;
	return timeline_kept_owner(path, s->owner, sizeof s->owner) ? s->owner : path;
}

static bool tls_init(view *v, void *state)
{
	(void)v;
	tls_state *s = state;
	s->shown = s->pending = TLS_FINAL;
	return true;
}

static void tls_finish(void *state)
{
	tls_state *s = state;
	free(s->kept);
	timeline_destroy(s->final_tl);
}

/* Which records have a kept model, looked up once per timeline and count
 * (a run being watched adds records and files). */
static const uint8_t *kept_marks(view *v, const timeline *tl)
{
	tls_state *s = tls_of(v);
	if (s->kept_of == tl && s->kept_n == tl->count)
		return s->kept;
	uint8_t *k = realloc(s->kept, tl->count ? tl->count : 1);
	if (!k)
		return NULL;
	s->kept = k;
	s->kept_of = tl;
	s->kept_n = tl->count;
	const char *path = final_path(v);
	for (size_t r = 0; r < tl->count; r++)
		k[r] = path && timeline_kept_exists(path, tl->step[r]);
	return k;
}

/* The model the worker handed over is the one asked for (a step's, or the
 * final one again), or one the watch reloaded: then the final's. */
static void model_arrived(view *v, tls_state *s)
{
	bool asked = s->loading;
	s->loading = false;
	s->shown = asked ? s->pending : TLS_FINAL;
	if (s->shown == TLS_FINAL) {
		timeline_destroy(s->final_tl);
		s->final_tl = NULL;
		if (!asked)
			s->rec = SIZE_MAX; /* a new model: its last record */
	}
	s->m = v->m;
}

/* The chosen record, kept in range (the model may have been reloaded). */
static size_t chosen(view *v)
{
	tls_state *s = tls_of(v);
	if (s->m != v->m)
		model_arrived(v, s);
	else if (s->loading && !v->reloading)
		s->loading = false; /* it could not be loaded: the notice says why */
	const timeline *tl = tl_of(v);
	if (tl && s->rec >= tl->count)
		s->rec = tl->count ? tl->count - 1 : 0;
	return s->rec;
}

/* The role the labeller gives a head at record r, from its recorded
 * scores (timeline_head_roles), in a few columns: "previous 0.74", "local?
 * 0.38" when no role holds for most rows, "keyword+ 0.61" when two do. */
static role_kind recorded_role(const timeline *tl, size_t r, int l, int h, char *out, size_t size)
{
	role_scores rs;
	timeline_head_roles(tl, r, l, h, &rs);
	char name[64];
	role_short_label(&rs, true, name, sizeof name);
	const char *mark = rs.verdict == ROLE_UNSURE ? "?" : rs.verdict == ROLE_TWO ? "+" : "";
	snprintf(out, size, "%s%s %.2f", name, mark, rs.score);
	return rs.role;
}

/* The curves take min(records, w) columns laid out by step, so that the
 * runs of a timeline that went on from another model's (--init, with
 * another K) take their share of the steps: column c stands for the step
 * c/(n-1) of the way from the first record's to the last's, and shows the
 * record nearest to it. Records evenly spaced that fit get a column each. */
static int columns(const timeline *tl, int w)
{
	return tl->count < (size_t)w ? (int)tl->count : w;
}

static size_t index_of(const timeline *tl, int w, int c)
{
	int n = columns(tl, w);
	uint64_t first = tl->step[0], span = tl->step[tl->count - 1] - first;
	if (n < 2 || span == 0)
		return 0;
	double at = (double)first + (double)c * (double)span / (double)(n - 1);
	size_t lo = 0, hi = tl->count - 1; /* the first record at or after `at` */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((double)tl->step[mid] < at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && at - (double)tl->step[lo - 1] < (double)tl->step[lo] - at)
		lo--;
	return lo;
}

/* The column of record r. */
static int column_of(const timeline *tl, int w, size_t r)
{
	int n = columns(tl, w);
	uint64_t first = tl->step[0], span = tl->step[tl->count - 1] - first;
	if (n < 2 || span == 0)
		return 0;
	return (int)((double)(tl->step[r] - first) * (double)(n - 1) / (double)span + 0.5);
}

static const wchar_t *const eighths[9] = {L" ", L"▁", L"▂", L"▃", L"▄", L"▅", L"▆", L"▇", L"█"};

/* Style of column c of a sparkline: the phase change accented, the chosen
 * step bright and underlined among dim columns (the bars keep their height:
 * a reversed column read as a jump). */
static style col_style(view *v, int c, int cur, int phase)
{
	attr_t under = c == cur ? A_UNDERLINE | A_BOLD : 0;
	if (c == phase)
		return accent(v, A_BOLD | under);
	return st(c == cur ? under : A_DIM, 0);
}

/* A sparkline of x[r * stride] / top over the records, w columns at (y, x0). */
static void sparkline(view *v, int y, int x0, int w, const float *x, size_t stride, float top,
		      size_t cur, long phase)
{
	const timeline *tl = tl_of(v);
	int n = columns(tl, w), c_cur = column_of(tl, w, cur);
	int c_ph = phase >= 0 ? column_of(tl, w, (size_t)phase) : -1;
	for (int c = 0; c < n; c++) {
		/* From ▁ (0) to █ (top); nothing where nothing was measured. */
		float val = x[index_of(tl, w, c) * stride];
		int e = isfinite(val) && top > 0 ? 1 + (int)lroundf(7 * fminf(val / top, 1)) : 0;
		put_wc(y, x0 + c, eighths[e < 1 ? 0 : e], col_style(v, c, c_cur, c_ph));
	}
}

/* The axis under the curve: the chosen step's column marked (in the accent
 * where it is the phase change's too), the phase change's, and the steps
 * whose model is kept. */
static void curve_axis(view *v, int y, int x0, int w, int c_cur, int c_ph, const uint8_t *kept)
{
	const timeline *tl = tl_of(v);
	for (int c = 0; c < columns(tl, w); c++) {
		bool k = kept && kept[index_of(tl, w, c)];
		const wchar_t *mark = c == c_cur ? L"▲" : c == c_ph ? L"┼" : k ? L"◆" : L"─";
		style s = c == c_ph    ? accent(v, A_BOLD)
			  : c == c_cur ? st(A_BOLD, 0)
			  : k	       ? plain()
				       : st(A_DIM, 0);
		put_wc(y, x0 + c, mark, s);
	}
}

/* The training loss over the steps, rows lines tall, eighths of a line. */
static void loss_curve(view *v, int y, int x0, int w, int rows, size_t cur, long phase,
		       const uint8_t *kept)
{
	const timeline *tl = tl_of(v);
	float top = 0;
	for (size_t r = 0; r < tl->count; r++)
		if (isfinite(tl->loss[r]) && tl->loss[r] > top)
			top = tl->loss[r];
	int n = columns(tl, w), c_cur = column_of(tl, w, cur);
	int c_ph = phase >= 0 ? column_of(tl, w, (size_t)phase) : -1;
	for (int c = 0; c < n; c++) {
		float val = tl->loss[index_of(tl, w, c)];
		int e = isfinite(val) && top > 0 ? (int)lroundf(8.0f * rows * val / top) : 0;
		style s = c == c_ph ? accent(v, A_BOLD) : plain();
		for (int k = 0; k < rows; k++) {
			int left = e - 8 * (rows - 1 - k);
			/* The chosen step: a dotted line above the curve, which
			 * stays whole (a full column read as a jump of the loss). */
			bool guide = c == c_cur && left <= 0;
			put_wc(y + k, x0 + c,
			       guide ? L"┊"
				     : eighths[left < 0	  ? 0
					       : left > 8 ? 8
							  : left],
			       guide ? (c == c_ph ? accent(v, A_BOLD) : st(A_BOLD, 0)) : s);
		}
	}
	put_fmt(y, 0, x0 - 1, st(A_DIM, 0), "%.2f", (double)top);
	put_str(y + rows - 1, 0, x0 - 1, st(A_DIM, 0), "0");
	curve_axis(v, y + rows, x0, w, c_cur, c_ph, kept);
	char first[32], last[32];
	snprintf(first, sizeof first, "%llu", (unsigned long long)tl->step[0]);
	put_str(y + rows + 1, x0, w, st(A_DIM, 0), first);
	snprintf(last, sizeof last, "%llu", (unsigned long long)tl->step[tl->count - 1]);
	put_str(y + rows + 1, x0 + n - str_width(last), str_width(last), st(A_DIM, 0), last);
}

static void draw_header(view *v, size_t cur, long phase, int head)
{
	const timeline *tl = tl_of(v);
	put_fmt(0, 0, COLS, st(A_BOLD, 0),
		_("Training timeline: step %llu of %llu (record %zu of %zu)"),
		(unsigned long long)tl->step[cur], (unsigned long long)tl->step[tl->count - 1],
		cur + 1, tl->count);
	/* The screen hides the info line: its notice (a model loaded, or
	 * not) goes here until the next key. */
	if (v->notice[0])
		put_str(1, 0, COLS, accent(v, A_BOLD), v->notice);
	else if (phase >= 0)
		put_fmt(1, 0, COLS, accent(v, A_BOLD),
			(size_t)phase == cur
			    ? _("Phase change at step %llu, this one (▲): head L%d H%d becomes an "
				"induction head")
			    : _("Phase change at step %llu (┼): head L%d H%d becomes an induction "
				"head"),
			(unsigned long long)tl->step[phase], head / nheads(v), head % nheads(v));
	else if (head >= 0) /* risen, but never named */
		put_fmt(1, 0, COLS, st(A_DIM, 0),
			_("No phase change: head L%d H%d's induction score rose by 0.2 or more, "
			  "but it is never named an induction head"),
			head / nheads(v), head % nheads(v));
	else
		put_str(1, 0, COLS, st(A_DIM, 0),
			_("No phase change: no head's induction score has risen by 0.2"));
}

static void draw_heads(view *v, int y0, size_t cur, long phase)
{
	const timeline *tl = tl_of(v);
	int H = nheads(v), N = nlayers(v) * H, w = (COLS - 34) / 2;
	tls_state *s = tls_of(v);
	/* A version 1 timeline kept shares of weight, held to that
	 * version's lower bars (induction from 0.4): "induction 0.41" is
	 * named there, and the header says by which bars (attnview(1)). */
	put_str(y0, 0, 26, st(A_BOLD, 0),
		tl->version == 1 ? _("head   role (v1 bars)") : _("head   role at this step"));
	put_str(y0, 27, w, st(A_BOLD, 0), _("score over the steps"));
	put_str(y0, 29 + w, COLS - 29 - w, st(A_BOLD, 0), _("broad"));
	int rows = LINES - 2 - y0;
	if (s->top > N - rows)
		s->top = N - rows > 0 ? N - rows : 0;
	size_t stride = (size_t)tl->layers * tl->heads * tl->nvalues;
	for (int i = 0; i < rows && s->top + i < N; i++) {
		int k = s->top + i, l = k / H, h = k % H, y = y0 + 1 + i;
		char label[96];
		role_kind role = recorded_role(tl, cur, l, h, label, sizeof label);
		put_fmt(y, 0, 7, st(A_BOLD, 0), "L%d H%d", l, h);
		put_str(y, 7, 19, plain(), label);
		const float *base = timeline_head(tl, 0, l, h);
		sparkline(v, y, 27, w, base + role, stride, 1, cur, phase);
		sparkline(v, y, 29 + w, w, base + ROLE_BROAD, stride, 1, cur, phase);
	}
}

/* The chosen record's losses; where one was not measured (NaN), why. */
static void draw_losses(view *v, int y, size_t cur)
{
	const timeline *tl = tl_of(v);
	char a[64], b[96], c[96];
	float x = tl->loss[cur], pl = tl->probe_loss[cur], icl = tl->icl[cur];
	if (isfinite(x))
		snprintf(a, sizeof a, "%.3f", (double)x);
	else
		snprintf(a, sizeof a, "%s", _("- (untrained)"));
	if (isfinite(pl))
		snprintf(b, sizeof b, "%.3f", (double)pl);
	else
		snprintf(b, sizeof b, "%s", _("- (no validation)"));
	if (isfinite(icl))
		snprintf(c, sizeof c, "%+.3f", (double)icl);
	else if (tl->scored || lab_model_task(v->m))
		snprintf(c, sizeof c, "%s", _("- (lab task)"));
	else
		snprintf(c, sizeof c, "%s", _("- (not measured)"));
	put_fmt(y, 0, COLS, plain(), _("this step: loss %s, probe loss %s, in-context learning %s"),
		a, b, c);
}

/* What Enter does here: the model shown, the chosen step's kept one. */
static void draw_kept(view *v, int y, size_t cur, const uint8_t *kept)
{
	const tls_state *s = tls_of(v);
	const timeline *tl = tl_of(v);
	bool any = false;
	for (size_t r = 0; kept && r < tl->count; r++)
		any = any || kept[r];
	if (s->shown != TLS_FINAL)
		put_fmt(
		    y, 0, COLS, accent(v, A_BOLD),
		    _("The view shows the model of step %llu; End, then Enter: the final model"),
		    (unsigned long long)s->shown);
	else if (kept && kept[cur])
		put_str(y, 0, COLS, plain(),
			_("◆ The model of this step is kept: Enter shows its weights on the text"));
	else if (any)
		put_str(y, 0, COLS, st(A_DIM, 0),
			_("◆ marks the steps whose model is kept: Enter on one shows its weights"));
	else
		put_str(y, 0, COLS, st(A_DIM, 0),
			_("No model of these steps is kept (--train --keep-steps N keeps them)"));
}

static void tls_layout(view *v)
{
	(void)v;
}

static void tls_draw(view *v)
{
	size_t cur = chosen(v); /* first: a model that arrived changes tl_of */
	const timeline *tl = tl_of(v);
	if (!tl || tl->count == 0) {
		put_str(0, 0, COLS, st(A_BOLD, 0), _("Training timeline"));
		put_str(2, 0, COLS, plain(), _("This model has no training timeline."));
		put_str(3, 0, COLS, plain(),
			_("It was trained before attnview recorded one, or with "
			  "--timeline-every 0."));
		put_str(4, 0, COLS, plain(), _("Train it again to watch its heads form."));
		return;
	}
	int head;
	long phase = timeline_phase_change(tl, &head);
	draw_header(v, cur, phase, head);
	int x0 = 8, w = COLS - x0 - 1, rows = LINES >= 24 ? 4 : 2;
	tls_state *s = tls_of(v);
	s->curve_y = 3;
	s->curve_x = x0;
	s->curve_w = w;
	s->curve_rows = rows;
	const uint8_t *kept = kept_marks(v, tl);
	put_str(2, 0, COLS, st(A_BOLD, 0), _("training loss"));
	loss_curve(v, 3, x0, w, rows, cur, phase, kept);
	draw_losses(v, 5 + rows, cur);
	draw_kept(v, 6 + rows, cur, kept);
	draw_heads(v, 7 + rows, cur, phase);
}

/* [ and ] step too; other printable keys do nothing here (the text is not
 * shown). */
static bool tls_key(view *v, int ch, bool is_code)
{
	if (is_code || ch < 0x20 || ch == 0x7f || (ch & ALT_BIT))
		return false;
	if (ch == '[')
		do_action(v, ACT_LEFT, ch);
	else if (ch == ']')
		do_action(v, ACT_RIGHT, ch);
	return true;
}

/* A click on the loss curve chooses that step. */
static void tls_mouse(view *v, const MEVENT *ev)
{
	tls_state *s = tls_of(v);
	chosen(v);
	const timeline *tl = tl_of(v);
	if (!tl || !tl->count || !(ev->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)) ||
	    ev->y < s->curve_y || ev->y >= s->curve_y + s->curve_rows || ev->x < s->curve_x ||
	    ev->x >= s->curve_x + columns(tl, s->curve_w))
		return;
	s->rec = index_of(tl, s->curve_w, ev->x - s->curve_x);
}

/* The file of the chosen record's model: the kept one, or at the last
 * record the final model (its checkpoint while the run has written no
 * model yet). false, with a notice, where none was kept. */
static bool model_file(view *v, size_t cur, char *file, size_t size)
{
	const timeline *tl = tl_of(v);
	const char *path = final_path(v);
	const uint8_t *kept = kept_marks(v, tl);
	if (path && cur + 1 == tl->count) {
		snprintf(file, size, "%s", v->watch[v->watch[0].ok ? 0 : 1].path);
		return true;
	}
	if (path && kept && kept[cur])
		return timeline_kept_path(path, tl->step[cur], file, size);
	set_notice(v,
		   _("no model of step %llu was kept: train with --keep-steps N to keep every "
		     "N-th recorded step"),
		   (unsigned long long)tl->step[cur]);
	return false;
}

/* Enter: the worker loads the chosen step's model (the final model's
 * timeline kept here meanwhile); take_model hands it to the view. */
static void open_step(view *v, size_t cur)
{
	tls_state *s = tls_of(v);
	const timeline *tl = tl_of(v);
	char file[4200];
	if (s->loading) {
		set_notice(v,
			   _("a model is still being loaded: press Enter again when it is shown"));
		return;
	}
	if (!tl || !tl->count || !model_file(v, cur, file, sizeof file))
		return;
	bool last = cur + 1 == tl->count;
	if (!last && !s->final_tl) {
		av_error err;
		s->final_tl = timeline_copy(tl, &err);
		if (!s->final_tl) {
			set_notice(v, "%s", err.msg);
			return;
		}
	}
	s->pending = last ? TLS_FINAL : tl->step[cur];
	s->loading = true;
	worker_post_reload(v->w, file);
	v->reloading = true;
}

static bool tls_action(view *v, view_action act)
{
	tls_state *s = tls_of(v);
	size_t cur = chosen(v);
	const timeline *tl = tl_of(v);
	size_t last = tl && tl->count ? tl->count - 1 : 0;
	int N = nlayers(v) * nheads(v);
	switch (act) {
	case ACT_LEFT:
		s->rec = cur > 0 ? cur - 1 : 0;
		return true;
	case ACT_RIGHT:
		s->rec = cur < last ? cur + 1 : last;
		return true;
	case ACT_FIRST_COL:
		s->rec = 0;
		return true;
	case ACT_LAST_COL:
		s->rec = last;
		return true;
	case ACT_UP:
		s->top = s->top > 0 ? s->top - 1 : 0;
		return true;
	case ACT_DOWN:
		s->top = s->top + 1 < N ? s->top + 1 : s->top;
		return true;
	case ACT_OPEN:
		open_step(v, cur);
		return true;
	default:
		return false;
	}
}

/* Ctrl-S: the timeline's figure (--export --timeline). */
static bool tls_figure_name(view *v, char *stem, size_t size)
{
	if (!(v->m && v->m->timeline)) {
		set_notice(v, _("this model has no training timeline to draw"));
		return false;
	}
	snprintf(stem, size, "attnview-timeline");
	return true;
}

static bool tls_figure(view *v, const char *path, bool replace, av_error *err)
{
	return figure_timeline(v->m, figure_model_name(v), path, replace, err);
}

const screen_ops timeline_screen = {
    .name = N_("TIMELINE"),
    .hint = N_("[ ] Left Right: step, Home End: first, last | Esc back | F1 help"),
    .text_visible = false,
    .toggle = ACT_TIMELINE,
    .state_size = sizeof(tls_state),
    .init = tls_init,
    .finish = tls_finish,
    .layout = tls_layout,
    .draw = tls_draw,
    .key = tls_key,
    .action = tls_action,
    .mouse = tls_mouse,
    .figure_name = tls_figure_name,
    .figure = tls_figure,
};

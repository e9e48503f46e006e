/* The panel's faithfulness page (Alt-U): at the Query row, what blanking
 * each key does to the loss there beside the map's head's weight on it, the
 * keys that matter most first, and the head's Spearman correlation of the
 * two, then every head's as a grid (faith.h). Computed on the worker
 * (JOB_FAITH), a pass per key; a newer text drops it. */
#include "panel.h"

#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>

#define FAITH_KEYS 6 /* the keys listed, largest effect first */

/* The meter at row q, for job.seq: the worker's result, kept (its
 * faith_effect etc. owned). */
typedef struct faith_state {
	page_job job;
	int q;
	worker_job_result res;
} faith_state;

static void faith_finish(void *state)
{
	worker_job_result_finish(&((faith_state *)state)->res);
}

/* In characters, at the Query row. */
static void faith_request(view *v, void *state)
{
	faith_state *f = state;
	int q = v->hv.qrow;
	if (v->words || q >= v->r.n ||
	    (f->job.seq == v->res_seq && f->q == q && (f->job.valid || f->job.asked)))
		return;
	worker_job j = {.kind = JOB_FAITH, .seq = v->res_seq, .query = q};
	worker_post_job(v->w, &j);
	f->job = (page_job){.valid = false, .asked = true, .seq = v->res_seq};
	f->q = q;
}

static void faith_take(view *v, void *state, worker_job_result *j)
{
	faith_state *f = state;
	(void)v;
	if (j->job.query != f->q)
		return;
	worker_job_result_finish(&f->res);
	f->res = *j; /* the page keeps the arrays */
	j->faith_effect = j->faith_sp = j->faith_att = NULL;
	f->job.valid = true;
	f->job.asked = false;
}

static int row(int y, int ymax, int x, int w, style s, const char *text)
{
	if (y <= ymax)
		put_str(y, x, w, s, text);
	return y + 1;
}

/* The FAITH_KEYS keys with the largest effects into best; returns how many. */
static int top_keys(const float *effect, int n, int *best)
{
	int m = 0;
	for (int j = 0; j < n; j++) {
		if (isnan(effect[j]))
			continue;
		int i = m < FAITH_KEYS ? m++ : FAITH_KEYS;
		if (i == FAITH_KEYS && effect[j] <= effect[best[FAITH_KEYS - 1]])
			continue;
		if (i == FAITH_KEYS)
			i--;
		while (i > 0 && effect[best[i - 1]] < effect[j]) {
			best[i] = best[i - 1];
			i--;
		}
		best[i] = j;
	}
	return m;
}

/* Every head's correlation under a line of head numbers: a layer per line,
 * a head per 3 columns, the sign's colour, solid from 0.5 up, half from 0.2,
 * a line below, a dot where undefined. */
static int heads_grid(view *v, const float *sp, int x, int w, int y, int ymax)
{
	const int L = nlayers(v), H = nheads(v), fit = (w - 4) / 3 < H ? (w - 4) / 3 : H;
	for (int h = 0; y <= ymax && h < fit; h++)
		put_fmt(y, x + 4 + 3 * h, 3, st(A_DIM, 0), "%d", h % 100);
	y++;
	for (int l = 0; l < L; l++, y++) {
		if (y > ymax)
			continue;
		int xx = put_fmt(y, x, w, st(A_DIM, 0), " L%-2d", l);
		for (int h = 0; h < fit; h++, xx += 3) {
			float s = sp[l * H + h];
			style c = ui_style(&v->col, s >= 0 ? UI_POSITIVE : UI_NEGATIVE,
					   fabsf(s) >= 0.5f ? A_BOLD : 0);
			if (isnan(s))
				put_str(y, xx, 3, st(A_DIM, 0), " · ");
			else
				put_str(y, xx, 3, c,
					fabsf(s) >= 0.5f   ? "██ "
					: fabsf(s) >= 0.2f ? "▄▄ "
							   : "▁▁ ");
		}
	}
	return y;
}

/* The grid's key: the signs' colours, then what the heights mean. */
static void grid_key(view *v, int x, int w, int y, int ymax)
{
	if (y > ymax)
		return;
	const int end = x + w;
	x = put_str(y, x, end - x, ui_style(&v->col, UI_POSITIVE, A_BOLD), " ██");
	x = put_str(y, x, end - x, st(A_DIM, 0), " + ");
	x = put_str(y, x, end - x, ui_style(&v->col, UI_NEGATIVE, A_BOLD), "██");
	put_str_cut(y, x, end - x, st(A_DIM, 0), _(" - █ .5+ ▄ .2+ ▁<.2 · none"));
}

static void faith_draw(view *v, void *state, pen *pn0, const heat_src *hs)
{
	const faith_state *fs = state;
	const int x = pn0->x, w = pn0->w, ymax = pn0->ymax;
	int y = pn0->y;
	char buf[128];
	(void)hs;
	const int q = v->hv.qrow, l = v->layer, h = v->head;
	const bool head =
	    view_sel(v) == SEL_HEAD && l >= 0 && l < nlayers(v) && h >= 0 && h < nheads(v);
	if (head)
		snprintf(buf, sizeof buf, _("faithfulness: row %d, L%dH%d"), q, l, h);
	else
		snprintf(buf, sizeof buf, _("faithfulness: row %d"), q);
	y = row(y, ymax, x, w, st(A_BOLD, 0), buf);
	const worker_job_result *f = &fs->res;
	if (v->words) {
		row(y, ymax, x, w, plain(), _(" for characters (F8 off)"));
		return;
	}
	if (!fs->job.valid || fs->q != q || fs->job.seq != v->res_seq || !f->faith_effect) {
		row(y, ymax, x, w, plain(), _(" computing... (a pass per key)"));
		return;
	}
	if (isnan(f->faith_loss)) {
		row(y, ymax, x, w, plain(), _(" no loss here: nothing to predict"));
		return;
	}
	/* A masked model's loss at row q is that of the pass with q masked:
	 * its weights are that pass's too, not the map's (Alt-L says so).
	 * Always said, since the weights below contradict the map otherwise:
	 * in full where it leaves the grid and its key room, else short (the
	 * grid gives way). */
	const int after = FAITH_KEYS + 8 + nlayers(v) + 1; /* the lines below, about */
	if (v->m->cfg.objective == OBJ_MASKED && head) {
		if (ymax - y - after >= 2)
			snprintf(buf, sizeof buf,
				 _("(weights of the pass with row %d masked, not the map's)"), q);
		else
			snprintf(buf, sizeof buf, _("(row %d masked: not the map's)"), q);
		pen pw = {x, w, y, ymax};
		pen_wrapped(&pw, st(A_DIM, 0), buf);
		y = pw.y;
	}
	snprintf(buf, sizeof buf, _("loss %.3f; blanking a key adds"), (double)f->faith_loss);
	y = row(y, ymax, x, w, st(A_DIM, 0), buf);
	const int n = f->nfaith, H = nheads(v);
	int best[FAITH_KEYS];
	const int m = top_keys(f->faith_effect, n, best);
	for (int i = 0; i < m; i++, y++) {
		if (y > ymax)
			continue;
		const int j = best[i];
		int xx = put_fmt(y, x, w, plain(), " %3d ", j);
		xx += put_glyph(y, xx, v->r.tokens[j].cp, st(A_BOLD, 0));
		if (head)
			snprintf(buf, sizeof buf, _(" %+7.3f  weight %.3f"),
				 (double)f->faith_effect[j],
				 (double)f->faith_att[((size_t)l * H + h) * n + j]);
		else
			snprintf(buf, sizeof buf, " %+7.3f", (double)f->faith_effect[j]);
		put_str(y, xx, w - (xx - x), plain(), buf);
	}
	if (head) {
		float s = f->faith_sp[l * H + h];
		if (isnan(s))
			snprintf(buf, sizeof buf, "%s", _("Spearman: undefined"));
		else
			snprintf(buf, sizeof buf, _("Spearman %+.2f for this head"), (double)s);
		y = row(y, ymax, x, w, s > 0.5f ? accent(v, A_BOLD) : plain(), buf);
		pen pn = {x, w, y, ymax};
		int seen = 0;
		for (int j = 0; j < n; j++)
			seen += !isnan(f->faith_effect[j]);
		snprintf(buf, sizeof buf,
			 _("(the rank correlation, over all %d keys the row sees, of its weights "
			   "with what blanking each adds)"),
			 seen);
		pen_wrapped(&pn, st(A_DIM, 0), buf);
		y = pn.y;
	}
	y++;
	y = row(y, ymax, x, w, st(A_DIM, 0), _("every head's Spearman"));
	y = heads_grid(v, f->faith_sp, x, w, y, ymax);
	grid_key(v, x, w, y, ymax);
}

const panel_page faith_page = {
    .name = N_("faithfulness"),
    .act = ACT_FAITH,
    .job = JOB_FAITH,
    .state_size = sizeof(faith_state),
    .finish = faith_finish,
    .request = faith_request,
    .take = faith_take,
    .draw = faith_draw,
};

/* The panel's why page (Alt-L): the logit lens at the Query's row and the
 * heads' parts of the logit (lens.h), from the worker (JOB_WHY). */
#include "panel.h"

#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The lens and the attribution at row q, for job.seq. */
typedef struct why_state {
	page_job job;
	int q, commit;
	int32_t lens_id[AV_MAX_LAYERS * WHY_K], id;
	float lens_p[AV_MAX_LAYERS * WHY_K], logit, rest;
	float heads[AV_MAX_LAYERS * AV_MAX_HEADS];
} why_state;

static void why_request(view *v, void *state)
{
	why_state *w = state;
	int q = v->hv.qrow;
	if (q >= v->r.n || (w->job.seq == v->res_seq && w->q == q && (w->job.valid || w->job.asked)))
		return;
	worker_job j = {.kind = JOB_WHY, .seq = v->res_seq, .query = q};
	worker_post_job(v->w, &j);
	w->job = (page_job){.valid = false, .asked = true, .seq = v->res_seq};
	w->q = q;
}

static void why_take(view *v, void *state, worker_job_result *j)
{
	why_state *w = state;
	if (j->job.query != w->q)
		return;
	const size_t L = (size_t)v->r.layers;
	memcpy(w->lens_id, j->lens_id, L * WHY_K * sizeof *j->lens_id);
	memcpy(w->lens_p, j->lens_p, L * WHY_K * sizeof *j->lens_p);
	memcpy(w->heads, j->dla_heads, L * (size_t)v->r.heads * sizeof *j->dla_heads);
	w->commit = j->commit;
	w->id = j->dla_id;
	w->logit = j->dla_logit;
	w->rest = j->dla_rest;
	w->job.valid = true;
	w->job.asked = false;
}

/* The heads' parts of the logit (lens.h) as a grid, a layer per line, a
 * head per two columns: the sign's colour, solid from half the largest
 * part up, a dot below an eighth of it; then the largest parts in numbers. */
static void why_heads(view *v, const why_state *w, pen *p)
{
	const int L = nlayers(v), H = nheads(v);
	const int fit = (p->w - 4) / 2 < H ? (p->w - 4) / 2 : H;
	float big = 0;
	for (int k = 0; k < L * H; k++)
		big = fabsf(w->heads[k]) > big ? fabsf(w->heads[k]) : big;
	if (p->y <= p->ymax)
		for (int h = 0; h < fit; h++)
			put_fmt(p->y, p->x + 4 + 2 * h, 2, st(A_DIM, 0), "%d", h % 10);
	p->y++;
	for (int l = 0; l < L; l++, p->y++) {
		if (p->y > p->ymax)
			continue;
		int x = put_fmt(p->y, p->x, p->w, st(A_DIM, 0), " L%-2d", l);
		for (int h = 0; h < fit; h++, x += 2) {
			float a = w->heads[l * H + h], r = big > 0 ? fabsf(a) / big : 0;
			/* (the key is below the grid) */
			style s = ui_style(&v->col, a >= 0 ? UI_POSITIVE : UI_NEGATIVE,
					   r >= 0.5f ? A_BOLD : 0);
			put_str(p->y, x, 2, r < 0.125f ? st(A_DIM, 0) : s,
				r < 0.125f ? "· "
				: r < 0.5f ? "▄▄"
					   : "██");
		}
	}
	if (p->y <= p->ymax)
		sign_key(v, p->y, p->x, p->w, _("adds"), _("takes away"));
	p->y++;
	/* The three largest parts. */
	int best[3] = {-1, -1, -1};
	for (int k = 0; k < L * H; k++)
		for (int i = 0; i < 3; i++)
			if (best[i] < 0 || fabsf(w->heads[k]) > fabsf(w->heads[best[i]])) {
				for (int j = 2; j > i; j--)
					best[j] = best[j - 1];
				best[i] = k;
				break;
			}
	for (int i = 0; i < 3 && best[i] >= 0; i++)
		pen_line(p, plain(), "  L%dH%d %+.3f", best[i] / H, best[i] % H,
			 w->heads[best[i]]);
	double sum = 0;
	for (int k = 0; k < L * H; k++)
		sum += w->heads[k];
	pen_line(p, plain(), _("heads %+.3f  rest %+.3f"), sum, w->rest);
	pen_line(p, accent(v, A_BOLD), _("= logit %.3f"), w->logit);
	pen_wrapped(p, st(A_DIM, 0), _("rest: the embeddings, the MLPs and the biases"));
}

/* Why the model predicts what it does at the Query's row (lens.h): the
 * logit lens after each block, the commitment, the heads' logit parts. */
static void why_draw(view *v, void *state, pen *p, const heat_src *s)
{
	const why_state *w = state;
	(void)s;
	int q = v->hv.qrow;
	if (v->words || view_pin(v)->on) {
		pen_line(p, st(A_BOLD, 0), _("why this prediction"));
		pen_line(p, plain(), _(" for characters (F8 off, F9 unpinned)"));
		return;
	}
	pen_line(p, st(A_BOLD, 0), _("why: row %d, nothing masked"), q);
	/* The details page's prediction of a masked model hides the row's
	 * character: another pass, other numbers. */
	if (v->m->cfg.objective != OBJ_CAUSAL)
		pen_wrapped(p, st(A_DIM, 0),
			    _("(the details page masks the row's character: other numbers)"));
	if (!w->job.valid || w->q != q || w->job.seq != v->res_seq) {
		pen_line(p, plain(), _(" computing..."));
		return;
	}
	pen_line(p, st(A_DIM, 0), _("logit lens: read after each block"));
	for (int l = 0; l < nlayers(v); l++, p->y++) {
		if (p->y > p->ymax)
			continue;
		int x = put_fmt(p->y, p->x, p->w, l >= w->commit ? st(A_BOLD, 0) : plain(),
				" L%-2d", l);
		for (int k = 0; k < WHY_K && x < p->x + p->w - 8; k++) {
			int32_t id = w->lens_id[l * WHY_K + k];
			x += put_glyph(p->y, x, v->m->vocab.cps[id], k ? plain() : st(A_BOLD, 0));
			x = put_fmt(p->y, x, p->w - (x - p->x), st(A_DIM, 0), " %.2f ",
				    (double)w->lens_p[l * WHY_K + k]);
		}
	}
	pen_line(p, plain(), _("top-1 from block %d on"), w->commit);
	if (p->y <= p->ymax) {
		int x = put_str(p->y, p->x, p->w, st(A_DIM, 0), _("heads' parts of the logit of "));
		uint32_t cp = v->m->vocab.cps[w->id];
		char g[32];
		cp_glyph(cp, g);
		/* The character on the next line where it does not fit: never past
		 * the panel's edge, onto the map's next row. */
		if (x + str_width(g) > p->x + p->w) {
			p->y++;
			x = p->x;
		}
		if (p->y <= p->ymax)
			put_glyph(p->y, x, cp, st(A_BOLD, 0));
	}
	p->y++;
	why_heads(v, w, p);
}


const panel_page why_page = {
    .name = N_("logit lens"),
    .act = ACT_WHY,
    .job = JOB_WHY,
    .ablation = true,
    .state_size = sizeof(why_state),
    .request = why_request,
    .take = why_take,
    .draw = why_draw,
};

/* The details panel beside the heatmap: the cursor's Query and Key, the
 * weight with its rank and score, the row's strongest keys, the head's
 * statistics and the model's predictions at the Query's position. */
#include "panel.h"

#include "attnview/vocab.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static const head_stats *selected_stats(view *v)
{
	if (!v->hs_valid || v->hs_seq != v->res_seq || v->hs_layer != v->layer ||
	    v->hs_head != v->head) {
		attn_matrix a = view_head(v);
		head_stats_compute(&v->hs, &a);
		v->hs_valid = true;
		v->hs_seq = v->res_seq;
		v->hs_layer = v->layer;
		v->hs_head = v->head;
	}
	return &v->hs;
}

/* A token for the panel: the glyph, and what it is. */
static int put_token_desc(view *v, int y, int x, int maxw, const token *t)
{
	style s = token_style(v, t, A_BOLD);
	int w = put_glyph(y, x, t->cp, s);
	char desc[64];
	if (t->cp < 0x110000)
		snprintf(desc, sizeof desc, " U+%04X%s", t->cp, t->unknown ? " unknown" : "");
	else
		snprintf(desc, sizeof desc, " special");
	return put_str(y, x + w, maxw - w, st(A_DIM, 0), desc);
}

/* Lines are written from y on while they fit above ymax. */
typedef struct pen {
	int x, w, y, ymax;
} pen;

static void line(pen *p, style s, const char *fmt, ...) AV_PRINTF(3, 4);
static void line(pen *p, style s, const char *fmt, ...)
{
	if (p->y <= p->ymax) {
		char buf[256];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(buf, sizeof buf, fmt, ap);
		va_end(ap);
		put_str(p->y, p->x, p->w, s, buf);
	}
	p->y++;
}

static void cell_lines(view *v, pen *p, const attn_matrix *a)
{
	int q = v->hv.qrow, k = v->hv.kcol;
	if (p->y <= p->ymax) {
		int xx = put_fmt(p->y, p->x, p->w, st(A_BOLD, 0), "Query %d ", q);
		put_token_desc(v, p->y, xx, p->w - (xx - p->x), &v->r.tokens[q]);
	}
	p->y++;
	if (p->y <= p->ymax) {
		int xx = put_fmt(p->y, p->x, p->w, st(A_BOLD, 0), "Key   %d ", k);
		put_token_desc(v, p->y, xx, p->w - (xx - p->x), &v->r.tokens[k]);
	}
	p->y++;
	if (attn_masked(a, q, k)) {
		line(p, plain(), "weight masked (key after query)");
		p->y += 2;
		return;
	}
	int visible;
	int rank = row_rank(a, q, k, &visible);
	size_t n = (size_t)a->n, head = (size_t)v->layer * (size_t)v->r.heads + (size_t)v->head;
	float raw = v->r.scores[(head * n + (size_t)q) * n + (size_t)k];
	char wbuf[32];
	fmt_weight(wbuf, attn_at(a, q, k));
	line(p, plain(), "weight %s", wbuf);
	line(p, plain(), "rank   %d of %d in the row", rank, visible);
	line(p, plain(), "q·k %.4f  /√%d = %.4f", raw, v->head_dim,
	     raw / sqrtf((float)v->head_dim));
}

static void top_key_lines(view *v, pen *p, const attn_matrix *a)
{
	int q = v->hv.qrow, k = v->hv.kcol;
	line(p, st(A_BOLD, 0), "Top keys of row %d", q);
	int top[VIEW_TOPK];
	int ntop = row_top_keys(a, q, VIEW_TOPK, top);
	for (int i = 0; i < ntop && p->y <= p->ymax; i++, p->y++) {
		int xx = put_fmt(p->y, p->x, p->w, plain(), " %*d ", v->mg.heat.posw, top[i]);
		const token *t = &v->r.tokens[top[i]];
		put_glyph(p->y, xx, t->cp, token_style(v, t, top[i] == k ? A_BOLD : A_NORMAL));
		char wbuf[32];
		fmt_weight(wbuf, attn_at(a, q, top[i]));
		put_str(p->y, xx + 3, p->w - (xx + 3 - p->x), top[i] == k ? st(A_BOLD, 0) : plain(),
			wbuf);
	}
}

static void stats_lines(view *v, pen *p)
{
	const head_stats *s = selected_stats(v);
	line(p, st(A_BOLD, 0), "Layer %d head %d: %s", v->layer, v->head, head_pattern(s));
	line(p, plain(), "entropy %.3f nats (max %.3f)", s->entropy, s->max_entropy);
	line(p, plain(), "mean distance %.2f positions", s->distance);
	line(p, plain(), "row max on self %.0f%%", 100 * s->self);
	line(p, plain(), "  previous %.0f%%  next %.0f%%", 100 * s->prev, 100 * s->next);
}

static void prediction_lines(view *v, pen *p)
{
	int q = v->hv.qrow;
	/* A masked model predicts position q with q alone replaced by the mask;
	 * a causal one predicts the character after q. */
	if (v->m->cfg.objective == OBJ_CAUSAL)
		line(p, st(A_BOLD, 0), "Predicted after %d", q);
	else
		line(p, st(A_BOLD, 0), "Predicted at %d (masked)", q);
	if (v->pstate[q] != PRED_HAVE) {
		line(p, plain(), " computing...");
		return;
	}
	for (int i = 0; i < VIEW_TOPK && p->y <= p->ymax; i++, p->y++) {
		int32_t id = v->pids[(size_t)q * VIEW_TOPK + (size_t)i];
		float pr = v->pps[(size_t)q * VIEW_TOPK + (size_t)i];
		if (id < 0 || (uint32_t)id >= v->m->vocab.size)
			break;
		int xx = put_str(p->y, p->x, p->w, plain(), " ");
		put_glyph(p->y, xx, v->m->vocab.cps[id], st(A_BOLD, 0));
		put_fmt(p->y, xx + 3, p->w - 4, plain(), "%5.1f%%", 100 * pr);
	}
}

void panel_draw(view *v)
{
	const map_geom *g = &v->mg;
	if (g->panel_w == 0)
		return;
	pen p = {g->panel_x, g->panel_w, g->heat.tick_y, LINES - 2};
	for (int yy = p.y; yy <= p.ymax; yy++)
		put_str(yy, g->map_w, 1, st(A_DIM, 0), "│");
	if (!v->have)
		return;
	attn_matrix a = view_head(v);
	cell_lines(v, &p, &a);
	p.y++;
	top_key_lines(v, &p, &a);
	p.y++;
	stats_lines(v, &p);
	p.y++;
	prediction_lines(v, &p);
}

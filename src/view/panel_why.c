/* The panel's why page (Alt-L) and patching page (Alt-X): the logit lens
 * at the Query's row and the heads' parts of the logit (lens.h); the
 * pinned text's (or --compare's) head outputs patched into this text and
 * the change of a logit difference (patch.h). Both come from the worker
 * (JOB_WHY, JOB_PATCH). */
#include "panel.h"

#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>

/* The heads' parts of the logit (lens.h) as a grid, a layer per line, a
 * head per two columns: the sign's colour, solid from half the largest
 * part up, a dot below an eighth of it; then the largest parts in numbers. */
static void why_heads(view *v, pen *p)
{
	const int L = nlayers(v), H = nheads(v);
	const int fit = (p->w - 4) / 2 < H ? (p->w - 4) / 2 : H;
	float big = 0;
	for (int k = 0; k < L * H; k++)
		big = fabsf(v->why_heads[k]) > big ? fabsf(v->why_heads[k]) : big;
	if (p->y <= p->ymax)
		for (int h = 0; h < fit; h++)
			put_fmt(p->y, p->x + 4 + 2 * h, 2, st(A_DIM, 0), "%d", h % 10);
	p->y++;
	for (int l = 0; l < L; l++, p->y++) {
		if (p->y > p->ymax)
			continue;
		int x = put_fmt(p->y, p->x, p->w, st(A_DIM, 0), " L%-2d", l);
		for (int h = 0; h < fit; h++, x += 2) {
			float a = v->why_heads[l * H + h], r = big > 0 ? fabsf(a) / big : 0;
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
			if (best[i] < 0 || fabsf(v->why_heads[k]) > fabsf(v->why_heads[best[i]])) {
				for (int j = 2; j > i; j--)
					best[j] = best[j - 1];
				best[i] = k;
				break;
			}
	for (int i = 0; i < 3 && best[i] >= 0; i++)
		pen_line(p, plain(), "  L%dH%d %+.3f", best[i] / H, best[i] % H,
			 v->why_heads[best[i]]);
	double sum = 0;
	for (int k = 0; k < L * H; k++)
		sum += v->why_heads[k];
	pen_line(p, plain(), _("heads %+.3f  rest %+.3f"), sum, v->why_rest);
	pen_line(p, accent(v, A_BOLD), _("= logit %.3f"), v->why_logit);
	pen_wrapped(p, st(A_DIM, 0), _("rest: the embeddings, the MLPs and the biases"));
}

/* Why the model predicts what it does at the Query's row (lens.h): the
 * logit lens after each block, the commitment, the heads' logit parts. */
void why_lines(view *v, pen *p)
{
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
	if (!v->why_valid || v->why_q != q || v->why_seq != v->res_seq) {
		pen_line(p, plain(), _(" computing..."));
		return;
	}
	pen_line(p, st(A_DIM, 0), _("logit lens: read after each block"));
	for (int l = 0; l < nlayers(v); l++, p->y++) {
		if (p->y > p->ymax)
			continue;
		int x = put_fmt(p->y, p->x, p->w, l >= v->why_commit ? st(A_BOLD, 0) : plain(),
				" L%-2d", l);
		for (int k = 0; k < WHY_K && x < p->x + p->w - 8; k++) {
			int32_t id = v->why_lens_id[l * WHY_K + k];
			x += put_glyph(p->y, x, v->m->vocab.cps[id], k ? plain() : st(A_BOLD, 0));
			x = put_fmt(p->y, x, p->w - (x - p->x), st(A_DIM, 0), " %.2f ",
				    (double)v->why_lens_p[l * WHY_K + k]);
		}
	}
	pen_line(p, plain(), _("top-1 from block %d on"), v->why_commit);
	if (p->y <= p->ymax) {
		int x = put_str(p->y, p->x, p->w, st(A_DIM, 0), _("heads' parts of the logit of "));
		put_glyph(p->y, x, v->m->vocab.cps[v->why_id], st(A_BOLD, 0));
	}
	p->y++;
	why_heads(v, p);
}

/* One cell of the patching grid: the sign's colour, solid from half the
 * largest change up, a dot below an eighth of it (as the heads' parts). */
static void patch_cell(view *v, int y, int x, float a, float big)
{
	float r = big > 0 ? fabsf(a) / big : 0;
	style s = ui_style(&v->col, a >= 0 ? UI_POSITIVE : UI_NEGATIVE, r >= 0.5f ? A_BOLD : 0);
	put_str(y, x, 1, r < 0.125f ? st(A_DIM, 0) : s, r < 0.125f ? "·" : r < 0.5f ? "▄" : "█");
}

/* The patching grid (patch.h): a column per head, layer after layer; the
 * first line each head patched at every position (*), then a line per
 * position around the Query row; then the largest changes in numbers. */
static void patch_grid(view *v, pen *p)
{
	const patch_result *r = &v->patch;
	const int LH = r->L * r->H, fit = p->w - 3 < LH ? p->w - 3 : LH;
	float big = 0;
	int best = 0, bestc = 0;
	for (int k = 0; k < LH; k++)
		if (fabsf(r->heads[k]) > fabsf(r->heads[best]))
			best = k;
	for (int k = 0; k < r->n * LH; k++)
		if (fabsf(r->cells[k]) > fabsf(r->cells[bestc]))
			bestc = k;
	big = fmaxf(fabsf(r->heads[best]), fabsf(r->cells[bestc]));
	for (int l = 0; l < r->L && p->y <= p->ymax; l++)
		if (l * r->H < fit)
			put_fmt(p->y, p->x + 3 + l * r->H, r->H, st(A_DIM, 0), "L%d", l);
	p->y++;
	if (p->y <= p->ymax) {
		put_str(p->y, p->x, 3, st(A_BOLD, 0), " * ");
		for (int k = 0; k < fit; k++)
			patch_cell(v, p->y, p->x + 3 + k, r->heads[k], big);
	}
	p->y++;
	/* Positions: as many as fit above the four lines below, the Query's
	 * row among them. */
	int rows = p->ymax - 4 - p->y + 1, t0 = r->pos - rows / 2;
	rows = rows < r->n ? rows : r->n;
	t0 = t0 + rows > r->n ? r->n - rows : t0 < 0 ? 0 : t0;
	for (int t = t0; t < t0 + rows && p->y <= p->ymax; t++, p->y++) {
		style s = t == r->pos ? accent(v, A_BOLD) : plain();
		put_glyph(p->y, p->x + 1, v->r.tokens[t].cp, s);
		for (int k = 0; k < fit; k++)
			patch_cell(v, p->y, p->x + 3 + k, r->cells[(size_t)t * LH + k], big);
	}
	pen_line(p, plain(), _("all positions: L%dH%d %+.3f"), best / r->H, best % r->H,
		 r->heads[best]);
	if (p->y <= p->ymax) {
		const int t = bestc / LH, k = bestc % LH;
		int x = put_fmt(p->y, p->x, p->w, plain(), _("one: L%dH%d at %d "), k / r->H,
				k % r->H, t);
		x += put_glyph(p->y, x, v->r.tokens[t].cp, plain());
		put_fmt(p->y, x, p->w - (x - p->x), plain(), " %+.3f", r->cells[bestc]);
	}
	p->y++;
}

/* The question the page answers, in words, and where its two characters
 * come from. */
static void patch_question(view *v, pen *p, const patch_result *r)
{
	char a[32], b[32], q[256];
	cp_glyph(v->m->vocab.cps[r->target[0]], a);
	cp_glyph(v->m->vocab.cps[r->target[1]], b);
	snprintf(q, sizeof q, _("which heads carry %s rather than %s at row %d"), b, a, r->pos);
	pen_wrapped(p, st(A_BOLD, 0), q);
	pen_wrapped(p, st(A_DIM, 0),
		    r->from == PATCH_DIFFERENCE ? _("(the characters where the texts differ; "
						    "Alt-D chooses others)")
		    : r->from == PATCH_GIVEN
			? _("(chosen: --targets or Alt-D)")
			: _("(each text's top-1: the texts differ in more than one place; Alt-D "
			    "chooses)"));
}

/* Activation patching (Alt-X; patch.h): the pinned text's (or --compare's)
 * head outputs patched into this text, and the change of z_a - z_b at the
 * Query row. */
void patch_lines(view *v, pen *p)
{
	int q = v->hv.qrow, n2;
	bool pinned;
	const void *src = patch_source(v, &n2, &pinned);
	pen_line(p, st(A_BOLD, 0),
		 src && !pinned ? _("patching: --compare → text, row %d")
				: _("patching: the pin → text, row %d"),
		 q);
	if (v->words || !src || n2 != v->r.n) {
		pen_line(p, plain(), _(" pin a text of the same length"));
		pen_line(p, plain(), _(" (F9, characters), then edit it"));
		if (src && pinned)
			pen_line(p, plain(), _(" pinned %d, now %d characters"), n2, v->r.n);
		else if (src)
			pen_line(p, plain(), _(" --compare %d, now %d characters"), n2, v->r.n);
		return;
	}
	if (!v->patch_valid || v->patch_q != q || v->patch_seq != v->res_seq ||
	    v->patch_src != src) {
		pen_line(p, plain(), _(" computing..."));
		return;
	}
	const patch_result *r = &v->patch;
	if (p->y <= p->ymax) {
		int x = put_str(p->y, p->x, p->w, plain(), "D = z(");
		x += put_glyph(p->y, x, v->m->vocab.cps[r->target[0]], st(A_BOLD, 0));
		x = put_str(p->y, x, p->w - (x - p->x), plain(), ") - z(");
		x += put_glyph(p->y, x, v->m->vocab.cps[r->target[1]], st(A_BOLD, 0));
		put_str(p->y, x, p->w - (x - p->x), plain(), ")");
	}
	p->y++;
	patch_question(v, p, r);
	pen_line(p, plain(), _(" %.3f here, %.3f other"), (double)r->diff, (double)r->diff2);
	pen_line(p, st(A_DIM, 0), _("its change with a head patched"));
	patch_grid(v, p);
}

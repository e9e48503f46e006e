/* The panel's breakdown page (F12): the path from q and k to the weight of
 * the cursor cell (explain.h), the largest products first, coloured by
 * sign, then the sum, the scale and the row's softmax, and the largest term
 * of its score by source (score_split.h). The worker reads q and k and
 * splits the score from the text's pass (JOB_BREAKDOWN). */
#include "panel.h"

#include "attnview/i18n.h"

#include <stdio.h>
#include <string.h>

typedef struct bd_state {
	page_job job;
	int layer, head, q, k; /* the cell asked for */
	qk_breakdown bd;
	score_split split; /* with bd: its score by source (nparts 0: none) */
} bd_state;

static bool breakdown_init(view *v, void *state)
{
	av_error err;
	return qk_breakdown_init(&((bd_state *)state)->bd, v->head_dim, &err);
}

static void breakdown_finish(void *state)
{
	bd_state *b = state;
	qk_breakdown_finish(&b->bd);
	score_split_finish(&b->split);
}

/* A model with another head size. */
static void breakdown_model_changed(view *v, void *state)
{
	bd_state *b = state;
	if (v->head_dim == b->bd.hs)
		return;
	qk_breakdown_finish(&b->bd);
	av_error err;
	if (!qk_breakdown_init(&b->bd, v->head_dim, &err))
		set_notice(v, "%s", err.msg);
}

/* The cursor's cell of a head, in characters, unpinned. */
static void breakdown_request(view *v, void *state)
{
	bd_state *b = state;
	int q = v->hv.qrow, k = v->hv.kcol;
	bool cell = view_sel(v) == SEL_HEAD && !v->words && !view_pin(v)->on;
	if (!cell || q >= v->r.n || k >= v->r.n ||
	    (b->job.seq == v->res_seq && b->layer == v->layer && b->head == v->head && b->q == q &&
	     b->k == k && (b->job.valid || b->job.asked)))
		return;
	worker_job j = {.kind = JOB_BREAKDOWN,
			.seq = v->res_seq,
			.layer = v->layer,
			.head = v->head,
			.query = q,
			.key = k};
	worker_post_job(v->w, &j);
	b->job = (page_job){.valid = false, .asked = true, .seq = v->res_seq};
	b->layer = v->layer, b->head = v->head, b->q = q, b->k = k;
}

static void breakdown_take(view *v, void *state, worker_job_result *j)
{
	bd_state *b = state;
	if (j->hs != b->bd.hs || j->job.layer != b->layer || j->job.head != b->head ||
	    j->job.query != b->q || j->job.key != b->k)
		return;
	float row[AV_MAX_CONTEXT];
	attn_score_row(&v->r, j->job.layer, j->job.head, j->job.query, row);
	qk_breakdown_compute(&b->bd, j->job.layer, j->job.head, j->job.query, j->job.key, j->q,
			     j->k, row, v->r.n);
	score_split_finish(&b->split);
	b->split = j->split; /* taken: the job's result lets go of it */
	memset(&j->split, 0, sizeof j->split);
	b->job.valid = true;
	b->job.asked = false;
}

/* A part of the score split (score_split.h) in words: a side's token or
 * position, or where in the earlier blocks it comes from. */
static void split_words(view *v, const split_part *s, int t, bool key, char *out, size_t size)
{
	char g[32];
	switch (s->source) {
	case SPLIT_TOKEN:
		cp_glyph(v->r.tokens[t].cp, g);
		snprintf(out, size, key ? _("key token %s") : _("query token %s"), g);
		break;
	case SPLIT_POSITION:
		snprintf(out, size, key ? _("key position %d") : _("query position %d"), t);
		break;
	case SPLIT_HEAD:
		snprintf(out, size,
			 key ? _("key side: output of L%dH%d, an earlier head")
			     : _("query side: output of L%dH%d, an earlier head"),
			 s->layer, s->head);
		break;
	case SPLIT_PROJ_B:
		snprintf(out, size,
			 key ? _("key side: L%d's projection bias") : _("query side: L%d's projection bias"),
			 s->layer);
		break;
	case SPLIT_MLP:
		snprintf(out, size, key ? _("key side: L%d's MLP") : _("query side: L%d's MLP"),
			 s->layer);
		break;
	default:
		snprintf(out, size, "%s", key ? _("key side: the biases") : _("query side: the biases"));
		break;
	}
}

/* The largest term of the cursor cell's score split, in words. */
static void split_lines(view *v, const bd_state *bs, pen *p)
{
	const score_split *s = &bs->split;
	if (s->nparts == 0 || s->layer != bs->bd.layer || s->head != bs->bd.head ||
	    s->query != bs->bd.query || s->key != bs->bd.key)
		return;
	double share;
	const int best = score_split_largest(s, &share), P = s->nparts;
	const split_part a = split_part_at(v->m, s->layer, best / P);
	const split_part b = split_part_at(v->m, s->layer, best % P);
	char qa[96], kb[96], text[256];
	split_words(v, &a, s->query, false, qa, sizeof qa);
	split_words(v, &b, s->key, true, kb, sizeof kb);
	snprintf(text, sizeof text, _("%.0f%%: %s × %s (%+.3f)"), 100 * share, qa, kb,
		 s->terms[best]);
	pen_line(p, st(A_DIM, 0),
		 ngettext("by source, largest of %d term:", "by source, largest of %d terms:", P * P),
		 P * P);
	pen_wrapped(p, plain(), text);
}

/* The path from q and k to the weight of the cursor cell (explain.h):
 * the largest products first, coloured by sign, then the sum, the scale and
 * the row's softmax. */
static void breakdown_draw(view *v, void *state, pen *p, const heat_src *s)
{
	const bd_state *bs = state;
	int q = v->hv.qrow, k = v->hv.kcol;
	if (view_sel(v) != SEL_HEAD || v->words || view_pin(v)->on) {
		pen_line(p, st(A_BOLD, 0), _("q·k breakdown"));
		pen_line(p, plain(), _(" for one head's cells (Tab to a head)"));
		return;
	}
	if (p->y <= p->ymax) {
		int x = put_fmt(p->y, p->x, p->w, st(A_BOLD, 0), "q·k L%d H%d: ", v->layer, v->head);
		x += put_glyph(p->y, x, s->labels[q].cp, st(A_BOLD, 0));
		x = put_str(p->y, x, p->w - (x - p->x), plain(), " → ");
		put_glyph(p->y, x, s->labels[k].cp, st(A_BOLD, 0));
	}
	p->y++;
	const qk_breakdown *b = &bs->bd;
	if (!bs->job.valid || b->query != q || b->key != k || b->layer != v->layer ||
	    b->head != v->head) {
		pen_line(p, plain(), _(" computing..."));
		return;
	}
	split_lines(v, bs, p);
	pen_line(p, st(A_DIM, 0), _("  dim      q       k     q×k"));
	/* As many products as fit, leaving room for the seven lines after. */
	int room = p->ymax - p->y + 1 - 8, shown = b->hs < room ? b->hs : (room > 0 ? room : 0);
	double rest = b->dot;
	for (int i = 0; i < shown; i++, p->y++) {
		int c = b->order[i];
		rest -= b->prod[c];
		style ps = ui_style(&v->col, b->prod[c] >= 0 ? UI_POSITIVE : UI_NEGATIVE, A_BOLD);
		int x = put_fmt(p->y, p->x, p->w, plain(), "  %3d %7.3f %7.3f ", c, b->q[c], b->k[c]);
		put_fmt(p->y, x, p->w - (x - p->x), ps, "%+7.3f", b->prod[c]);
	}
	if (shown < b->hs)
		pen_line(p, st(A_DIM, 0), _("  %d more dims  %+9.3f"), b->hs - shown, rest);
	if (b->masked) {
		/* The model keeps no score for a hidden key (the dump's is
		 * null): the sum of the products above, and what it would
		 * have been, not "nan". */
		pen_line(p, plain(), _("sum  q·k = %.4f"), b->dot);
		pen_line(p, plain(), "× 1/√%d = %.4f", b->hs, b->dot * b->scale);
		pen_line(p, plain(), _("masked: the key is after the query"));
		return;
	}
	pen_line(p, plain(), _("sum  q·k = %.4f"), b->score);
	pen_line(p, plain(), "× 1/√%d = %.4f", b->hs, b->scaled);
	pen_line(p, plain(), _("− row max %.4f = %.4f"), b->row_max, b->shifted);
	pen_line(p, plain(), _("exp(%.4f) = %.6g"), b->shifted, b->e);
	pen_line(p, plain(), _("÷ Σ exp over the row %.6g"), b->sum_exp);
	pen_line(p, accent(v, A_BOLD), _("= weight %.6f"), b->weight);
}


const panel_page breakdown_page = {
    .name = N_("q·k breakdown"),
    .act = ACT_BREAKDOWN,
    .job = JOB_BREAKDOWN,
    .ablation = true,
    .state_size = sizeof(bd_state),
    .init = breakdown_init,
    .finish = breakdown_finish,
    .request = breakdown_request,
    .take = breakdown_take,
    .model_changed = breakdown_model_changed,
    .draw = breakdown_draw,
};

/* The panel's patching page (Alt-X): the pinned text's (or --compare's)
 * head outputs patched into this text and the change of a logit
 * difference of two characters (patch.h), from the worker (JOB_PATCH). */
#include "panel.h"

#include "attnview/i18n.h"
#include "attnview/vocab.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Patching the pinned text (or --compare's) into this one at row q, for
 * job.seq and the source src (the pin's ids' address, or other's
 * codepoints'). */
typedef struct patch_state {
	page_job job;
	int q;
	const void *src;
	patch_result patch;
	cp_buf other; /* --compare TEXT2, cleaned */
	/* the two characters (--targets, Alt-D), or the default */
	bool has_targets;
	uint32_t targets[2];
} patch_state;

static patch_state *patch_of(const view *v)
{
	return v->pages[PAGE_PATCH];
}

static void patch_finish(void *state)
{
	patch_state *ps = state;
	patch_result_finish(&ps->patch);
	cp_buf_finish(&ps->other);
}

void patch_set_targets(view *v, bool given, const uint32_t targets[2])
{
	patch_state *ps = patch_of(v);
	ps->has_targets = given;
	if (given) {
		ps->targets[0] = targets[0];
		ps->targets[1] = targets[1];
	}
	ps->job.valid = ps->job.asked = false;
}

bool patch_set_compare(view *v, const char *text, av_error *err)
{
	return tokenize_text(text, strlen(text), "--compare", &patch_of(v)->other, NULL, err);
}

/* Patching's other text: the pinned text's ids when a text of characters
 * is pinned, else --compare's codepoints, else NULL; *n its length,
 * *pinned which. */
static const void *patch_source(const view *v, int *n, bool *pinned)
{
	const patch_state *ps = patch_of(v);
	const pin *p = view_pin(v);
	*pinned = p->on && p->ids;
	*n = *pinned ? p->nids : (int)ps->other.n;
	/* --compare's text cut at the context, as the text is. */
	if (!*pinned && *n > (int)v->m->cfg.context)
		*n = (int)v->m->cfg.context;
	return *pinned ? (const void *)p->ids : ps->other.n ? ps->other.v : NULL;
}

/* Patching's two characters for the other text's ids (n): the chosen ones
 * (--targets, Alt-D) where the model knows them, else where the texts
 * differ in one place, else none (the top-1s). */
static void patch_targets_of(view *v, const int32_t *other, int n, int32_t *targets, int *from)
{
	const patch_state *ps = patch_of(v);
	int32_t ids[AV_MAX_CONTEXT];
	for (int i = 0; i < n; i++)
		ids[i] = v->r.tokens[i].id;
	if (ps->has_targets) {
		targets[0] = vocab_id(&v->m->vocab, ps->targets[0]);
		targets[1] = vocab_id(&v->m->vocab, ps->targets[1]);
		if (targets[0] >= TOK_NSPECIAL && targets[1] >= TOK_NSPECIAL) {
			*from = PATCH_GIVEN;
			return;
		}
		set_notice(v, "%s",
			   _("patching: the model does not know a character chosen (Alt-D): the "
			     "default instead"));
	}
	*from = patch_difference_targets(ids, other, n, targets) ? PATCH_DIFFERENCE : PATCH_TOP1;
}

/* The other text into this one, at the Query row, when the two have as
 * many characters. */
static void patch_request(view *v, void *state)
{
	patch_state *ps = state;
	int q = v->hv.qrow, n2;
	bool pinned;
	const void *src = patch_source(v, &n2, &pinned);
	if (v->words || !src || n2 != v->r.n || q >= v->r.n ||
	    (ps->job.seq == v->res_seq && ps->q == q && ps->src == src &&
	     (ps->job.valid || ps->job.asked)))
		return;
	/* 4 kB each: not on the stack; the UI thread's alone. */
	static worker_job j;
	static token other[AV_MAX_CONTEXT]; /* --compare's, in this model's vocabulary */
	j = (worker_job){.kind = JOB_PATCH, .seq = v->res_seq, .query = q, .nother = n2};
	if (pinned) {
		memcpy(j.other, src, (size_t)n2 * sizeof *j.other);
	} else {
		vocab_tokenize(&v->m->vocab, ps->other.v, (size_t)n2, other);
		for (int i = 0; i < n2; i++)
			j.other[i] = other[i].id;
	}
	patch_targets_of(v, j.other, n2, j.targets, &j.from);
	worker_post_job(v->w, &j);
	ps->job = (page_job){.valid = false, .asked = true, .seq = v->res_seq};
	ps->q = q, ps->src = src;
}

static void patch_take(view *v, void *state, worker_job_result *j)
{
	patch_state *ps = state;
	(void)v;
	if (j->job.query != ps->q)
		return;
	patch_result_finish(&ps->patch);
	ps->patch = j->patch; /* taken: the job's result lets go of it */
	memset(&j->patch, 0, sizeof j->patch);
	ps->job.valid = true;
	ps->job.asked = false;
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
static void patch_grid(view *v, const patch_state *ps, pen *p)
{
	const patch_result *r = &ps->patch;
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
static void patch_draw(view *v, void *state, pen *p, const heat_src *s)
{
	const patch_state *ps = state;
	(void)s;
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
	if (!ps->job.valid || ps->q != q || ps->job.seq != v->res_seq || ps->src != src) {
		pen_line(p, plain(), _(" computing..."));
		return;
	}
	const patch_result *r = &ps->patch;
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
	patch_grid(v, ps, p);
}

const panel_page patch_page = {
    .name = N_("patching"),
    .act = ACT_PATCH,
    .job = JOB_PATCH,
    .ablation = true,
    .state_size = sizeof(patch_state),
    .finish = patch_finish,
    .request = patch_request,
    .take = patch_take,
    .draw = patch_draw,
};

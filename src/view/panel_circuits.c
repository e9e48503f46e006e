/* The panel's circuits page (Alt-I): what the map's head does from its
 * weights alone (circuits.h), the same whatever the text: its positional QK
 * profile as a strip around offset 0 with its peak, the OV copying score
 * and largest character maps, its strongest composition with an earlier
 * head of each kind beside the baseline, and the QK table of the most
 * frequent characters that fit. The circuits of all heads
 * come from the worker once per model (JOB_CIRCUITS). */
#include "panel.h"

#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every head's circuits, once per model; NULL until the worker gives them
 * (asked for job.seq). */
typedef struct circ_state {
	page_job job;
	circuits *circ;
} circ_state;

static void circ_forget(circ_state *c)
{
	circuits_finish(c->circ);
	free(c->circ);
	c->circ = NULL;
}

static void circ_finish(void *state)
{
	circ_forget(state);
}

static void circ_model_changed(view *v, void *state)
{
	(void)v;
	circ_forget(state);
}

static void circ_request(view *v, void *state)
{
	circ_state *c = state;
	if (c->circ || (c->job.asked && c->job.seq == v->res_seq))
		return;
	worker_job j = {.kind = JOB_CIRCUITS, .seq = v->res_seq};
	worker_post_job(v->w, &j);
	c->job.asked = true;
	c->job.seq = v->res_seq;
}

static void circ_take(view *v, void *state, worker_job_result *j)
{
	circ_state *c = state;
	(void)v;
	if (!j->circ || c->circ)
		return;
	c->circ = j->circ; /* kept until the model changes */
	j->circ = NULL;
	c->job.asked = false;
}

/* One line at y (if it fits), then the next. */
static int row(int y, int ymax, int x, int w, style s, const char *text)
{
	if (y <= ymax)
		put_str(y, x, w, s, text);
	return y + 1;
}

/* The profile over the offsets that fit in w columns, centred on 0 (a
 * masked model) or ending at 0 (a causal one): an eighth-block per offset
 * from the window's smallest to its largest, the peak in the accent. Under
 * it the window's ends, 0, and ▲ at the peak, or ◀ / ▶ beside the end it
 * lies beyond. Returns the next line; *beyond is set when the peak is off
 * the strip. */
static int profile_strip(view *v, const circuits *c, const circ_head *ch, int x, int w, int y,
			 int ymax, bool *beyond)
{
	static const char *const bars[8] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	const int last = c->offset0 + c->noffsets - 1;
	int half = last > 0 ? (w - 2) / 2 : w - 1; /* a column kept for ▶ */
	if (half > -c->offset0)
		half = -c->offset0;
	const int lo = -half, hi = last > 0 ? (half < last ? half : last) : 0;
	float mn = INFINITY, mx = -INFINITY;
	for (int o = lo; o <= hi; o++) {
		float s = ch->positional[o - c->offset0];
		mn = fminf(mn, s);
		mx = fmaxf(mx, s);
	}
	const int peak =
	    circuits_peak(c, (int)(ch - c->head) / c->heads, (int)(ch - c->head) % c->heads);
	*beyond = peak < lo || peak > hi;
	if (y <= ymax)
		for (int o = lo; o <= hi; o++) {
			float s = ch->positional[o - c->offset0];
			int k = mx > mn ? (int)((s - mn) / (mx - mn) * 7.999f) : 0;
			put_str(y, x + o - lo, 1, o == peak ? accent(v, A_BOLD) : plain(), bars[k]);
		}
	char buf[64];
	snprintf(buf, sizeof buf, "%-+4d", lo);
	if (++y <= ymax) {
		put_str(y, x, w, st(A_DIM, 0), buf);
		put_str(y, x + (0 - lo), 1, st(A_DIM, 0), "0");
		snprintf(buf, sizeof buf, "%+d", hi);
		if (hi > 0)
			put_str(y, x + hi - lo - (int)strlen(buf) + 1, w, st(A_DIM, 0), buf);
		if (!*beyond)
			put_str(y, x + peak - lo, 1, accent(v, A_BOLD), "▲");
		else if (peak < lo)
			put_str(y - 1, x - 1, 1, accent(v, A_BOLD), "◀");
		else
			put_str(y - 1, x + hi - lo + 1, 1, accent(v, A_BOLD), "▶");
	}
	return y + 1;
}

/* "Q L0H3 0.23" for the largest score of one kind, or nothing in block 0. */
static void comp_best(const circuits *c, const float *s, int l, char *buf, size_t size,
		      const char *kind)
{
	int best = 0;
	for (int k = 1; k < l * c->heads; k++)
		if (s[k] > s[best])
			best = k;
	snprintf(buf, size, " %s L%dH%d %.2f", kind, best / c->heads, best % c->heads,
		 (double)s[best]);
}

/* The maps of the OV circuit: "a→b" for the three largest. */
static int maps_line(view *v, const circ_head *ch, int x, int w, int y, int ymax)
{
	if (y > ymax)
		return y + 1;
	int xx = x + 1;
	for (int i = 0; i < ch->nmaps && i < 3 && xx < x + w - 6; i++) {
		xx += put_glyph(y, xx, v->m->vocab.cps[ch->maps[i].from], st(A_BOLD, 0));
		xx = put_str(y, xx, 1, plain(), "→");
		xx += put_glyph(y, xx, v->m->vocab.cps[ch->maps[i].to], st(A_BOLD, 0));
		xx = put_str(y, xx, 2, plain(), "  ");
	}
	return y + 1;
}

/* The QK table of the most frequent characters that fit (rows, the
 * query; columns, the key; two cells each): the sign's colour, solid from
 * half the table's largest magnitude up, half from an eighth. */
static void qk_lines(view *v, const circuits *c, const circ_head *ch, int x, int w, int y, int ymax)
{
	int N = c->nqk < (w - 3) / 2 ? c->nqk : (w - 3) / 2;
	if (N > ymax - y - 2)
		N = ymax - y - 2;
	if (N < 2)
		return;
	float big = 0;
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			big = fmaxf(big, fabsf(ch->qk[a][b]));
	y = row(y, ymax, x, w, st(A_DIM, 0), _("QK, most frequent characters"));
	if (y <= ymax)
		sign_key(v, y, x, w, _("prefers"), _("avoids"));
	y++;
	for (int b = 0; b < N; b++)
		put_glyph(y, x + 3 + 2 * b, v->m->vocab.cps[c->qk_ids[b]], st(A_DIM, 0));
	for (int a = 0; a < N; a++) {
		put_glyph(++y, x + 1, v->m->vocab.cps[c->qk_ids[a]], st(A_DIM, 0));
		for (int b = 0; b < N; b++) {
			const float q = ch->qk[a][b], r = big > 0 ? fabsf(q) / big : 0;
			style s = ui_style(&v->col, q >= 0 ? UI_POSITIVE : UI_NEGATIVE,
					   r >= 0.5f ? A_BOLD : 0);
			put_str(y, x + 3 + 2 * b, 2, r < 0.125f ? st(A_DIM, 0) : s,
				r < 0.125f ? "· "
				: r < 0.5f ? "▄▄"
					   : "██");
		}
	}
}

static void circ_draw(view *v, void *state, pen *p, const heat_src *s)
{
	const int x = p->x, w = p->w, ymax = p->ymax;
	int y = p->y;
	char buf[128];
	(void)s;
	const int l = v->layer, h = v->head;
	if (view_sel(v) != SEL_HEAD) {
		y = row(y, ymax, x, w, st(A_BOLD, 0), _("circuits, weights alone"));
		row(y, ymax, x, w, plain(), _(" for one head (Tab to a head)"));
		return;
	}
	snprintf(buf, sizeof buf, _("circuits: L%dH%d, weights alone"), l, h);
	y = row(y, ymax, x, w, st(A_BOLD, 0), buf);
	const circuits *c = ((const circ_state *)state)->circ;
	if (!c || l < 0 || l >= c->layers || h < 0 || h >= c->heads) {
		row(y, ymax, x, w, plain(), _(" computing..."));
		return;
	}
	const circ_head *ch = &c->head[l * c->heads + h];
	y = row(y, ymax, x, w, st(A_DIM, 0), _("positional QK by offset"));
	y = row(y, ymax, x, w, st(A_DIM, 0), _(" a query's preference by distance"));
	bool beyond;
	y = profile_strip(v, c, ch, x + 1, w - 1, y, ymax, &beyond);
	/* Beyond the strip, its tallest bars are not the peak: said. */
	if (beyond)
		snprintf(buf, sizeof buf, _("peak at offset %+d, beyond the strip"),
			 circuits_peak(c, l, h));
	else
		snprintf(buf, sizeof buf, _("peak at offset %+d"), circuits_peak(c, l, h));
	pen pp = {x + 1, w - 1, y, ymax};
	pen_wrapped(&pp, plain(), buf);
	y = pp.y;
	y++;
	snprintf(buf, sizeof buf, _("OV copying %+.2f"), (double)ch->ov_copying);
	y = row(y, ymax, x, w, ch->ov_copying > 0.5f ? accent(v, A_BOLD) : plain(), buf);
	y = maps_line(v, ch, x, w, y, ymax);
	y++;
	snprintf(buf, sizeof buf, _("composition (baseline %.2f)"), (double)c->baseline);
	y = row(y, ymax, x, w, st(A_DIM, 0), buf);
	if (l == 0) {
		y = row(y, ymax, x, w, plain(), _(" none: block 0 reads no head"));
	} else {
		const float *kinds[3] = {ch->comp_q, ch->comp_k, ch->comp_v};
		for (int k = 0; k < 3; k++) {
			comp_best(c, kinds[k], l, buf, sizeof buf,
				  (const char *[]){"Q", "K", "V"}[k]);
			y = row(y, ymax, x, w, plain(), buf);
		}
	}
	qk_lines(v, c, ch, x, w, y + 1, ymax);
}

const panel_page circuits_page = {
    .name = N_("circuits"),
    .act = ACT_CIRCUITS,
    .job = JOB_CIRCUITS,
    .per_model = true,
    .state_size = sizeof(circ_state),
    .finish = circ_finish,
    .request = circ_request,
    .take = circ_take,
    .model_changed = circ_model_changed,
    .draw = circ_draw,
};

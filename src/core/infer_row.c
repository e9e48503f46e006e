/* Typing at the end of a causal text: one row through every layer, on two
 * threads (infer_internal.h, infer_row_team).
 *
 * The row's products are matrix-vector products that read every weight
 * once: 19 MB for the 6-layer, d=256 model, and the keys and values of
 * every row before it, 6 MB more. Just after a full pass (an edit earlier in
 * the text) none of it is in the caches, and one core reads it at the speed
 * one core draws from memory. Two cores draw more: each computes half of
 * every product's outputs (half of the weight rows) and half of the heads.
 * The products wait for one another (the attention needs every query, the
 * LayerNorm every column), five times a layer; a pool wake-up each time
 * costs more than the half it shares (measured: 24 wake-ups a key made it
 * slower), so the two threads are woken once and wait for each other on a
 * spin barrier between the phases.
 *
 * The same bits as one thread: every output is the same call's dot product
 * over the same inputs (the halves are cut at a multiple of 16 outputs, so
 * OpenBLAS's kernels take each output in the same group as a whole call
 * would), the LayerNorm of the row is computed by both threads alike, and
 * element-wise steps (the bias, the residual, GELU) do not care where a
 * range starts. tests/unit/test_infer.c compares the two to the bit. */
#include "infer_internal.h"

#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>

/* The team's shared state; every thread has its own copy of the pass. */
typedef struct row_team {
	const layer_pass *lp;
	infer_cache *c;
	float *att, *scores;
	int *done;
	infer_stale_fn stale;
	void *stale_ctx;
	atomic_int arrived, phase;
	atomic_bool quit;
	float *spare; /* member 1's LayerNorm of the row: d + 2 floats */
} row_team;

/* Both members here before either goes on. */
static void team_wait(row_team *t, int *phase)
{
	int ph = *phase;
	if (atomic_fetch_add(&t->arrived, 1) == 1) {
		atomic_store(&t->arrived, 0);
		atomic_store(&t->phase, ph + 1);
	} else {
		/* Spin: the other member is a few microseconds away; yield
		 * when it is not running (the machine is busy). */
		for (unsigned k = 1; atomic_load(&t->phase) == ph; k++)
			if (!(k & 1023))
				sched_yield();
	}
	*phase = ph + 1;
}

/* Member s's outputs [*o0, *o1) of a product with n outputs. */
static void half(int n, int s, int *o0, int *o1)
{
	int cut = n / 2 & ~15;
	*o0 = s ? cut : 0;
	*o1 = s ? n : cut;
}

static const float *at(const float *bias, int o)
{
	return bias ? bias + o : NULL;
}

/* Outputs [o0, o1) of out = in . w^T + bias, w (n, C). */
static void part_product(float *out, const float *in, const float *w, const float *bias, int C,
			 int o0, int o1)
{
	if (o1 > o0)
		matmul_forward(out + o0, in, w + (size_t)o0 * (size_t)C, at(bias, o0), 1, C,
			       o1 - o0);
}

/* The row's LayerNorm: member 0 into the work space, member 1 into its
 * spare (the same bits); returns the row. */
static const float *row_norm(const row_team *t, int s, float *out, float *mean, float *rstd,
			     const float *x, const float *w, const float *b, int d)
{
	if (s) {
		out = t->spare;
		mean = t->spare + d;
		rstd = t->spare + d + 1;
	}
	layernorm_forward(out, mean, rstd, x, w, b, 1, d);
	return out;
}

static void member(void *ctx, int s, int end)
{
	(void)end;
	row_team *t = ctx;
	layer_pass lp = *t->lp;
	const model *m = lp.m;
	const int d = lp.d, i = lp.p;
	const size_t D = (size_t)d, I = (size_t)i;
	float *S = lp.work + (size_t)s * INFER_ATT_BLOCK * (size_t)lp.n;
	int phase = 0, o0, o1;
	for (int l = 0; l < (int)m->cfg.layers; l++) {
		/* Member 0 asks whether to give up (the worker's stale() may take
		 * its lock a moment) while member 1 waits at the first barrier. */
		if (s == 0) {
			if (t->done)
				*t->done = l;
			if (t->stale && t->stale(t->stale_ctx))
				atomic_store(&t->quit, true);
		}
		infer_layer_setup(&lp, t->c, t->att, t->scores, l);
		const layer_params *p = &m->p.layer[l];
		layer_acts *la = &lp.a->layer[l];
		const float *x = lp.x + I * D;
		/* ln1 and the QKV product */
		const float *ln = row_norm(t, s, la->ln1 + I * D, la->ln1_mean + i,
					   la->ln1_rstd + i, x, p->ln1_w, p->ln1_b, d);
		half(3 * d, s, &o0, &o1);
		part_product(la->qkv + I * 3 * D, ln, p->qkv_w, p->qkv_b, d, o0, o1);
		team_wait(t, &phase);
		if (atomic_load(&t->quit))
			return;
		if (s == 0 && lp.qk)
			memcpy(lp.qk + I * 2 * D, la->qkv + I * 3 * D, 2 * D * sizeof *lp.qk);
		/* the heads, one in two */
		for (int h = s; h < lp.H; h += 2)
			infer_attend_block(&lp, S, h, i, i + 1);
		team_wait(t, &phase);
		/* x + proj(y), the columns of its outputs */
		float *scr = lp.a->scratch + I * D;
		half(d, s, &o0, &o1);
		part_product(scr, la->atty + I * D, p->proj_w, p->proj_b, d, o0, o1);
		residual_forward(la->res2 + I * D + o0, x + o0, scr + o0, o1 - o0);
		team_wait(t, &phase);
		/* ln2, the first feed-forward product and GELU */
		ln = row_norm(t, s, la->ln2 + I * D, la->ln2_mean + i, la->ln2_rstd + i,
			      la->res2 + I * D, p->ln2_w, p->ln2_b, d);
		half(4 * d, s, &o0, &o1);
		float *fch = la->fch + I * 4 * D, *gelu = la->fch_gelu + I * 4 * D;
		part_product(fch, ln, p->fc_w, p->fc_b, d, o0, o1);
		model_gelu(m, gelu + o0, fch + o0, o1 - o0);
		team_wait(t, &phase);
		/* x + fc2(...) */
		half(d, s, &o0, &o1);
		part_product(scr, gelu, p->fc2_w, p->fc2_b, 4 * d, o0, o1);
		residual_forward(la->res3 + I * D + o0, la->res2 + I * D + o0, scr + o0, o1 - o0);
		team_wait(t, &phase);
	}
}

bool infer_row_team(layer_pass *lp, infer_cache *c, float *att, float *scores, int *done,
		    infer_stale_fn stale, void *stale_ctx, bool *ran)
{
	const double d = lp->d, flops = 24 * d * d * lp->m->cfg.layers;
	if (flops < 2 * FLOPS_PER_THREAD || lp->d < 32)
		return false;
	float spare[AV_MAX_DIM + 2];
	row_team t = {.lp = lp,
		      .c = c,
		      .att = att,
		      .scores = scores,
		      .done = done,
		      .stale = stale,
		      .stale_ctx = stale_ctx,
		      .spare = spare};
	atomic_init(&t.arrived, 0);
	atomic_init(&t.phase, 0);
	atomic_init(&t.quit, false);
	if (!parallel_team(2, member, &t))
		return false;
	*ran = !atomic_load(&t.quit);
	if (c)
		c->teamed = true;
	return true;
}

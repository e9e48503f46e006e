/* The training step (train_step.h): forward, loss and backward of a batch
 * with the ops of ops.h and backward.h, spread over the threads, and the
 * evaluation loss. Two things make it more than the ops in a row: the last
 * block runs at the target rows only ("training forward and backward"), and
 * the batch is cut into slices of whole sequences that run on their own
 * threads ("the step over the threads"). The last block is in last_block.c. */
#include "attnview/train_step.h"
#include "attnview/i18n.h"

#include "attnview/backward.h"
#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SLICES PARALLEL_MAX_THREADS

/* ---- gradients of the activations ----------------------------------------- */

/* Slices a step of B sequences runs in: one per thread, at most one per
 * sequence. */
static int step_slices(int B)
{
	int nt = parallel_threads();
	if (nt > B)
		nt = B;
	return nt < MAX_SLICES ? nt : MAX_SLICES;
}

/* Zeroed weight-gradient copies for slices 1..nt-1 (slice 0 adds into the
 * caller's gradients). They stay zero between steps (sum_range clears them). */
static bool reserve_slice_grads(grad_acts *g, int nt, size_t np, av_error *err)
{
	size_t need = nt > 1 ? (size_t)(nt - 1) * np : 0;
	if (g->slice_grads_n >= need)
		return true;
	float *p = av_alloc_large(need * sizeof(float), true);
	if (!p)
		return av_fail_errno(
		    err, ENOMEM,
		    _("cannot allocate %zu MB for the weight gradients of %d threads "
		      "(%zu parameters each); use fewer --threads"),
		    need * sizeof(float) / (1024 * 1024), nt, np);
	free(g->slice_grads);
	g->slice_grads = p;
	g->slice_grads_n = need;
	return true;
}

bool grad_acts_init(grad_acts *g, const model_config *cfg, int B, int T, av_error *err)
{
	memset(g, 0, sizeof(*g));
	size_t N = (size_t)B * T, C = cfg->dim, NH = cfg->heads;
	/* dresidual, dln, datty, lnf_rows, dlnf_rows, ln1_rows, qrows, dqrows,
	 * dres_rows: N*C each; dqkv 3NC; dfch 4NC; datt (the attention work) B*NH*T*T; rows,
	 * N int32, batch_start and seq_row0 B+1 each. */
	size_t nf = N * C * 9 + N * C * 3 + N * C * 4 + (size_t)B * NH * T * T;
	size_t total = nf + N + 2 * ((size_t)B + 1);
	g->mem = av_alloc_large(total * sizeof(float), false);
	if (!g->mem)
		return av_fail_errno(
		    err, ENOMEM,
		    _("cannot allocate %zu MB for the gradients of a batch of %d x %d "
		      "tokens; use a smaller --batch or --context"),
		    total * sizeof(float) / (1024 * 1024), B, T);
	g->B = B;
	g->T = T;
	g->max_rows = (int)N;
	g->nfloats = nf;
	float *p = g->mem;
	g->dresidual = p, p += N * C;
	g->dln = p, p += N * C;
	g->datty = p, p += N * C;
	g->lnf_rows = p, p += N * C;
	g->dlnf_rows = p, p += N * C;
	g->ln1_rows = p, p += N * C;
	g->qrows = p, p += N * C;
	g->dqrows = p, p += N * C;
	g->dres_rows = p, p += N * C;
	g->dqkv = p, p += 3 * N * C;
	g->dfch = p, p += 4 * N * C;
	g->datt = p, p += (size_t)B * NH * T * T;
	/* The scores' gradient is computed in place over datt; dgelu in place
	 * over dfch; dlogits in place over the activations' logits. */
	g->dpreatt = g->datt;
	g->dfch_gelu = g->dfch;
	g->dlogits = NULL;
	g->rows = (int32_t *)p;
	g->batch_start = g->rows + N;
	g->seq_row0 = g->batch_start + B + 1;
	if (!reserve_slice_grads(g, step_slices(B), model_num_params(cfg), err)) {
		grad_acts_finish(g);
		return false;
	}
	return true;
}

void grad_acts_finish(grad_acts *g)
{
	free(g->mem);
	free(g->slice_grads);
	memset(g, 0, sizeof(*g));
}

/* ---- the evaluation loss -------------------------------------------------- */

/* Copy the final-LayerNorm rows that carry a target into rows_out (nrows, C);
 * rows (may be NULL) gets their indices. Returns nrows. */
static int gather_target_rows(float *rows_out, int32_t *rows, const float *lnf,
			      const int32_t *targets, int N, int C, int V, int max_rows)
{
	int n = 0;
	for (int i = 0; i < N && n < max_rows; i++) {
		if (targets[i] < 0 || targets[i] >= V)
			continue;
		memcpy(rows_out + (size_t)n * C, lnf + (size_t)i * C, (size_t)C * sizeof(float));
		if (rows)
			rows[n] = i;
		n++;
	}
	return n;
}

float model_eval_loss(const model *m, activations *a, const int32_t *tokens, const int32_t *targets,
		      int B, int T, int *ncount, int *ncorrect)
{
	int N = B * T, C = (int)m->cfg.dim, V = (int)m->cfg.vocab_size;
	model_forward(m, a, tokens, B, T);
	/* scratch is (B,T,4d): room for every row of lnf. */
	int nrows = gather_target_rows(a->scratch, NULL, a->lnf, targets, N, C, V, a->max_rows);
	if (ncount)
		*ncount = nrows;
	if (ncorrect)
		*ncorrect = 0;
	if (nrows == 0)
		return NAN;
	matmul_forward(a->logits, a->scratch, m->p.wte, m->p.out_b, nrows, C, V);
	double loss = crossentropy_rows(a->logits, targets, N, nrows, V, 0.0f, ncorrect);
	return (float)(loss / nrows);
}

/* ---- training forward and backward ----------------------------------------
 *
 * The blocks before the last as model_forward runs them, the last at the
 * target rows only (last_block.c has the why and the layout), the output
 * projection and the loss at those rows, then the backward in reverse. */

/* Blocks [0, L-1) as model_forward computes them; returns the last block's
 * input. */
static const float *forward_body(const model *m, activations *a, const int32_t *tokens, int B,
				 int T)
{
	embed_forward(a->encoded, tokens, m->p.wte, m->pe, m->emb_scale, B, T, (int)m->cfg.dim);
	const float *x = a->encoded;
	for (int l = 0; l + 1 < (int)m->cfg.layers; l++)
		x = model_block_forward(m, a, l, x, B, T);
	return x;
}

/* Logits at the target rows (one (R, C) x (C, V) product), the loss and
 * their backward down to dlnf_rows, the gradient of the final LayerNorm's
 * output. Returns the summed loss of the R rows. */
static double output_loss_backward(const model *m, activations *a, grad_acts *g, model_params *gp,
				   const int32_t *targets, int R, float dscale, int *ncorrect)
{
	const int C = (int)m->cfg.dim, V = (int)m->cfg.vocab_size;
	matmul_forward(a->logits, g->lnf_rows, m->p.wte, NULL, R, C, V);
	/* The loss is the mean over rows: each row's gradient carries dscale,
	 * 1 / the batch's target count. */
	double loss = 0.0;
	int correct = 0;
	for (int r = 0; r < R; r++) {
		/* The output bias is added, and its gradient taken, inside the
		 * loss's passes over each row: two passes over (R,V) fewer. */
		int y = targets[g->rows[r]], arg;
		loss += crossentropy_row(a->logits + (size_t)r * V, V, y, dscale, m->p.out_b,
					 gp->out_b, &arg);
		correct += arg == y;
	}
	*ncorrect = correct;
	/* Tied output projection: wte gets dlogits^T lnf here and the embedding's
	 * gradient at the end. */
	matmul_backward_write(g->dlnf_rows, gp->wte, NULL, a->logits, V, g->lnf_rows, m->p.wte, R,
			      C, V);
	return loss;
}

/* The other blocks, last first, then the embedding. dresidual holds dL/dx
 * for the block's output; each residual branch adds its input gradient into
 * it, which turns it into dL/dx for the block's input. */
static void body_backward(const model *m, activations *a, grad_acts *g, model_params *gp,
			  const int32_t *tokens, int B, int T)
{
	const model_config *cfg = &m->cfg;
	const int C = (int)cfg->dim, NH = (int)cfg->heads, N = B * T, L = (int)cfg->layers;
	const bool causal = cfg->objective == OBJ_CAUSAL;
	for (int l = L - 2; l >= 0; l--) {
		const layer_params *lp = &m->p.layer[l];
		layer_params *lg = &gp->layer[l];
		const layer_acts *la = &a->layer[l];
		const float *xin = l > 0 ? a->layer[l - 1].res3 : a->encoded;

		matmul_backward_write(g->dfch, lg->fc2_w, lg->fc2_b, g->dresidual, C, la->fch_gelu,
				      lp->fc2_w, N, 4 * C, C);
		gelu_backward_saved(g->dfch, la->fch, (long)N * 4 * C);
		matmul_backward_write(g->dln, lg->fc_w, lg->fc_b, g->dfch, 4 * C, la->ln2, lp->fc_w,
				      N, C, 4 * C);
		layernorm_backward(g->dresidual, lg->ln2_w, lg->ln2_b, g->dln, la->res2, lp->ln2_w,
				   la->ln2_mean, la->ln2_rstd, N, C);

		matmul_backward_write(g->datty, lg->proj_w, lg->proj_b, g->dresidual, C, la->atty,
				      lp->proj_w, N, C, C);
		attention_backward_write(g->dqkv, g->datt, g->datty, la->qkv, la->att, B, T, C, NH,
					 causal, g->sharpen_row);
		matmul_backward_write(g->dln, lg->qkv_w, lg->qkv_b, g->dqkv, 3 * C, la->ln1,
				      lp->qkv_w, N, C, 3 * C);
		layernorm_backward(g->dresidual, lg->ln1_w, lg->ln1_b, g->dln, xin, lp->ln1_w,
				   la->ln1_mean, la->ln1_rstd, N, C);
	}
	embed_backward(gp->wte, g->dresidual, tokens, B, T, C);
}

/* Forward, loss and backward of one slice of a batch: B sequences with R
 * target rows, rows and batch_start already filled (relative to the slice),
 * gradients accumulated into grads. dscale is 1 / the batch's target count.
 * Returns the slice's summed loss. */
static double train_slice(const model *m, activations *a, grad_acts *g, const int32_t *tokens,
			  const int32_t *targets, int B, int T, int R, float dscale, float *grads,
			  int *ncorrect)
{
	model_params gp;
	model_params_map(&gp, grads, &m->cfg);
	const float *xlast = forward_body(m, a, tokens, B, T);
	last_block_forward(m, a, g, xlast, B, T, R);
	double loss = output_loss_backward(m, a, g, &gp, targets, R, dscale, ncorrect);
	last_block_backward(m, a, g, &gp, xlast, B, T, R);
	body_backward(m, a, g, &gp, tokens, B, T);
	return loss;
}

/* ---- the step over the threads ------------------------------------------
 *
 * Sequences are independent until the loss, and the loss is a sum over rows:
 * a batch splits into slices of whole sequences, each run forward, through
 * the loss and backward on one thread with single-threaded BLAS, with no
 * synchronisation in between (one fork and one join per step instead of one
 * per op, every op of a slice on one core's cache, and no serial element-wise
 * work between threaded products). Only the weight gradients are shared:
 * slice 0 accumulates into grads, slice s > 0 into a private zeroed copy,
 * added into grads afterwards in slice order. Within a slice, groups of a
 * few sequences (step_group) run one after the other, each accumulating into
 * the slice's gradients. The split depends only on the batch (its shape
 * and where its targets are), the thread count and the group size, so a step
 * is reproducible for a given thread count (as it was when OpenBLAS's thread
 * count changed the rounding of the products).
 *
 * Each slice works in its own region of the activations: the rows of its
 * sequences, its own target rows of the compact arrays (rows r0..r1-1), and
 * the (NH,T,T) blocks of its sequences for the attention weights, in which
 * the last block keeps its (NH,R_s,T) layout; each of its groups uses the
 * start of that region. rows[] and batch_start[] are relative to the group
 * (row b0*T and target row seq_row0[b0] of its first sequence b0). */

typedef struct slice {
	int b0, b1, r0, r1, ngroups;
	double loss;
	int correct;
} slice;

typedef struct step_ctx {
	const model *m;
	const activations *a;
	const grad_acts *g;
	const int32_t *tokens, *targets;
	float *grads, *priv;
	int T, R, group;
	slice sl[MAX_SLICES];
} step_ctx;

/* Sequences per group: about GROUP_ROWS token rows (at least one sequence).
 * A slice runs its sequences group by group, each forward, through the loss
 * and backward, all in the slice's first rows: at the reference
 * configuration a group's activations (attention weights included) stay in
 * the caches between its forward and its backward instead of streaming the
 * whole slice's through memory. Measured at d=64 h=4 L=2 T=128 B=32 on 2
 * threads (bench_train, medians of 30 steps, three alternating runs): groups
 * of 16 (one per slice) 27.0 ms, 4 26.0-26.4 ms, 2 25.4-26.3 ms, 1 26.1-28.3
 * ms; below ~256 rows the products get too small. */
#define GROUP_ROWS 512

static int g_group_rows = GROUP_ROWS;

void train_step_set_group_rows(int rows)
{
	g_group_rows = rows > 0 ? rows : GROUP_ROWS;
}

static int step_group(int T)
{
	return T >= g_group_rows ? 1 : g_group_rows / T;
}

/* First sequence of group k of a slice: the slice's sequences spread evenly
 * over its groups (17 sequences in groups of at most 4: 3, 3, 4, 3, 4, not
 * four of 4 and one of 1, whose products would be too small to run well). */
static int group_start(const slice *sl, int k)
{
	return sl->b0 + (int)((long)(sl->b1 - sl->b0) * k / sl->ngroups);
}

static void acts_view(activations *v, const activations *a, const model_config *c, size_t b0,
		      size_t r0, size_t T)
{
	const size_t d = c->dim, n0 = b0 * T, att0 = b0 * c->heads * T * T;
	*v = *a;
	v->encoded = a->encoded + n0 * d;
	for (uint32_t l = 0; l < c->layers; l++) {
		const layer_acts *s = &a->layer[l];
		layer_acts *t = &v->layer[l];
		/* The last block holds target rows after Q|K|V. */
		size_t k = l + 1 < c->layers ? n0 : r0;
		t->ln1 = s->ln1 + n0 * d;
		t->ln1_mean = s->ln1_mean + n0;
		t->ln1_rstd = s->ln1_rstd + n0;
		t->qkv = s->qkv + n0 * 3 * d;
		t->preatt = NULL; /* the step never reads the raw scores */
		t->att = s->att + att0;
		t->atty = s->atty + k * d;
		t->res2 = s->res2 + k * d;
		t->ln2 = s->ln2 + k * d;
		t->ln2_mean = s->ln2_mean + k;
		t->ln2_rstd = s->ln2_rstd + k;
		t->fch = s->fch + k * 4 * d;
		t->fch_gelu = s->fch_gelu + k * 4 * d;
		t->res3 = s->res3 + k * d;
	}
	v->lnf = a->lnf + n0 * d;
	v->lnf_mean = a->lnf_mean + r0;
	v->lnf_rstd = a->lnf_rstd + r0;
	v->logits = a->logits + r0 * c->vocab_size;
	v->scratch = a->scratch + n0 * 4 * d;
}

static void grads_view(grad_acts *v, const grad_acts *g, const model_config *c, size_t b0,
		       size_t r0, size_t T)
{
	const size_t C = c->dim, n0 = b0 * T;
	*v = *g;
	v->dresidual = g->dresidual + n0 * C;
	v->dln = g->dln + n0 * C;
	v->datty = g->datty + n0 * C;
	v->dqkv = g->dqkv + n0 * 3 * C;
	v->dfch = g->dfch + n0 * 4 * C;
	v->datt = g->datt + b0 * c->heads * T * T;
	v->dpreatt = v->datt;
	v->dfch_gelu = v->dfch;
	v->lnf_rows = g->lnf_rows + r0 * C;
	v->dlnf_rows = g->dlnf_rows + r0 * C;
	v->ln1_rows = g->ln1_rows + r0 * C;
	v->qrows = g->qrows + r0 * C;
	v->dqrows = g->dqrows + r0 * C;
	v->dres_rows = g->dres_rows + r0 * C;
	v->rows = g->rows + r0;
	v->batch_start = g->batch_start + b0;
}

static void step_range(void *p, int begin, int end)
{
	step_ctx *x = p;
	const model_config *c = &x->m->cfg;
	const size_t np = x->m->nparams;
	for (int s = begin; s < end; s++) {
		slice *sl = &x->sl[s];
		/* The copies are zero here: zeroed when allocated, and by sum_range
		 * as it adds them in. */
		float *gr = s == 0 ? x->grads : x->priv + (size_t)(s - 1) * np;
		sl->loss = 0.0;
		sl->correct = 0;
		/* Every group of the slice works in the slice's first rows, so
		 * its activations are still in cache for its backward. */
		activations av;
		grad_acts gv;
		acts_view(&av, x->a, c, (size_t)sl->b0, (size_t)sl->r0, (size_t)x->T);
		grads_view(&gv, x->g, c, (size_t)sl->b0, (size_t)sl->r0, (size_t)x->T);
		for (int k = 0; k < sl->ngroups; k++) {
			int b0 = group_start(sl, k), b1 = group_start(sl, k + 1);
			int r0 = x->g->seq_row0[b0], r1 = x->g->seq_row0[b1];
			if (r1 == r0) /* no target: no loss, no gradient */
				continue;
			gv.rows = x->g->rows + r0;
			gv.batch_start = x->g->batch_start + b0;
			size_t n0 = (size_t)b0 * x->T;
			int correct = 0;
			sl->loss +=
			    train_slice(x->m, &av, &gv, x->tokens + n0, x->targets + n0, b1 - b0,
					x->T, r1 - r0, 1.0f / (float)x->R, gr, &correct);
			sl->correct += correct;
		}
	}
}

typedef struct sum_ctx {
	float *dst, *src;
	size_t n;
	int nsrc;
} sum_ctx;

#define SUM_CHUNK 16384

/* dst += src[0] + src[1] + ..., left to right, per element; the sources are
 * left zeroed for the next step (here, in parallel and while in cache, rather
 * than at the start of each slice). */
static void sum_range(void *p, int begin, int end)
{
	const sum_ctx *x = p;
	size_t lo = (size_t)begin * SUM_CHUNK, hi = (size_t)end * SUM_CHUNK;
	if (hi > x->n)
		hi = x->n;
	for (int s = 0; s < x->nsrc; s++) {
		float *src = x->src + (size_t)s * x->n;
		for (size_t i = lo; i < hi; i++)
			x->dst[i] += src[i];
		memset(src + lo, 0, (hi - lo) * sizeof(float));
	}
}

/* Slices of contiguous sequences with about the same work: a sequence costs
 * its rows through the blocks (in the last, keys and values) plus each of its
 * target rows through the rest of the last block and the output projection
 * (the products' FLOPs, as bench_train counts them). An even split by
 * sequences left one thread idle for 5% of a reference step (targets 296 vs
 * 337). Uses seq_row0 for each sequence's target count. */
static void plan_slices(step_ctx *x, grad_acts *g, const int32_t *targets, int B, int T, int nt)
{
	const model_config *c = &x->m->cfg;
	const int V = (int)c->vocab_size;
	const double d = (double)c->dim, Td = (double)T;
	const double f_seq =
	    ((double)c->layers - 1.0) * (24.0 * Td * d * d + 4.0 * Td * Td * d) + 4.0 * Td * d * d;
	const double f_row = 4.0 * Td * d + 20.0 * d * d + 2.0 * d * (double)V;
	double total = 0.0;
	for (int b = 0; b < B; b++) {
		int n = 0;
		for (int i = b * T; i < (b + 1) * T; i++)
			n += targets[i] >= 0 && targets[i] < V;
		g->seq_row0[b] = n; /* for now, the count */
		total += f_seq + n * f_row;
	}
	double cum = 0.0;
	for (int s = 0, b = 0; s < nt; s++) {
		slice *sl = &x->sl[s];
		sl->b0 = b;
		double goal = total * (s + 1) / nt;
		while (b < B - (nt - 1 - s)) {
			double cost = f_seq + g->seq_row0[b] * f_row;
			if (b > sl->b0 && cum + cost / 2 > goal)
				break;
			cum += cost;
			b++;
		}
		sl->b1 = s + 1 < nt ? b : B;
	}
}

/* The target rows, ascending, relative to their group; each slice's groups.
 * Returns the batch's target count, R. */
static int assign_target_rows(step_ctx *x, grad_acts *g, const int32_t *targets, int B, int T,
			      int nt, int max_rows)
{
	const int V = (int)x->m->cfg.vocab_size;
	x->group = step_group(T);
	int R = 0;
	for (int s = 0; s < nt; s++) {
		slice *sl = &x->sl[s];
		sl->r0 = R;
		int n = sl->b1 - sl->b0;
		sl->ngroups = (n + x->group - 1) / x->group;
		for (int k = 0; k < sl->ngroups; k++) {
			int gb = group_start(sl, k), ge = group_start(sl, k + 1), gr0 = R;
			for (int b = gb; b < ge; b++) {
				g->seq_row0[b] = R;
				g->batch_start[b] = R - gr0;
				for (int i = b * T; i < (b + 1) * T && R < max_rows; i++)
					if (targets[i] >= 0 && targets[i] < V)
						g->rows[R++] = i - gb * T;
			}
		}
		sl->r1 = R;
	}
	g->seq_row0[B] = R;
	return R;
}

/* Every slice on its own thread with single-threaded BLAS, then the copies
 * of the weight gradients added into grads in slice order. */
static void run_slices(step_ctx *x, int nt)
{
	if (nt == 1) {
		step_range(x, 0, 1);
		return;
	}
	const size_t np = x->m->nparams;
	int nb = blas_single_thread_begin();
	parallel_for_n(nt, nt, step_range, x);
	blas_single_thread_end(nb);
	sum_ctx sc = {x->grads, x->priv, np, nt - 1};
	parallel_for_n(nt, (int)((np + SUM_CHUNK - 1) / SUM_CHUNK), sum_range, &sc);
}

bool model_train_step_grads(const model *m, activations *a, grad_acts *g, const int32_t *tokens,
			    const int32_t *targets, int B, int T, float *grads, step_stats *st,
			    av_error *err)
{
	int nt = step_slices(B);
	if (!reserve_slice_grads(g, nt, m->nparams, err))
		return false;
	/* --sharpen: the mean entropy over L H B T rows, each divided by log T
	 * (a row of the last block counts as one of those, so a masked model's
	 * last layer weighs less, as most of its rows reach no loss). */
	const double rows = (double)m->cfg.layers * (double)m->cfg.heads * (double)B * (double)T;
	g->sharpen_row =
	    g->sharpen > 0.0f && T > 1 ? (float)(g->sharpen / (rows * log((double)T))) : 0.0f;
	step_ctx x = {m, a, g, tokens, targets, grads, g->slice_grads, T, 0, 1, {{0}}};
	plan_slices(&x, g, targets, B, T, nt);
	int max_rows = a->max_rows < g->max_rows ? a->max_rows : g->max_rows;
	x.R = assign_target_rows(&x, g, targets, B, T, nt, max_rows);
	*st = (step_stats){NAN, x.R, 0};
	if (x.R == 0)
		return true;
	run_slices(&x, nt);
	double loss = 0.0;
	for (int s = 0; s < nt; s++) {
		loss += x.sl[s].loss;
		st->correct += x.sl[s].correct;
	}
	st->loss = (float)(loss / x.R);
	return true;
}

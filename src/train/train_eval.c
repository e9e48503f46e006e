/* Evaluation over the threads (train.c runs the evaluations).
 *
 * An evaluation runs the forward pass only. Each batch of its rows is cut
 * into groups of about EVAL_GROUP_ROWS token rows (whole sequences), each
 * group one model_eval_loss on activations of its own with single-threaded
 * BLAS, and the groups run on the threads in contiguous runs, as the
 * training step's slices do: one fork and one join a batch instead of one
 * per product, and the element-wise work on every core, not on one. Every
 * group keeps its own sums, added in group order afterwards; a group's shape
 * depends only on the batch, the context and the rows left, so the figures
 * depend neither on the thread count nor on the timing. */
#include "attnview/i18n.h"
#include "attnview/parallel.h"
#include "train_internal.h"

#include <stdlib.h>

#define EVAL_GROUP_ROWS 512

/* Sequences a group: about EVAL_GROUP_ROWS rows, at least 1, at most B. */
static int eval_group_seqs(const train_options *o)
{
	int T = (int)o->context, B = (int)o->batch;
	int g = T >= EVAL_GROUP_ROWS ? 1 : EVAL_GROUP_ROWS / T;
	return g < B ? g : B;
}

/* A group's activations for each thread that will run one (every row of
 * a group may be predicted: nmask targets a sequence), the groups' sums. */
bool train_eval_buffers_init(trainer *t, av_error *err)
{
	int G = eval_group_seqs(&t->opt), T = (int)t->opt.context;
	int ngroups = ((int)t->opt.batch + G - 1) / G, nt = parallel_threads();
	if (nt > ngroups)
		nt = ngroups;
	t->eval_group = G;
	t->eval_acts = calloc((size_t)nt, sizeof *t->eval_acts);
	t->eval_sums = calloc((size_t)ngroups, sizeof *t->eval_sums);
	if (!t->eval_acts || !t->eval_sums)
		return av_fail(err, _("out of memory for the training buffers"));
	for (; t->eval_nacts < nt; t->eval_nacts++)
		if (!activations_init(&t->eval_acts[t->eval_nacts], &t->model->cfg, G, T,
				      G * t->nmask, err))
			return false;
	return true;
}

typedef struct eval_ctx {
	trainer *t;
	int nb, ngroups, nslices; /* rows of the batch, its groups, the runs */
} eval_ctx;

/* Runs s in [begin, end): each its groups, on the run's activations. */
static void eval_runs(void *p, int begin, int end)
{
	const eval_ctx *x = p;
	trainer *t = x->t;
	const int G = t->eval_group, T = (int)t->opt.context;
	for (int s = begin; s < end; s++) {
		int k1 = (int)((long)x->ngroups * (s + 1) / x->nslices);
		for (int k = (int)((long)x->ngroups * s / x->nslices); k < k1; k++) {
			int b0 = k * G, nb = x->nb - b0 < G ? x->nb - b0 : G;
			size_t r0 = (size_t)b0 * (size_t)T;
			train_eval_sum *e = &t->eval_sums[k];
			float l = model_eval_loss(t->model, &t->eval_acts[s], t->tokens + r0,
						  t->targets + r0, nb, T, &e->count, &e->correct);
			e->loss = e->count > 0 ? (double)l * e->count : 0.0;
		}
	}
}

/* The model on the first nb rows of t->tokens, t->targets: its summed loss,
 * predicted characters and right guesses added into the totals. */
void train_eval_batch(trainer *t, int nb, double *loss, uint64_t *count, uint64_t *correct)
{
	eval_ctx x = {t, nb, (nb + t->eval_group - 1) / t->eval_group, 0};
	x.nslices = x.ngroups < t->eval_nacts ? x.ngroups : t->eval_nacts;
	int saved = blas_single_thread_begin();
	parallel_for_n(x.nslices, x.nslices, eval_runs, &x);
	blas_single_thread_end(saved);
	for (int k = 0; k < x.ngroups; k++) {
		*loss += t->eval_sums[k].loss;
		*count += (uint64_t)t->eval_sums[k].count;
		*correct += (uint64_t)t->eval_sums[k].correct;
	}
}


/* The worker with the real model behind its callbacks (worker.h,
 * worker_create_for_model): attention, predictions, the jobs (breakdown,
 * loss, the next character) and reloads, on the worker thread.
 *
 * The passes go through infer.h with the work space's cache: a causal model
 * computes only the rows after the first change (typing at the end of the
 * text costs one row per layer); the breakdown, value norms, a causal model's
 * predictions and the next character read the pass of the text already in
 * the work space instead of running another. Anything else that writes the
 * work space (the loss) clears the cache first. */
#include "worker.h"

#include "attnview/circuits.h"
#include "attnview/explain.h"
#include "attnview/faith.h"
#include "attnview/generate.h"
#include "attnview/i18n.h"
#include "attnview/infer.h"
#include "attnview/lab_positions.h"
#include "attnview/lens.h"
#include "attnview/modelfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The real model behind the callbacks: the model is only read; the work space
 * belongs to the worker thread. */
typedef struct model_ctx {
	const model *m;
	activations ws;
	infer_cache cache; /* what ws holds (infer.h) */
	int delay_ms;
} model_ctx;

static void sleep_ms(int ms)
{
	struct timespec d = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&d, &d) != 0 && errno == EINTR)
		;
}

/* The test's slow model (delay_ms): half of the delay before the pass, half
 * after its first layer, so that a model of several layers publishes a
 * partial result (worker.c, rule 8) well before the complete one, as a big
 * model does: the view must take both in turn. */
typedef struct slow_stale {
	worker_stale_fn stale;
	void *ctx;
	int ms, calls; /* the pass asks before each layer: the second call is after one */
} slow_stale;

static bool slow_between_layers(void *p)
{
	slow_stale *s = p;
	bool gave_up = s->stale(s->ctx);
	if (s->ms > 0 && !gave_up && ++s->calls == 2) {
		sleep_ms(s->ms);
		s->ms = 0;
	}
	return gave_up;
}

static bool model_attend_cb(void *ctx, const token *tokens, int n, const worker_text_opts *o,
			    attn_result *r, worker_stale_fn stale, void *stale_ctx, av_error *err)
{
	model_ctx *mc = ctx;
	slow_stale slow = {stale, stale_ctx, 0, 0};
	if (mc->delay_ms > 0) {
		sleep_ms(mc->delay_ms - mc->delay_ms / 2);
		slow.ms = mc->delay_ms / 2;
		stale = slow_between_layers;
		stale_ctx = &slow;
	}
	mc->ws.ablate = o->any_ablated ? o->ablate : NULL;
	if (!infer_attend(mc->m, &mc->ws, &mc->cache, tokens, n, r, stale, stale_ctx, err))
		return false;
	if (slow.ms > 0) /* one layer: no step between layers */
		sleep_ms(slow.ms);
	if (o->every_head && !attn_result_all_weights(r))
		return av_fail(err, _("out of memory for the attention of %d tokens"), n);
	if (!o->value_norms)
		return true;
	/* The work space holds this text's pass. */
	const model_config *c = &mc->m->cfg;
	r->value_norms = malloc((size_t)c->layers * c->heads * (size_t)n * sizeof(float));
	if (!r->value_norms)
		return av_fail(err, _("out of memory for the value contributions"));
	return value_norms(mc->m, &mc->ws, n, r->value_norms, err);
}

static bool model_predict_cb(void *ctx, const token *tokens, int n, const worker_text_opts *o,
			     int pos, int topk, int32_t *ids, float *probs, worker_stale_fn stale,
			     void *stale_ctx)
{
	model_ctx *mc = ctx;
	av_error err;
	mc->ws.ablate = o->any_ablated ? o->ablate : NULL;
	return infer_predict(mc->m, &mc->ws, &mc->cache, tokens, n, pos, topk, ids, probs, stale,
			     stale_ctx, &err);
}

/* q and k of one head at one cell: a forward pass of the text, then read. */
static bool breakdown_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
			  const worker_job *j, worker_job_result *out, worker_stale_fn stale,
			  void *stale_ctx)
{
	(void)o;
	const model_config *c = &mc->m->cfg;
	int hs = (int)(c->dim / c->heads);
	if (j->layer < 0 || j->layer >= (int)c->layers || j->head < 0 || j->head >= (int)c->heads ||
	    j->query < 0 || j->query >= n || j->key < 0 || j->key >= n)
		return av_fail(&out->err, _("no such cell"));
	int32_t *ids = malloc((size_t)n * sizeof *ids);
	out->q = malloc((size_t)hs * sizeof *out->q);
	out->k = malloc((size_t)hs * sizeof *out->k);
	if (!ids || !out->q || !out->k) {
		free(ids);
		return av_fail(&out->err, _("out of memory for the q·k breakdown"));
	}
	for (int i = 0; i < n; i++)
		ids[i] = tokens[i].id;
	/* The text's pass is in the work space (unless a prediction masked a
	 * position since): nothing to compute. */
	bool ok = infer_forward(mc->m, &mc->ws, &mc->cache, ids, n, NULL, NULL, stale, stale_ctx,
				&out->err);
	free(ids);
	if (!ok)
		return false;
	qk_from_forward(mc->m, &mc->ws, j->layer, j->head, j->query, j->key, out->q, out->k);
	out->hs = hs;
	/* The score by source, from the same pass (not where the mask hides
	 * the key). */
	if (c->objective == OBJ_CAUSAL && j->key > j->query)
		return true;
	return score_split_compute(mc->m, &mc->ws, n, j->layer, j->head, j->query, j->key,
				   &out->split, &out->err);
}

/* JOB_NEXT: what the model (ablated as the text is) says comes next: one row
 * through the cache, which holds the text's pass, when the text was computed
 * (the view writes a character, waits for its attention, then asks). */
static bool next_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
		     const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		     void *stale_ctx)
{
	(void)o, (void)j;
	const int V = (int)mc->m->cfg.vocab_size;
	int32_t *ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *ids);
	out->logits = malloc((size_t)V * sizeof *out->logits);
	if (!ids || !out->logits) {
		free(ids);
		return av_fail(&out->err, _("out of memory"));
	}
	for (int i = 0; i < n; i++)
		ids[i] = tokens[i].id;
	out->nlogits = V;
	bool ok = mc->m->cfg.objective == OBJ_CAUSAL && n > 0
		      ? infer_row_logits(mc->m, &mc->ws, &mc->cache, ids, n, n - 1, out->logits,
					 stale, stale_ctx, &out->err)
		      : model_next_logits(mc->m, &mc->ws, ids, n, out->logits, &out->err);
	free(ids);
	return ok;
}

/* JOB_ROLES: every head's weights and roles (analysis.h), for the overview
 * or a summary opened on a result that came without them: the text's pass
 * again (a causal model's rows come from the cache, the same numbers; a
 * masked model's pass makes the same calls, so the same bits), every head's
 * weights, then the roles unless only the weights were asked for, asking
 * between heads whether a newer text waits. A masked model's result goes
 * back with its weights, for the view to take them into its own. */
static bool roles_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
		      const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		      void *stale_ctx)
{
	(void)o;
	attn_result r;
	memset(&r, 0, sizeof r);
	bool ok =
	    infer_attend(mc->m, &mc->ws, &mc->cache, tokens, n, &r, stale, stale_ctx, &out->err);
	/* A masked result keeps no weights: compute them here (a causal one
	 * reads its packed rows). */
	if (ok && !r.att && !attn_result_all_weights(&r))
		ok = av_fail(&out->err, _("out of memory for the attention of %d tokens"), n);
	size_t nh = ok && !j->no_roles ? (size_t)r.layers * (size_t)r.heads : 0;
	out->roles = nh ? malloc(nh * sizeof *out->roles) : NULL;
	if (nh && !out->roles)
		ok = av_fail(&out->err, _("out of memory"));
	for (int l = 0; nh && ok && l < r.layers; l++)
		for (int h = 0; ok && h < r.heads; h++) {
			if (stale(stale_ctx)) {
				ok = av_fail(&out->err, _("a newer text came"));
				break;
			}
			attn_matrix a = attn_result_head(&r, l, h);
			head_roles(&out->roles[l * r.heads + h], &a, r.tokens);
		}
	if (ok && !r.att)
		out->heads = r; /* its weights, handed over */
	else
		attn_result_finish(&r);
	return ok;
}

/* JOB_WHY: the lens and the attribution at the job's query (lens.h: a plain
 * pass of the text, written behind the cache's back, then that row). */
static bool why_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
		    const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		    void *stale_ctx)
{
	(void)o, (void)stale, (void)stale_ctx;
	const model_config *c = &mc->m->cfg;
	if (j->query < 0 || j->query >= n)
		return av_fail(&out->err, _("no such position"));
	infer_cache_clear(&mc->cache);
	int32_t *ids = malloc((size_t)n * sizeof *ids);
	out->lens_id = malloc(c->layers * WHY_K * sizeof *out->lens_id);
	out->lens_p = malloc(c->layers * WHY_K * sizeof *out->lens_p);
	out->dla_heads = malloc((size_t)c->layers * c->heads * sizeof *out->dla_heads);
	if (!ids || !out->lens_id || !out->lens_p || !out->dla_heads) {
		free(ids);
		return av_fail(&out->err, _("out of memory"));
	}
	for (int i = 0; i < n; i++)
		ids[i] = tokens[i].id;
	const lens_rows row = {j->query, 1};
	bool ok = logit_lens(mc->m, &mc->ws, ids, n, row, WHY_K, out->lens_id, out->lens_p,
			     &out->commit, &out->err) &&
		  logit_attribution(mc->m, &mc->ws, ids, n, row, NULL, &out->dla_id,
				    &out->dla_logit, out->dla_heads, &out->dla_rest, &out->err);
	free(ids);
	return ok;
}

/* JOB_FAITH: the meter at the job's query (faith.h), a pass per key on its
 * own work space; it gives up between passes when a newer text waits. */
static bool faith_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
		      const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		      void *stale_ctx)
{
	(void)o;
	const size_t LH = (size_t)mc->m->cfg.layers * mc->m->cfg.heads, N = (size_t)n;
	if (j->query < 0 || j->query >= n)
		return av_fail(&out->err, _("no such position"));
	int32_t *ids = malloc(N * sizeof *ids);
	out->faith_effect = malloc(N * sizeof *out->faith_effect);
	out->faith_sp = malloc(LH * sizeof *out->faith_sp);
	out->faith_att = malloc(LH * N * sizeof *out->faith_att);
	bool ok = ids && out->faith_effect && out->faith_sp && out->faith_att;
	if (!ok)
		av_fail(&out->err, _("out of memory"));
	for (int i = 0; ok && i < n; i++)
		ids[i] = tokens[i].id;
	out->nfaith = n;
	ok = ok && faith_rows(mc->m, ids, n, j->query, 1, &out->faith_loss, out->faith_effect,
			      out->faith_sp, out->faith_att, stale, stale_ctx, &out->err);
	free(ids);
	return ok;
}

/* The loss jobs' start: the cache emptied (their passes write the work
 * space behind its back), every head on, and for a lab model the positions
 * its task decides (lab_decided, into decided; NULL for another model). */
static const uint8_t *loss_positions(model_ctx *mc, const token *tokens, int n, uint8_t *decided)
{
	uint32_t cps[AV_MAX_CONTEXT];
	for (int i = 0; i < n; i++)
		cps[i] = tokens[i].cp;
	infer_cache_clear(&mc->cache);
	mc->ws.ablate = NULL;
	const char *task = lab_model_task(mc->m);
	return task && lab_decided(task, cps, n, decided) >= 0 ? decided : NULL;
}

/* JOB_LOSS: with every head, then with the ablation, over every position
 * and, for a lab model, at the positions its task decides (the only ones
 * it was trained on); model_text_loss_at writes the work space behind the
 * cache's back. */
static bool loss_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
		     const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		     void *stale_ctx)
{
	(void)j;
	uint8_t decided[AV_MAX_CONTEXT];
	const uint8_t *at = loss_positions(mc, tokens, n, decided);
	int count_at;
	if (!model_text_loss_at(mc->m, &mc->ws, tokens, n, at, &out->loss_before, &out->positions,
				&out->task_before, &count_at, stale, stale_ctx, &out->err))
		return false;
	out->task_positions = at ? count_at : -1;
	if (stale(stale_ctx))
		return av_fail(&out->err, _("a newer text came"));
	if (!o->any_ablated) {
		out->loss_after = out->loss_before;
		out->task_after = out->task_before;
		return true;
	}
	mc->ws.ablate = o->ablate;
	return model_text_loss_at(mc->m, &mc->ws, tokens, n, at, &out->loss_after, &out->positions,
				  &out->task_after, &count_at, stale, stale_ctx, &out->err);
}

/* JOB_LOSS_MEAN: the ablated heads' average output in their place, after
 * JOB_LOSS, so that the zeroed loss is on screen first (plain passes on the
 * work space, behind the cache's back too, giving up for a newer text
 * between a masked model's positions). */
static bool loss_mean_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
			  const worker_job *j, worker_job_result *out, worker_stale_fn stale,
			  void *stale_ctx)
{
	(void)j;
	uint8_t decided[AV_MAX_CONTEXT];
	const uint8_t *at = loss_positions(mc, tokens, n, decided);
	int count, count_at;
	if (!o->any_ablated)
		return av_fail(&out->err, _("no head is off"));
	return model_text_loss_mean(mc->m, &mc->ws, tokens, n, o->ablate, at, &out->loss_mean,
				    &count, &out->task_mean, &count_at, stale, stale_ctx,
				    &out->err);
}

/* JOB_PATCH: the job's other text patched into the text, read at the job's
 * query (patch.h: plain passes, written behind the cache's back), giving
 * up between heads when a newer text comes. */
static bool patch_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
		      const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		      void *stale_ctx)
{
	if (j->query < 0 || j->query >= n || j->nother != n)
		return av_fail(&out->err, _("no such position"));
	infer_cache_clear(&mc->cache);
	int32_t *ids = malloc((size_t)n * sizeof *ids);
	if (!ids)
		return av_fail(&out->err, _("out of memory"));
	for (int i = 0; i < n; i++)
		ids[i] = tokens[i].id;
	mc->ws.ablate = o->any_ablated ? o->ablate : NULL;
	const int32_t *targets = j->from == PATCH_TOP1 ? NULL : j->targets;
	bool ok = activation_patch_until(mc->m, &mc->ws, ids, j->other, n, j->query, targets, stale,
					 stale_ctx, &out->patch, &out->err);
	out->patch.from = (patch_targets_from)j->from;
	mc->ws.ablate = NULL;
	free(ids);
	return ok;
}

/* JOB_CIRCUITS: every head's circuits, from the weights alone. */
static bool circuits_job(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
			 const worker_job *j, worker_job_result *out, worker_stale_fn stale,
			 void *stale_ctx)
{
	(void)tokens, (void)n, (void)o, (void)j, (void)stale, (void)stale_ctx;
	out->circ = malloc(sizeof *out->circ);
	if (!out->circ)
		return av_fail(&out->err, _("out of memory"));
	if (circuits_init(out->circ, mc->m, &out->err))
		return true;
	free(out->circ);
	out->circ = NULL;
	return false;
}

/* What empties each kind's arrays of a result (NULL after). */
static void job_roles_finish(worker_job_result *r)
{
	free(r->roles);
	r->roles = NULL;
	attn_result_finish(&r->heads);
}

static void job_breakdown_finish(worker_job_result *r)
{
	free(r->q);
	free(r->k);
	r->q = r->k = NULL;
	score_split_finish(&r->split);
}

static void job_next_finish(worker_job_result *r)
{
	free(r->logits);
	r->logits = NULL;
}

static void job_why_finish(worker_job_result *r)
{
	free(r->lens_id);
	free(r->lens_p);
	free(r->dla_heads);
	r->lens_id = NULL;
	r->lens_p = r->dla_heads = NULL;
}

static void job_circuits_finish(worker_job_result *r)
{
	circuits_finish(r->circ);
	free(r->circ);
	r->circ = NULL;
}

static void job_faith_finish(worker_job_result *r)
{
	free(r->faith_effect);
	free(r->faith_sp);
	free(r->faith_att);
	r->faith_effect = r->faith_sp = r->faith_att = NULL;
}

static void job_patch_finish(worker_job_result *r)
{
	patch_result_finish(&r->patch);
}

/* The kinds of job, a row each (worker.h): how the model runs it, on the
 * worker thread, and what empties the arrays of its result (NULL: none). */
typedef bool (*job_run)(model_ctx *mc, const token *tokens, int n, const worker_text_opts *o,
			const worker_job *j, worker_job_result *out, worker_stale_fn stale,
			void *stale_ctx);
static const struct {
	job_run run;
	void (*finish)(worker_job_result *r);
} job_kinds[] = {
    [JOB_ROLES] = {roles_job, job_roles_finish},
    [JOB_BREAKDOWN] = {breakdown_job, job_breakdown_finish},
    [JOB_LOSS] = {loss_job, NULL},
    [JOB_LOSS_MEAN] = {loss_mean_job, NULL},
    [JOB_NEXT] = {next_job, job_next_finish},
    [JOB_WHY] = {why_job, job_why_finish},
    [JOB_CIRCUITS] = {circuits_job, job_circuits_finish},
    [JOB_FAITH] = {faith_job, job_faith_finish},
    [JOB_PATCH] = {patch_job, job_patch_finish},
};
_Static_assert(sizeof job_kinds / sizeof job_kinds[0] == JOB_NKINDS,
	       "a row of job_kinds for every worker_job_kind");

void worker_job_result_finish(worker_job_result *r)
{
	/* Every kind's arrays: a result's are its kind's, the others NULL. */
	for (int k = 0; r && k < JOB_NKINDS; k++)
		if (job_kinds[k].finish)
			job_kinds[k].finish(r);
}

static bool model_job_cb(void *ctx, const token *tokens, int n, const worker_text_opts *o,
			 const worker_job *j, worker_job_result *out, worker_stale_fn stale,
			 void *stale_ctx)
{
	model_ctx *mc = ctx;
	mc->ws.ablate = o->any_ablated ? o->ablate : NULL;
	/* (worker_post_job takes only the kinds of worker_job_kind) */
	return job_kinds[j->kind].run(mc, tokens, n, o, j, out, stale, stale_ctx);
}

static bool model_reload_cb(void *ctx, const char *path, model **out, av_error *err)
{
	model_ctx *mc = ctx;
	model *m = model_load(path, err);
	if (!m)
		return false;
	int T = (int)m->cfg.context;
	activations ws;
	if (!activations_init(&ws, &m->cfg, 1, T, T, err)) {
		model_destroy(m);
		return false;
	}
	activations_finish(&mc->ws);
	mc->ws = ws;
	mc->m = m;
	/* The new model may have the old one's address. */
	infer_cache_clear(&mc->cache);
	*out = m;
	return true;
}

static void model_ctx_free(void *p)
{
	model_ctx *mc = p;
	if (!mc)
		return;
	activations_finish(&mc->ws);
	infer_cache_clear(&mc->cache);
	free(mc);
}

worker *worker_create_for_model(const model *m, int delay_ms, av_error *err)
{
	model_ctx *mc = calloc(1, sizeof *mc);
	if (!mc) {
		av_fail(err, _("out of memory starting the inference worker"));
		return NULL;
	}
	mc->m = m;
	mc->delay_ms = delay_ms;
	int T = (int)m->cfg.context;
	if (!activations_init(&mc->ws, &m->cfg, 1, T, T, err)) {
		free(mc);
		return NULL;
	}
	worker_ops ops = {model_attend_cb, model_predict_cb, model_job_cb, model_reload_cb, mc};
	worker *w = worker_create(&ops, err);
	if (!w) {
		model_ctx_free(mc);
		return NULL;
	}
	worker_own(w, mc, model_ctx_free);
	return w;
}

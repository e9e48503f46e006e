/* The inference worker: one background thread that runs the model for the
 * interface thread, so the screen never waits for the model.
 *
 * The interface posts the latest text (tokens) with a sequence number; the
 * worker runs the attention pass and publishes the result; results for texts
 * that have since been replaced are dropped. The interface also asks for the
 * model's predictions at one position of the current text (the cursor's
 * row). When something is published the worker writes a byte to a pipe whose
 * read end the interface polls together with the keyboard, so the interface
 * never blocks on the worker and the worker never touches the terminal. */
#ifndef ATTNVIEW_WORKER_H
#define ATTNVIEW_WORKER_H

#include "attnview/analysis.h"
#include "attnview/circuits.h"
#include "attnview/model.h"
#include "attnview/patch.h"
#include "attnview/score_split.h"

#define WORKER_MAX_TOPK 16
#define WORKER_MAX_ABLATE (AV_MAX_LAYERS * AV_MAX_HEADS)

/* What a text is computed with, besides its tokens. */
typedef struct worker_text_opts {
	uint8_t ablate[WORKER_MAX_ABLATE]; /* [layer * heads + head]: off; all 0: none */
	bool any_ablated;
	bool value_norms; /* also attn_result.value_norms (for contributions) */
	/* Also every head's weights, before the result is published: a masked
	 * model's are otherwise computed when first read (model.h), on the
	 * interface's thread; the overview and a layer's summaries read them all. */
	bool every_head;
	/* 0, or the layer on screen + 1: a pass long enough to
	 * be seen publishes the layers done once that one is among them, as a
	 * partial result (attn_result.partial), before the complete one. */
	int partial_layer;
	/* Also every head's roles (analysis.h), in worker_attn.roles: the
	 * overview labels every tile, and at 512 tokens of a 6-layer, 8-head
	 * model that takes 140 ms, too long for the interface's thread. They
	 * read every head's weights, so those are then computed on the
	 * worker too, as with every_head. */
	bool roles;
} worker_text_opts;

/* Work asked for the latest text beyond its attention and predictions. Each
 * kind is a row of worker_model.c's job_kinds: what runs it on the model
 * and what frees its result's arrays. */
typedef enum worker_job_kind {
	JOB_ROLES,     /* every head's weights and roles (the overview or a summary
			  opened on a result without them) */
	JOB_BREAKDOWN, /* q and k of (layer, head) at (query, key) */
	JOB_LOSS,      /* the loss on the text with every head, and with the ablation */
	JOB_NEXT,      /* logits of the character after the text (a causal model) */
	JOB_WHY,       /* the logit lens and the heads' logit attribution at query */
	JOB_CIRCUITS,  /* every head's circuits from the weights (no text needed) */
	JOB_FAITH,     /* the faithfulness meter at query: a pass per key */
	JOB_PATCH,     /* patching the job's other text into the text, read at query */
	JOB_LOSS_MEAN, /* the loss with the ablated heads' mean output (after JOB_LOSS;
			  last: the worker takes the lowest kind first, and this
			  one's plain passes are the slowest) */
	JOB_NKINDS
} worker_job_kind;

typedef struct worker_job {
	worker_job_kind kind;
	uint64_t seq; /* the text it is for */
	int layer, head, query, key;
	/* JOB_PATCH: the other text's ids (patch.h), as many as the text's, and
	 * the two characters of the logit difference (from PATCH_TOP1: none) */
	int nother;
	int32_t other[AV_MAX_CONTEXT];
	int32_t targets[2];
	int from; /* patch_targets_from */
	bool no_roles; /* JOB_ROLES: the weights alone (a layer's summaries) */
} worker_job;

#define WHY_K 3 /* the lens's characters per block in the panel */

typedef struct worker_job_result {
	worker_job job;
	bool ok;
	int hs;
	float *q, *k; /* JOB_BREAKDOWN: hs each; worker_job_result_finish frees */
	score_split split; /* JOB_BREAKDOWN: the score by source (none if masked) */
	/* JOB_LOSS, nats per character: with every head and with the heads off
	 * (zeroed); JOB_LOSS_MEAN's loss_mean (task_mean) with them
	 * mean-ablated (model_text_loss_mean) */
	double loss_before, loss_after, loss_mean;
	int positions;
	/* JOB_LOSS (task_mean: JOB_LOSS_MEAN) of a lab model (lab_positions.h):
	 * the same at the positions its task decides, task_positions of them
	 * (-1: not a lab model) */
	double task_before, task_after, task_mean;
	int task_positions;
	float *logits; /* JOB_NEXT: [nlogits]; worker_job_result_finish frees */
	int nlogits;
	/* JOB_WHY (lens.h) at the job's query: the lens's WHY_K top ids and
	 * probabilities after each block (L, WHY_K), the commitment block, the
	 * top-1 of the pass, its logit, every head's part (L, H) and the rest.
	 * worker_job_result_finish frees the arrays. */
	int32_t *lens_id;
	float *lens_p;
	int commit;
	int32_t dla_id;
	float dla_logit, dla_rest;
	float *dla_heads;
	/* JOB_CIRCUITS (circuits.h): every head's; the taker may keep it (and
	 * set it NULL), else worker_job_result_finish frees it. */
	circuits *circ;
	/* JOB_FAITH (faith.h) at the job's query: the loss, the effect of
	 * blanking each key (n, nfaith), every head's Spearman (L H) and its
	 * attention at the row (L H, n). worker_job_result_finish frees them. */
	float faith_loss;
	float *faith_effect, *faith_sp, *faith_att;
	int nfaith;
	patch_result patch; /* JOB_PATCH; worker_job_result_finish frees it */
	/* JOB_ROLES: every head's, [layer * heads + head], as worker_attn.roles
	 * gives them; the taker may keep it (and set it NULL), else
	 * worker_job_result_finish frees it. */
	role_scores *roles;
	/* JOB_ROLES of a masked model: the text's result the job computed,
	 * every head's weights in it, for attn_result_adopt_weights (the
	 * interface never computes them); worker_job_result_finish frees what
	 * is left of it. A causal model's: zeroed (its result keeps its
	 * weights). */
	attn_result heads;
	av_error err;	    /* when !ok */
	double ms;
} worker_job_result;

void worker_job_result_finish(worker_job_result *r);

/* Asked between the steps of a long computation: true when a newer text is
 * waiting and it should give up (its result would be dropped anyway), so that
 * a burst of keystrokes costs one computation, not one each. */
typedef bool (*worker_stale_fn)(void *stale_ctx);

/* The computation, behind callbacks so tests can put a fake model (slow,
 * failing, instrumented) behind the same thread machinery. They run on the
 * worker thread only, one call at a time. job may be NULL: jobs then fail.
 * attend, predict and job get a stale() to ask between their steps; when it
 * says true they may give up (return false): what they would have returned is
 * for a text that a newer one has replaced. */
typedef struct worker_ops {
	/* r holds the arrays of a result given back (worker_recycle) or is
	 * zeroed: reuse them (infer_attend does) or free them. Whatever it
	 * returns, attend leaves in r either a result or arrays to recycle. */
	bool (*attend)(void *ctx, const token *tokens, int n, const worker_text_opts *opts,
		       attn_result *r, worker_stale_fn stale, void *stale_ctx, av_error *err);
	/* False: gave up (nothing is published). */
	bool (*predict)(void *ctx, const token *tokens, int n, const worker_text_opts *opts,
			int pos, int topk, int32_t *ids, float *probs, worker_stale_fn stale,
			void *stale_ctx);
	bool (*job)(void *ctx, const token *tokens, int n, const worker_text_opts *opts,
		    const worker_job *j, worker_job_result *out, worker_stale_fn stale,
		    void *stale_ctx);
	/* Load the model file at path and compute with it from now on; *out the
	 * new model, which the caller of worker_take_model will own (the worker
	 * keeps reading it until the next reload). NULL: no reloading. */
	bool (*reload)(void *ctx, const char *path, model **out, av_error *err);
	void *ctx;
} worker_ops;

typedef struct worker worker;

/* Start the thread. ops (copied) and ops->ctx must outlive the worker. */
worker *worker_create(const worker_ops *ops, av_error *err);
/* The worker owns ctx from here on and frees it with free_ctx after its
 * thread has ended (worker_destroy). Call before posting anything. */
void worker_own(worker *w, void *ctx, void (*free_ctx)(void *));
/* A worker running model m (read-only; shared with nobody that writes it),
 * with its own work space for up to m->cfg.context tokens. delay_ms is added
 * before every attention pass: 0 normally, more to stand in for a slow model
 * in tests. */
worker *worker_create_for_model(const model *m, int delay_ms, av_error *err);
/* Stop and join the thread (a computation under way finishes first), free
 * everything, including results nobody took. NULL is fine. */
void worker_destroy(worker *w);

/* Read end of the wake-up pipe: poll it for POLLIN, then call worker_drain
 * and the worker_take_* functions. */
int worker_fd(const worker *w);
void worker_drain(worker *w);

/* Post the text to compute (tokens and opts copied, n <= AV_MAX_CONTEXT;
 * opts may be NULL: every head on). seq must grow with every post; it
 * replaces any text not yet started. Never waits for a computation. */
bool worker_post_text(worker *w, const token *tokens, int n, uint64_t seq,
		      const worker_text_opts *opts, av_error *err);
/* Ask for a job on the text posted as j->seq. Replaces a job of the same kind
 * not yet started; dropped if j->seq is no longer the latest. */
void worker_post_job(worker *w, const worker_job *j);
/* Load the model at path on the worker's thread (the interface never waits
 * for a load); the result comes through worker_take_model. Replaces a reload
 * not yet started. */
void worker_post_reload(worker *w, const char *path);

typedef struct worker_model {
	bool ok;
	model *m;	/* when ok: the new model, now the caller's */
	av_error err;	/* when !ok: why (the old model stays) */
	char path[4096];
	double ms;
} worker_model;

/* A reload that finished, if any. After a successful one, texts, predictions
 * and jobs posted before this call were dropped (they were made with the old
 * model's vocabulary): switch to the new model, then post the text again. */
bool worker_take_model(worker *w, worker_model *out);

/* A finished job for the latest text, if any (the caller frees it with
 * worker_job_result_finish). Results for older texts are never returned. */
bool worker_take_job(worker *w, worker_job_result *out);
/* Ask for the top-k predictions at pos of the text posted as seq. Replaces an
 * earlier request not yet started; dropped if seq is no longer the latest. */
void worker_post_predict(worker *w, uint64_t seq, int pos, int topk);

typedef struct worker_attn {
	uint64_t seq; /* the text this is for */
	bool ok;
	attn_result r; /* when ok; the caller owns it (attn_result_finish) */
	/* When ok, complete and the text asked for them (worker_text_opts):
	 * every head's roles, [layer * heads + head]; else NULL. The caller
	 * frees it. */
	role_scores *roles;
	double ms;     /* wall time of the computation */
	av_error err;  /* when !ok */
} worker_attn;

/* If a result for the latest posted text is waiting, move it to *out and
 * return true. Results for older texts are never returned. A partial one
 * (out->r.partial > 0) is followed by the complete one of the same text,
 * unless a newer text replaced it. */
bool worker_take_attn(worker *w, worker_attn *out);
/* Give back a result taken from worker_take_attn once done with it, instead of
 * attn_result_finish: its arrays (at 512 tokens of a 6-layer, 8-head, d=256
 * model: 6 MB of queries and keys, and a causal model's 24 MB of weights) go
 * to the next computation, which would otherwise spend as long on the page
 * faults of fresh memory as on the model. *r is zeroed. NULL or a zeroed r
 * is fine. */
void worker_recycle(worker *w, attn_result *r);

typedef struct worker_pred {
	uint64_t seq;
	int pos, topk;
	int32_t ids[WORKER_MAX_TOPK];
	float probs[WORKER_MAX_TOPK];
	double ms;
} worker_pred;

bool worker_take_pred(worker *w, worker_pred *out);

/* Statistics for tests and the status line. */
typedef struct worker_stats {
	uint64_t taken;	   /* texts the thread has taken to compute */
	uint64_t attends;  /* attention passes run */
	uint64_t predicts; /* prediction passes run */
	uint64_t jobs;	   /* jobs run */
	uint64_t dropped;  /* results computed for texts replaced meanwhile */
	uint64_t gave_up;  /* of those, computations that stopped early (stale()) */
	uint64_t partials; /* partial results published (worker_text_opts) */
	uint64_t latest;   /* sequence number of the latest post */
	bool busy;	   /* a computation is under way or waiting */
} worker_stats;

worker_stats worker_get_stats(worker *w);

/* The least time the rest of a pass must be expected to take for a partial
 * result to be published (about a frame by default); tests set 0. */
void worker_set_partial_ms(worker *w, double ms);

#endif

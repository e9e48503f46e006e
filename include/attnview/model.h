/* The model: configuration, parameters carved from one allocation, activations,
 * and the forward pass.
 *
 * Architecture (man 5 attnview has the exact computation):
 *   x = sqrt(d) * wte[token] + pe[position]
 *   L times:  x += proj(attention(ln1(x)));  x += fc2(gelu(fc(ln2(x))))
 *   logits = lnf(x) wte^T + out_b        (output projection tied to wte) */
#ifndef ATTNVIEW_MODEL_H
#define ATTNVIEW_MODEL_H

#include "attnview/common.h"
#include "attnview/result.h"
#include "attnview/tokenizer.h"
#include "attnview/vocab.h"

typedef enum objective { OBJ_MASKED = 0, OBJ_CAUSAL = 1 } objective;
#define OBJ_NKINDS 2

const char *objective_name(objective o); /* "masked", "causal" */

/* The architecture variants a model can have besides attnview's own, for
 * the models other programs train (nanoGPT, minGPT: converted by the PyTorch
 * package, attnview(5) "Architecture"). Zero in every field is attnview's own
 * architecture, and a file with it is written as before (format version 1). */
typedef enum arch_positions { POS_SINUSOIDAL = 0, POS_LEARNED = 1 } arch_positions;
typedef enum arch_gelu { GELU_TANH = 0, GELU_ERF = 1 } arch_gelu;
typedef enum arch_scale { SCALE_SQRT_D = 0, SCALE_ONE = 1 } arch_scale;
typedef enum arch_output { OUT_TIED = 0, OUT_UNTIED = 1 } arch_output;
typedef enum arch_specials { SPECIALS_OWN = 0, SPECIALS_NONE = 1 } arch_specials;
typedef enum arch_biases { BIASES_ON = 0, BIASES_NONE = 1 } arch_biases;
typedef enum arch_origin { ORIGIN_ATTNVIEW = 0, ORIGIN_NANOGPT = 1, ORIGIN_MINGPT = 2 } arch_origin;

typedef struct model_arch {
	uint32_t positions; /* pe: sinusoids (section 1), or a learned table wpe (T, d) */
	uint32_t gelu;	    /* the tanh form, or the exact one with erf */
	uint32_t scale;	    /* of the token embedding: sqrt(d), or 1 */
	uint32_t output;    /* logits from wte (tied), or from a matrix out_w (V, d) */
	uint32_t specials;  /* ids 0..2 have rows of their own, or none: zero rows, no logit */
	uint32_t biases;    /* biases as stored, or none (every bias and LN shift 0) */
	uint32_t origin;    /* the program that trained it (informational) */
} model_arch;

/* One field of model_arch: its name, where it is, and the names of its
 * values (0..count-1), for the file, --info and the messages. The file holds
 * the fields as u32 in this order. */
typedef struct arch_field {
	const char *name;
	size_t offset; /* in model_arch */
	uint32_t count;
	const char *const *values;
} arch_field;
#define ARCH_NFIELDS 7
#define ARCH_ORIGIN  (ARCH_NFIELDS - 1) /* the origin is the last field */
extern const arch_field model_arch_fields[ARCH_NFIELDS];

static inline uint32_t arch_value(const model_arch *a, const arch_field *f)
{
	return *(const uint32_t *)(const void *)((const char *)a + f->offset);
}
/* Whether a is attnview's own architecture (every field 0, the origin aside). */
bool model_arch_is_own(const model_arch *a);

typedef struct model_config {
	uint32_t objective;  /* enum objective */
	uint32_t vocab_size; /* V, including the specials */
	uint32_t dim;	     /* d */
	uint32_t heads;	     /* h; d % h == 0 */
	uint32_t layers;     /* L */
	uint32_t context;    /* T: longest sequence */
	model_arch arch;     /* zero: attnview's own */
} model_config;

/* Checks the limits of common.h and the relations between fields; the message
 * says which value to change. */
bool model_config_check(const model_config *cfg, av_error *err);

/* Parameter tensors. Their order in the allocation and in the file, their
 * shapes, initialisation and weight decay are described once, by the size
 * table in model.c, and read from it with tensor_iter_next. Linear weights
 * are (out, in). */
typedef struct layer_params {
	float *ln1_w, *ln1_b;	/* (d) */
	float *qkv_w, *qkv_b;	/* (3d, d), (3d) */
	float *proj_w, *proj_b; /* (d, d), (d) */
	float *ln2_w, *ln2_b;	/* (d) */
	float *fc_w, *fc_b;	/* (4d, d), (4d) */
	float *fc2_w, *fc2_b;	/* (d, 4d), (d) */
} layer_params;

typedef struct model_params {
	float *wte; /* (V, d) */
	float *wpe; /* (T, d) learned positions, or NULL (sinusoids) */
	layer_params layer[AV_MAX_LAYERS];
	float *lnf_w, *lnf_b; /* (d) */
	float *out_w;	      /* (V, d) an untied output matrix, or NULL (wte) */
	float *out_b;	      /* (V) */
} model_params;

/* How model_init_random fills a tensor. */
typedef enum param_init {
	INIT_ZERO,     /* biases */
	INIT_ONE,      /* LayerNorm gains */
	INIT_NORMAL,   /* N(0, 0.02) */
	INIT_RESIDUAL, /* N(0, 0.02 / sqrt(2L)): projections into the residual stream */
} param_init;

/* One row of the size table, for one model: a named tensor and where it lives. */
typedef struct tensor_info {
	char name[32];	     /* "wte", "h0.qkv_w", "lnf_b", ... */
	size_t offset;	     /* in floats from the start of the parameters */
	size_t size;	     /* in floats */
	uint32_t rows, cols; /* cols = 1 for vectors */
	int layer;	     /* the block, -1 for the model-wide tensors */
	param_init init;
	bool decay; /* AdamW's weight decay applies (the matrices) */
} tensor_info;

/* The tensors of a configuration in file order, without allocating:
 *	tensor_iter it = tensor_iter_start(cfg);
 *	tensor_info t;
 *	while (tensor_iter_next(&it, &t))
 *		...
 * The fields are private to model.c. */
typedef struct tensor_iter {
	const model_config *cfg;
	size_t row;	/* of the size table */
	uint32_t layer; /* the block of a per-layer row */
	size_t offset;	/* of the next tensor */
} tensor_iter;

tensor_iter tensor_iter_start(const model_config *cfg);
bool tensor_iter_next(tensor_iter *it, tensor_info *t);

/* Writes up to `max` rows (out may be NULL) and returns the number of tensors. */
size_t model_tensor_table(const model_config *cfg, tensor_info *out, size_t max);
size_t model_num_params(const model_config *cfg);
/* Point p's fields into base (model_num_params floats). Also used for
 * gradients and optimizer moments, which have the same layout. */
void model_params_map(model_params *p, float *base, const model_config *cfg);

typedef struct model_meta {
	char *name;	 /* shown in the status line */
	char *corpus;	 /* what it was trained on */
	uint64_t steps;	 /* optimizer steps taken */
	uint64_t tokens; /* training tokens seen */
	int64_t created; /* unix time */
	uint64_t seed;
	float val_loss, val_acc;   /* NAN if unknown */
	float base_loss, base_acc; /* unigram baseline on the same split */
} model_meta;

typedef struct model {
	model_config cfg;
	model_meta meta;
	vocab vocab;
	size_t nparams;
	float *params; /* one allocation, carved by p */
	model_params p;
	/* (context, d): the sinusoids (owned), or the learned table p.wpe. */
	float *pe;
	/* (V, d): the output matrix, p.out_w or (tied) p.wte. */
	const float *out_w;
	float emb_scale; /* sqrt(d) rounded to binary32, or 1 */
	/* How its heads formed while it trained (timeline.h), or NULL: owned,
	 * written and read with the model file. */
	struct timeline *timeline;
} model;

/* A model with zeroed parameters. vocab_cps: cfg->vocab_size codepoints. */
model *model_create(const model_config *cfg, const uint32_t *vocab_cps, av_error *err);
void model_destroy(model *m);
/* Set meta strings (copied as the file can hold them: a byte that is not
 * UTF-8 becomes U+FFFD, and each is cut to AV_MAX_STRING bytes). */
bool model_set_meta_strings(model *m, const char *name, const char *corpus, av_error *err);
/* GPT-2 style initialisation, each tensor as the size table says: N(0, 0.02)
 * weights, zero biases, LayerNorm gain 1, residual projections scaled by
 * 1/sqrt(2L). Deterministic in seed. Allocates nothing, so cannot fail. */
void model_init_random(model *m, uint64_t seed);

/* Activations of a forward pass over B sequences of T tokens, one allocation.
 * Per layer l, arrays are indexed [l] (each its own slice). */
typedef struct layer_acts {
	float *ln1, *ln1_mean, *ln1_rstd; /* (B,T,d), (B,T), (B,T) */
	float *qkv;			  /* (B,T,3d) */
	float *preatt, *att;		  /* (B,h,T,T) raw q.k, softmax weights */
	float *atty;			  /* (B,T,d) attention output before proj */
	float *res2;			  /* (B,T,d) x after the attention residual */
	float *ln2, *ln2_mean, *ln2_rstd; /* (B,T,d), (B,T), (B,T) */
	float *fch, *fch_gelu;		  /* (B,T,4d); fch: gelu' of it in training */
	float *res3;			  /* (B,T,d) x after the feed-forward residual */
} layer_acts;

/* A head's attention replaced by a pattern of the caller's, in the passes
 * that model_forward runs (the lab's checks that a head carries the
 * mechanism its task was made for, lab.h, lab_pattern_accuracy, and that an
 * idle head's attention would do a carrier's work, lab_copy_accuracy).
 * fill writes the (T, T) weights of one text's rows, w[i * T + j] the
 * weight row i gives key j, each row summing to 1 (keys after i at 0 for a
 * causal model); tok is the text's T token ids. Without fill, the head
 * takes the weights that head `from` of the same layer gives in the same
 * pass (a head of another layer: no override). */
typedef struct head_override {
	int head; /* l * heads + h */
	void (*fill)(float *w, const int32_t *tok, int T, const void *ctx);
	const void *ctx;
	int from; /* l * heads + h', when fill is NULL */
} head_override;

typedef struct activations {
	int B, T;	/* capacity */
	int max_rows;	/* capacity of logits, in rows */
	float *encoded; /* (B,T,d) embedding + positions */
	layer_acts layer[AV_MAX_LAYERS];
	float *lnf, *lnf_mean, *lnf_rstd; /* (B,T,d), (B,T), (B,T) */
	float *logits;			  /* (max_rows, V) */
	float *scratch;			  /* (B,T,4d) work space for the passes */
	float *mem;			  /* the one allocation */
	size_t nfloats;
	/* Heads switched off in the passes run on these activations (ablation):
	 * ablate[l * heads + h] nonzero zeroes head h's output in layer l before
	 * the output projection, as if the head had attended to nothing. NULL
	 * (what activations_init sets): every head on. Training never sets it. */
	const uint8_t *ablate;
	/* With ablate, model_forward gives a switched-off head's rows the
	 * average of its output over the text's rows instead of zero (a causal
	 * row's over the rows up to it, its own included): mean-ablation, which
	 * takes away most of what the head says about each position and keeps
	 * what it says on average over the text. The view's pass (infer.h)
	 * always zeroes. false: what activations_init sets. */
	bool ablate_mean;
	/* NULL (what activations_init sets): every head's own attention. */
	const head_override *pattern;
	const int32_t *tokens; /* the pass's token ids (model_forward sets it) */
} activations;

/* Room for B sequences of up to T tokens and logits for max_rows rows. */
bool activations_init(activations *a, const model_config *cfg, int B, int T, int max_rows,
		      av_error *err);
void activations_finish(activations *a);

/* Forward pass of tokens (B,T) through the final LayerNorm. B <= a->B,
 * T <= a->T and T <= context. Afterwards a->layer[l].att etc. are laid out for
 * this B and T (a (B,h,T,T) slice per layer). */
void model_forward(const model *m, activations *a, const int32_t *tokens, int B, int T);
/* The same with the plain-loop ops, for tests. */
void model_forward_ref(const model *m, activations *a, const int32_t *tokens, int B, int T);
/* Block `layer` alone (as model_forward runs it) on x (B,T,d): fills
 * a->layer[layer] and returns its output, a->layer[layer].res3. For the
 * training step, which runs its last block on the target rows only: fch
 * holds the GELU's derivative at the fc output (gelu_forward_grad), not the
 * output itself, which the backward never needs. */
const float *model_block_forward(const model *m, activations *a, int layer, const float *x, int B,
				 int T);
/* logits[r] = lnf[rows[r]] wte^T + out_b for nrows rows (indices into B*T);
 * rows == NULL means rows 0..nrows-1. nrows <= a->max_rows. */
void model_logits(const model *m, activations *a, const int32_t *rows, int nrows);
/* logits (nrows, V) = h (nrows, d) out_w^T + out_b: the output projection
 * (tied: out_w is wte); a model without the special tokens has no logit for
 * ids 0..2, -INFINITY there, so every softmax gives them 0. Every pass that
 * makes logits calls it. */
void model_unembed(const model *m, float *logits, const float *h, int nrows);
/* The model's GELU (its architecture's form) on n values. */
void model_gelu(const model *m, float *out, const float *in, int n);

/* Run the model on tokens[0..n) (n <= context, ids already set) and fill r
 * (which it allocates; free with attn_result_finish), through the view's pass
 * (infer.h) without a cache. ws must have B >= 1,
 * T >= n, max_rows >= n. If topk > 0, predictions are computed for every
 * position: for a masked model, what it predicts at position p when p alone is
 * replaced by the mask token; for a causal model, the character after p. */
bool model_attend(const model *m, activations *ws, const token *tokens, int n, int topk,
		  attn_result *r, av_error *err);

/* Top-k predictions at position pos only (cheaper than model_attend for one row). */
void model_predict(const model *m, activations *ws, const token *tokens, int n, int pos, int topk,
		   int32_t *ids, float *probs);

#endif

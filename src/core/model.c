/* The model: configuration checks, the parameter size table, activations and
 * the forward pass (model.h). */
#include "attnview/model.h"
#include "attnview/i18n.h"

#include "attnview/ops.h"
#include "attnview/rng.h"
#include "attnview/timeline.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *objective_name(objective o)
{
	return o == OBJ_CAUSAL ? "causal" : "masked";
}

/* ---- the architecture ---- */

static const char *const positions_names[] = {"sinusoidal", "learned"};
static const char *const gelu_names[] = {"tanh", "erf"};
static const char *const scale_names[] = {"sqrt(d)", "1"};
static const char *const output_names[] = {"tied", "untied"};
static const char *const specials_names[] = {"own", "none"};
static const char *const biases_names[] = {"yes", "none"};
static const char *const origin_names[] = {"attnview", "nanoGPT", "minGPT"};

#define ARCH_FIELD(f, names)                                                                       \
	{                                                                                          \
#f, offsetof(model_arch, f), sizeof names / sizeof names[0], names                 \
	}
const arch_field model_arch_fields[ARCH_NFIELDS] = {
    ARCH_FIELD(positions, positions_names), ARCH_FIELD(gelu, gelu_names),
    ARCH_FIELD(scale, scale_names),	    ARCH_FIELD(output, output_names),
    ARCH_FIELD(specials, specials_names),   ARCH_FIELD(biases, biases_names),
    ARCH_FIELD(origin, origin_names),
};
_Static_assert(sizeof(model_arch) == ARCH_NFIELDS * sizeof(uint32_t) &&
		   offsetof(model_arch, origin) == ARCH_ORIGIN * sizeof(uint32_t),
	       "model_arch_fields names every field of model_arch, the origin last");
_Static_assert(sizeof positions_names / sizeof *positions_names == POS_LEARNED + 1 &&
		   sizeof gelu_names / sizeof *gelu_names == GELU_ERF + 1 &&
		   sizeof scale_names / sizeof *scale_names == SCALE_ONE + 1 &&
		   sizeof output_names / sizeof *output_names == OUT_UNTIED + 1 &&
		   sizeof specials_names / sizeof *specials_names == SPECIALS_NONE + 1 &&
		   sizeof biases_names / sizeof *biases_names == BIASES_NONE + 1 &&
		   sizeof origin_names / sizeof *origin_names == ORIGIN_MINGPT + 1,
	       "a name for every value of the architecture's enums");

bool model_arch_is_own(const model_arch *a)
{
	for (int i = 0; i < ARCH_NFIELDS; i++)
		if (i != ARCH_ORIGIN && arch_value(a, &model_arch_fields[i]))
			return false;
	return true;
}

static bool arch_check(const model_config *c, av_error *err)
{
	for (int i = 0; i < ARCH_NFIELDS; i++) {
		const arch_field *f = &model_arch_fields[i];
		if (arch_value(&c->arch, f) >= f->count)
			return av_fail(err,
				       _("architecture field %s is %u, which is unknown (0..%u)"),
				       f->name, arch_value(&c->arch, f), f->count - 1);
	}
	if (c->arch.specials == SPECIALS_NONE && c->objective != OBJ_CAUSAL)
		return av_fail(err, _("a model without the special tokens must be causal: the "
				      "masked objective needs the mask token"));
	return true;
}

bool model_config_check(const model_config *c, av_error *err)
{
	if (c->objective > OBJ_CAUSAL)
		return av_fail(err, _("objective %u is unknown (0 masked, 1 causal)"),
			       c->objective);
	if (!arch_check(c, err))
		return false;
	if (c->vocab_size < TOK_NSPECIAL + 1 || c->vocab_size > AV_MAX_VOCAB)
		return av_fail(err, _("vocabulary size %u is outside 4..%u"), c->vocab_size,
			       AV_MAX_VOCAB);
	if (c->dim < 2 || c->dim > AV_MAX_DIM || c->dim % 2)
		return av_fail(err, _("dimension %u must be even and within 2..%u"), c->dim,
			       AV_MAX_DIM);
	if (c->heads < 1 || c->heads > AV_MAX_HEADS)
		return av_fail(err, _("%u heads is outside 1..%u"), c->heads, AV_MAX_HEADS);
	if (c->dim % c->heads)
		return av_fail(err,
			       _("dimension %u is not divisible by %u heads; choose a dimension "
				 "that is a multiple of the number of heads"),
			       c->dim, c->heads);
	if (c->layers < 1 || c->layers > AV_MAX_LAYERS)
		return av_fail(err, _("%u layers is outside 1..%u"), c->layers, AV_MAX_LAYERS);
	if (c->context < 1 || c->context > AV_MAX_CONTEXT)
		return av_fail(err, _("context %u is outside 1..%u tokens"), c->context,
			       AV_MAX_CONTEXT);
	uint64_t cells = (uint64_t)c->layers * c->heads * c->context * c->context;
	if (cells > AV_MAX_ATTN_CELLS)
		return av_fail(err,
			       _("%u layers x %u heads x %u^2 context positions is %llu attention "
				 "weights per text, more than the limit of %u; use fewer layers or "
				 "heads or a shorter context"),
			       c->layers, c->heads, c->context, (unsigned long long)cells,
			       AV_MAX_ATTN_CELLS);
	/* Every dimension is bounded above, so the sum cannot overflow size_t. */
	if (model_num_params(c) > AV_MAX_PARAMS)
		return av_fail(err, _("%zu parameters is more than the limit of %u"),
			       model_num_params(c), AV_MAX_PARAMS);
	return true;
}

/* ---- the size table ---- */

/* A dimension of a tensor as a function of the configuration. */
typedef enum param_dim { DIM_1, DIM_D, DIM_3D, DIM_4D, DIM_V, DIM_T } param_dim;

/* Which models have a tensor: all, or those of an architecture variant. */
typedef enum param_when { WHEN_ALWAYS, WHEN_LEARNED_POS, WHEN_UNTIED } param_when;

typedef struct param_spec {
	const char *name;
	param_when when;
	bool per_layer; /* one per block, named "h<l>.<name>" */
	size_t field;	/* offset of its pointer in model_params or layer_params */
	param_dim rows, cols;
	param_init init;
	bool decay;
} param_spec;

#define MODEL_WIDE(f) false, offsetof(model_params, f)
#define PER_LAYER(f)  true, offsetof(layer_params, f)

/* The parameter layout, the one place it is written: every tensor in file
 * order, with its shape, its initialisation and whether AdamW decays it
 * (matrices only: LayerNorm gains and biases are left alone, as in GPT-2 and
 * the PyTorch reference). The per-layer rows are contiguous and repeat once
 * per block: wte, h0.ln1_w .. h0.fc2_b, h1.ln1_w .. h1.fc2_b, ..., lnf_w,
 * lnf_b, out_b. Allocation (model_num_params, model_params_map),
 * model_init_random, the optimizer, the model file and the tests all read it
 * through tensor_iter_next. (llm.c's fill_in_parameter_sizes is the model.) */
/* clang-format off */
static const param_spec param_table[] = {
	/* name    when              where               rows    cols    init           decay */
	{"wte",    WHEN_ALWAYS,      MODEL_WIDE(wte),    DIM_V,  DIM_D,  INIT_NORMAL,   true},
	{"wpe",    WHEN_LEARNED_POS, MODEL_WIDE(wpe),    DIM_T,  DIM_D,  INIT_NORMAL,   true},
	{"ln1_w",  WHEN_ALWAYS,      PER_LAYER(ln1_w),   DIM_D,  DIM_1,  INIT_ONE,      false},
	{"ln1_b",  WHEN_ALWAYS,      PER_LAYER(ln1_b),   DIM_D,  DIM_1,  INIT_ZERO,     false},
	{"qkv_w",  WHEN_ALWAYS,      PER_LAYER(qkv_w),   DIM_3D, DIM_D,  INIT_NORMAL,   true},
	{"qkv_b",  WHEN_ALWAYS,      PER_LAYER(qkv_b),   DIM_3D, DIM_1,  INIT_ZERO,     false},
	{"proj_w", WHEN_ALWAYS,      PER_LAYER(proj_w),  DIM_D,  DIM_D,  INIT_RESIDUAL, true},
	{"proj_b", WHEN_ALWAYS,      PER_LAYER(proj_b),  DIM_D,  DIM_1,  INIT_ZERO,     false},
	{"ln2_w",  WHEN_ALWAYS,      PER_LAYER(ln2_w),   DIM_D,  DIM_1,  INIT_ONE,      false},
	{"ln2_b",  WHEN_ALWAYS,      PER_LAYER(ln2_b),   DIM_D,  DIM_1,  INIT_ZERO,     false},
	{"fc_w",   WHEN_ALWAYS,      PER_LAYER(fc_w),    DIM_4D, DIM_D,  INIT_NORMAL,   true},
	{"fc_b",   WHEN_ALWAYS,      PER_LAYER(fc_b),    DIM_4D, DIM_1,  INIT_ZERO,     false},
	{"fc2_w",  WHEN_ALWAYS,      PER_LAYER(fc2_w),   DIM_D,  DIM_4D, INIT_RESIDUAL, true},
	{"fc2_b",  WHEN_ALWAYS,      PER_LAYER(fc2_b),   DIM_D,  DIM_1,  INIT_ZERO,     false},
	{"lnf_w",  WHEN_ALWAYS,      MODEL_WIDE(lnf_w),  DIM_D,  DIM_1,  INIT_ONE,      false},
	{"lnf_b",  WHEN_ALWAYS,      MODEL_WIDE(lnf_b),  DIM_D,  DIM_1,  INIT_ZERO,     false},
	{"out_w",  WHEN_UNTIED,      MODEL_WIDE(out_w),  DIM_V,  DIM_D,  INIT_NORMAL,   true},
	{"out_b",  WHEN_ALWAYS,      MODEL_WIDE(out_b),  DIM_V,  DIM_1,  INIT_ZERO,     false},
};
/* clang-format on */
#define NSPEC (sizeof param_table / sizeof param_table[0])

static uint32_t dim_value(const model_config *c, param_dim k)
{
	switch (k) {
	case DIM_D:
		return c->dim;
	case DIM_3D:
		return 3 * c->dim;
	case DIM_4D:
		return 4 * c->dim;
	case DIM_V:
		return c->vocab_size;
	case DIM_T:
		return c->context;
	case DIM_1:
	default:
		return 1;
	}
}

tensor_iter tensor_iter_start(const model_config *cfg)
{
	return (tensor_iter){cfg, 0, 0, 0};
}

/* The next tensor without its name (the carving runs this every step);
 * returns its row of the table, NULL after the last. */
static bool has_tensor(const model_config *c, const param_spec *s)
{
	return s->when == WHEN_ALWAYS ||
	       (s->when == WHEN_LEARNED_POS && c->arch.positions == POS_LEARNED) ||
	       (s->when == WHEN_UNTIED && c->arch.output == OUT_UNTIED);
}

static const param_spec *next_tensor(tensor_iter *it, tensor_info *t)
{
	while (it->row < NSPEC) {
		const param_spec *s = &param_table[it->row];
		if (!s->per_layer && !has_tensor(it->cfg, s)) {
			it->row++; /* a model-wide tensor of another architecture */
			continue;
		}
		if (s->per_layer && it->layer >= it->cfg->layers) {
			/* Past the last block: on to the rows after the per-layer ones. */
			while (it->row < NSPEC && param_table[it->row].per_layer)
				it->row++;
			continue;
		}
		t->layer = s->per_layer ? (int)it->layer : -1;
		t->rows = dim_value(it->cfg, s->rows);
		t->cols = dim_value(it->cfg, s->cols);
		t->size = (size_t)t->rows * t->cols;
		t->offset = it->offset;
		t->init = s->init;
		t->decay = s->decay;
		it->offset += t->size;
		if (!s->per_layer || (it->row + 1 < NSPEC && param_table[it->row + 1].per_layer)) {
			it->row++;
		} else {
			/* The block's last row: back to its first for the next block. */
			while (it->row > 0 && param_table[it->row - 1].per_layer)
				it->row--;
			it->layer++;
		}
		return s;
	}
	return NULL;
}

bool tensor_iter_next(tensor_iter *it, tensor_info *t)
{
	const param_spec *s = next_tensor(it, t);
	if (!s)
		return false;
	if (t->layer >= 0)
		snprintf(t->name, sizeof t->name, "h%d.%s", t->layer, s->name);
	else
		snprintf(t->name, sizeof t->name, "%s", s->name);
	return true;
}

size_t model_tensor_table(const model_config *cfg, tensor_info *out, size_t max)
{
	tensor_iter it = tensor_iter_start(cfg);
	tensor_info t;
	size_t n = 0;
	for (; tensor_iter_next(&it, &t); n++)
		if (out && n < max)
			out[n] = t;
	return n;
}

size_t model_num_params(const model_config *cfg)
{
	tensor_iter it = tensor_iter_start(cfg);
	tensor_info t;
	while (next_tensor(&it, &t))
		;
	return it.offset;
}

void model_params_map(model_params *p, float *base, const model_config *cfg)
{
	memset(p, 0, sizeof *p);
	tensor_iter it = tensor_iter_start(cfg);
	tensor_info t;
	const param_spec *s;
	while ((s = next_tensor(&it, &t))) {
		char *owner = t.layer < 0 ? (char *)p : (char *)&p->layer[t.layer];
		float **field = (float **)(void *)(owner + s->field);
		*field = base + t.offset;
	}
}

model *model_create(const model_config *cfg, const uint32_t *vocab_cps, av_error *err)
{
	if (!model_config_check(cfg, err))
		return NULL;
	model *m = calloc(1, sizeof *m);
	if (!m) {
		av_fail(err, _("out of memory for the model"));
		return NULL;
	}
	m->cfg = *cfg;
	m->meta.val_loss = m->meta.val_acc = NAN;
	m->meta.base_loss = m->meta.base_acc = NAN;
	if (!vocab_init(&m->vocab, vocab_cps, cfg->vocab_size, "model", err)) {
		free(m);
		return NULL;
	}
	m->nparams = model_num_params(cfg);
	m->params = av_alloc_large(m->nparams * sizeof(float), true);
	const bool learned = cfg->arch.positions == POS_LEARNED;
	if (!learned)
		m->pe = malloc((size_t)cfg->context * cfg->dim * sizeof(float));
	if (!m->params || (!learned && !m->pe)) {
		av_fail(err, _("out of memory for %zu parameters"), m->nparams);
		model_destroy(m);
		return NULL;
	}
	model_params_map(&m->p, m->params, cfg);
	if (learned)
		m->pe = m->p.wpe;
	else
		positions_init(m->pe, (int)cfg->context, (int)cfg->dim);
	m->out_w = cfg->arch.output == OUT_UNTIED ? m->p.out_w : m->p.wte;
	m->emb_scale = cfg->arch.scale == SCALE_ONE ? 1.0f : sqrtf((float)cfg->dim);
	return m;
}

void model_destroy(model *m)
{
	if (!m)
		return;
	vocab_finish(&m->vocab);
	free(m->meta.name);
	free(m->meta.corpus);
	if (m->pe != m->p.wpe)
		free(m->pe);
	free(m->params);
	timeline_destroy(m->timeline);
	free(m);
}

/* s as the file can hold it (attnview(5)): valid UTF-8, each byte that is
 * not becoming U+FFFD (a path's bytes in another encoding), and at most
 * AV_MAX_STRING bytes, cut between characters. */
static bool dup_string(char **dst, const char *s, av_error *err)
{
	s = s ? s : "";
	char *c = malloc(3 * strlen(s) + 1);
	if (!c)
		return av_fail(err, _("out of memory"));
	size_t k = 0;
	while (*s) {
		char esc[AV_ESC_SIZE];
		size_t len = av_char_shown(s, esc, NULL);
		bool invalid = len == 1 && (unsigned char)*s >= 0x80;
		if (k + (invalid ? 3 : len) > AV_MAX_STRING)
			break;
		memcpy(c + k, invalid ? "\xEF\xBF\xBD" : s, invalid ? 3 : len);
		k += invalid ? 3 : len;
		s += len;
	}
	c[k] = '\0';
	free(*dst);
	*dst = c;
	return true;
}

bool model_set_meta_strings(model *m, const char *name, const char *corpus, av_error *err)
{
	return dup_string(&m->meta.name, name, err) && dup_string(&m->meta.corpus, corpus, err);
}

void model_init_random(model *m, uint64_t seed)
{
	rng r;
	rng_seed(&r, seed);
	const float std = 0.02f;
	const float res_std = std / sqrtf(2.0f * (float)m->cfg.layers);
	/* Table order, so the stream of random numbers, and with it the model,
	 * depends only on the seed and the configuration. */
	tensor_iter it = tensor_iter_start(&m->cfg);
	tensor_info t;
	while (next_tensor(&it, &t)) {
		float *x = m->params + t.offset;
		for (size_t j = 0; j < t.size; j++) {
			switch (t.init) {
			case INIT_ONE:
				x[j] = 1.0f;
				break;
			case INIT_NORMAL:
				x[j] = std * rng_normal(&r);
				break;
			case INIT_RESIDUAL:
				x[j] = res_std * rng_normal(&r);
				break;
			case INIT_ZERO:
			default:
				x[j] = 0.0f;
				break;
			}
		}
	}
}

/* ---- activations ---- */

bool activations_init(activations *a, const model_config *cfg, int B, int T, int max_rows,
		      av_error *err)
{
	memset(a, 0, sizeof *a);
	const size_t d = cfg->dim, NH = cfg->heads, L = cfg->layers;
	const size_t BT = (size_t)B * T;
	const size_t per_layer = BT * d			      /* ln1 */
				 + 2 * BT		      /* ln1 mean, rstd */
				 + BT * 3 * d		      /* qkv */
				 + 2 * (size_t)B * NH * T * T /* preatt, att */
				 + BT * d		      /* atty */
				 + BT * d		      /* res2 */
				 + BT * d + 2 * BT	      /* ln2 */
				 + 2 * BT * 4 * d	      /* fch, fch_gelu */
				 + BT * d;		      /* res3 */
	const size_t total = BT * d + L * per_layer + BT * d + 2 * BT +
			     (size_t)max_rows * cfg->vocab_size + BT * 4 * d;
	a->mem = av_alloc_large(total * sizeof(float), false);
	if (!a->mem)
		return av_fail(err,
			       _("out of memory for activations (%zu MiB); use a smaller batch "
				 "or context"),
			       total * sizeof(float) >> 20);
	a->nfloats = total;
	a->B = B;
	a->T = T;
	a->max_rows = max_rows;
	float *x = a->mem;
#define TAKE(ptr, n) (ptr = x, x += (n))
	TAKE(a->encoded, BT * d);
	for (size_t l = 0; l < L; l++) {
		layer_acts *la = &a->layer[l];
		TAKE(la->ln1, BT * d);
		TAKE(la->ln1_mean, BT);
		TAKE(la->ln1_rstd, BT);
		TAKE(la->qkv, BT * 3 * d);
		TAKE(la->preatt, (size_t)B * NH * T * T);
		TAKE(la->att, (size_t)B * NH * T * T);
		TAKE(la->atty, BT * d);
		TAKE(la->res2, BT * d);
		TAKE(la->ln2, BT * d);
		TAKE(la->ln2_mean, BT);
		TAKE(la->ln2_rstd, BT);
		TAKE(la->fch, BT * 4 * d);
		TAKE(la->fch_gelu, BT * 4 * d);
		TAKE(la->res3, BT * d);
	}
	TAKE(a->lnf, BT * d);
	TAKE(a->lnf_mean, BT);
	TAKE(a->lnf_rstd, BT);
	TAKE(a->logits, (size_t)max_rows * cfg->vocab_size);
	TAKE(a->scratch, BT * 4 * d);
#undef TAKE
	return true;
}

void activations_finish(activations *a)
{
	free(a->mem);
	memset(a, 0, sizeof *a);
}

/* ---- forward ---- */

typedef void (*matmul_fn)(float *, const float *, const float *, const float *, int, int, int);
typedef void (*attention_fn)(float *, float *, float *, const float *, int, int, int, int, bool);

/* Ablation: the switched-off heads' columns of the attention output (B,T,d)
 * are zero, so the output projection adds only its bias for them; or, with
 * mean (activations.ablate_mean), each row's are the mean of the head's
 * output over its text's rows, a causal row's over the rows up to it (so no
 * later character reaches it), summed in double in row order. */
static void ablate_heads(float *atty, const uint8_t *off, int B, int T, int d, int NH, bool mean,
			 bool causal)
{
	const int hs = d / NH;
	for (int h = 0; h < NH; h++) {
		if (!off[h])
			continue;
		for (int b = 0; b < B; b++) {
			float *y = atty + (size_t)b * T * d + (size_t)h * hs;
			if (!mean) {
				for (int r = 0; r < T; r++)
					memset(y + (size_t)r * d, 0, (size_t)hs * sizeof *y);
				continue;
			}
			double sum[AV_MAX_DIM], run[AV_MAX_DIM];
			memset(sum, 0, (size_t)hs * sizeof *sum);
			for (int r = 0; r < T; r++)
				for (int c = 0; c < hs; c++)
					sum[c] += y[(size_t)r * d + c];
			/* A causal row's mean is over rows 0..r: the sums again,
			 * row by row, each row's written once read. */
			memset(run, 0, (size_t)hs * sizeof *run);
			for (int r = 0; r < T; r++)
				for (int c = 0; c < hs; c++) {
					run[c] += y[(size_t)r * d + c];
					y[(size_t)r * d + c] =
					    (float)(causal ? run[c] / (r + 1) : sum[c] / T);
				}
		}
	}
}

/* The pattern's head (activations.pattern) in this layer: its weights (the
 * fill's, or another head's of this layer in this pass: written over its
 * att, where the view and the dumps read them) times its values, into its
 * columns of atty. Its own weights again change nothing. */
static void pattern_head(const activations *a, layer_acts *la, int layer, int B, int T, int d,
			 int NH)
{
	const head_override *p = a->pattern;
	if (!p || p->head / NH != layer ||
	    (!p->fill && (p->from < 0 || p->from / NH != layer || p->from == p->head)))
		return;
	const int h = p->head % NH, hs = d / NH;
	for (int b = 0; b < B; b++) {
		float *w = la->att + ((size_t)b * NH + (size_t)h) * T * T;
		if (p->fill)
			p->fill(w, a->tokens + (size_t)b * T, T, p->ctx);
		else
			memcpy(w, la->att + ((size_t)b * NH + (size_t)(p->from % NH)) * T * T,
			       (size_t)T * T * sizeof *w);
		for (int i = 0; i < T; i++) {
			float *o = la->atty + ((size_t)b * T + i) * d + (size_t)h * hs;
			memset(o, 0, (size_t)hs * sizeof *o);
			for (int j = 0; j < T; j++) {
				const float *v =
				    la->qkv + ((size_t)b * T + j) * 3 * d + 2 * d + (size_t)h * hs;
				for (int c = 0; c < hs; c++)
					o[c] += w[(size_t)i * T + j] * v[c];
			}
		}
	}
}

/* One block on the rows (B,T): reads x (N,d), fills a->layer[layer], returns
 * its output (layer_acts.res3). */
static const float *block_forward(const model *m, activations *a, int layer, const float *x, int B,
				  int T, matmul_fn matmul, attention_fn attention, bool training)
{
	const model_config *c = &m->cfg;
	const int d = (int)c->dim, NH = (int)c->heads, N = B * T;
	const bool causal = c->objective == OBJ_CAUSAL;
	const layer_params *p = &m->p.layer[layer];
	layer_acts *la = &a->layer[layer];
	/* Attention sub-block: x + proj(attention(ln1(x))). The projection's
	 * output goes through scratch before the residual. */
	layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, x, p->ln1_w, p->ln1_b, N, d);
	matmul(la->qkv, la->ln1, p->qkv_w, p->qkv_b, N, d, 3 * d);
	attention(la->atty, la->preatt, la->att, la->qkv, B, T, d, NH, causal);
	pattern_head(a, la, layer, B, T, d, NH);
	if (a->ablate)
		ablate_heads(la->atty, a->ablate + (size_t)layer * (size_t)NH, B, T, d, NH,
			     a->ablate_mean, causal);
	matmul(a->scratch, la->atty, p->proj_w, p->proj_b, N, d, d);
	residual_forward(la->res2, x, a->scratch, N * d);
	/* Feed-forward sub-block: x + fc2(gelu(fc(ln2(x)))). */
	layernorm_forward(la->ln2, la->ln2_mean, la->ln2_rstd, la->res2, p->ln2_w, p->ln2_b, N, d);
	matmul(la->fch, la->ln2, p->fc_w, p->fc_b, N, d, 4 * d);
	if (training && c->arch.gelu == GELU_ERF)
		gelu_erf_forward_grad(la->fch_gelu, la->fch, N * 4 * d);
	else if (training)
		gelu_forward_grad(la->fch_gelu, la->fch, N * 4 * d);
	else
		model_gelu(m, la->fch_gelu, la->fch, N * 4 * d);
	matmul(a->scratch, la->fch_gelu, p->fc2_w, p->fc2_b, N, 4 * d, d);
	residual_forward(la->res3, la->res2, a->scratch, N * d);
	return la->res3;
}

const float *model_block_forward(const model *m, activations *a, int layer, const float *x, int B,
				 int T)
{
	return block_forward(m, a, layer, x, B, T, matmul_forward, attention_forward, true);
}

static void forward(const model *m, activations *a, const int32_t *tokens, int B, int T,
		    matmul_fn matmul, attention_fn attention)
{
	const model_config *c = &m->cfg;
	const int d = (int)c->dim, N = B * T;

	a->tokens = tokens;
	embed_forward(a->encoded, tokens, m->p.wte, m->pe, m->emb_scale, B, T, d);
	const float *x = a->encoded; /* the residual stream, (N, d) */
	for (int l = 0; l < (int)c->layers; l++)
		x = block_forward(m, a, l, x, B, T, matmul, attention, false);
	layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, x, m->p.lnf_w, m->p.lnf_b, N, d);
}

void model_forward(const model *m, activations *a, const int32_t *tokens, int B, int T)
{
	forward(m, a, tokens, B, T, matmul_forward, attention_forward);
}

void model_forward_ref(const model *m, activations *a, const int32_t *tokens, int B, int T)
{
	forward(m, a, tokens, B, T, matmul_forward_ref, attention_forward_ref);
}

void model_logits(const model *m, activations *a, const int32_t *rows, int nrows)
{
	const int d = (int)m->cfg.dim;
	const float *h = a->lnf;
	if (rows) {
		/* Gather the selected rows so one product covers them all. */
		float *g = a->scratch;
		for (int r = 0; r < nrows; r++)
			memcpy(g + (size_t)r * d, a->lnf + (size_t)rows[r] * d, d * sizeof(float));
		h = g;
	}
	model_unembed(m, a->logits, h, nrows);
}

void model_unembed(const model *m, float *logits, const float *h, int nrows)
{
	const int d = (int)m->cfg.dim, V = (int)m->cfg.vocab_size;
	matmul_forward(logits, h, m->out_w, m->p.out_b, nrows, d, V);
	if (m->cfg.arch.specials == SPECIALS_NONE)
		for (int r = 0; r < nrows; r++)
			for (int i = 0; i < TOK_NSPECIAL; i++)
				logits[(size_t)r * V + i] = -INFINITY;
}

void model_gelu(const model *m, float *out, const float *in, int n)
{
	if (m->cfg.arch.gelu == GELU_ERF)
		gelu_erf_forward(out, in, n);
	else
		gelu_forward(out, in, n);
}

/* model_attend and model_predict, what the view and the dump show, are in
 * infer.c, on the pass written for them. */

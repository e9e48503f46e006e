/* The architecture variants of models other programs train (nanoGPT, minGPT;
 * man 5 attnview, Architecture): the exact GELU against binary64; the view's
 * pass, the reference pass and the prediction logits of models with learned
 * positions, either GELU, the embedding scale 1, an untied output matrix, no
 * special tokens and no biases, each number within its derived bound of
 * binary64 (bound.h); a wrong form of any of them leaves the bound; and the
 * model file's version 2: a round trip keeps every bit, damage is refused. */
#include "bound.h"
#include "harness.h"

#include "attnview/infer.h"
#include "attnview/modelfile.h"
#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U 0x1p-24

/* The exact GELU within 2.3u |x| of binary64's x erfc(-x/sqrt 2)/2 (what
 * vec8.h states; the bound allows 5u |x|), its derivative within 1e-6. */
static void check_gelu_erf(void)
{
	enum { N = 280001 };
	float *x = malloc(2 * N * sizeof *x), *y = x + N;
	for (int i = 0; i < N; i++)
		x[i] = (float)(-14.0 + 28.0 * i / (N - 1));
	gelu_erf_forward(y, x, N);
	double worst = 0, wx = 0;
	for (int i = 0; i < N; i++) {
		double v = x[i], want = v * 0.5 * erfc(-v / sqrt(2.0));
		double r = v == 0 ? fabs(y[i]) : fabs(y[i] - want) / (fabs(v) * U);
		if (r > worst)
			worst = r, wx = v;
	}
	printf("exact GELU: within %.2f u |x| of binary64 (worst at x = %g)\n", worst, wx);
	CHECKF(worst <= 2.3, "the exact GELU is %.2f u |x| from binary64 at %g", worst, wx);
	float *g = malloc(2 * N * sizeof *g), *d = g + N;
	memcpy(d, x, N * sizeof *d);
	gelu_erf_forward_grad(g, d, N);
	double dworst = 0;
	for (int i = 0; i < N; i++) {
		double v = x[i], phi = exp(-v * v / 2) / sqrt(2 * M_PI);
		double want = 0.5 * erfc(-v / sqrt(2.0)) + v * phi;
		dworst = fmax(dworst, fabs(d[i] - want));
		CHECK(g[i] == y[i]);
	}
	CHECKF(dworst <= 1e-6, "the exact GELU's derivative is %.2g off", dworst);
	/* The two forms differ by up to 5e-4 around |x| = 2: enough for the
	 * bound to tell them apart (check_wrong_form). */
	gelu_forward(g, x, N);
	double apart = 0;
	for (int i = 0; i < N; i++)
		apart = fmax(apart, fabs(g[i] - y[i]));
	CHECKF(apart > 1e-4, "the tanh and erf forms are only %.2g apart", apart);
	free(x);
	free(g);
}

/* A random model of an architecture: parameters N(0, 0.02 * scale), LayerNorm
 * gains 1 + N(0, ...), and the zeros the architecture promises. */
static model *arch_model(objective obj, model_arch a, float scale, uint64_t seed)
{
	model_config cfg = {(uint32_t)obj, 40, 24, 3, 2, 32, a};
	uint32_t cps[40];
	for (uint32_t i = 0; i < 40; i++)
		cps[i] = i < TOK_NSPECIAL ? AV_SPECIAL_CP + i : 'A' + i;
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	CHECKF(m != NULL, "%s", err.msg);
	if (!m)
		exit(1);
	model_init_random(m, seed);
	tensor_iter it = tensor_iter_start(&m->cfg);
	tensor_info t;
	uint64_t s = seed;
	while (tensor_iter_next(&it, &t)) {
		float *p = m->params + t.offset;
		for (size_t i = 0; i < t.size; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			float noise = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5) * 0.2f;
			p[i] =
			    t.init == INIT_ONE ? 1.0f + noise * scale : p[i] * scale + noise * 0.1f;
			if (t.init == INIT_ZERO && a.biases == BIASES_NONE)
				p[i] = 0.0f;
		}
		bool vrows = strcmp(t.name, "wte") == 0 || strcmp(t.name, "out_w") == 0 ||
			     strcmp(t.name, "out_b") == 0;
		if (a.specials == SPECIALS_NONE && vrows)
			memset(p, 0, TOK_NSPECIAL * t.cols * sizeof *p);
	}
	return m;
}

/* The view's pass (infer_forward) and every position's prediction logits
 * (infer_pred_logits) of m, against the bound b of `bm` (m itself, or a
 * model of another form, which the numbers must leave). Returns the worst
 * ratio of a difference to its bound. */
static double pass_ratio(const model *m, const model *bm, const int32_t *ids, int n)
{
	const model_config *c = &m->cfg;
	const size_t L = c->layers, H = c->heads, V = c->vocab_size, nn = (size_t)n * n;
	float *att = malloc(L * H * nn * sizeof *att), *sc = malloc(L * H * nn * sizeof *sc);
	float *lg = malloc((size_t)n * V * sizeof *lg);
	token *tok = calloc((size_t)n, sizeof *tok);
	double worst = 0;
	activations ws;
	av_error err;
	CHECK(activations_init(&ws, c, 1, n, n, &err));
	CHECK(infer_forward(m, &ws, NULL, ids, n, att, sc, NULL, NULL, &err));
	for (int i = 0; i < n; i++)
		tok[i].id = ids[i];
	for (int p = 0; p < n; p++) {
		/* the masked model's row p masked, as the bound's row pass does */
		fwd_bound rb;
		int32_t x[64];
		memcpy(x, ids, (size_t)n * sizeof *x);
		if (c->objective == OBJ_MASKED)
			x[p] = TOK_MASK;
		CHECK(infer_pred_logits(m, &ws, NULL, tok, n, p, lg + (size_t)p * V, NULL, NULL,
					&err));
		CHECK(fwd_bound_compute_row(&rb, bm, x, n, NULL, p));
		worst = fmax(worst, bound_ratio(lg + (size_t)p * V, rb.logits + (size_t)p * V,
						rb.logits_err + (size_t)p * V, V, NULL));
		fwd_bound_finish(&rb);
	}
	fwd_bound b;
	CHECK(fwd_bound_compute(&b, bm, ids, n, NULL));
	worst = fmax(worst, fmax(bound_ratio(att, b.att, b.att_err, L * H * nn, NULL),
				 bound_ratio(sc, b.score, b.score_err, L * H * nn, NULL)));
	fwd_bound_finish(&b);
	activations_finish(&ws);
	free(att);
	free(sc);
	free(lg);
	free(tok);
	return worst;
}

static const model_arch ARCHS[] = {
    /* nanoGPT: learned positions, erf, scale 1, tied, no specials, biases */
    {POS_LEARNED, GELU_ERF, SCALE_ONE, OUT_TIED, SPECIALS_NONE, BIASES_ON, ORIGIN_NANOGPT},
    /* nanoGPT with bias=False */
    {POS_LEARNED, GELU_ERF, SCALE_ONE, OUT_TIED, SPECIALS_NONE, BIASES_NONE, ORIGIN_NANOGPT},
    /* minGPT: the tanh form, an untied lm_head */
    {POS_LEARNED, GELU_TANH, SCALE_ONE, OUT_UNTIED, SPECIALS_NONE, BIASES_ON, ORIGIN_MINGPT},
    /* each variant alone on attnview's own model */
    {POS_LEARNED, 0, 0, 0, 0, 0, 0},
    {0, GELU_ERF, 0, 0, 0, 0, 0},
    {0, 0, SCALE_ONE, 0, 0, 0, 0},
    {0, 0, 0, OUT_UNTIED, 0, 0, 0},
};
#define NARCH (sizeof ARCHS / sizeof ARCHS[0])

static void random_ids(int32_t *ids, int n, uint64_t seed)
{
	for (int i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		ids[i] = TOK_NSPECIAL + (int32_t)((seed >> 33) % (40 - TOK_NSPECIAL));
	}
	ids[n / 2] = TOK_UNK; /* an unknown character: a zero row without specials */
}

/* Every architecture, both objectives where it allows, at three scales of
 * the weights: every weight, score and logit within its bound. */
static void check_forward(void)
{
	int32_t ids[32];
	for (size_t k = 0; k < NARCH; k++)
		for (int obj = OBJ_MASKED; obj <= OBJ_CAUSAL; obj++) {
			if (ARCHS[k].specials == SPECIALS_NONE && obj == OBJ_MASKED)
				continue;
			for (int s = 0; s < 3; s++) {
				const float scale = s == 0 ? 1.0f : s == 1 ? 10.0f : 40.0f;
				model *m = arch_model((objective)obj, ARCHS[k], scale, 7 + k);
				random_ids(ids, 32, 11 + k + (uint64_t)s);
				double r = pass_ratio(m, m, ids, 32);
				printf(
				    "architecture %zu, %s, weights x%g: difference / bound %.3f\n",
				    k, objective_name((objective)obj), (double)scale, r);
				CHECKF(r <= 1, "architecture %zu (%s, x%g): %.2f times the bound",
				       k, objective_name((objective)obj), (double)scale, r);
				model_destroy(m);
			}
		}
}

/* The bound tells a wrong form from the right one: attnview's numbers of a
 * model read with another GELU, scale, output or position table are far
 * outside the bound of the model as it is. */
static void check_wrong_form(void)
{
	int32_t ids[32];
	random_ids(ids, 32, 5);
	const model_arch right = ARCHS[2]; /* learned, tanh, 1, untied, none, biases */
	model *m = arch_model(OBJ_CAUSAL, right, 10.0f, 3);
	struct {
		const char *what;
		size_t offset;
	} flip[] = {{"the GELU", offsetof(model_arch, gelu)},
		    {"the embedding scale", offsetof(model_arch, scale)}};
	for (size_t i = 0; i < sizeof flip / sizeof flip[0]; i++) {
		model *w = arch_model(OBJ_CAUSAL, right, 10.0f, 3);
		uint32_t *f = (uint32_t *)(void *)((char *)&w->cfg.arch + flip[i].offset);
		*f = !*f;
		w->emb_scale = w->cfg.arch.scale == SCALE_ONE ? 1.0f : sqrtf((float)w->cfg.dim);
		double r = pass_ratio(w, m, ids, 32);
		printf("%s of the other form: %.3g times the bound\n", flip[i].what, r);
		CHECKF(r > 2, "%s of the other form stays within %.2f of the bound", flip[i].what,
		       r);
		model_destroy(w);
	}
	/* the output tied to wte instead of out_w, the sinusoids for the table */
	model *w = arch_model(OBJ_CAUSAL, right, 10.0f, 3);
	w->out_w = w->p.wte;
	double r = pass_ratio(w, m, ids, 32);
	CHECKF(r > 2, "the tied output stays within %.2f of the bound", r);
	positions_init(w->pe, (int)w->cfg.context, (int)w->cfg.dim);
	w->out_w = w->p.out_w;
	r = pass_ratio(w, m, ids, 32);
	CHECKF(r > 2, "sinusoids for the learned positions stay within %.2f of the bound", r);
	model_destroy(w);
	model_destroy(m);
}

static void reseal(uint8_t *buf, size_t n)
{
	uint32_t c = av_crc32(0, buf, n - 4);
	for (int i = 0; i < 4; i++)
		buf[n - 4 + i] = (uint8_t)(c >> (8 * i));
}

static bool refused(const uint8_t *buf, size_t n, const char *want)
{
	av_error err;
	model *m = model_parse(buf, n, "x.attn", NULL, NULL, NULL, &err);
	model_destroy(m);
	if (m || (want && !strstr(err.msg, want)))
		fprintf(stderr, "expected a refusal with \"%s\", got: %s\n", want ? want : "",
			m ? "(accepted)" : err.msg);
	return !m && (!want || strstr(err.msg, want));
}

/* Version 2: every bit back; version 1 for attnview's own; the promised
 * zeros and the fields' values checked. */
static void check_file(void)
{
	model *m = arch_model(OBJ_CAUSAL, ARCHS[1], 1.0f, 9);
	byte_buf b;
	av_error err;
	CHECK(model_serialize(m, AV_KIND_MODEL, NULL, &b, &err));
	CHECK(b.v[8] == AV_FORMAT_VERSION_ARCH);
	model *back = model_parse(b.v, b.n, "x.attn", NULL, NULL, NULL, &err);
	CHECKF(back != NULL, "%s", err.msg);
	if (back) {
		CHECK(memcmp(&back->cfg, &m->cfg, sizeof m->cfg) == 0);
		CHECK(memcmp(back->params, m->params, m->nparams * sizeof(float)) == 0);
		CHECK(back->pe == back->p.wpe && back->out_w == back->p.wte);
		CHECK(back->nparams == model_num_params(&m->cfg));
	}
	model_destroy(back);
	uint8_t *buf = malloc(b.n);
	const size_t wte = AV_HEADER_FIXED + AV_ARCH_BYTES + 4 + strlen("") + 4 + 4 * 40;
	struct {
		size_t at;
		uint32_t v;
		const char *want;
	} bad[] = {
	    {AV_HEADER_FIXED + 4, 2, "architecture's gelu at byte 100"},
	    {AV_HEADER_FIXED + 24, 3, "architecture's origin"},
	    {24, OBJ_MASKED, "must be causal"},
	    {wte + 4 * 24 + 8, 0x3F000000u, "ids 0..2 have no rows"}, /* wte[1][2] = 0.5 */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memcpy(buf, b.v, b.n);
		for (int k = 0; k < 4; k++)
			buf[bad[i].at + k] = (uint8_t)(bad[i].v >> (8 * k));
		reseal(buf, b.n);
		CHECK(refused(buf, b.n, bad[i].want));
	}
	/* a bias where the architecture has none: lnf_b, before out_b */
	memcpy(buf, b.v, b.n);
	size_t lnf_b = b.n - 4 - 4 * 40 - 4 * 24;
	buf[lnf_b + 3] = 0x3F;
	reseal(buf, b.n);
	CHECK(refused(buf, b.n, "the model has no biases"));
	/* cut inside the architecture */
	memcpy(buf, b.v, b.n);
	CHECK(refused(buf, AV_HEADER_FIXED + 10, NULL));
	free(buf);
	bb_finish(&b);
	model_destroy(m);
}

/* The converter's file (tests/reference/gen_nanogpt_golden.py) written back
 * byte for byte; attnview's own architecture written as version 1. */
static void check_versions(void)
{
	byte_buf b;
	av_error err;
	size_t fn;
	uint8_t *file = test_read_file(test_path("golden/nanogpt.attn"), &fn);
	model *conv = file ? model_parse(file, fn, "nanogpt.attn", NULL, NULL, NULL, &err) : NULL;
	CHECKF(conv != NULL, "golden/nanogpt.attn: %s", file ? err.msg : "cannot read it");
	if (conv) {
		CHECK(conv->cfg.arch.origin == ORIGIN_NANOGPT && conv->cfg.arch.gelu == GELU_ERF);
		CHECK(model_serialize(conv, AV_KIND_MODEL, NULL, &b, &err));
		CHECK(b.n == fn && memcmp(b.v, file, fn) == 0);
		bb_finish(&b);
	}
	model_destroy(conv);
	free(file);
	/* attnview's own architecture: version 1 */
	model *own = arch_model(OBJ_MASKED, (model_arch){0}, 1.0f, 2);
	CHECK(model_serialize(own, AV_KIND_MODEL, NULL, &b, &err));
	CHECK(b.v[8] == AV_FORMAT_VERSION);
	bb_finish(&b);
	model_destroy(own);
}

int main(void)
{
	parallel_set_threads(2);
	check_gelu_erf();
	check_forward();
	check_wrong_form();
	check_file();
	check_versions();
	return test_summary("arch");
}

/* Running out of memory is reported, never papered over. The
 * engine's malloc, calloc, realloc, strdup and aligned_alloc (the large
 * arrays' huge pages, av_alloc_large) are wrapped at link time
 * (-Wl,--wrap=..., tests/meson.build) by the functions below, which fail the
 * Nth call once armed; nothing in the library knows. Every case must either
 * fail with a message or give exactly the result of a run with memory to
 * spare: a different result would be a failure nobody was told about. */
#include "harness.h"

#include "attnview/corpus.h"
#include "attnview/dump.h"
#include "attnview/modelfile.h"
#include "attnview/parallel.h"
#include "attnview/train.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- the allocator ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
void *__wrap_aligned_alloc(size_t align, size_t n);

static atomic_bool armed;
static atomic_long calls;
static long fail_at;
static bool fail_rest;

/* Counts calls while armed; call number fail_at (from 0) fails, and with
 * fail_rest every one after it too. */
static bool fail_now(void)
{
	if (!atomic_load(&armed))
		return false;
	long k = atomic_fetch_add(&calls, 1);
	return k == fail_at || (fail_rest && k > fail_at);
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

static atomic_long aligned_calls;

void *__wrap_aligned_alloc(size_t align, size_t n)
{
	atomic_fetch_add(&aligned_calls, 1);
	return fail_now() ? NULL : __real_aligned_alloc(align, n);
}

static void arm(long n, bool rest)
{
	fail_at = n;
	fail_rest = rest;
	atomic_store(&calls, 0);
	atomic_store(&armed, true);
}

/* Disarms; returns the number of calls made while armed. */
static long disarm(void)
{
	atomic_store(&armed, false);
	return atomic_load(&calls);
}

/* ---- helpers ---- */

static char dir[64];

static const char *tmp(const char *name)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

static bool same_file(const char *a, const char *b)
{
	size_t na, nb;
	uint8_t *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
	bool same = x && y && na == nb && memcmp(x, y, na) == 0;
	free(x);
	free(y);
	return same;
}

static model *tiny_model(int V, int d, int h, int L, int T)
{
	model_config cfg = {OBJ_MASKED,	 (uint32_t)V, (uint32_t)d,
			    (uint32_t)h, (uint32_t)L, (uint32_t)T, {0}};
	uint32_t cps[64];
	for (int i = 0; i < V && i < 64; i++)
		cps[i] = i < TOK_NSPECIAL ? 0x110000u + (uint32_t)i : 'a' + (uint32_t)i;
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	if (!m) {
		fprintf(stderr, "model_create: %s\n", err.msg);
		exit(1);
	}
	model_init_random(m, 11);
	return m;
}

/* ---- the cases ---- */

/* A step on more threads than grad_acts_init saw needs more gradient copies.
 * Without memory for them it used to run on one slice, which sums the
 * gradients in another order: other bits for the same thread count. */
static void step_without_copies(void)
{
	enum { V = 20, d = 8, h = 2, L = 2, T = 6, B = 4 };
	model *m = tiny_model(V, d, h, L, T);
	int32_t tok[B * T], tgt[B * T];
	for (int i = 0; i < B * T; i++) {
		tok[i] = TOK_NSPECIAL + (i * 7) % (V - TOK_NSPECIAL);
		tgt[i] = i % 3 ? -1 : TOK_NSPECIAL + (i * 5) % (V - TOK_NSPECIAL);
	}
	av_error err = {{0}};
	activations a;
	grad_acts g1, g2;
	step_stats st;
	float *want = calloc(m->nparams, sizeof(float));
	float *got = calloc(m->nparams, sizeof(float));
	CHECK(activations_init(&a, &m->cfg, B, T, B * T, &err));
	parallel_set_threads(1);
	CHECK(grad_acts_init(&g1, &m->cfg, B, T, &err));
	parallel_set_threads(2);
	CHECK(grad_acts_init(&g2, &m->cfg, B, T, &err));
	CHECK(model_train_step_grads(m, &a, &g2, tok, tgt, B, T, want, &st, &err));

	arm(0, true);
	bool ok = model_train_step_grads(m, &a, &g1, tok, tgt, B, T, got, &st, &err);
	long n = disarm();
	CHECKF(!ok,
	       "a step on 2 threads with no memory for the second thread's gradients "
	       "succeeded (%ld allocations tried) instead of failing",
	       n);
	CHECKF(!ok && strstr(err.msg, "threads"), "message: %s", err.msg);

	/* With memory again, the same grad_acts gives the 2-thread bits. */
	memset(got, 0, m->nparams * sizeof(float));
	CHECK(model_train_step_grads(m, &a, &g1, tok, tgt, B, T, got, &st, &err));
	CHECK(memcmp(got, want, m->nparams * sizeof(float)) == 0);
	parallel_set_threads(0);
	grad_acts_finish(&g1);
	grad_acts_finish(&g2);
	activations_finish(&a);
	free(want);
	free(got);
	model_destroy(m);
}

/* model_init_random used to allocate, and left the model zeroed (LayerNorm
 * gains included) when that failed; training went on from there. */
static void init_without_memory(void)
{
	model *want = tiny_model(20, 8, 2, 2, 6), *got = tiny_model(20, 8, 2, 2, 6);
	memset(got->params, 0, got->nparams * sizeof(float));
	arm(0, true);
	model_init_random(got, 11);
	disarm();
	CHECKF(memcmp(got->params, want->params, want->nparams * sizeof(float)) == 0,
	       "model_init_random without memory gave another model");
	model_destroy(want);
	model_destroy(got);
}

static train_status train_once(const train_options *o, const corpus *c, const char *out,
			       av_error *err)
{
	trainer *t = trainer_create(o, c, NULL, NULL, "tiny", "mixed.txt", NULL, out, NULL, err);
	if (!t)
		return TRAIN_FAILED;
	train_status st = trainer_run(t, NULL, NULL, err);
	trainer_destroy(t);
	return st;
}

/* Every allocation of trainer_create and trainer_run, one at a time. The
 * runs are on 2 threads, so the step needs its gradient copies. With
 * batch and context of 64 the activations pass 2 MB and come from
 * av_alloc_large's huge pages. */
static void trainer_sweep(int batch, int context)
{
	av_error err = {{0}};
	corpus c;
	corpus_options co = {.min_count = 1, .max_vocab = 0};
	if (!corpus_load(&c, test_path("data/corpus/mixed.txt"), &co, &err)) {
		CHECKF(false, "corpus: %s", err.msg);
		return;
	}
	train_options o;
	train_options_default(&o);
	o.dim = 16;
	o.heads = 2;
	o.layers = 2;
	o.context = context;
	o.batch = batch;
	o.steps = 4;
	o.warmup = 1;
	o.eval_every = 2;
	o.checkpoint_every = 0;
	parallel_set_threads(2);
	train_status st = train_once(&o, &c, tmp("want.attn"), &err);
	CHECKF(st == TRAIN_DONE, "%s", err.msg);
	long n = 0, failed = 0;
	for (;; n++) {
		err.msg[0] = '\0';
		unlink(tmp("got.attn"));
		arm(n, false);
		st = train_once(&o, &c, tmp("got.attn"), &err);
		long made = disarm();
		if (made <= n) /* no call number n: every one has failed once */
			break;
		if (st == TRAIN_DONE)
			CHECKF(same_file(tmp("want.attn"), tmp("got.attn")),
			       "allocation %ld of training failed and the run went on to another "
			       "model",
			       n);
		else
			CHECKF(err.msg[0], "allocation %ld: training failed without a message", n);
		failed += st != TRAIN_DONE;
	}
	printf("training, batch %d of %d: %ld allocations failed one by one, %ld reported\n",
	       batch, context, n, failed);
	CHECK(n > 20 && failed > 0);
	parallel_set_threads(0);
	corpus_finish(&c);
}

/* Every allocation of corpus_load, one at a time. */
static void corpus_sweep(void)
{
	av_error err;
	corpus want, got;
	corpus_options co = {.min_count = 1, .max_vocab = 0};
	const char *path = test_path("data/corpus/mixed.txt");
	CHECKF(corpus_load(&want, path, &co, &err), "%s", err.msg);
	long n = 0;
	for (;; n++) {
		err.msg[0] = '\0';
		arm(n, false);
		bool ok = corpus_load(&got, path, &co, &err);
		long made = disarm();
		if (made <= n) {
			corpus_finish(&got);
			break;
		}
		if (ok)
			CHECKF(got.hash == want.hash && got.ntrain == want.ntrain &&
				   got.vocab.size == want.vocab.size,
			       "allocation %ld of corpus_load failed and it read another corpus",
			       n);
		else
			CHECKF(err.msg[0], "allocation %ld: corpus_load failed without a message",
			       n);
		corpus_finish(&got);
	}
	printf("corpus: %ld allocations failed one by one\n", n);
	corpus_finish(&want);
}

/* Every allocation of model_parse, one at a time. */
static void model_sweep(void)
{
	size_t len;
	uint8_t *buf = test_read_file(test_path("golden/fwd_masked.attn"), &len);
	CHECK(buf != NULL);
	if (!buf)
		return;
	av_error err;
	model *want = model_parse(buf, len, "fwd_masked.attn", NULL, NULL, NULL, &err);
	CHECKF(want, "%s", err.msg);
	long n = 0;
	for (; want; n++) {
		err.msg[0] = '\0';
		arm(n, false);
		model *got = model_parse(buf, len, "fwd_masked.attn", NULL, NULL, NULL, &err);
		long made = disarm();
		if (made <= n) {
			model_destroy(got);
			break;
		}
		if (got)
			CHECKF(got->nparams == want->nparams &&
				   memcmp(got->params, want->params, want->nparams * 4) == 0 &&
				   !strcmp(got->meta.name, want->meta.name),
			       "allocation %ld of model_parse failed and it read another model", n);
		else
			CHECKF(err.msg[0], "allocation %ld: model_parse failed without a message",
			       n);
		model_destroy(got);
	}
	printf("model file: %ld allocations failed one by one\n", n);
	model_destroy(want);
	free(buf);
}

/* dump_write, every allocation one at a time, in both formats. The TSV
 * writer used to stop after its header line when its glyph table could not
 * be had, and report success: the program exited 0 with a header and no
 * weights. */
static void dump_sweep(void)
{
	av_error err;
	model *m = tiny_model(30, 8, 2, 2, 12);
	token toks[12];
	for (int i = 0; i < 12; i++)
		toks[i] = (token){.cp = 'a' + (uint32_t)i, .id = TOK_NSPECIAL + i, .width = 1};
	activations ws;
	attn_result r;
	CHECK(activations_init(&ws, &m->cfg, 1, 12, 12, &err));
	CHECK(model_attend(m, &ws, toks, 12, 3, &r, &err));
	for (int fmt = 0; fmt < 2; fmt++) {
		dump_options o = {fmt ? DUMP_TSV : DUMP_JSON, -1, -1, 0, NULL};
		char *want = NULL, *got = NULL;
		size_t nwant = 0, ngot = 0;
		FILE *f = open_memstream(&want, &nwant);
		CHECK(dump_write(f, m, &r, &o, &err));
		fclose(f);
		long n = 0;
		for (;; n++) {
			err.msg[0] = '\0';
			f = open_memstream(&got, &ngot);
			arm(n, false);
			bool ok = dump_write(f, m, &r, &o, &err);
			long made = disarm();
			fclose(f);
			if (ok)
				CHECKF(ngot == nwant && memcmp(got, want, nwant) == 0,
				       "%s: allocation %ld failed, dump_write reported success but "
				       "wrote %zu bytes of %zu",
				       fmt ? "tsv" : "json", n, ngot, nwant);
			else
				CHECKF(err.msg[0] && ngot == 0,
				       "%s: allocation %ld: no message, or %zu bytes written",
				       fmt ? "tsv" : "json", n, ngot);
			free(got);
			got = NULL;
			if (made <= n)
				break;
		}
		printf("dump %s: %ld allocations failed one by one\n", fmt ? "tsv" : "json", n);
		free(want);
	}
	attn_result_finish(&r);
	activations_finish(&ws);
	model_destroy(m);
}

int main(void)
{
	/* Models of separate runs are compared byte for byte: one creation time. */
	setenv("SOURCE_DATE_EPOCH", "1767225600", 1);
	snprintf(dir, sizeof dir, "/tmp/attnview-alloc-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	step_without_copies();
	init_without_memory();
	dump_sweep();
	model_sweep();
	corpus_sweep();
	trainer_sweep(4, 16);
	long before = atomic_load(&aligned_calls);
	trainer_sweep(64, 64);
#ifdef MADV_HUGEPAGE /* (av_alloc_large is malloc where there is none) */
	CHECKF(atomic_load(&aligned_calls) > before,
	       "the larger run allocated nothing through av_alloc_large's huge pages");
#else
	(void)before;
#endif
	unlink(tmp("want.attn"));
	unlink(tmp("got.attn"));
	rmdir(dir);
	return test_summary("alloc");
}

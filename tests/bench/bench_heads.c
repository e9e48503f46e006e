/* The head labeller on real heads: the built-in models and a model trained
 * with README's training command (tests/data/models/notes.attn: `attnview
 * --train tests/data/corpus/mixed.txt -o notes.attn`, the defaults) on
 * texts of each kind (a Tang poem, English sentences, a sentence written
 * twice), each
 * head's expected role written down here from its rows' maxima, counted by
 * this file's own code, not the labeller's: the share of rows whose
 * largest weight is one to the left, one to the right, on one key, after
 * an earlier copy of the row's character. Prints, head by head, the counts,
 * the expectation and the label, and the agreement; never asserted.
 * `meson test --benchmark labeller_real --verbose`. */
#include "attnview/analysis.h"
#include "attnview/blas.h"
#include "attnview/modelfile.h"
#include "picture.h"
#include "writes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct expect {
	const char *model; /* a built-in model's name, or a file of the test data */
	const char *text;
	int layer, head;
	role_kind role; /* what most rows' maxima say (see stats()) */
} expect;

static const char poem[] = "床前明月光，疑是地上霜。举头望明月，低头思故乡。";
static const char en[] =
    "Time flies like an arrow; fruit flies like a banana, said the old teacher.";
static const char twice[] = "Mr Dursley and Mrs Dursley. Mr Dursley and Mrs Dursley.";
static const char fox[] = "The quick brown fox jumps over the lazy dog.";

#define NOTES "data/models/notes.attn"

/* Each written down from the counts stats() prints (the rows' maxima):
 * e.g. the built-in model's layer 0, head 0 on the poem has its maximum one
 * to the right on 19 of 23 rows. */
static const expect expects[] = {
    {"builtin", poem, 0, 0, ROLE_NEXT},
    {"builtin", poem, 0, 3, ROLE_PREVIOUS},
    {"builtin", poem, 0, 2, ROLE_KEYWORD},
    {"builtin", poem, 1, 0, ROLE_KEYWORD},
    {"builtin", en, 0, 0, ROLE_NEXT},
    {"builtin", en, 0, 3, ROLE_PREVIOUS},
    {"builtin", en, 0, 2, ROLE_KEYWORD},
    {"builtin-causal", en, 0, 3, ROLE_PREVIOUS},
    {"builtin-causal", en, 0, 2, ROLE_LOCAL},	  /* one and two to the left */
    {"builtin-causal", poem, 1, 2, ROLE_KEYWORD}, /* 疑 for lines 2 to 4 */
    {"builtin-causal", en, 1, 2, ROLE_KEYWORD},
    {"builtin-causal", twice, 0, 3, ROLE_PREVIOUS},
    {"builtin-causal", twice, 2, 1, ROLE_INDUCTION},
    {"builtin-causal", twice, 1, 2, ROLE_KEYWORD},
    {"builtin-causal", fox, 0, 3, ROLE_PREVIOUS},
    {"builtin-causal", fox, 2, 0, ROLE_KEYWORD},
    /* README's training command on mixed.txt (masked, 2 layers x 4 heads) */
    {NOTES, poem, 0, 3, ROLE_LOCAL},   /* 17 of 24 rows within two */
    {NOTES, poem, 1, 1, ROLE_KEYWORD}, /* 23 of 24 on the second comma */
    {NOTES, en, 0, 3, ROLE_LOCAL},     /* 44 of 74 */
    {NOTES, en, 1, 0, ROLE_KEYWORD},   /* 70 of 74 on one l */
    {NOTES, twice, 0, 3, ROLE_LOCAL},  /* 35 of 55 */
    {NOTES, twice, 1, 0, ROLE_KEYWORD},
    {NOTES, fox, 0, 3, ROLE_LOCAL},
    {NOTES, fox, 1, 0, ROLE_KEYWORD},
};

/* The rows' maxima, counted plainly: one to the left, one to the right, the
 * key most rows take, and after an earlier copy (three or more away). */
typedef struct stats {
	int rows, left, left2, right, near, column, ind_rows, ind;
} stats;

static void count(stats *s, const attn_matrix *a, const token *t)
{
	int n = a->n, at[AV_MAX_CONTEXT] = {0};
	memset(s, 0, sizeof *s);
	for (int i = 0; i < n; i++) {
		int vis = a->causal ? i + 1 : n, best = 0;
		if (vis < 2)
			continue;
		for (int j = 1; j < vis; j++)
			if (attn_at(a, i, j) > attn_at(a, i, best))
				best = j;
		s->rows++;
		s->left += best == i - 1;
		s->left2 += best == i - 2;
		s->right += best == i + 1;
		s->near += abs(best - i) <= 2;
		at[best]++;
		bool copy = false;
		for (int p = 0; p < n; p++)
			copy |= p != i && p + 1 < vis && p + 1 != i && abs(p + 1 - i) >= 3 &&
				t[p].id == t[i].id;
		if (copy) {
			s->ind_rows++;
			s->ind += best >= 1 && best - 1 != i && abs(best - i) >= 3 &&
				  t[best - 1].id == t[i].id;
		}
	}
	for (int j = 0; j < n; j++)
		s->column = at[j] > s->column ? at[j] : s->column;
}

/* A built-in model by name, or a file of the test data (NAME.attn). */
static model *open_model(const char *name, av_error *err)
{
	if (!strstr(name, ".attn"))
		return model_builtin_named(name, err);
	const char *data = getenv("ATTNVIEW_TEST_DATA");
	char path[512];
	snprintf(path, sizeof path, "%s/%s", data ? data : "tests", name);
	return model_load(path, err);
}

/* Labels held to the picture: head-texts, contradicted, induction hidden. */
static int pictured, contradicted, hidden;

static bool run(const expect *e, int *agree, bool print)
{
	av_error err;
	model *m = open_model(e->model, &err);
	cp_buf cps = {0};
	if (!m || !tokenize_text(e->text, strlen(e->text), "text", &cps, NULL, &err)) {
		fprintf(stderr, "bench_heads: %s\n", err.msg);
		return false;
	}
	int n = (int)cps.n;
	token *t = malloc((size_t)n * sizeof *t);
	activations ws;
	attn_result r;
	memset(&r, 0, sizeof r);
	bool ok = t && activations_init(&ws, &m->cfg, 1, n, n, &err);
	if (ok) {
		vocab_tokenize(&m->vocab, cps.v, cps.n, t);
		ok = model_attend(m, &ws, t, n, 0, &r, &err);
	}
	if (ok) {
		attn_matrix a = attn_result_head(&r, e->layer, e->head);
		stats s;
		count(&s, &a, t);
		role_scores rs;
		head_roles(&rs, &a, r.tokens);
		char label[160];
		role_label(&rs, false, label, sizeof label);
		bool same = rs.role == e->role && rs.verdict != ROLE_UNSURE;
		*agree += same;
		char why[128];
		pictured++;
		if (!picture_agrees(&a, t, &rs, why, sizeof why)) {
			contradicted++;
			printf("%s L%d H%d %.12s \"%s\": the picture contradicts it: %s\n",
			       e->model, e->layer, e->head, e->text, label, why);
		}
		if (picture_hides_induction(&a, t, &rs, why, sizeof why)) {
			hidden++;
			printf("%s L%d H%d %.12s \"%s\" hides induction: %s\n", e->model, e->layer,
			       e->head, e->text, label, why);
		}
		if (print)
			printf("%-15s L%d H%d %-12.12s rows %2d: left %2d, %2d two; right %2d; "
			       "within two "
			       "%2d; "
			       "column %2d; induction %2d/%2d; writes %.2f | expected %-9s "
			       "labelled %-24s "
			       "%s\n",
			       e->model, e->layer, e->head, e->text, s.rows, s.left, s.left2,
			       s.right, s.near, s.column, s.ind, s.ind_rows,
			       head_writes(m, &ws, n, e->layer, e->head), role_name(e->role), label,
			       same ? "agree" : "DIFFER");
		attn_result_finish(&r);
		activations_finish(&ws);
	}
	free(t);
	cp_buf_finish(&cps);
	model_destroy(m);
	return ok;
}

/* Every head of model `name` on every text; print: the counts to write
 * expectations down from (--survey MODEL). */
static int survey(const char *name, bool print)
{
	const char *texts[] = {poem, en, twice, fox};
	int agree = 0;
	av_error err;
	model *m = open_model(name, &err);
	if (!m) {
		fprintf(stderr, "bench_heads: %s\n", err.msg);
		return 1;
	}
	int L = m->cfg.layers, H = m->cfg.heads;
	model_destroy(m);
	for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
		for (int l = 0; l < L; l++)
			for (int h = 0; h < H; h++) {
				expect e = {name, texts[k], l, h, ROLE_NKINDS};
				if (!run(&e, &agree, print))
					return 1;
			}
	return 0;
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv); /* the kernel the CPU can run (blas.h) */
	if (argc == 3 && !strcmp(argv[1], "--survey"))
		return survey(argv[2], true);
	int agree = 0, total = (int)(sizeof expects / sizeof expects[0]);
	for (int i = 0; i < total; i++)
		if (!run(&expects[i], &agree, true))
			return 1;
	printf("the labeller agrees with the rows' maxima on %d of %d heads\n", agree, total);
	pictured = contradicted = hidden = 0;
	const char *models[] = {"builtin", "builtin-causal", NOTES};
	for (int k = 0; k < 3; k++)
		if (survey(models[k], false))
			return 1;
	printf("every head of the three models on the four texts: the picture contradicts %d "
	       "of %d labels; induction hidden on %d\n",
	       contradicted, pictured, hidden);
	return 0;
}

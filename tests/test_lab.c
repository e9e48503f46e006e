/* The lab (lab.h): every task trains to 95% task accuracy with all heads on,
 * and falls near chance when the head that carries its mechanism (the one
 * whose ablation costs most) is switched off; that head's role is the one
 * the task names. A control whose texts lack the mechanism stays far from
 * 95%: the bar can fail.
 *
 *   test_lab [TASK...]       (all tasks without arguments) */
#include "attnview/lab.h"
#include "attnview/parallel.h"
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Near chance: at most chance plus a fifth of the way to 100%. */
static bool near_chance(double acc, double chance)
{
	return acc <= chance + 0.2 * (1 - chance);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* How many of 4 texts of the task label head (l, h) with role r. */
static int labelled(const model *m, const lab_task *t, uint64_t seed, int l, int h, role_kind r)
{
	int T = (int)t->context, hits = 0;
	activations ws = {0};
	av_error err;
	CHECK(activations_init(&ws, &m->cfg, 1, T, T, &err));
	for (int k = 0; k < 4; k++) {
		uint32_t cps[LAB_MAX_CONTEXT];
		token tok[LAB_MAX_CONTEXT];
		lab_sample(t, seed, k, T, cps);
		vocab_tokenize(&m->vocab, cps, (size_t)T, tok);
		attn_result res;
		if (!model_attend(m, &ws, tok, T, 0, &res, &err))
			break;
		attn_matrix a = attn_result_head(&res, l, h);
		role_scores rs;
		head_roles(&rs, &a, res.tokens);
		hits += rs.role == r;
		attn_result_free(&res);
	}
	activations_finish(&ws);
	return hits;
}

static void check_task(const lab_task *t, uint64_t seed)
{
	av_error err;
	lab_options o = {.seed = seed};
	double t0 = now();
	model *m = lab_model_create(t, &o, &err);
	CHECKF(m != NULL, "%s: %s", t->name, err.msg);
	if (!m)
		return;
	bool ok = lab_train(m, t, &o, NULL, NULL, &err);
	CHECKF(ok, "%s: %s", t->name, err.msg);
	lab_score all;
	CHECK(lab_evaluate(m, t, seed, NULL, &all, &err));
	int nh = (int)(m->cfg.layers * m->cfg.heads);
	double acc[AV_MAX_HEADS * 4];
	CHECK(lab_ablate_each(m, t, seed, acc, &err));
	int worst = 0;
	for (int k = 1; k < nh; k++)
		if (acc[k] < acc[worst])
			worst = k;
	double chance = 1.0 / t->answers;
	printf("%-10s seed %llu: accuracy %.1f%% on %d positions, loss %.3f (%.1fs); without",
	       t->name, (unsigned long long)seed, 100 * all.acc, all.count, all.loss,
	       now() - t0);
	for (int k = 0; k < nh; k++)
		printf(" %d.%d %.1f%%", k / (int)m->cfg.heads, k % (int)m->cfg.heads, 100 * acc[k]);
	printf("; chance %.1f%%\n", 100 * chance);
	CHECKF(all.acc >= 0.95, "%s: task accuracy %.3f, under 0.95", t->name, all.acc);
	CHECKF(near_chance(acc[worst], chance), "%s: without head %d.%d accuracy %.3f, not near "
	       "chance %.3f", t->name, worst / (int)m->cfg.heads, worst % (int)m->cfg.heads,
	       acc[worst], chance);
	/* Every head that carries the mechanism has the task's role for its
	 * layer on at least 3 of 4 texts of the task. */
	for (int k = 0; k < nh; k++) {
		int l = k / (int)m->cfg.heads, h = k % (int)m->cfg.heads;
		if (!lab_carries(all.acc, acc[k], chance) || t->roles[l] >= ROLE_NKINDS)
			continue;
		int hits = labelled(m, t, seed, l, h, t->roles[l]);
		CHECKF(hits >= 3, "%s: head %d.%d carries the mechanism but is labelled %s on "
		       "%d of 4 texts", t->name, l, h, role_name(t->roles[l]), hits);
	}
	model_destroy(m);
}

/* The previous task with its mechanism taken out: the letter after each
 * block's middle is random, not a copy. Nothing decides it, so the model
 * cannot reach the bar: the bar can fail. */
static void gen_no_copy(const lab_task *t, rng *r, int T, uint32_t *text, uint8_t *flag)
{
	lab_find("previous")->gen(t, r, T, text, flag);
	for (int i = 0; i < T; i++)
		if (flag[i] & LAB_SCORED)
			text[i + 1] = 'a' + (uint32_t)rng_below(r, 26);
}

static void control(void)
{
	lab_task ctl = *lab_find("previous");
	ctl.gen = gen_no_copy;
	av_error err;
	lab_options o = {.seed = 1};
	model *m = lab_model_create(&ctl, &o, &err);
	lab_score s = {0};
	CHECK(m && lab_train(m, &ctl, &o, NULL, NULL, &err) &&
	      lab_evaluate(m, &ctl, 1, NULL, &s, &err));
	printf("control (previous without the copy): accuracy %.1f%%\n", 100 * s.acc);
	CHECKF(s.acc < 0.95 && near_chance(s.acc, 1.0 / ctl.answers),
	       "the control reaches %.3f: the bar cannot fail", s.acc);
	model_destroy(m);
}

int main(int argc, char **argv)
{
	for (int i = 0; i < lab_ntasks(); i++) {
		const lab_task *t = lab_task_at(i);
		bool want = argc < 2;
		for (int a = 1; a < argc; a++)
			want |= strcmp(argv[a], t->name) == 0;
		if (want)
			check_task(t, 1);
	}
	if (argc < 2)
		control();
	return test_summary("lab");
}

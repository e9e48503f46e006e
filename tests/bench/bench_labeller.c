/* The head labeller measured on the lab: every task trained on several
 * seeds, with one head a layer and with two; the truth about each head
 * from switching heads off (lab.h, lab_head_parts: the heads that carry
 * the task's mechanism should get the task's role for their layer, the
 * idle ones none of those roles; a head that carries part of it is left
 * out, and so is one that carries the task another way: where the role
 * has a pattern, lab_pattern, the pattern in its place loses a tenth of
 * the gain or more); then each head labelled on texts of its task (left
 * out where the text decides nothing about the head: a carrier's texts
 * that need none of its layer's carriers, an idle head's texts that need
 * it). Prints, for every role, precision and recall of the labeller as it
 * is, against every head and against the heads that carry a mechanism
 * alone (does the label name the one the head carries?), what the idle
 * heads are called, every false positive and every miss by run and head,
 * and each role's bar alone at other minimums (the sweep the bars were
 * chosen from). Then the picture: on every head-text, those left out too,
 * whether each role the label names holds in the rows' maxima as the
 * tests read them (tests/lib/picture.h), and whether a label hides an
 * induction head. Last, two signals a labeller could add to the picture,
 * idle heads against carrying ones: how much each head writes into the
 * residual stream, and what switching it off on the text itself costs
 * (the loss over the text's every position, as --ablate and the view's
 * Alt-A give it), with the figures a labeller that called the heads under
 * a bar quiet would have. And the same labeller on each head's value
 * contributions (F11's map), against the same truth. Printed, never
 * asserted: `meson test --benchmark labeller --verbose`; with
 * LABELLER_TSV=FILE, every head-text the tables count also as a row of
 * FILE.
 *
 *   bench_labeller [SEEDS [TEXTS [TASK...]]]   (default 5 seeds, 8 texts a
 *                                             head, every task) */
#include "attnview/analysis.h"
#include "attnview/blas.h"
#include "attnview/explain.h"
#include "attnview/lab.h"
#include "picture.h"
#include "writes.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

typedef struct instance {
	int task;
	role_kind truth; /* ROLE_NKINDS: carries nothing */
	role_kind copy;	 /* an idle head whose weights, in place of a carrier's
			    of its layer, keep nine tenths of the gain: the
			    carrier's role (a copy the model does not read);
			    else its truth */
	role_scores rs;
	role_scores rc; /* of its value contributions (F11's map) */
	double writes; /* what the head adds to the stream over the stream */
	double rel;    /* ... over the loudest head's of its layer on the text */
	double off;    /* the text's loss with the head switched off, minus with
			  every head (nats a character) */
	int seed, heads, head; /* the run, and the head's l * heads + h */
} instance;

static instance *inst;
static size_t ninst, cap;

static int cur_task, cur_seed, cur_heads, cur_head;

/* Head-texts left out because their head carries the task another way, or
 * the task's pattern in its place does only part of its work. */
static int another_way;

/* Head-texts left out because their text decides nothing about the head
 * (text_truth): per head of the run, the texts that need neither it nor
 * the other carriers of its layer, and those that need it though it is
 * idle over the task; over every run, how many of the first kind the
 * label named the carrier's role on, and how many not. */
static int done_without[AV_MAX_LAYERS * AV_MAX_HEADS], idle_used[AV_MAX_LAYERS * AV_MAX_HEADS];
static int left_named, left_missed, left_idle;

/* The picture's side: labels naming each role, those it contradicts, and
 * induction hidden; a few examples printed. */
static int claims[ROLE_NKINDS], contradicted[ROLE_NKINDS], hidden, pictured, examples;

static void check_picture(const attn_matrix *a, const token *tok, const role_scores *rs,
			  const char *task, int l, int h)
{
	char why[128], label[96];
	pictured++;
	for (int k = 0; k < 2; k++) {
		role_kind r = k ? rs->second : rs->role;
		if (rs->verdict == ROLE_UNSURE || rs->verdict == ROLE_SHORT ||
		    (k && rs->verdict != ROLE_TWO))
			continue;
		claims[r]++;
		if (picture_holds(a, tok, rs, r, why, sizeof why))
			continue;
		contradicted[r]++;
		role_label(rs, false, label, sizeof label);
		if (examples++ < 12)
			printf("  the picture contradicts %s L%d H%d \"%s\": %s\n", task, l, h,
			       label, why);
	}
	if (picture_hides_induction(a, tok, rs, why, sizeof why)) {
		hidden++;
		role_label(rs, false, label, sizeof label);
		if (examples++ < 12)
			printf("  induction hidden: %s L%d H%d \"%s\": %s\n", task, l, h, label,
			       why);
	}
}

/* A head that carries part of the mechanism (lab.h, LAB_PARTLY): neither
 * side of the measurement. */
#define EXCLUDED ((role_kind)(ROLE_NKINDS + 1))

static void push(role_kind truth, role_kind copy, const role_scores *rs, const role_scores *rc,
		 double writes, double rel, double off)
{
	if (truth == EXCLUDED)
		return;
	if (ninst == cap) {
		cap = cap ? 2 * cap : 256;
		inst = realloc(inst, cap * sizeof *inst);
		if (!inst)
			exit(1);
	}
	inst[ninst++] = (instance){.task = cur_task,
				   .truth = truth,
				   .copy = copy,
				   .rs = *rs,
				   .rc = *rc,
				   .writes = writes,
				   .rel = rel,
				   .off = off,
				   .seed = cur_seed,
				   .heads = cur_heads,
				   .head = cur_head};
}

/* The loss over every position of tok[0..T) (model_text_loss) on the
 * activations a, with head `head` (l * H + h) switched off, or none (-1);
 * NAN if it fails. */
static double text_loss(const model *m, activations *a, const token *tok, int T, int head)
{
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	av_error err;
	double loss = NAN;
	int count;
	if (head >= 0)
		off[head] = 1;
	a->ablate = head >= 0 ? off : NULL;
	if (!model_text_loss(m, a, tok, T, &loss, &count, &err))
		loss = NAN;
	a->ablate = NULL;
	return loss;
}

/* Does the label name role r (alone, or as one of two)? "unclear" names
 * none. */
static bool named(const role_scores *rs, role_kind r)
{
	return (rs->verdict == ROLE_SURE && rs->role == r) ||
	       (rs->verdict == ROLE_TWO && (rs->role == r || rs->second == r));
}

/* Does text `index` of the task need the heads that `off` marks: is half
 * the model's gain over chance on it or more lost without them
 * (lab_carries, on one text)? A text the model does not answer better
 * than chance with every head is said to need them. */
static bool text_needs(const model *m, const lab_task *t, uint64_t seed, int index,
		       const uint8_t *off)
{
	lab_score on, without;
	av_error err;
	double chance = 1.0 / t->answers;
	if (!lab_sample_accuracy(m, t, seed, index, NULL, &on, &err) ||
	    !lab_sample_accuracy(m, t, seed, index, off, &without, &err)) {
		fprintf(stderr, "bench_labeller: %s\n", err.msg);
		return true;
	}
	return !on.count || on.acc <= chance || lab_carries(on.acc, without.acc, chance);
}

/* Does text `index` need the carriers of layer l (the heads whose truth is
 * a role), switched off together with the heads that carry part of the
 * task or carry it another way (two heads that do the same work stand in
 * for each other)? Where it does not, the model does without the
 * mechanism on that text (`first`'s models answer one digit by default,
 * and on a text that begins with it the carrier may look at another key):
 * whether the carriers' pictures there show their role or not, the truth
 * is undecided, and their head-texts are left out. */
static bool carriers_needed(const model *m, const lab_task *t, uint64_t seed, int index, int l,
			    const role_kind *truth)
{
	int H = (int)m->cfg.heads;
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	bool any = false;
	for (int h = 0; h < H; h++) {
		off[l * H + h] = truth[l * H + h] != ROLE_NKINDS;
		any |= truth[l * H + h] < ROLE_NKINDS;
	}
	return !any || text_needs(m, t, seed, index, off);
}

/* Does text `index` need head k, idle over the task's texts? Where it does,
 * the head is not idle there, and its truth is undecided too. */
static bool idle_needed(const model *m, const lab_task *t, uint64_t seed, int index, int k)
{
	uint8_t off[AV_MAX_LAYERS * AV_MAX_HEADS] = {0};
	off[k] = 1;
	return text_needs(m, t, seed, index, off);
}

/* Head k's truth on text `index`, and the truth an idle copy is held to
 * there (*copy): the head's, but undecided (EXCLUDED) where the text does
 * not need its layer's carriers (`need` false) or needs an idle head;
 * counted and printed per head by label_heads. */
static role_kind text_truth(const model *m, const lab_task *t, uint64_t seed, int index, int k,
			    bool need, const role_scores *rs, role_kind truth, role_kind *copy)
{
	if (truth < ROLE_NKINDS && !need) {
		done_without[k]++;
		left_named += named(rs, truth);
		left_missed += !named(rs, truth);
		return EXCLUDED;
	}
	if (truth == ROLE_NKINDS && idle_needed(m, t, seed, index, k)) {
		idle_used[k]++;
		left_idle++;
		return EXCLUDED;
	}
	if (!need && *copy < ROLE_NKINDS)
		*copy = truth; /* the carrier's role is not the truth there */
	return truth;
}

/* Label every head of m on the task's texts; truth[l * H + h] and
 * copy[l * H + h] per head. */
static void label_heads(const model *m, const lab_task *t, uint64_t seed, int texts,
			const role_kind *truth, const role_kind *copy)
{
	int T = (int)t->context, H = (int)m->cfg.heads, L = (int)m->cfg.layers;
	activations ws = {0}, lw = {0}; /* the pass's; the losses' */
	av_error err;
	static float vn[AV_MAX_LAYERS * AV_MAX_HEADS * LAB_MAX_CONTEXT];
	static float shares[LAB_MAX_CONTEXT * LAB_MAX_CONTEXT];
	if (!activations_init(&ws, &m->cfg, 1, T, T, &err) ||
	    !activations_init(&lw, &m->cfg, 1, T, T, &err)) {
		activations_finish(&ws);
		return;
	}
	int done = 0;
	memset(done_without, 0, sizeof done_without);
	memset(idle_used, 0, sizeof idle_used);
	for (int k = 0; k < texts; k++, done++) {
		uint32_t cps[LAB_MAX_CONTEXT];
		token tok[LAB_MAX_CONTEXT];
		lab_sample(t, seed, k, T, cps);
		vocab_tokenize(&m->vocab, cps, (size_t)T, tok);
		attn_result r;
		if (!model_attend(m, &ws, tok, T, 0, &r, &err))
			break;
		if (!value_norms(m, &ws, T, vn, &err)) {
			attn_result_finish(&r);
			break;
		}
		const double base = text_loss(m, &lw, tok, T, -1);
		for (int l = 0; l < L; l++) {
			double w[AV_MAX_HEADS], loudest = 0;
			bool need = carriers_needed(m, t, seed, k, l, truth);
			for (int h = 0; h < H; h++) {
				w[h] = head_writes(m, &ws, T, l, h);
				loudest = fmax(loudest, w[h]);
			}
			for (int h = 0; h < H; h++) {
				attn_matrix a = attn_result_head(&r, l, h);
				role_scores rs, rc;
				head_roles(&rs, &a, r.tokens);
				check_picture(&a, r.tokens, &rs, t->name, l, h);
				contribution_shares(shares, &a,
						    vn + (size_t)(l * H + h) * (size_t)T);
				head_roles(&rc, &(attn_matrix){shares, T, a.causal, 0}, r.tokens);
				cur_head = l * H + h;
				role_kind cp = copy[l * H + h];
				role_kind want = text_truth(m, t, seed, k, l * H + h, need, &rs,
							    truth[l * H + h], &cp);
				push(want, cp, &rs, &rc, w[h], loudest > 0 ? w[h] / loudest : 0,
				     text_loss(m, &lw, tok, T, l * H + h) - base);
			}
		}
		attn_result_finish(&r);
	}
	for (int k = 0; k < L * H; k++) {
		if (done_without[k])
			printf(
			    "  %d of %d texts need neither %d.%d nor the heads of its layer that "
			    "carry the task: left out there\n",
			    done_without[k], done, k / H, k % H);
		if (idle_used[k])
			printf("  %d of %d texts need %d.%d, idle over the task: left out there\n",
			       idle_used[k], done, k / H, k % H);
	}
	activations_finish(&lw);
	activations_finish(&ws);
}

/* Each idle head's weights in place of each carrier of its layer whose
 * truth is a role (lab_copy_accuracy): where they keep nine tenths of the
 * gain, the idle head computes the carrier's mechanism though the model
 * does not read it, and copy[k] is that role; else copy[k] = truth[k].
 * Printed as "  (1.1 in place of 1.0: 99.8%, a copy)". */
static bool idle_copies(const model *m, const lab_task *t, uint64_t seed, double acc_all,
			const role_kind *truth, role_kind *copy, av_error *err)
{
	int H = (int)m->cfg.heads, nh = (int)m->cfg.layers * H;
	for (int k = 0; k < nh; k++)
		copy[k] = truth[k];
	for (int k = 0; k < nh; k++)
		for (int c = k / H * H; truth[k] == ROLE_NKINDS && c < (k / H + 1) * H; c++) {
			double acc;
			if (truth[c] >= ROLE_NKINDS)
				continue;
			if (!lab_copy_accuracy(m, t, seed, c, k, &acc, err))
				return false;
			lab_fit fit = lab_pattern_fit(acc_all, acc, 1.0 / t->answers);
			printf("  (%d.%d in place of %d.%d: %.1f%%%s)", k / H, k % H, c / H, c % H,
			       100 * acc,
			       fit == LAB_FIT_HOLDS    ? ", a copy"
			       : fit == LAB_FIT_PARTLY ? ", part of it"
						       : "");
			if (fit == LAB_FIT_HOLDS && copy[k] == ROLE_NKINDS)
				copy[k] = truth[c];
		}
	printf("\n");
	return true;
}

/* Each head's truth from switching it off (acc, part) and the task's
 * pattern in its place; printed as "0.1 3.2%* (as previous 100.0%)". */
static void head_truths(const model *m, const lab_task *t, uint64_t seed, double acc_all,
			const double *acc, const lab_part *part, int texts, role_kind *truth)
{
	int H = (int)m->cfg.heads, nh = (int)m->cfg.layers * H;
	av_error err;
	printf("; without each head:");
	for (int k = 0; k < nh; k++) {
		int l = k / H;
		/* A carrier of a layer whose role the task does not say (a
		 * layer the task does not need, where a run may still use
		 * one) is left out too. */
		role_kind want = l < 2 ? t->roles[l] : ROLE_NKINDS;
		truth[k] = part[k] == LAB_IDLE				  ? ROLE_NKINDS
			   : part[k] == LAB_CARRIES && want < ROLE_NKINDS ? want
									  : EXCLUDED;
		printf(" %d.%d %.1f%%%s", l, k % H, 100 * acc[k],
		       part[k] == LAB_CARRIES  ? "*"
		       : part[k] == LAB_PARTLY ? "~"
					       : "");
		/* A carrier whose layer's role has a pattern (lab_pattern):
		 * unless that pattern in place of its own attention keeps nine
		 * tenths of the gain, it carries the task another way, and
		 * the task's role is not its truth: left out. The control
		 * (lab_judge_picture): where every key alike in its place
		 * keeps the gain as well, though switching the head off alone
		 * loses half of it, the model needs the head's output, not its
		 * picture (switching it off takes away a constant the model
		 * reads): left out too. */
		lab_picture pic;
		if (truth[k] != want ||
		    !lab_judge_picture(m, t, seed, k, acc_all, acc[k], &pic, &err))
			continue;
		if (pic.fit != LAB_FIT_NONE)
			printf(" (as %s %.1f%%%s)", role_name(want), 100 * pic.acc_pattern,
			       pic.fit == LAB_FIT_HOLDS	   ? ""
			       : pic.fit == LAB_FIT_PARTLY ? ": part of it, left out"
							   : ": another way, left out");
		if (pic.output_only)
			printf(" (every key alike %.1f%% too: another way, left out)",
			       100 * pic.acc_even);
		if ((pic.fit != LAB_FIT_HOLDS && pic.fit != LAB_FIT_NONE) || pic.output_only) {
			truth[k] = EXCLUDED;
			another_way += texts;
		}
	}
}

static void run(const lab_task *t, uint64_t seed, uint32_t heads, int texts)
{
	av_error err;
	lab_options o = {.seed = seed, .heads = heads};
	model *m = lab_model_create(t, &o, &err);
	lab_score all;
	if (!m || !lab_train(m, t, &o, NULL, NULL, &err) ||
	    !lab_evaluate(m, t, seed, NULL, &all, &err)) {
		printf("%s seed %llu: %s\n", t->name, (unsigned long long)seed, err.msg);
		model_destroy(m);
		return;
	}
	int H = (int)m->cfg.heads;
	printf("%-10s seed %llu, %d head(s) a layer: accuracy %5.1f%%", t->name,
	       (unsigned long long)seed, H, 100 * all.acc);
	if (all.acc < LAB_LEARNED) {
		printf(": under 95%%, left out\n");
		model_destroy(m);
		return;
	}
	double acc[AV_MAX_HEADS * 4];
	role_kind truth[AV_MAX_HEADS * 4];
	lab_part part[AV_MAX_HEADS * 4];
	if (!lab_ablate_each(m, t, seed, acc, &err) ||
	    !lab_head_parts(m, t, seed, all.acc, acc, part, &err)) {
		printf(": %s\n", err.msg);
		model_destroy(m);
		return;
	}
	head_truths(m, t, seed, all.acc, acc, part, texts, truth);
	role_kind copy[AV_MAX_HEADS * 4];
	if (!idle_copies(m, t, seed, all.acc, truth, copy, &err)) {
		printf("%s\n", err.msg);
		model_destroy(m);
		return;
	}
	fflush(stdout);
	label_heads(m, t, seed, texts, truth, copy);
	model_destroy(m);
}

static void pr(int tp, int fp, int fn, char *out, size_t n)
{
	char p[8], r[8];
	snprintf(p, sizeof p, tp + fp ? "%.2f" : "-", tp + fp ? (double)tp / (tp + fp) : 0);
	snprintf(r, sizeof r, tp + fn ? "%.2f" : "-", tp + fn ? (double)tp / (tp + fn) : 0);
	snprintf(out, n, "%4d %4d %4d  %5s %5s", tp, fp, fn, p, r);
}

/* Per task: what the heads that carry the mechanism, and the others, are
 * labelled, and the mean score of the task's roles on them. */
static void report_tasks(void)
{
	for (int t = 0; t < lab_ntasks(); t++) {
		size_t any = 0;
		while (any < ninst && inst[any].task != t)
			any++;
		if (any == ninst)
			continue; /* not run */
		printf("\n%s:\n", lab_task_at(t)->name);
		for (int carry = 1; carry >= 0; carry--) {
			int count[ROLE_NKINDS] = {0}, n = 0;
			double mean[ROLE_NKINDS] = {0};
			for (size_t i = 0; i < ninst; i++) {
				if (inst[i].task != t || (inst[i].truth < ROLE_NKINDS) != carry)
					continue;
				n++;
				count[inst[i].rs.role]++;
				for (int r = 0; r < ROLE_NKINDS; r++)
					mean[r] += inst[i].rs.s[r];
			}
			if (!n)
				continue;
			printf("  %s (%d head-texts): labelled", carry ? "carrying" : "the others",
			       n);
			for (int r = 0; r < ROLE_NKINDS; r++)
				if (count[r])
					printf(" %s %d", role_name((role_kind)r), count[r]);
			printf("\n    mean scores:");
			for (int r = 0; r < ROLE_NKINDS; r++)
				if (mean[r] / n >= 0.15)
					printf(" %s %.2f", role_name((role_kind)r), mean[r] / n);
			printf("\n");
		}
	}
}

/* The signals a labeller could hold a head-text to. */
typedef enum { BY_WRITES, BY_RELATIVE, BY_OFF } signal_kind;

static double signal(const instance *in, signal_kind by)
{
	return by == BY_OFF ? in->off : by == BY_RELATIVE ? in->rel : in->writes;
}

/* The head-texts a table counts, and the truth it holds them to: every
 * head; the heads that carry a mechanism alone; every head, an idle copy
 * of a carrier (instance.copy) held to the carrier's role. */
typedef enum { EVERY, CARRIERS, COPIES } whom_kind;

/* Precision and recall, role by role, of the labels of the head-texts
 * whose signal `by` is `quiet` or more (-INFINITY: every head-text);
 * "broad" on a head that carries nothing is right, and counted nowhere. */
static void label_table(double quiet, signal_kind by, whom_kind whom, bool contrib)
{
	printf("%-14s   TP   FP   FN  prec.  rec.\n", "role");
	for (int r = 0; r < ROLE_NKINDS; r++) {
		if (r == ROLE_BROAD)
			continue;
		int tp = 0, fp = 0, fn = 0;
		for (size_t i = 0; i < ninst; i++) {
			if (whom == CARRIERS && inst[i].truth == ROLE_NKINDS)
				continue;
			role_kind truth = whom == COPIES ? inst[i].copy : inst[i].truth;
			bool want = truth == (role_kind)r,
			     got = signal(&inst[i], by) >= quiet &&
				   named(contrib ? &inst[i].rc : &inst[i].rs, (role_kind)r);
			tp += want && got, fp += !want && got, fn += want && !got;
		}
		char line[96];
		pr(tp, fp, fn, line, sizeof line);
		printf("%-14s %s\n", role_name((role_kind)r), line);
	}
}

/* The labeller as it is. */
static void report_labels(void)
{
	printf("\nthe labeller on %zu head-texts (truth from ablation and the task's patterns; "
	       "left out: %d head-texts of heads that carry the task another way, %d of "
	       "carriers on texts that need none of their layer's (%d of them named the "
	       "carrier's role), %d of idle heads on texts that need them):\n",
	       ninst, another_way, left_named + left_missed, left_named, left_idle);
	label_table(-INFINITY, BY_WRITES, EVERY, false);
	/* The heads that carry a mechanism alone: does the label name the
	 * mechanism the head carries? The idle heads' labels say what their
	 * pictures show, which switching them off shows the model not to use. */
	int idle = 0, named_idle = 0, count[ROLE_NKINDS] = {0};
	for (size_t i = 0; i < ninst; i++) {
		if (inst[i].truth != ROLE_NKINDS)
			continue;
		idle++;
		if (inst[i].rs.verdict == ROLE_SURE || inst[i].rs.verdict == ROLE_TWO) {
			named_idle += inst[i].rs.role != ROLE_BROAD;
			count[inst[i].rs.role]++;
		}
	}
	printf("\nthe heads that carry a mechanism alone (%zu head-texts):\n",
	       ninst - (size_t)idle);
	label_table(-INFINITY, BY_WRITES, CARRIERS, false);
	printf("\nthe idle heads (%d head-texts): %d given a role but broad:", idle, named_idle);
	for (int r = 0; r < ROLE_NKINDS; r++)
		if (count[r])
			printf(" %s %d", role_name((role_kind)r), count[r]);
	int copies = 0;
	for (size_t i = 0; i < ninst; i++)
		copies += inst[i].copy != inst[i].truth;
	printf("\n\nevery head, the idle heads whose weights do a carrier's work in its place "
	       "(%d head-texts) held to the carrier's role:\n",
	       copies);
	label_table(-INFINITY, BY_WRITES, COPIES, false);
}

/* The same labeller on each head's value contributions (the map F11
 * shows, and --dump --contributions labels): the same truth, against
 * every head and against the carriers; and how often the two labels
 * differ, and what the idle heads are called there. */
static void report_contributions(void)
{
	printf("\nthe labeller on the value contributions (F11's map), %zu head-texts:\n", ninst);
	label_table(-INFINITY, BY_WRITES, EVERY, true);
	printf("\nthe same, the heads that carry a mechanism alone:\n");
	label_table(-INFINITY, BY_WRITES, CARRIERS, true);
	int differ = 0, idle = 0, named_idle = 0;
	for (size_t i = 0; i < ninst; i++) {
		differ +=
		    inst[i].rs.role != inst[i].rc.role || inst[i].rs.verdict != inst[i].rc.verdict;
		if (inst[i].truth == ROLE_NKINDS) {
			idle++;
			named_idle +=
			    (inst[i].rc.verdict == ROLE_SURE || inst[i].rc.verdict == ROLE_TWO) &&
			    inst[i].rc.role != ROLE_BROAD;
		}
	}
	printf("labels that differ from the weights': %d of %zu; idle heads given a role but "
	       "broad: %d of %d\n",
	       differ, ninst, named_idle, idle);
}

/* Instances in the order of their run and head, then their text. */
static int by_run(const void *a, const void *b)
{
	const instance *x = &inst[*(const size_t *)a], *y = &inst[*(const size_t *)b];
	int kx[] = {x->task, x->seed, x->heads, x->head},
	    ky[] = {y->task, y->seed, y->heads, y->head};
	for (int k = 0; k < 4; k++)
		if (kx[k] != ky[k])
			return kx[k] < ky[k] ? -1 : 1;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return (i > j) - (i < j);
}

/* Where each role's false positives come from (misses false), or its
 * misses (true): the runs and heads, by run and head; for a false positive
 * each head-text's score (column roles: the key's character, "+" when a
 * second one joins it, and the rows on the one key most take), for a miss
 * the label the carrier got and its score of the role. */
static void report_errors(bool misses)
{
	size_t *order = malloc(ninst * sizeof *order);
	if (!order)
		return;
	for (size_t i = 0; i < ninst; i++)
		order[i] = i;
	qsort(order, ninst, sizeof *order, by_run);
	printf(misses ? "\nthe misses, by run and head (what the carrier was called):\n"
		      : "\nthe false positives, by run and head:\n");
	for (int r = 0; r < ROLE_NKINDS; r++) {
		if (r == ROLE_BROAD)
			continue;
		const instance *last = NULL;
		int n = 0;
		for (size_t k = 0; k < ninst; k++) {
			const instance *in = &inst[order[k]];
			bool want = in->truth == (role_kind)r, got = named(&in->rs, (role_kind)r);
			if (misses ? !want || got : want || !got)
				continue;
			if (!last || last->task != in->task || last->seed != in->seed ||
			    last->heads != in->heads || last->head != in->head)
				printf("%s%-14s %s seed %d, %d head(s), L%d H%d (%s%s):",
				       n ? "\n" : "", n ? "" : role_name((role_kind)r),
				       lab_task_at(in->task)->name, in->seed, in->heads,
				       in->head / in->heads, in->head % in->heads,
				       in->truth != ROLE_NKINDS	 ? role_name(in->truth)
				       : in->copy != ROLE_NKINDS ? "idle, a copy of "
								 : "idle",
				       in->truth == ROLE_NKINDS && in->copy != ROLE_NKINDS
					   ? role_name(in->copy)
					   : "");
			last = in;
			n++;
			char label[96];
			role_label(&in->rs, false, label, sizeof label);
			if (misses)
				printf(" \"%s\" (%.2f)", label, in->rs.s[r]);
			else if (r == ROLE_KEYWORD || r == ROLE_FIRST)
				printf(" %lc%s %d/%d", (wint_t)in->rs.keys[0],
				       in->rs.nkeys > 1 ? "+" : "", in->rs.column_rows, in->rs.n);
			else
				printf(" %.2f", in->rs.s[r]);
		}
		if (n)
			printf("\n");
	}
	free(order);
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The signal's spread over the carrying head-texts and the idle ones. */
static void spread(double *v, signal_kind by, const char *what, int decimals)
{
	for (int idle = 0; idle <= 1; idle++) {
		size_t k = 0;
		for (size_t i = 0; i < ninst; i++)
			if ((inst[i].truth == ROLE_NKINDS) == idle &&
			    isfinite(signal(&inst[i], by)))
				v[k++] = signal(&inst[i], by);
		if (!k)
			continue;
		qsort(v, k, sizeof *v, by_double);
		printf("%s heads (%zu head-texts) %s: min %.*f", idle ? "idle" : "carrying", k,
		       what, decimals, v[0]);
		const int at[] = {10, 25, 50, 75, 90};
		for (int q = 0; q < 5; q++) {
			printf(", %d%% %.*f", at[q], decimals, v[(size_t)at[q] * (k - 1) / 100]);
		}
		printf(", max %.*f\n", decimals, v[k - 1]);
	}
}

/* Three signals beyond the picture, idle heads against carrying ones: how
 * loud a head is (head_writes), alone and against its layer's loudest, and
 * what switching it off on the text costs;
 * and the precision and recall each role would have if a head under a bar
 * were called quiet instead of its role. Neither is the labeller's: its
 * callers pass the weights alone, and these figures say what the
 * activations or a pass a head would buy. */
static void report_quiet(void)
{
	double *v = malloc(ninst * sizeof *v);
	if (!v)
		return;
	spread(v, BY_WRITES, "write, over what they read", 2);
	spread(v, BY_RELATIVE, "write, over the loudest head of their layer", 2);
	spread(v, BY_OFF, "switched off: the loss over the text, after minus before", 3);
	free(v);
	const double bar = 0.35;
	printf("\nwith heads that write under %.2f called quiet:\n", bar);
	label_table(bar, BY_WRITES, EVERY, false);
	const double rel = 0.5;
	printf("\nwith heads that write under %.2f of their layer's loudest called quiet:\n", rel);
	label_table(rel, BY_RELATIVE, EVERY, false);
	const double cost = 0.02;
	printf("\nwith heads whose switching off costs under %.2f nats a character called "
	       "quiet:\n",
	       cost);
	label_table(cost, BY_OFF, EVERY, false);
}

/* The labels against the picture, role by role. */
static void report_picture(void)
{
	printf("\nthe labels against the picture, on %d head-texts (those left out too):\n",
	       pictured);
	printf("%-14s  named  contradicted\n", "role");
	for (int r = 0; r < ROLE_NKINDS; r++)
		if (claims[r])
			printf("%-14s  %5d  %5d\n", role_name((role_kind)r), claims[r],
			       contradicted[r]);
	printf("induction hidden by another label: %d\n", hidden);
}

/* Each bar alone, swept: a head-text passes when its score clears it,
 * whatever the other roles. */
static void report_sweep(void)
{
	printf("\neach bar alone, swept (precision / recall):\n");
	for (int r = 0; r < ROLE_NKINDS; r++) {
		int pos = 0;
		for (size_t i = 0; i < ninst; i++)
			pos += inst[i].truth == (role_kind)r;
		if (!pos)
			continue;
		printf("%-14s (now %.2f):", role_name((role_kind)r), role_bar((role_kind)r));
		for (int k = 1; k <= 9; k++) {
			double th = k / 10.0;
			int tp = 0, fp = 0, fn = 0;
			for (size_t i = 0; i < ninst; i++) {
				bool want = inst[i].truth == (role_kind)r;
				bool got = inst[i].rs.s[r] >= th;
				tp += want && got, fp += !want && got, fn += want && !got;
			}
			char p[8];
			snprintf(p, sizeof p, tp + fp ? "%.2f" : "  -",
				 tp + fp ? (double)tp / (tp + fp) : 0);
			printf("  %.1f: %s/%.2f", th, p, (double)tp / (tp + fn));
		}
		printf("\n");
	}
}

/* Every head-text as a row of tab-separated values, for a study of rules
 * the labeller could follow (the file LABELLER_TSV names, when set). */
static void write_tsv(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "bench_labeller: cannot write %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(f, "task\tseed\theads\tlayer\thead\ttruth\tcopy\tverdict\trole\tsecond");
	for (int r = 0; r < ROLE_NKINDS; r++)
		fprintf(f, "\t%s", role_score_key((role_kind)r));
	fprintf(f, "\twrites\trel\toff\tcolumn_rows\tn\tlabel\n");
	for (size_t i = 0; i < ninst; i++) {
		const instance *in = &inst[i];
		char label[96];
		role_label(&in->rs, false, label, sizeof label);
		fprintf(f, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s", lab_task_at(in->task)->name,
			in->seed, in->heads, in->head / in->heads, in->head % in->heads,
			in->truth == ROLE_NKINDS ? "idle" : role_score_key(in->truth),
			in->copy == ROLE_NKINDS ? "-" : role_score_key(in->copy),
			(int)in->rs.verdict, role_score_key(in->rs.role),
			in->rs.second < ROLE_NKINDS ? role_score_key(in->rs.second) : "-");
		for (int r = 0; r < ROLE_NKINDS; r++)
			fprintf(f, "\t%.4f", in->rs.s[r]);
		fprintf(f, "\t%.4f\t%.4f\t%.5f\t%d\t%d\t%s\n", in->writes, in->rel, in->off,
			in->rs.column_rows, in->rs.n, label);
	}
	if (ferror(f) | fclose(f))
		fprintf(stderr, "bench_labeller: writing %s failed\n", path);
}

int main(int argc, char **argv)
{
	blas_ensure_fast_kernel(argv);	  /* the kernel the CPU can run (blas.h) */
	setvbuf(stdout, NULL, _IOLBF, 0); /* each run's line as it ends */
	setlocale(LC_CTYPE, "C.UTF-8");
	int seeds = argc > 1 ? atoi(argv[1]) : 5, texts = argc > 2 ? atoi(argv[2]) : 8;
	for (int i = 0; i < lab_ntasks(); i++) {
		bool want = argc <= 3;
		for (int a = 3; a < argc; a++)
			want |= strcmp(argv[a], lab_task_at(i)->name) == 0;
		for (uint64_t s = 1; want && s <= (uint64_t)seeds; s++)
			for (uint32_t heads = 1; heads <= 2; heads++) {
				cur_task = i, cur_seed = (int)s, cur_heads = (int)heads;
				run(lab_task_at(i), s, heads, texts);
			}
	}
	report_tasks();
	report_labels();
	report_errors(false);
	report_errors(true);
	report_picture();
	report_contributions();
	report_quiet();
	report_sweep();
	if (getenv("LABELLER_TSV"))
		write_tsv(getenv("LABELLER_TSV"));
	free(inst);
	return 0;
}

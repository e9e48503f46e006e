/* The model writes (Ctrl-G): a causal model continues the text one character
 * at a time. Each step asks the worker for the logits after the text
 * (JOB_NEXT), picks a character with the sampler of generate.h, appends it
 * and waits for its attention to be on screen, with the Query row on the
 * new character, before the next step; VIEW_WRITE_MS apart, so a person can
 * follow each row. Any key stops. Run r of a session samples with seed
 * --seed + r - 1, shown on the status line, so that
 * attnview --dump --generate N --seed S reproduces what was written. */
#include "attnview/i18n.h"
#include "screen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct writer {
	bool on, asked;
	float temperature; /* 0: greedy */
	int top_k;
	uint64_t seed; /* of the first run; run r uses seed + r - 1 */
	int runs;
	gen_sampler s;
	int count; /* characters written in this run */
	float last_p;
	double due; /* the next step not before this */
};

bool writing_init(view *v, float temperature, int top_k, uint64_t seed)
{
	struct writer *w = v->wr = calloc(1, sizeof *v->wr);
	if (!w)
		return false;
	w->temperature = temperature;
	w->top_k = top_k;
	w->seed = seed;
	return true;
}

void writing_finish(view *v)
{
	if (v->wr)
		gen_sampler_finish(&v->wr->s);
	free(v->wr);
	v->wr = NULL;
}

bool writing_on(const view *v)
{
	return v->wr->on;
}

void writing_stop(view *v, const char *why)
{
	if (!v->wr->on)
		return;
	v->wr->on = false;
	set_notice(v, ngettext("wrote %d character%s%s", "wrote %d characters%s%s", v->wr->count),
		   v->wr->count, why ? _(": ") : "", why ? why : "");
}

void writing_toggle(view *v)
{
	if (v->wr->on) {
		writing_stop(v, NULL);
		return;
	}
	if (v->m->cfg.objective != OBJ_CAUSAL) {
		set_notice(v, _("writing needs a causal (next-character) model: attnview --model "
				"builtin-causal"));
		return;
	}
	if (v->ntok == 0) {
		set_notice(v, _("type a beginning first: the model goes on from it"));
		return;
	}
	uint64_t seed = v->wr->seed + (uint64_t)v->wr->runs++;
	gen_sampler_finish(&v->wr->s);
	gen_sampler_init(&v->wr->s, v->wr->temperature, v->wr->top_k, seed);
	v->wr->on = true;
	v->wr->count = 0;
	v->wr->asked = false;
	v->wr->due = 0;
	/* From the end of the text, with the text cursor there. */
	v->le.cur = v->le.n;
	v->focus = FOCUS_TYPING;
	v->notice[0] = '\0'; /* the info line says how it writes */
}

/* Temperatures Alt-T goes through; 0 is greedy. */
static const float temps[] = {0, 0.5f, 0.8f, 1.0f, 1.5f};

void writing_temperature(view *v)
{
	size_t n = sizeof temps / sizeof temps[0], i = 0;
	while (i < n && temps[i] <= v->wr->temperature)
		i++;
	v->wr->temperature = temps[i % n];
	v->wr->s.temperature = v->wr->temperature;
	if (v->wr->temperature > 0)
		set_notice(v, _("writing: temperature %.1f among the %d most likely"),
			   v->wr->temperature, v->wr->top_k);
	else
		set_notice(v, _("writing: greedy, always the most likely character"));
}

void writing_step(view *v)
{
	if (!v->wr->on || v->wr->asked || !v->have || v->pending || v->res_seq != v->seq)
		return;
	if (av_now_ms() < v->wr->due)
		return;
	worker_job j = {.kind = JOB_NEXT, .seq = v->res_seq};
	worker_post_job(v->w, &j);
	v->wr->asked = true;
}

double writing_due(const view *v)
{
	return v->wr->on && !v->wr->asked && v->have && !v->pending ? v->wr->due : 0;
}

void writing_take(view *v, const worker_job_result *j)
{
	if (!v->wr->on || j->job.seq != v->res_seq)
		return;
	v->wr->asked = false;
	if (!j->ok) {
		writing_stop(v, j->err.msg);
		return;
	}
	if (v->ntok >= v->context) {
		writing_stop(v, _("the context is full"));
		return;
	}
	float p;
	int32_t id = gen_pick(&v->wr->s, j->logits, j->nlogits, &p);
	if (id < 0) {
		writing_stop(v, _("out of memory"));
		return;
	}
	uint32_t cp = v->m->vocab.cps[id];
	size_t before = v->le.n;
	v->le.cur = v->le.n;
	insert_text(v, &cp, 1);
	if (v->le.n == before) {
		writing_stop(v, _("the input line is full"));
		return;
	}
	v->wr->count++;
	v->wr->last_p = p;
	v->wr->due = av_now_ms() + VIEW_WRITE_MS;
}

void writing_describe(const view *v, char *out, size_t size)
{
	int len = snprintf(out, size,
			   ngettext("the model writes: %d character",
				    "the model writes: %d characters", v->wr->count),
			   v->wr->count);
	if (len < 0 || (size_t)len >= size)
		return;
	if (v->wr->count)
		len += snprintf(out + len, size - (size_t)len, _(", the last at p %.3f"),
				v->wr->last_p);
	if (len < 0 || (size_t)len >= size)
		return;
	if (v->wr->s.temperature > 0)
		snprintf(out + len, size - (size_t)len,
			 _("; seed %llu, temperature %.1f, top-k %d (--dump --generate: the same)"),
			 (unsigned long long)v->wr->s.seed, v->wr->s.temperature, v->wr->s.top_k);
	else
		snprintf(out + len, size - (size_t)len, "%s", _("; greedy"));
}

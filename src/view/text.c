/* The text and its results: tokenizing what is typed, posting it to the
 * worker, taking back the attention and the predictions that belong to the
 * latest text (older ones are dropped by sequence number). */
#include "attnview/i18n.h"
#include "panel.h"
#include "screen.h"

#include "attnview/vocab.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void set_notice(view *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->notice, sizeof v->notice, fmt, ap);
	va_end(ap);
}

attn_matrix view_head(const view *v)
{
	return attn_result_head(&v->r, v->layer, v->head);
}

const role_scores *view_roles_of(const view *v, int l, int h)
{
	if (!v->have || !v->all_roles || l < 0 || l >= v->r.layers || h < 0 || h >= v->r.heads)
		return NULL;
	return &v->all_roles[l * v->r.heads + h];
}

bool view_heads_ready(const view *v, int l0, int l1)
{
	if (!v->have || v->r.partial)
		return false;
	for (int l = l0; !v->heads_here && l < l1; l++)
		for (int h = 0; h < v->r.heads; h++)
			if (!attn_head_kept(&v->r, l, h))
				return false;
	return true;
}

void view_let_go(view *v)
{
	if (v->have)
		worker_recycle(v->w, &v->r);
	free(v->all_roles);
	v->all_roles = NULL;
	v->have = false;
}

const role_scores *view_head_roles(view *v)
{
	if (v->hr_seq != v->res_gen || v->hr_layer != v->layer || v->hr_head != v->head) {
		const role_scores *done = view_roles_of(v, v->layer, v->head);
		if (done) {
			v->hr = *done;
		} else {
			attn_matrix a = view_head(v);
			head_roles(&v->hr, &a, v->r.tokens);
		}
		v->hr_seq = v->res_gen, v->hr_layer = v->layer, v->hr_head = v->head;
	}
	return &v->hr;
}

/* Line index of the first codepoint beyond the model's context. NFC may join
 * codepoints, so count tokens of prefixes (binary search; only runs when the
 * text is too long). */
static size_t find_cut(view *v, const char *s, const size_t *off)
{
	size_t lo = 0, hi = v->le.n; /* count(lo) <= ctx < count(hi) */
	cp_buf tmp = {0};
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		tmp.n = 0;
		if (!tokenize_text(s, off[mid], _("the input line"), &tmp, NULL, NULL))
			break;
		if ((int)tmp.n <= v->context)
			lo = mid;
		else
			hi = mid;
	}
	cp_buf_finish(&tmp);
	return lo;
}

/* The word view: WORD_MARK characters mark where words start and are not
 * part of the text the model reads. */
static void strip_marks(view *v)
{
	size_t before = v->cps.n;
	bool *marks = calloc(before + 1, sizeof *marks);
	if (!marks) {
		set_notice(v, _("out of memory for the word marks"));
		return;
	}
	v->cps.n = words_strip_marks(v->cps.v, before, marks);
	v->has_marks = v->cps.n < before;
	size_t keep = v->cps.n < (size_t)v->context ? v->cps.n : (size_t)v->context;
	memcpy(v->wmarks, marks, keep * sizeof *marks);
	free(marks);
}

/* Tokenize the input line into v->toks; false (and a notice) on failure. */
static bool tokenize_line(view *v)
{
	size_t len;
	char *s = lineedit_utf8(&v->le, &len);
	size_t *off = malloc((v->le.n + 1) * sizeof *off);
	if (!s || !off) {
		set_notice(v, _("out of memory: cannot tokenize the text"));
		free(s);
		free(off);
		return false;
	}
	size_t b = 0;
	for (size_t i = 0; i < v->le.n; i++) {
		off[i] = b;
		char tmp[4];
		b += cp_to_utf8(v->le.cps[i], tmp);
	}
	off[v->le.n] = b;
	v->cps.n = 0;
	av_error err;
	bool ok = tokenize_text(s, len, _("the input line"), &v->cps, NULL, &err);
	if (!ok) {
		set_notice(v, "%s", err.msg);
	} else {
		v->has_marks = false;
		if (v->words)
			strip_marks(v);
		v->ntot = (int)v->cps.n;
		v->ntok = v->ntot < v->context ? v->ntot : v->context;
		vocab_tokenize(&v->m->vocab, v->cps.v, (size_t)v->ntok, v->toks);
		if (v->ntot > v->context)
			v->cut_cp = find_cut(v, s, off);
	}
	free(s);
	free(off);
	return ok;
}

void text_changed(view *v)
{
	v->seq++;
	v->ntok = v->ntot = 0;
	v->cut_cp = v->le.n;
	v->notice[0] = '\0';
	tokenize_line(v);

	v->busy_shown = false;
	if (v->ntok == 0) {
		/* Nothing to compute: the map empties now, and whatever the worker
		 * still returns is for an older sequence number and dropped. */
		v->pending = false;
		view_let_go(v);
		v->hv = (heat_view){0, 0, 0, 0};
		return;
	}
	av_error err;
	v->topts.value_norms = v->contrib;
	const bool all = view_screen(v)->every_head;
	v->topts.every_head = all || view_sel(v) != SEL_HEAD;
	v->topts.roles = all; /* the overview's: every tile's label */
	/* A long pass shows the head on screen as soon as its layer is done. */
	v->topts.partial_layer = v->topts.every_head || v->contrib ? 0 : v->layer + 1;
	if (!worker_post_text(v->w, v->toks, v->ntok, v->seq, &v->topts, &err)) {
		set_notice(v, "%s", err.msg);
		return;
	}
	v->pending = true;
	v->post_ms = av_now_ms();
}

void insert_text(view *v, const uint32_t *cps, size_t n)
{
	bool full;
	size_t got = lineedit_insert(&v->le, cps, n, &full);
	if (got)
		text_changed(v);
	if (full)
		set_notice(
		    v, _("the input line holds at most %d characters; the rest was not inserted"),
		    VIEW_MAX_LINE);
}

void clamp_cursor(view *v)
{
	int n = view_n(v);
	heat_view *hv = &v->hv;
	if (n == 0)
		return; /* nothing computed yet (a reload): kept for the result */
	if (hv->qrow >= n)
		hv->qrow = n - 1;
	if (hv->kcol >= n)
		hv->kcol = n - 1;
	if (hv->qrow < 0)
		hv->qrow = 0;
	if (hv->kcol < 0)
		hv->kcol = 0;
}

void request_pred(view *v)
{
	if (!v->have)
		return;
	int q = view_query_token(v, v->hv.qrow);
	if (q >= v->r.n || v->pstate[q] == PRED_HAVE || v->pred_req == q)
		return;
	worker_post_predict(v->w, v->res_seq, q, VIEW_TOPK);
	v->pred_req = q;
}

static void take_attn(view *v, worker_attn *a)
{
	if (a->seq != v->seq) {
		if (a->ok)
			worker_recycle(v->w, &a->r);
		free(a->roles);
		return;
	}
	/* A partial result (worker.h) stands for its text until the complete
	 * one comes: the text is still pending, and what was asked about it
	 * (predictions, jobs) holds for the complete result too. */
	const bool part = a->ok && a->r.partial > 0;
	const bool completes = v->have && v->r.partial > 0 && a->seq == v->res_seq;
	v->pending = part;
	if (!part)
		v->busy_shown = false;
	view_let_go(v);
	v->have = a->ok;
	if (!a->ok) {
		snprintf(v->error, sizeof v->error, "%s", a->err.msg);
		return;
	}
	v->r = a->r;
	v->all_roles = a->roles;
	v->res_gen++;
	v->res_seq = a->seq;
	v->res_ms = a->ms;
	if (completes)
		return;
	v->error[0] = '\0';
	memset(v->pstate, 0, (size_t)v->context);
	v->pred_req = -1;
	pages_new_result(v);
	v->loss.valid = v->loss.asked = v->loss.failed = false;
	v->loss.mean_valid = v->loss.mean_asked = v->loss.mean_failed = false;
	v->roles_asked = v->heads_here = false;
	if (writing_on(v))
		v->hv.qrow = 1 << 30; /* the model writing: the row of its newest character */
	clamp_cursor(v);
	/* Predictions are a second forward pass: start it a moment later, so
	 * that while someone types it does not delay the next keystroke's
	 * heatmap. The jobs wait as long. */
	v->pred_due = av_now_ms() + VIEW_PRED_DELAY_MS;
}

/* The overview labels every tile and draws every head, a summary reads
 * every head of its layers: a text typed there brings the weights and roles
 * with its result; one computed before asks for them (JOB_ROLES, the
 * weights alone for a summary), once a result. */
static void request_heads(view *v)
{
	const bool all = view_screen(v)->every_head;
	int l0 = 0, l1 = nlayers(v);
	const bool sel = !all && v->focus.screen == SCREEN_MAP && view_sel_layers(v, &l0, &l1);
	const bool answered = v->heads_seq == v->res_seq;
	const bool roles = all && !v->all_roles && !(answered && v->heads_roles);
	const bool weights = (all || sel) && !answered && !view_heads_ready(v, l0, l1);
	if (v->r.partial || (!roles && !weights) || (v->roles_asked && v->roles_seq == v->res_seq))
		return;
	worker_job j = {.kind = JOB_ROLES, .seq = v->res_seq, .no_roles = !all};
	worker_post_job(v->w, &j);
	v->roles_asked = true;
	v->roles_seq = v->res_seq;
}

/* With heads switched off, the loss with and without them; once that is
 * on screen, the loss with their mean output (the slower: plain passes). */
static void request_loss(view *v)
{
	if (!v->nablated)
		return;
	if (v->loss.seq != v->res_seq || !(v->loss.valid || v->loss.asked || v->loss.failed)) {
		worker_job j = {.kind = JOB_LOSS, .seq = v->res_seq};
		worker_post_job(v->w, &j);
		v->loss.valid = v->loss.failed = false;
		v->loss.mean_valid = v->loss.mean_asked = v->loss.mean_failed = false;
		v->loss.asked = true;
		v->loss.seq = v->res_seq;
		return;
	}
	if (v->loss.valid && !v->loss.mean_valid && !v->loss.mean_asked && !v->loss.mean_failed) {
		worker_job j = {.kind = JOB_LOSS_MEAN, .seq = v->res_seq};
		worker_post_job(v->w, &j);
		v->loss.mean_asked = true;
	}
}

void request_jobs(view *v)
{
	if (!v->have)
		return;
	pages_request(v);
	request_heads(v);
	request_loss(v);
}

/* JOB_ROLES's answer: the weights it computed into the result on screen
 * (the same pass to the bit, or nothing is taken and this thread computes
 * them after all), and the roles. */
static void take_heads(view *v, worker_job_result *j)
{
	if (v->r.partial)
		return;
	v->roles_asked = false;
	v->heads_seq = v->res_seq;
	v->heads_roles = !j->job.no_roles;
	if (!j->ok || (j->heads.head_w && !attn_result_adopt_weights(&v->r, &j->heads)))
		v->heads_here = true;
	if (j->ok && j->roles && !v->all_roles) {
		v->all_roles = j->roles; /* taken: the job's result lets go of it */
		j->roles = NULL;
	}
}

static void take_job(view *v, worker_job_result *j)
{
	if (!v->have || j->job.seq != v->res_seq)
		return;
	if (j->job.kind == JOB_ROLES) {
		take_heads(v, j);
		return;
	}
	if (!j->ok && (j->job.kind == JOB_LOSS || j->job.kind == JOB_LOSS_MEAN)) {
		/* A failure that reaches the view is for this text (giving up
		 * for a newer one is dropped by the worker): say why, once. */
		if (j->job.kind == JOB_LOSS_MEAN) {
			v->loss.mean_asked = false;
			v->loss.mean_failed = true;
		} else {
			v->loss.asked = false;
			v->loss.failed = true;
		}
		v->loss.why = j->err;
		return;
	}
	if (!j->ok || pages_take(v, j))
		return;
	if (j->job.kind == JOB_LOSS) {
		v->loss.before = j->loss_before;
		v->loss.after = j->loss_after;
		v->loss.positions = j->positions;
		v->loss.task_before = j->task_before;
		v->loss.task_after = j->task_after;
		v->loss.task_positions = j->task_positions;
		v->loss.valid = true;
		v->loss.asked = false;
	} else if (j->job.kind == JOB_LOSS_MEAN && v->loss.valid) {
		v->loss.mean = j->loss_mean;
		v->loss.task_mean = j->task_mean;
		v->loss.mean_valid = true;
		v->loss.mean_asked = false;
	}
}

void take_results(view *v)
{
	worker_drain(v->w);
	worker_attn a;
	if (worker_take_attn(v->w, &a))
		take_attn(v, &a);
	worker_job_result jr;
	while (worker_take_job(v->w, &jr)) {
		if (jr.job.kind == JOB_NEXT)
			writing_take(v, &jr);
		else
			take_job(v, &jr);
		worker_job_result_finish(&jr);
	}
	worker_pred p;
	if (worker_take_pred(v->w, &p) && v->have && p.seq == v->res_seq && p.pos < v->r.n) {
		memcpy(v->pids + (size_t)p.pos * VIEW_TOPK, p.ids, sizeof(int32_t) * VIEW_TOPK);
		memcpy(v->pps + (size_t)p.pos * VIEW_TOPK, p.probs, sizeof(float) * VIEW_TOPK);
		v->pstate[p.pos] = PRED_HAVE;
		if (v->pred_req == p.pos)
			v->pred_req = -1;
		request_pred(v);
		request_jobs(v);
	}
}

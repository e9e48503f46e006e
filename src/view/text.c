/* The text and its results: tokenizing what is typed, posting it to the
 * worker, taking back the attention and the predictions that belong to the
 * latest text (older ones are dropped by sequence number). */
#include "attnview/i18n.h"
#include "state.h"

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
	v->topts.every_head = v->focus == F_OVERVIEW || view_sel(v) != SEL_HEAD;
	v->topts.roles = v->focus == F_OVERVIEW; /* every tile's label */
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
	v->bd_valid = v->bd_asked = false;
	v->why_valid = v->why_asked = false;
	v->faith_valid = v->faith_asked = false;
	v->patch_valid = v->patch_asked = false;
	v->loss_valid = v->loss_asked = false;
	v->roles_asked = false;
	if (writing_on(v))
		v->hv.qrow = 1 << 30; /* the model writing: the row of its newest character */
	clamp_cursor(v);
	/* Predictions are a second forward pass: start it a moment later, so
	 * that while someone types it does not delay the next keystroke's
	 * heatmap. The jobs wait as long. */
	v->pred_due = av_now_ms() + VIEW_PRED_DELAY_MS;
}

const void *patch_source(const view *v, int *n, bool *pinned)
{
	const pin *p = view_pin(v);
	*pinned = p->on && p->ids;
	*n = *pinned ? p->nids : (int)v->patch_other.n;
	return *pinned ? (const void *)p->ids : v->patch_other.n ? v->patch_other.v : NULL;
}

/* Patching's two characters for the other text's ids (n): the chosen ones
 * (--targets, Alt-D) where the model knows them, else where the texts
 * differ in one place, else none (the top-1s). */
static void patch_targets_of(view *v, const int32_t *other, int n, int32_t *targets, int *from)
{
	int32_t ids[AV_MAX_CONTEXT];
	for (int i = 0; i < n; i++)
		ids[i] = v->r.tokens[i].id;
	if (v->patch_has_targets) {
		targets[0] = vocab_id(&v->m->vocab, v->patch_targets[0]);
		targets[1] = vocab_id(&v->m->vocab, v->patch_targets[1]);
		if (targets[0] >= TOK_NSPECIAL && targets[1] >= TOK_NSPECIAL) {
			*from = PATCH_GIVEN;
			return;
		}
		set_notice(v, "%s",
			   _("patching: the model does not know a character chosen (Alt-D): the "
			     "default instead"));
	}
	*from = patch_difference_targets(ids, other, n, targets) ? PATCH_DIFFERENCE : PATCH_TOP1;
}

/* Patching (Alt-X): the other text into this one, at the Query row, when
 * the two have as many characters. */
static void request_patch(view *v)
{
	int q = v->hv.qrow, n2;
	bool pinned;
	const void *src = patch_source(v, &n2, &pinned);
	if (!v->patching || v->words || !src || n2 != v->r.n || q >= v->r.n ||
	    (v->patch_seq == v->res_seq && v->patch_q == q && v->patch_src == src &&
	     (v->patch_valid || v->patch_asked)))
		return;
	/* 4 kB each: not on the stack; the UI thread's alone. */
	static worker_job j;
	static token other[AV_MAX_CONTEXT]; /* --compare's, in this model's vocabulary */
	j = (worker_job){.kind = JOB_PATCH, .seq = v->res_seq, .query = q, .nother = n2};
	if (pinned) {
		memcpy(j.other, src, (size_t)n2 * sizeof *j.other);
	} else {
		vocab_tokenize(&v->m->vocab, v->patch_other.v, (size_t)n2, other);
		for (int i = 0; i < n2; i++)
			j.other[i] = other[i].id;
	}
	patch_targets_of(v, j.other, n2, j.targets, &j.from);
	worker_post_job(v->w, &j);
	v->patch_valid = false;
	v->patch_asked = true;
	v->patch_seq = v->res_seq, v->patch_q = q, v->patch_src = src;
}

void request_jobs(view *v)
{
	if (!v->have)
		return;
	int q = v->hv.qrow, k = v->hv.kcol;
	bool cell = view_sel(v) == SEL_HEAD && !v->words && !view_pin(v)->on;
	if (v->breakdown && cell && q < v->r.n && k < v->r.n &&
	    !(v->bd_seq == v->res_seq && v->bd_layer == v->layer && v->bd_head == v->head &&
	      v->bd_q == q && v->bd_k == k && (v->bd_valid || v->bd_asked))) {
		worker_job j = {.kind = JOB_BREAKDOWN,
				.seq = v->res_seq,
				.layer = v->layer,
				.head = v->head,
				.query = q,
				.key = k};
		worker_post_job(v->w, &j);
		v->bd_valid = false;
		v->bd_asked = true;
		v->bd_seq = v->res_seq, v->bd_layer = v->layer, v->bd_head = v->head;
		v->bd_q = q, v->bd_k = k;
	}
	if (v->why && q < v->r.n &&
	    !(v->why_seq == v->res_seq && v->why_q == q && (v->why_valid || v->why_asked))) {
		worker_job j = {.kind = JOB_WHY, .seq = v->res_seq, .query = q};
		worker_post_job(v->w, &j);
		v->why_valid = false;
		v->why_asked = true;
		v->why_seq = v->res_seq, v->why_q = q;
	}
	if (v->faith_on && !v->words && q < v->r.n &&
	    !(v->faith_seq == v->res_seq && v->faith_q == q && (v->faith_valid || v->faith_asked))) {
		worker_job j = {.kind = JOB_FAITH, .seq = v->res_seq, .query = q};
		worker_post_job(v->w, &j);
		v->faith_valid = false;
		v->faith_asked = true;
		v->faith_seq = v->res_seq, v->faith_q = q;
	}
	if (v->circ_on && !v->circ && !(v->circ_asked && v->circ_seq == v->res_seq)) {
		worker_job j = {.kind = JOB_CIRCUITS, .seq = v->res_seq};
		worker_post_job(v->w, &j);
		v->circ_asked = true;
		v->circ_seq = v->res_seq;
	}
	request_patch(v);
	/* The overview labels every tile: a text typed there brings the roles
	 * with its result; one computed before it opened asks for them. */
	if (v->focus == F_OVERVIEW && !v->all_roles && !v->r.partial &&
	    !(v->roles_asked && v->roles_seq == v->res_seq)) {
		worker_job j = {.kind = JOB_ROLES, .seq = v->res_seq};
		worker_post_job(v->w, &j);
		v->roles_asked = true;
		v->roles_seq = v->res_seq;
	}
	if (v->nablated && !(v->loss_seq == v->res_seq && (v->loss_valid || v->loss_asked))) {
		worker_job j = {.kind = JOB_LOSS, .seq = v->res_seq};
		worker_post_job(v->w, &j);
		v->loss_valid = false;
		v->loss_asked = true;
		v->loss_seq = v->res_seq;
	}
}

static void take_job(view *v, worker_job_result *j)
{
	if (!v->have || j->job.seq != v->res_seq || !j->ok)
		return;
	if (j->job.kind == JOB_ROLES && j->roles && !v->all_roles && !v->r.partial) {
		v->all_roles = j->roles; /* taken: the job's result lets go of it */
		j->roles = NULL;
		v->roles_asked = false;
	} else if (j->job.kind == JOB_BREAKDOWN && j->hs == v->bd.hs &&
		   j->job.layer == v->bd_layer && j->job.head == v->bd_head &&
		   j->job.query == v->bd_q && j->job.key == v->bd_k) {
		float row[AV_MAX_CONTEXT];
		attn_score_row(&v->r, j->job.layer, j->job.head, j->job.query, row);
		qk_breakdown_compute(&v->bd, j->job.layer, j->job.head, j->job.query, j->job.key,
				     j->q, j->k, row, v->r.n);
		score_split_finish(&v->bd_split);
		v->bd_split = j->split; /* taken: the job's result lets go of it */
		memset(&j->split, 0, sizeof j->split);
		v->bd_valid = true;
		v->bd_asked = false;
	} else if (j->job.kind == JOB_WHY && j->job.query == v->why_q) {
		const size_t L = (size_t)v->r.layers;
		memcpy(v->why_lens_id, j->lens_id, L * WHY_K * sizeof *j->lens_id);
		memcpy(v->why_lens_p, j->lens_p, L * WHY_K * sizeof *j->lens_p);
		memcpy(v->why_heads, j->dla_heads, L * (size_t)v->r.heads * sizeof *j->dla_heads);
		v->why_commit = j->commit;
		v->why_id = j->dla_id;
		v->why_logit = j->dla_logit;
		v->why_rest = j->dla_rest;
		v->why_valid = true;
		v->why_asked = false;
	} else if (j->job.kind == JOB_FAITH && j->job.query == v->faith_q) {
		worker_job_result_finish(&v->faith);
		v->faith = *j; /* the view keeps the arrays */
		j->faith_effect = j->faith_sp = j->faith_att = NULL;
		v->faith_valid = true;
		v->faith_asked = false;
	} else if (j->job.kind == JOB_CIRCUITS && j->circ && !v->circ) {
		v->circ = j->circ; /* the view keeps it until the model changes */
		j->circ = NULL;
		v->circ_asked = false;
	} else if (j->job.kind == JOB_PATCH && j->job.query == v->patch_q) {
		patch_result_finish(&v->patch);
		v->patch = j->patch; /* taken: the job's result lets go of it */
		memset(&j->patch, 0, sizeof j->patch);
		v->patch_valid = true;
		v->patch_asked = false;
	} else if (j->job.kind == JOB_LOSS) {
		v->loss_before = j->loss_before;
		v->loss_after = j->loss_after;
		v->loss_positions = j->positions;
		v->task_before = j->task_before;
		v->task_after = j->task_after;
		v->task_positions = j->task_positions;
		v->loss_valid = true;
		v->loss_asked = false;
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

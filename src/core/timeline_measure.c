/* Measuring a model for the training timeline (timeline.h): the role scores
 * of every head on the probes, the loss on the text probe early and late in
 * the context. One forward pass over the probe windows and the repeated
 * probe together, and for a masked model one more with every fourth
 * position hidden. */
#include "attnview/i18n.h"
#include "attnview/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct probe_run {
	const timeline *tl;
	const model *m;
	int B, n;		   /* windows + 1 (the repeated probe last), characters */
	token *tok;		   /* (B, n) */
	int32_t *ids, *rows, *tgt; /* (B, n) */
	activations ws;
} probe_run;

static void probe_run_finish(probe_run *p)
{
	free(p->tok);
	free(p->ids);
	free(p->rows);
	free(p->tgt);
	if (p->ws.mem)
		activations_finish(&p->ws);
}

static bool probe_run_init(probe_run *p, const timeline *tl, const model *m, av_error *err)
{
	memset(p, 0, sizeof *p);
	p->tl = tl;
	p->m = m;
	p->B = (int)tl->windows + 1;
	p->n = (int)tl->n;
	size_t cells = (size_t)p->B * (size_t)p->n;
	p->tok = malloc(cells * sizeof *p->tok);
	p->ids = malloc(cells * sizeof *p->ids);
	p->rows = malloc(cells * sizeof *p->rows);
	p->tgt = malloc(cells * sizeof *p->tgt);
	if (!p->tok || !p->ids || !p->rows || !p->tgt)
		return av_fail(err, _("out of memory for the timeline"));
	if (!activations_init(&p->ws, &m->cfg, p->B, p->n, (int)cells, err))
		return false;
	for (int b = 0; b < p->B; b++) {
		const uint32_t *cps = b < p->B - 1 ? tl->probe + (size_t)b * tl->n : tl->repeated;
		token *tok = p->tok + (size_t)b * p->n;
		vocab_tokenize(&m->vocab, cps, tl->n, tok);
		for (int i = 0; i < p->n; i++)
			p->ids[(size_t)b * p->n + i] = tok[i].id;
	}
	return true;
}

static float clamp01(double x)
{
	return x < 0 ? 0.0f : x > 1 ? 1.0f : (float)x;
}

/* The role scores of every head, from the pass just run: averaged over the
 * text windows, the induction score from the repeated probe. */
static void head_values(probe_run *p, float *out)
{
	const model_config *c = &p->m->cfg;
	int H = (int)c->heads, W = p->B - 1, n = p->n;
	bool causal = c->objective == OBJ_CAUSAL;
	for (int l = 0; l < (int)c->layers; l++)
		for (int h = 0; h < H; h++) {
			double sum[TL_NVALUES] = {0}; /* version 2: every role's score */
			role_scores rs;
			for (int b = 0; b <= W; b++) {
				const float *w = p->ws.layer[l].att + ((size_t)b * H + (size_t)h) *
									  (size_t)n * (size_t)n;
				attn_matrix a = {w, n, causal, 0}; /* dense */
				head_roles(&rs, &a, p->tok + (size_t)b * n);
				for (int k = 0; k < TL_NVALUES && b < W; k++)
					sum[k] += rs.s[k];
			}
			float *v = out + ((size_t)l * H + (size_t)h) * TL_NVALUES;
			for (int k = 0; k < TL_NVALUES; k++)
				v[k] = clamp01(sum[k] / W);
			v[ROLE_INDUCTION] = clamp01(rs.s[ROLE_INDUCTION]);
		}
}

/* -log softmax(logits)[target] */
static double row_loss(const float *logits, int V, int target)
{
	float mx = logits[0];
	for (int j = 1; j < V; j++)
		mx = logits[j] > mx ? logits[j] : mx;
	double s = 0;
	for (int j = 0; j < V; j++)
		s += exp((double)(logits[j] - mx));
	return log(s) + (double)mx - (double)logits[target];
}

/* The rows the loss is taken at and their targets; for a masked model the
 * inputs with those positions hidden (window w: p % 4 == w % 4). Returns
 * the number of rows; pos[r] gets the position of row r among the np
 * positions a window predicts. */
static int loss_rows(probe_run *p, int *pos, int *np)
{
	bool causal = p->m->cfg.objective == OBJ_CAUSAL;
	int W = p->B - 1, n = p->n, nr = 0;
	*np = causal ? n - 1 : n;
	for (int b = 0; b < W; b++)
		for (int i = 0; i < *np; i++) {
			size_t at = (size_t)b * n + (size_t)i;
			if (!causal && i % 4 != b % 4)
				continue;
			if (p->tl->scored && !p->tl->scored[at])
				continue;
			p->rows[nr] = (int32_t)at;
			p->tgt[nr] = causal ? p->ids[at + 1] : p->ids[at];
			if (!causal)
				p->ids[at] = TOK_MASK;
			pos[nr++] = i;
		}
	return nr;
}

/* The probe loss and the in-context learning score (timeline.h); false
 * with err when out of memory (a record is never written with numbers
 * missing for want of memory: the run says so instead). */
static bool losses(probe_run *p, double *mean, double *icl, av_error *err)
{
	const model *m = p->m;
	int V = (int)m->cfg.vocab_size, np, W = p->B - 1;
	int *pos = malloc((size_t)p->B * (size_t)p->n * sizeof *pos);
	if (!pos)
		return av_fail(err, _("out of memory for the timeline"));
	int nr = loss_rows(p, pos, &np);
	if (m->cfg.objective != OBJ_CAUSAL)
		model_forward(m, &p->ws, p->ids, W, p->n);
	model_logits(m, &p->ws, p->rows, nr);
	int q = np / 4 > 0 ? np / 4 : 1;
	double all = 0, early = 0, late = 0;
	int ne = 0, nl = 0;
	for (int r = 0; r < nr; r++) {
		double x = row_loss(p->ws.logits + (size_t)r * V, V, p->tgt[r]);
		all += x;
		if (pos[r] < q) {
			early += x;
			ne++;
		}
		if (pos[r] >= np - q) {
			late += x;
			nl++;
		}
	}
	free(pos);
	*mean = nr ? all / nr : NAN;
	*icl = ne && nl && !p->tl->scored ? late / nl - early / ne : NAN;
	return true;
}

bool timeline_record(timeline *tl, const model *m, uint64_t step, float loss, bool held_out,
		     av_error *err)
{
	if (tl->version != TL_VERSION)
		return av_fail(err, _("the training timeline was recorded by an older attnview, "
				      "which measured the heads otherwise: it cannot go on"));
	size_t index;
	float *v = timeline_slot(tl, step, &index);
	if (!v) {
		if (tl->count >= TL_MAX_RECORDS)
			return true;
		return av_fail(err, _("out of memory for the timeline"));
	}
	probe_run p;
	bool ok = probe_run_init(&p, tl, m, err);
	if (ok) {
		model_forward(m, &p.ws, p.ids, p.B, p.n);
		head_values(&p, v);
		double mean = NAN, icl = NAN;
		ok = losses(&p, &mean, &icl, err);
		tl->loss[index] = loss;
		tl->probe_loss[index] = held_out ? (float)mean : NAN;
		tl->icl[index] = (float)icl;
	}
	if (!ok)
		tl->count = index; /* the slot is given back */
	probe_run_finish(&p);
	return ok;
}

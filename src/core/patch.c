/* Activation patching between two texts (patch.h). */
#include "attnview/patch.h"
#include "attnview/i18n.h"
#include "attnview/ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The two passes, kept: each block's attention output (before the
 * projection) of both texts, and the text's residual stream after each
 * block, (L, n, d) each; ln (d) and logits (V) are work space. */
typedef struct patch_work {
	float *atty, *atty2, *res;
	float *ln, *logits, *logits2; /* (d), (V), (V) */
	float *x;		      /* (n, d) the stream of a patched run */
	double *score;		      /* (n) one row's attention */
} patch_work;

/* Zero the switched-off heads' columns of atty (n, d), as model_forward. */
static void ablate(const activations *ws, int l, float *atty, int n, int d, int H)
{
	const int hs = d / H;
	for (int h = 0; ws->ablate && h < H; h++)
		if (ws->ablate[l * H + h])
			for (int r = 0; r < n; r++)
				memset(atty + (size_t)r * d + (size_t)h * hs, 0,
				       hs * sizeof(float));
}

/* Rows r0 .. r1 - 1 of block l from its output projection on: out = x +
 * proj(atty) then + mlp(ln2(.)), all (n, d) arrays at row 0; the block's
 * activations and ws->scratch are work space. */
static void block_rows(const model *m, activations *ws, int l, const float *x, const float *atty,
		       float *out, int r0, int r1)
{
	const int d = (int)m->cfg.dim, N = r1 - r0;
	const size_t o = (size_t)r0 * d;
	const layer_params *p = &m->p.layer[l];
	layer_acts *la = &ws->layer[l];
	matmul_forward(ws->scratch, atty + o, p->proj_w, p->proj_b, N, d, d);
	residual_forward(la->res2 + o, x + o, ws->scratch, N * d);
	layernorm_forward(la->ln2 + o, la->ln2_mean + r0, la->ln2_rstd + r0, la->res2 + o, p->ln2_w,
			  p->ln2_b, N, d);
	matmul_forward(la->fch + 4 * o, la->ln2 + o, p->fc_w, p->fc_b, N, d, 4 * d);
	model_gelu(m, la->fch_gelu + 4 * o, la->fch + 4 * o, N * 4 * d);
	matmul_forward(ws->scratch, la->fch_gelu + 4 * o, p->fc2_w, p->fc2_b, N, 4 * d, d);
	residual_forward(out + o, la->res2 + o, ws->scratch, N * d);
}

/* Block l's attention from its input x (n, d) into ws->layer[l].atty. */
static void block_attention(const model *m, activations *ws, int l, const float *x, int n)
{
	const int d = (int)m->cfg.dim, H = (int)m->cfg.heads;
	const layer_params *p = &m->p.layer[l];
	layer_acts *la = &ws->layer[l];
	layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, x, p->ln1_w, p->ln1_b, n, d);
	matmul_forward(la->qkv, la->ln1, p->qkv_w, p->qkv_b, n, d, 3 * d);
	attention_forward(la->atty, la->preatt, la->att, la->qkv, 1, n, d, H,
			  m->cfg.objective == OBJ_CAUSAL);
	ablate(ws, l, la->atty, n, d, H);
}

/* The logits at one row x (d) of the last block's output, into w->logits. */
static void row_logits(const model *m, patch_work *w, const float *x)
{
	const int d = (int)m->cfg.dim;
	float mean, rstd;
	layernorm_forward(w->ln, &mean, &rstd, x, m->p.lnf_w, m->p.lnf_b, 1, d);
	model_unembed(m, w->logits, w->ln, 1);
}

/* D = z_a - z_b at row pos from the last block's input x (n, d): its
 * attention for that row alone (att: the row's attention output, already
 * patched; NULL: computed from x), then the rest of the row. */
static float last_row(const model *m, activations *ws, patch_work *w, const patch_result *r,
		      const float *x, const float *att)
{
	const int d = (int)m->cfg.dim, H = (int)m->cfg.heads, l = (int)m->cfg.layers - 1;
	const int n = r->n, pos = r->pos, hs = d / H;
	const int nk = m->cfg.objective == OBJ_CAUSAL ? pos + 1 : n;
	layer_acts *la = &ws->layer[l];
	float *y = la->atty + (size_t)pos * d;
	if (att) {
		memmove(y, att, (size_t)d * sizeof *y);
	} else {
		const layer_params *p = &m->p.layer[l];
		layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, x, p->ln1_w, p->ln1_b, n, d);
		matmul_forward(la->qkv, la->ln1, p->qkv_w, p->qkv_b, n, d, 3 * d);
		const float scale = 1.0f / sqrtf((float)hs);
		for (int h = 0; h < H; h++) {
			/* softmax over the keys of q_pos . k_j / sqrt(hs), then A V */
			const float *q = la->qkv + (size_t)pos * 3 * d + h * hs;
			double mx = -INFINITY, sum = 0;
			for (int j = 0; j < nk; j++) {
				const float *k = la->qkv + (size_t)j * 3 * d + d + h * hs;
				double s = 0;
				for (int c = 0; c < hs; c++)
					s += (double)q[c] * k[c];
				w->score[j] = s * scale;
				mx = w->score[j] > mx ? w->score[j] : mx;
			}
			for (int j = 0; j < nk; j++)
				sum += w->score[j] = exp(w->score[j] - mx);
			for (int c = 0; c < hs; c++) {
				double v = 0;
				for (int j = 0; j < nk; j++)
					v += w->score[j] *
					     la->qkv[(size_t)j * 3 * d + 2 * d + h * hs + c];
				y[h * hs + c] = (float)(v / sum);
			}
		}
		ablate(ws, l, la->atty, n, d, H);
	}
	block_rows(m, ws, l, x, la->atty, la->res3, pos, pos + 1);
	row_logits(m, w, la->res3 + (size_t)pos * d);
	return w->logits[r->target[0]] - w->logits[r->target[1]];
}

/* The largest logit's id, leaving out `skip`. */
static int32_t top_of(const float *z, int V, int32_t skip)
{
	int32_t best = -1;
	for (int v = 0; v < V; v++)
		if (v != skip && (best < 0 || z[v] > z[best]))
			best = v;
	return best;
}

/* The plain pass of ids kept in att (and res, if not NULL); the logits at
 * pos left in w->logits. */
static void keep_pass(const model *m, activations *ws, patch_work *w, const int32_t *ids, int n,
		      int pos, float *att, float *res)
{
	const int d = (int)m->cfg.dim, L = (int)m->cfg.layers;
	const size_t nd = (size_t)n * d;
	model_forward(m, ws, ids, 1, n);
	for (int l = 0; l < L; l++) {
		memcpy(att + l * nd, ws->layer[l].atty, nd * sizeof(float));
		if (res)
			memcpy(res + l * nd, ws->layer[l].res3, nd * sizeof(float));
	}
	row_logits(m, w, ws->layer[L - 1].res3 + (size_t)pos * d);
}

static bool alloc_work(const model *m, patch_work *w, patch_result *r, int n)
{
	const size_t d = m->cfg.dim, V = m->cfg.vocab_size, L = m->cfg.layers;
	const size_t LH = L * m->cfg.heads, nd = (size_t)n * d;
	w->atty = malloc(L * nd * sizeof(float));
	w->atty2 = malloc(L * nd * sizeof(float));
	w->res = malloc(L * nd * sizeof(float));
	w->x = malloc(nd * sizeof(float));
	w->score = malloc((size_t)n * sizeof(double));
	w->ln = malloc((d + 2 * V) * sizeof(float));
	w->logits = w->ln ? w->ln + d : NULL;
	w->logits2 = w->ln ? w->ln + d + V : NULL;
	r->heads = calloc(LH, sizeof(float));
	r->cells = calloc((size_t)n * LH, sizeof(float));
	return w->atty && w->atty2 && w->res && w->x && w->score && w->ln && r->heads && r->cells;
}

/* D(patched) - D(text) with head h of block l taken from the other text at
 * rows p0 .. p1 - 1: the blocks after l run on every row (each row reads
 * every earlier one), the patched block and the last only on the rows that
 * change or are read. A patch that changes no bit changes nothing; nor does
 * a patch in the last block away from pos. */
static float patched(const model *m, activations *ws, patch_work *w, const patch_result *r, int l,
		     int h, int p0, int p1)
{
	const int d = (int)m->cfg.dim, hs = d / r->H, n = r->n, L = r->L;
	const size_t nd = (size_t)n * d;
	float *atty = ws->layer[l].atty;
	memcpy(atty, w->atty + l * nd, nd * sizeof(float));
	bool same = true;
	for (int p = p0; p < p1; p++) {
		const size_t o = (size_t)p * d + (size_t)h * hs;
		same = same && !memcmp(atty + o, w->atty2 + l * nd + o, hs * sizeof(float));
		memcpy(atty + o, w->atty2 + l * nd + o, hs * sizeof(float));
	}
	if (same || (l == L - 1 && (r->pos < p0 || r->pos >= p1)))
		return 0.0f;
	ablate(ws, l, atty, n, d, r->H);
	const float *x = l ? w->res + (l - 1) * nd : ws->encoded;
	if (l == L - 1)
		return last_row(m, ws, w, r, x, atty + (size_t)r->pos * d) - r->diff;
	memcpy(w->x, w->res + l * nd, nd * sizeof(float));
	block_rows(m, ws, l, x, atty, w->x, p0, p1);
	for (int k = l + 1; k < L - 1; k++) {
		block_attention(m, ws, k, w->x, n);
		block_rows(m, ws, k, w->x, ws->layer[k].atty, w->x, 0, n);
	}
	return last_row(m, ws, w, r, w->x, NULL) - r->diff;
}

static void free_work(patch_work *w)
{
	free(w->atty);
	free(w->atty2);
	free(w->res);
	free(w->x);
	free(w->score);
	free(w->ln);
}

bool activation_patch(const model *m, activations *ws, const int32_t *ids, const int32_t *ids2,
		      int n, int pos, const int32_t *targets, patch_result *r, av_error *err)
{
	return activation_patch_until(m, ws, ids, ids2, n, pos, targets, NULL, NULL, r, err);
}

bool activation_patch_until(const model *m, activations *ws, const int32_t *ids,
			    const int32_t *ids2, int n, int pos, const int32_t *targets,
			    bool (*stop)(void *), void *ctx, patch_result *r, av_error *err)
{
	const int V = (int)m->cfg.vocab_size, L = (int)m->cfg.layers, H = (int)m->cfg.heads;
	memset(r, 0, sizeof *r);
	if (n < 1 || n > ws->T || ws->B < 1)
		return av_fail(err, _("%d tokens do not fit the work space of %d"), n, ws->T);
	if (pos < 0 || pos >= n)
		return av_fail(err, _("position %d is not in a text of %d tokens"), pos, n);
	for (int k = 0; targets && k < 2; k++)
		if (targets[k] < 0 || targets[k] >= V)
			return av_fail(err, _("character id %d is not in the vocabulary of %d"),
				       targets[k], V);
	patch_work w = {0};
	*r = (patch_result){.n = n, .L = L, .H = H, .pos = pos};
	if (!alloc_work(m, &w, r, n)) {
		free_work(&w);
		patch_result_finish(r);
		return av_fail(err, _("out of memory for patching %d tokens"), n);
	}
	keep_pass(m, ws, &w, ids2, n, pos, w.atty2, NULL);
	memcpy(w.logits2, w.logits, (size_t)V * sizeof(float));
	const int32_t top2 = top_of(w.logits2, V, -1);
	keep_pass(m, ws, &w, ids, n, pos, w.atty, w.res);
	int32_t *t = r->target;
	r->from = targets ? PATCH_GIVEN : PATCH_TOP1;
	t[0] = targets ? targets[0] : top_of(w.logits, V, -1);
	t[1] = targets ? targets[1] : top2 != t[0] ? top2 : top_of(w.logits, V, t[0]);
	const size_t nd = (size_t)n * m->cfg.dim;
	r->diff = last_row(m, ws, &w, r, L > 1 ? w.res + (L - 2) * nd : ws->encoded, NULL);
	r->diff2 = w.logits2[t[0]] - w.logits2[t[1]];
	const bool causal = m->cfg.objective == OBJ_CAUSAL;
	bool ok = true;
	for (int l = 0; ok && l < L; l++)
		for (int h = 0; ok && h < H; h++) {
			r->heads[l * H + h] = patched(m, ws, &w, r, l, h, 0, n);
			for (int p = 0; p < n && (!causal || p <= pos); p++)
				r->cells[((size_t)p * L + l) * H + h] =
				    patched(m, ws, &w, r, l, h, p, p + 1);
			if (stop && stop(ctx))
				ok = av_fail(err, _("a newer text came"));
		}
	free_work(&w);
	if (!ok)
		patch_result_finish(r);
	return ok;
}

void patch_result_finish(patch_result *r)
{
	if (!r)
		return;
	free(r->heads);
	free(r->cells);
	r->heads = r->cells = NULL;
}

bool patch_difference_targets(const int32_t *ids, const int32_t *ids2, int n, int32_t out[2])
{
	int d = -1;
	for (int i = 0; i < n; i++)
		if (ids[i] != ids2[i]) {
			if (d >= 0)
				return false;
			d = i;
		}
	if (d < 0)
		return false;
	out[0] = ids[d];
	out[1] = ids2[d];
	return true;
}

static const char *const from_names[] = {"top-1", "given", "difference"};
_Static_assert(sizeof from_names / sizeof from_names[0] == PATCH_NFROMS, "a name each");

const char *patch_targets_from_name(patch_targets_from f)
{
	return f < PATCH_NFROMS ? from_names[f] : "?";
}

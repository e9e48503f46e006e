/* The last block of the training step at the target rows only (train_step.h).
 *
 * Only the rows with a target reach the loss. In every block but the last,
 * each row still feeds the others through attention; in the last block, a
 * row without a target is only ever used as a key and a value. So the last
 * block computes LayerNorm 1, keys and values for every row, and the queries
 * and everything after (attention, projection, feed-forward, final
 * LayerNorm) for the R target rows only: at 15% targets most of a block's
 * work disappears. The loss and the gradients are exactly those of the full
 * forward (the tests compare both with PyTorch).
 *
 * Compact layout of the last block's activations (r = 0..R-1, the target
 * rows in ascending order, rows[r] = b*T + i):
 *   ln1, ln1_mean/rstd        all N rows, as model_forward
 *   qkv                       all N rows, keys and values only (columns d..3d)
 *   g->ln1_rows, g->qrows (R,d)  LayerNorm 1 and the queries of the target rows
 *   att (NH,R,T)              softmax weights, att[h][r][j]
 *   atty, res2, ln2, res3 (R,d), ln2_mean/rstd (R), fch, fch_gelu (R,4d)
 *   g->lnf_rows (R,d), a->lnf_mean/rstd (R)
 * batch_start[b]..batch_start[b+1]-1 are the target rows of sequence b
 * (R for the last sequence). All of this is per slice of the batch when the
 * step runs on several threads (train_step.c, "the step over the threads"). */
#include "attnview/train_step.h"

#include "attnview/backward.h"
#include "attnview/ops.h"
#include "attnview/parallel.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "vec8.h"

typedef struct sel_ctx {
	const grad_acts *g;
	float *att, *out, *work, *dqkv;
	const float *qkv, *dout;
	int B, T, C, NH, R;
	bool causal;
} sel_ctx;

/* exp(x - max) / sum over the first n of T entries, zeros after. */
AV_CLONES static void softmax_prefix(float *a, int n, int T, float scale)
{
	const v8f zero = {0, 0, 0, 0, 0, 0, 0, 0};
	float mx = -INFINITY;
	for (int j = 0; j < n; j++)
		mx = a[j] > mx ? a[j] : mx;
	v8f m8 = zero + mx, s8 = zero + scale, sum8 = zero;
	int j = 0;
	for (; j + 8 <= n; j += 8) {
		v8f e = vexp8((load8(a + j) - m8) * s8);
		sum8 += e;
		store8(a + j, e);
	}
	if (j < n) {
		v8f e = vexp8((load_part(a + j, n - j, mx) - m8) * s8);
		for (int k = n - j; k < 8; k++)
			e[k] = 0.0f;
		sum8 += e;
		store_part(a + j, n - j, e);
	}
	float sum = 0.0f;
	for (int k = 0; k < 8; k++)
		sum += sum8[k];
	v8f inv = zero + 1.0f / sum;
	for (j = 0; j + 8 <= n; j += 8)
		store8(a + j, load8(a + j) * inv);
	for (; j < n; j++)
		a[j] *= inv[0];
	for (j = n; j < T; j++)
		a[j] = 0.0f;
}

/* Attention of the target rows of sequence b, head h, over all T keys. */
static void sel_attention_forward_range(void *p, int begin, int end)
{
	const sel_ctx *x = p;
	int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	for (int bh = begin; bh < end; bh++) {
		int b = bh / NH, h = bh % NH;
		int r0 = x->g->batch_start[b];
		int nr = (b + 1 < x->B ? x->g->batch_start[b + 1] : x->R) - r0;
		if (nr == 0)
			continue;
		const float *q = x->g->qrows + (size_t)r0 * C + (size_t)h * hs;
		const float *k = x->qkv + (size_t)b * T * C3 + C + (size_t)h * hs, *v = k + C;
		float *a = x->att + ((size_t)h * x->R + r0) * T;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, T, hs, 1.0f, q, C, k, C3,
			    0.0f, a, T);
		for (int r = 0; r < nr; r++) {
			int i = x->g->rows[r0 + r] - b * T;
			softmax_prefix(a + (size_t)r * T, x->causal ? i + 1 : T, T, scale);
		}
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nr, hs, T, 1.0f, a, T, v, C3,
			    0.0f, x->out + (size_t)r0 * C + (size_t)h * hs, C);
	}
}

/* Its backward: dout (R,d) -> dqrows (R,d), and the key and value columns of
 * dqkv (N,3d), all written (each head's block of a sequence by one product;
 * zeros for a sequence without target rows). Masked keys have a = 0 and so
 * get no gradient, as in attention_backward. */
static void sel_attention_backward_range(void *p, int begin, int end)
{
	const sel_ctx *x = p;
	int T = x->T, C = x->C, NH = x->NH, hs = C / NH, C3 = 3 * C;
	float scale = 1.0f / sqrtf((float)hs);
	for (int bh = begin; bh < end; bh++) {
		int b = bh / NH, h = bh % NH;
		int r0 = x->g->batch_start[b];
		int nr = (b + 1 < x->B ? x->g->batch_start[b + 1] : x->R) - r0;
		const float *q = x->g->qrows + (size_t)r0 * C + (size_t)h * hs;
		const float *k = x->qkv + (size_t)b * T * C3 + C + (size_t)h * hs, *v = k + C;
		float *dk = x->dqkv + (size_t)b * T * C3 + C + (size_t)h * hs, *dv = dk + C;
		if (nr == 0) {
			for (int j = 0; j < T; j++) {
				memset(dk + (size_t)j * C3, 0, (size_t)hs * sizeof(float));
				memset(dv + (size_t)j * C3, 0, (size_t)hs * sizeof(float));
			}
			continue;
		}
		const float *dO = x->dout + (size_t)r0 * C + (size_t)h * hs;
		const float *a = x->att + ((size_t)h * x->R + r0) * T;
		float *dp = x->work + ((size_t)h * x->R + r0) * T;
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, T, hs, 1.0f, dO, C, v, C3,
			    0.0f, dp, T);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, nr, 1.0f, a, T, dO, C,
			    0.0f, dv, C3);
		softmax_backward_rows(dp, a, nr, T, false, scale, x->g->sharpen_row);
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nr, hs, T, 1.0f, dp, T, k,
			    C3, 0.0f, x->g->dqrows + (size_t)r0 * C + (size_t)h * hs, C);
		cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, nr, 1.0f, dp, T, q, C,
			    0.0f, dk, C3);
	}
}

/* The last block at the R target rows (layout above), then the final
 * LayerNorm into g->lnf_rows. */
void last_block_forward(const model *m, activations *a, grad_acts *g, const float *x, int B, int T,
			int R)
{
	const model_config *c = &m->cfg;
	const int d = (int)c->dim, NH = (int)c->heads, N = B * T, L = (int)c->layers;
	const layer_params *p = &m->p.layer[L - 1];
	layer_acts *la = &a->layer[L - 1];
	layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, x, p->ln1_w, p->ln1_b, N, d);
	/* Keys and values for every row: columns d..3d of qkv, from rows d..3d
	 * of the weight, onto the bias as matmul_forward does it. */
	for (int n = 0; n < N; n++)
		memcpy(la->qkv + (size_t)n * 3 * d + d, p->qkv_b + d,
		       2 * (size_t)d * sizeof(float));
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, 2 * d, d, 1.0f, la->ln1, d,
		    p->qkv_w + (size_t)d * d, d, 1.0f, la->qkv + d, 3 * d);
	/* Queries at the target rows only. */
	for (int r = 0; r < R; r++)
		memcpy(g->ln1_rows + (size_t)r * d, la->ln1 + (size_t)g->rows[r] * d,
		       (size_t)d * sizeof(float));
	matmul_forward(g->qrows, g->ln1_rows, p->qkv_w, p->qkv_b, R, d, d);
	sel_ctx sc = {.g = g,
		      .att = la->att,
		      .out = la->atty,
		      .qkv = la->qkv,
		      .B = B,
		      .T = T,
		      .C = d,
		      .NH = NH,
		      .R = R,
		      .causal = c->objective == OBJ_CAUSAL};
	parallel_for_blas(B * NH, sel_attention_forward_range, &sc);
	matmul_forward(a->scratch, la->atty, p->proj_w, p->proj_b, R, d, d);
	for (int r = 0; r < R; r++) {
		const float *xr = x + (size_t)g->rows[r] * d;
		for (int i = 0; i < d; i++)
			la->res2[(size_t)r * d + i] = xr[i] + a->scratch[(size_t)r * d + i];
	}
	layernorm_forward(la->ln2, la->ln2_mean, la->ln2_rstd, la->res2, p->ln2_w, p->ln2_b, R, d);
	matmul_forward(la->fch, la->ln2, p->fc_w, p->fc_b, R, d, 4 * d);
	if (m->cfg.arch.gelu == GELU_ERF)
		gelu_erf_forward_grad(la->fch_gelu, la->fch, R * 4 * d);
	else
		gelu_forward_grad(la->fch_gelu, la->fch, R * 4 * d);
	matmul_forward(a->scratch, la->fch_gelu, p->fc2_w, p->fc2_b, R, 4 * d, d);
	residual_forward(la->res3, la->res2, a->scratch, R * d);
	layernorm_forward(g->lnf_rows, a->lnf_mean, a->lnf_rstd, la->res3, m->p.lnf_w, m->p.lnf_b,
			  R, d);
}

/* The final LayerNorm and the last block, at the target rows, from
 * dlnf_rows: leaves dL/dx of the block's input, xlast, in dresidual (every
 * row). dres_rows is dL/dx of the block's output, then of res2. */
void last_block_backward(const model *m, activations *a, grad_acts *g, model_params *gp,
			 const float *xlast, int B, int T, int R)
{
	const model_config *cfg = &m->cfg;
	const int C = (int)cfg->dim, NH = (int)cfg->heads, N = B * T, L = (int)cfg->layers;
	const layer_params *lp = &m->p.layer[L - 1];
	layer_params *lg = &gp->layer[L - 1];
	const layer_acts *la = &a->layer[L - 1];
	memset(g->dres_rows, 0, (size_t)R * C * sizeof(float));
	layernorm_backward(g->dres_rows, gp->lnf_w, gp->lnf_b, g->dlnf_rows, la->res3, m->p.lnf_w,
			   a->lnf_mean, a->lnf_rstd, R, C);
	matmul_backward_write(g->dfch, lg->fc2_w, lg->fc2_b, g->dres_rows, C, la->fch_gelu,
			      lp->fc2_w, R, 4 * C, C);
	gelu_backward_saved(g->dfch, la->fch, (long)R * 4 * C);
	matmul_backward_write(g->dln, lg->fc_w, lg->fc_b, g->dfch, 4 * C, la->ln2, lp->fc_w, R, C,
			      4 * C);
	layernorm_backward(g->dres_rows, lg->ln2_w, lg->ln2_b, g->dln, la->res2, lp->ln2_w,
			   la->ln2_mean, la->ln2_rstd, R, C);
	matmul_backward_write(g->datty, lg->proj_w, lg->proj_b, g->dres_rows, C, la->atty,
			      lp->proj_w, R, C, C);
	/* Every row's keys and values get gradient, only target rows' queries. */
	sel_ctx sc = {.g = g,
		      .att = la->att,
		      .work = g->datt,
		      .dqkv = g->dqkv,
		      .qkv = la->qkv,
		      .dout = g->datty,
		      .B = B,
		      .T = T,
		      .C = C,
		      .NH = NH,
		      .R = R,
		      .causal = cfg->objective == OBJ_CAUSAL};
	parallel_for_blas(B * NH, sel_attention_backward_range, &sc);
	/* Q|K|V's backward in two parts, as the forward: K|V at every row
	 * (columns C..3C of dqkv), Q at the target rows, its input gradient
	 * (into dlnf_rows, free again) then added to those rows. */
	matmul_backward_write(g->dln, lg->qkv_w + (size_t)C * C, lg->qkv_b + C, g->dqkv + C, 3 * C,
			      la->ln1, lp->qkv_w + (size_t)C * C, N, C, 2 * C);
	matmul_backward_write(g->dlnf_rows, lg->qkv_w, lg->qkv_b, g->dqrows, C, g->ln1_rows,
			      lp->qkv_w, R, C, C);
	for (int r = 0; r < R; r++) {
		float *dl = g->dln + (size_t)g->rows[r] * C;
		const float *s = g->dlnf_rows + (size_t)r * C;
		for (int i = 0; i < C; i++)
			dl[i] += s[i];
	}
	/* dx = the residual path (target rows) + LayerNorm 1's backward. */
	memset(g->dresidual, 0, (size_t)N * C * sizeof(float));
	for (int r = 0; r < R; r++)
		memcpy(g->dresidual + (size_t)g->rows[r] * C, g->dres_rows + (size_t)r * C,
		       (size_t)C * sizeof(float));
	layernorm_backward(g->dresidual, lg->ln1_w, lg->ln1_b, g->dln, xlast, lp->ln1_w,
			   la->ln1_mean, la->ln1_rstd, N, C);
}

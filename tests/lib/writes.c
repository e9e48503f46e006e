/* A head's output over its layer's input (writes.h). */
#include "writes.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

double head_writes(const model *m, const activations *ws, int T, int l, int h)
{
	const int d = (int)m->cfg.dim, hs = d / (int)m->cfg.heads;
	float *y = malloc((size_t)T * (size_t)d * sizeof *y);
	if (!y)
		return -1;
	const float *x = l ? ws->layer[l - 1].res3 : ws->encoded;
	/* y (T, d) = head h's output (T, hs) W_O^h^T, W_O^h = proj_w[:, h*hs..]. */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, d, hs, 1.0f,
		    ws->layer[l].atty + h * hs, d, m->p.layer[l].proj_w + h * hs, d, 0.0f, y, d);
	double out = 0, in = 0;
	for (int i = 0; i < T; i++) {
		double o2 = 0, x2 = 0;
		for (int c = 0; c < d; c++) {
			size_t at = (size_t)i * (size_t)d + (size_t)c;
			o2 += (double)y[at] * y[at];
			x2 += (double)x[at] * x[at];
		}
		out += sqrt(o2), in += sqrt(x2);
	}
	free(y);
	return in > 0 ? out / in : 0;
}

/* The binary64 pass of bound.h for the PyTorch checks (tests/reference/
 * accuracy.py): for a model file and a list of token ids, prints as JSON the
 * weights and raw scores with their bounds ("att", "att_err", "score",
 * "score_err", each [L][H][n][n] flattened), and the bound of the
 * prediction logits of every position ("pred_err", [n][V]: a causal model's
 * logits of the pass, a masked model's of the pass with that position alone
 * masked, man 5 attnview section 6). The Python side checks attnview's
 * numbers against PyTorch's binary64 ones within these bounds, and this
 * program's own binary64 numbers against PyTorch's.
 *	bound_tool MODEL.attn ID,ID,... */
#include "bound.h"

#include "attnview/modelfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Values with every digit; bounds with 7, rounded up (1e-5 relative). */
static void print_array(const char *key, const double *v, size_t n, bool bound, bool last)
{
	printf("\"%s\": [", key);
	for (size_t i = 0; i < n; i++) {
		const char *sep = i ? "," : "";
		if (isnan(v[i]))
			printf("%sNaN", sep);
		else if (bound)
			printf("%s%.6e", sep, v[i] * (1 + 1e-5));
		else
			printf("%s%.17g", sep, v[i]);
	}
	printf("]%s\n", last ? "" : ",");
}

static int parse_ids(const char *s, int32_t *ids, int max)
{
	int n = 0;
	while (*s && n < max) {
		char *end;
		long v = strtol(s, &end, 10);
		if (end == s)
			return -1;
		ids[n++] = (int32_t)v;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

int main(int argc, char **argv)
{
	av_error err;
	static int32_t ids[AV_MAX_CONTEXT];
	model *m = argc == 3 ? model_load(argv[1], &err) : NULL;
	int n = m ? parse_ids(argv[2], ids, (int)m->cfg.context) : -1;
	if (!m || n < 1) {
		fprintf(stderr, "usage: bound_tool MODEL.attn ID,ID,... (%s)\n",
			m ? "no ids" : argc == 3 ? err.msg : "two arguments");
		return 2;
	}
	fwd_bound b;
	if (!fwd_bound_compute(&b, m, ids, n, NULL))
		return 1;
	const size_t cells = (size_t)b.L * b.H * n * n, V = (size_t)b.V;
	printf("{\n");
	print_array("att", b.att, cells, false, false);
	print_array("att_err", b.att_err, cells, true, false);
	print_array("score", b.score, cells, false, false);
	print_array("score_err", b.score_err, cells, true, false);
	double *pred = malloc((size_t)n * V * sizeof *pred);
	for (int p = 0; pred && p < n; p++) {
		fwd_bound bp;
		const fwd_bound *src = &b;
		if (m->cfg.objective == OBJ_MASKED) {
			int32_t keep = ids[p];
			ids[p] = TOK_MASK;
			if (!fwd_bound_compute_row(&bp, m, ids, n, NULL, p))
				return 1;
			ids[p] = keep;
			src = &bp;
		}
		memcpy(pred + (size_t)p * V, src->logits_err + (size_t)p * V, V * sizeof *pred);
		if (src != &b)
			fwd_bound_finish(&bp);
	}
	if (!pred)
		return 1;
	print_array("pred_err", pred, (size_t)n * V, true, true);
	printf("}\n");
	free(pred);
	fwd_bound_finish(&b);
	model_destroy(m);
	return 0;
}

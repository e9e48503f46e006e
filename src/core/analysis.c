/* Statistics and summaries of attention matrices (analysis.h). */
#include "attnview/analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

attn_matrix attn_result_head(const attn_result *r, int layer, int head)
{
	size_t n = (size_t)r->n;
	attn_matrix a = {r->att + ((size_t)layer * (size_t)r->heads + (size_t)head) * n * n, r->n,
			 r->causal};
	return a;
}

void head_stats_compute(head_stats *s, const attn_matrix *a)
{
	memset(s, 0, sizeof *s);
	int n = a->n;
	if (n <= 0)
		return;
	double ent = 0, maxent = 0, dist = 0;
	int self = 0, prev = 0, next = 0;
	for (int q = 0; q < n; q++) {
		int best = -1, visible = 0;
		float bw = -1;
		for (int k = 0; k < n; k++) {
			if (attn_masked(a, q, k))
				continue;
			visible++;
			float w = attn_at(a, q, k);
			double p = w;
			if (p > 0)
				ent -= p * log(p);
			dist += p * abs(q - k);
			if (w > bw) {
				bw = w;
				best = k;
			}
		}
		maxent += visible > 0 ? log((double)visible) : 0;
		self += best == q;
		prev += best == q - 1;
		next += best == q + 1;
	}
	s->n = n;
	s->entropy = ent / n;
	s->max_entropy = maxent / n;
	s->distance = dist / n;
	s->self = (double)self / n;
	s->prev = (double)prev / n;
	s->next = (double)next / n;
}

int row_top_keys(const attn_matrix *a, int q, int k, int *keys)
{
	/* Insertion into a short sorted list: k is small (the panel shows 5). */
	int ntop = 0;
	for (int j = 0; j < a->n && k > 0; j++) {
		if (attn_masked(a, q, j))
			continue;
		float wj = attn_at(a, q, j);
		int pos = ntop < k ? ntop++ : k;
		if (pos == k) {
			if (!(wj > attn_at(a, q, keys[k - 1])))
				continue;
			pos = k - 1;
		}
		while (pos > 0 && attn_at(a, q, keys[pos - 1]) < wj) {
			keys[pos] = keys[pos - 1];
			pos--;
		}
		keys[pos] = j;
	}
	return ntop;
}

int row_rank(const attn_matrix *a, int q, int j, int *visible)
{
	float wt = attn_at(a, q, j);
	int rank = 1, vis = 0;
	for (int k = 0; k < a->n; k++) {
		if (attn_masked(a, q, k))
			continue;
		vis++;
		rank += attn_at(a, q, k) > wt;
	}
	if (visible)
		*visible = vis;
	return rank;
}

const char *head_pattern(const head_stats *s)
{
	if (s->prev >= 0.5)
		return "previous";
	if (s->next >= 0.5)
		return "next";
	if (s->self >= 0.5)
		return "self";
	if (s->distance <= 5 && s->distance <= s->n / 4.0)
		return "local";
	return "broad";
}

void pool_grid(float *out, uint8_t *masked, const attn_matrix *a, int rows, int cols,
	       pool_kind kind)
{
	int n = a->n;
	for (int r = 0; r < rows; r++) {
		int q0 = r * n / rows, q1 = (r + 1) * n / rows;
		for (int c = 0; c < cols; c++) {
			int k0 = c * n / cols, k1 = (c + 1) * n / cols;
			double sum = 0;
			float mx = 0;
			int cnt = 0, msk = 0;
			for (int q = q0; q < q1; q++)
				for (int k = k0; k < k1; k++) {
					if (attn_masked(a, q, k)) {
						msk++;
						continue;
					}
					float w = attn_at(a, q, k);
					sum += w;
					mx = w > mx ? w : mx;
					cnt++;
				}
			size_t i = (size_t)r * (size_t)cols + (size_t)c;
			masked[i] = cnt == 0 && msk > 0;
			if (kind == POOL_MAX)
				out[i] = mx;
			else
				out[i] = cnt ? (float)(sum / (cnt + msk)) : 0.0f;
		}
	}
}

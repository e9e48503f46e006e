/* Statistics and summaries of attention matrices (analysis.h). */
#include "attnview/analysis.h"
#include "attnview/i18n.h"

#include <cblas.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

attn_matrix attn_result_head(const attn_result *r, int layer, int head)
{
	if (!r->pack) {
		/* Out of memory for a head computed when read: nothing to show. */
		const float *w = attn_head_weights(r, layer, head);
		attn_matrix d = {w, w ? r->n : 0, r->causal, 0};
		return d;
	}
	size_t per = r->pack ? attn_packed_row(r->pack) : (size_t)r->n * (size_t)r->n;
	attn_matrix a = {r->att + ((size_t)layer * (size_t)r->heads + (size_t)head) * per, r->n,
			 r->causal, r->pack};
	return a;
}

void attn_matrix_copy(float *out, const attn_matrix *a)
{
	const size_t n = (size_t)a->n;
	if (!a->pack) {
		memcpy(out, a->w, n * n * sizeof *out);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(out + i * n, a->w + attn_packed_row((int)i), (i + 1) * sizeof *out);
		memset(out + i * n + i + 1, 0, (n - i - 1) * sizeof *out);
	}
}

void head_stats_compute(head_stats *s, const attn_matrix *a)
{
	memset(s, 0, sizeof *s);
	s->column = -1;
	int n = a->n;
	if (n <= 0)
		return;
	double ent = 0, maxent = 0, dist = 0;
	int self = 0, prev = 0, next = 0;
	int *count = calloc((size_t)n, sizeof *count); /* rows whose strongest key is k */
	for (int q = 0; q < n; q++) {
		int best = -1, visible = 0;
		float bw = -1, second = -1;
		/* Entropy and distance of the row as a distribution: a head's
		 * weights sum to 1, a layer's max of heads does not (its
		 * entropy was above log n, or below 0 in the word view). */
		double sum = 0;
		for (int k = 0; k < n; k++)
			if (!attn_masked(a, q, k) && attn_at(a, q, k) > 0)
				sum += attn_at(a, q, k);
		for (int k = 0; k < n; k++) {
			if (attn_masked(a, q, k))
				continue;
			visible++;
			float w = attn_at(a, q, k);
			double p = w > 0 ? w / sum : 0;
			if (p > 0)
				ent -= p * log(p);
			dist += p * abs(q - k);
			if (w > bw) {
				second = bw;
				bw = w;
				best = k;
			} else if (w > second) {
				second = w;
			}
		}
		maxent += visible > 0 ? log((double)visible) : 0;
		/* A row looks at a key as the labeller says (roles.c): its only
		 * largest weight, standing out; else it looks nowhere. A row
		 * with no choice (a causal model's first) is no column's. */
		bool nowhere =
		    visible > 0 &&
		    (bw == second || bw < fmin(ROLE_FOCUS / visible, 0.5 * (1.0 + 1.0 / visible)));
		s->nowhere += nowhere;
		if (count && best >= 0 && !nowhere && visible > 1 &&
		    ++count[best] > s->column_rows) {
			s->column_rows = count[best];
			s->column = best;
		}
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
	free(count);
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
		return N_("previous");
	if (s->next >= 0.5)
		return N_("next");
	if (s->self >= 0.5)
		return N_("self");
	if (s->column >= 0 && s->column_rows > 0 && 2 * s->column_rows >= s->n)
		return s->column == 0 ? N_("first") : N_("column");
	if (s->distance <= 5 && s->distance <= s->n / 4.0)
		return N_("local");
	if (2 * s->nowhere >= s->n)
		return N_("broad");
	return N_("unclear");
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

/* ---- aggregates and rollout --------------------------------------------- */

void aggregate_heads(float *out, const attn_result *r, int layer, sel_kind kind)
{
	size_t nn = (size_t)r->n * (size_t)r->n;
	int l0 = kind == SEL_ALL ? 0 : layer, l1 = kind == SEL_ALL ? r->layers : layer + 1;
	int count = (l1 - l0) * r->heads;
	memset(out, 0, nn * sizeof *out);
	for (int l = l0; l < l1; l++)
		for (int h = 0; h < r->heads; h++) {
			attn_matrix a = attn_result_head(r, l, h);
			for (int i = 0; i < r->n; i++) {
				float *o = out + (size_t)i * (size_t)r->n;
				for (int j = 0; j < r->n; j++) {
					float w = attn_at(&a, i, j);
					o[j] = kind == SEL_MAX ? (w > o[j] ? w : o[j]) : o[j] + w;
				}
			}
		}
	if (kind != SEL_MAX && count > 0)
		for (size_t i = 0; i < nn; i++)
			out[i] /= (float)count;
}

void attention_rollout(float *out, float *work, const attn_result *r)
{
	int n = r->n;
	size_t nn = (size_t)n * (size_t)n;
	for (int l = 0; l < r->layers; l++) {
		/* work = W_l / 2 + I / 2 */
		aggregate_heads(work, r, l, SEL_MEAN);
		for (size_t i = 0; i < nn; i++)
			work[i] *= 0.5f;
		for (int i = 0; i < n; i++)
			work[(size_t)i * (size_t)n + (size_t)i] += 0.5f;
		float *rl = out + (size_t)l * nn;
		if (l == 0) {
			memcpy(rl, work, nn * sizeof *rl);
			continue;
		}
		/* R_l = A_l R_{l-1} */
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, work, n,
			    rl - nn, n, 0.0f, rl, n);
	}
}

/* ---- words ---------------------------------------------------------------- */

static bool is_space(uint32_t cp)
{
	return cp == ' ' || cp == '\t' || cp == 0x3000;
}

int words_split(word_span *out, const token *tok, int n)
{
	int nw = 0, i = 0;
	while (i < n) {
		int start = i;
		if (is_space(tok[i].cp))
			; /* leading spaces: a word of their own */
		else if (cp_is_delimiter(tok[i].cp))
			i++; /* punctuation or a line break */
		else
			while (i < n && !cp_is_delimiter(tok[i].cp))
				i++;
		while (i < n && is_space(tok[i].cp))
			i++;
		out[nw++] = (word_span){start, i};
	}
	return nw;
}

size_t words_strip_marks(uint32_t *cps, size_t n, bool *marks)
{
	size_t out = 0;
	bool starts = false;
	for (size_t i = 0; i < n; i++) {
		if (cps[i] == WORD_MARK) {
			starts = true;
			continue;
		}
		marks[out] = starts;
		starts = false;
		cps[out++] = cps[i];
	}
	return out;
}

int words_from_marks(word_span *out, const bool *marks, int n)
{
	int nw = 0;
	for (int i = 0; i < n; i++) {
		if (i == 0 || marks[i]) {
			if (nw > 0)
				out[nw - 1].end = i;
			out[nw++] = (word_span){i, n};
		}
	}
	return nw;
}

void words_aggregate(float *out, const attn_matrix *a, const word_span *w, int nw)
{
	for (int qi = 0; qi < nw; qi++)
		for (int ki = 0; ki < nw; ki++) {
			double sum = 0;
			for (int i = w[qi].start; i < w[qi].end; i++)
				for (int j = w[ki].start; j < w[ki].end; j++)
					sum += attn_masked(a, i, j) ? 0.0 : attn_at(a, i, j);
			out[(size_t)qi * (size_t)nw + (size_t)ki] =
			    (float)(sum / (w[qi].end - w[qi].start));
		}
}

/* ---- differences ---------------------------------------------------------- */

void matrix_difference(float *out, const attn_matrix *a, const attn_matrix *b, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			float x = attn_masked(a, i, j) ? 0 : attn_at(a, i, j);
			float y = attn_masked(b, i, j) ? 0 : attn_at(b, i, j);
			out[(size_t)i * (size_t)n + (size_t)j] = x - y;
		}
}

void contribution_shares(float *out, const attn_matrix *a, const float *value_norms)
{
	int n = a->n;
	for (int i = 0; i < n; i++) {
		double sum = 0;
		float *row = out + (size_t)i * (size_t)n;
		for (int j = 0; j < n; j++) {
			row[j] = attn_masked(a, i, j) ? 0.0f : attn_at(a, i, j) * value_norms[j];
			sum += row[j];
		}
		for (int j = 0; j < n; j++)
			row[j] = sum > 0 ? (float)(row[j] / sum) : 0.0f;
	}
}

/* attnview --export FILE --circuits: two pictures of what the heads do from
 * their weights alone (circuits.h; attnview(1), FIGURES): FILE, a grid of
 * every head's positional QK pattern (a tile per head, titled with the
 * profile's peak), and FILE-composition (the same extension), the Q, K and
 * V composition of every head (rows, the reader) with every head of an
 * earlier block (columns, the writer). Titles in English, as every
 * figure's (what a program may read). */
#include "attnview/circuits.h"
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool export_circuits_path(const char *path, char *out, size_t size)
{
	const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
	if (!dot || (slash && dot < slash))
		return false;
	return snprintf(out, size, "%.*s-composition%s", (int)(dot - path), path, dot) < (int)size;
}

/* The grid of positional patterns: L rows of H tiles. */
static figure *positional_figure(const model *m, const circuits *c, const char *title,
				 scale_kind kind, cm_ramp ramp, av_error *err)
{
	const int T = (int)m->cfg.context;
	float *w = malloc((size_t)T * T * sizeof *w);
	figure *f = w ? figure_create(c->layers, c->heads, err) : NULL;
	bool ok = f != NULL;
	for (int i = 0; ok && i < c->layers * c->heads; i++) {
		const int l = i / c->heads, h = i % c->heads;
		char t[64];
		snprintf(t, sizeof t, "L%d H%d peak %+d", l, h, circuits_peak(c, l, h));
		attn_matrix a = {w, T, m->cfg.objective == OBJ_CAUSAL, 0};
		ok = circuits_positional_pattern(m, l, h, w, err) &&
		     figure_set_tile(f, i, &a, NULL, kind, ramp, t, err);
	}
	char sub[256];
	snprintf(sub, sizeof sub,
		 "%s · each query's softmax over its keys of the scores from "
		 "the positions alone",
		 m->meta.name && *m->meta.name ? m->meta.name : "model");
	ok = ok && figure_set_titles(f, title ? title : "Positional QK patterns, weights alone",
				     sub, err);
	free(w);
	if (!w)
		av_fail(err, _("out of memory"));
	if (!ok) {
		figure_destroy(f);
		return NULL;
	}
	return f;
}

/* Q, K and V composition as three tiles of (L H) x (L H), 0 where the
 * writer's block is not earlier than the reader's. */
static figure *composition_figure(const model *m, const circuits *c, scale_kind kind, cm_ramp ramp,
				  av_error *err)
{
	const int LH = c->layers * c->heads;
	float *w = malloc((size_t)LH * LH * sizeof *w);
	figure *f = w ? figure_create(1, 3, err) : NULL;
	bool ok = f != NULL;
	static const char *const names[3] = {"Q composition", "K composition", "V composition"};
	for (int k = 0; ok && k < 3; k++) {
		for (int r = 0; r < LH; r++) {
			const circ_head *ch = &c->head[r];
			const float *s = k == 0 ? ch->comp_q : k == 1 ? ch->comp_k : ch->comp_v;
			const int nw = (r / c->heads) * c->heads;
			for (int j = 0; j < LH; j++)
				w[(size_t)r * LH + j] = j < nw ? s[j] : 0.0f;
		}
		attn_matrix a = {w, LH, false, 0};
		ok = figure_set_tile(f, k, &a, NULL, kind, ramp, names[k], err);
	}
	char sub[256];
	snprintf(sub, sizeof sub,
		 "%s · rows read, columns write (L0 H0 first) · baseline 1/sqrt(d) = %.3f",
		 m->meta.name && *m->meta.name ? m->meta.name : "model", (double)c->baseline);
	ok = ok && figure_set_titles(f, "Composition between heads, weights alone", sub, err);
	free(w);
	if (!w)
		av_fail(err, _("out of memory"));
	if (!ok) {
		figure_destroy(f);
		return NULL;
	}
	return f;
}

bool export_circuits(const model *m, const char *path, bool force, const char *title, int sc,
		     int ramp, av_error *err)
{
	char path2[4096];
	if (!export_circuits_path(path, path2, sizeof path2))
		return av_fail(err, _("%s: the file name is too long"), AV_Q(path));
	circuits c;
	if (!circuits_init(&c, m, err))
		return false;
	const cm_ramp r = ramp >= 0 ? (cm_ramp)ramp : RAMP_VIRIDIS;
	figure *f = positional_figure(m, &c, title, sc >= 0 ? (scale_kind)sc : SCALE_ROW, r, err);
	bool ok = f && figure_write(f, path, force, err);
	figure_destroy(f);
	f = ok ? composition_figure(m, &c, sc >= 0 ? (scale_kind)sc : SCALE_ROW, r, err) : NULL;
	ok = ok && f && figure_write(f, path2, force, err);
	figure_destroy(f);
	circuits_finish(&c);
	return ok;
}

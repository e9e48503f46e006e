/* The training timeline as a figure (attnview --export F --timeline): the
 * losses over the steps, then small multiples, a panel per head (layers as
 * rows, heads as columns) with the head's three strongest role scores and
 * its entropy over the steps, the phase change marked in every panel
 * (timeline_phase_change). Drawn as a chart (chart.h). */
#include "attnview/figure.h"
#include "attnview/i18n.h"
#include "attnview/timeline.h"

#include "chart.h"
#include "figure_draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN	24.0
#define PANEL_W 210.0
#define PANEL_H 110.0
#define GAP_X	22.0
#define GAP_Y	44.0 /* room for a panel's title and legend above it */
#define LOSS_H	120.0
#define TOP	64.0 /* below the title and subtitle */
#define PHASE	0xd62728
#define ENTROPY 0x999999
#define SHOWN	3 /* role scores drawn a panel */

/* A colour per role, the same in every panel. */
static const uint32_t role_rgb[TL_NVALUES] = {0x1f77b4, 0x17becf, 0x8c564b, 0x9467bd, 0xbcbd22,
					      0xe377c2, 0xff7f0e, 0x2ca02c, 0x7f7f7f, 0x393b79,
					      0x637939, 0x8c6d31, 0x843c39, ENTROPY, 0x6b8e23};

typedef struct frame {
	double x, y, w, h;   /* the plot area */
	double x_max, y_max; /* steps, values */
} frame;

static double fx(const frame *f, double step)
{
	return f->x + (f->x_max > 0 ? step / f->x_max : 0) * f->w;
}

static double fy(const frame *f, double v)
{
	return f->y + f->h - (f->y_max > 0 ? v / f->y_max : 0) * f->h;
}

/* A series over the records; NaN values break the line. */
static void series(chart *c, const frame *f, const timeline *tl, const float *v, size_t stride,
		   uint32_t rgb, double width, bool dashed)
{
	double *xy = malloc(tl->count * 2 * sizeof *xy);
	if (!xy) {
		c->failed = true;
		return;
	}
	int n = 0;
	for (size_t r = 0; r <= tl->count; r++) {
		float x = r < tl->count ? v[r * stride] : NAN;
		if (isfinite(x)) {
			xy[2 * n] = fx(f, (double)tl->step[r]);
			xy[2 * n + 1] = fy(f, x < f->y_max ? x : f->y_max);
			n++;
		} else if (n) {
			chart_line(c, xy, n, rgb, width, dashed);
			n = 0;
		}
	}
	free(xy);
}

/* The plot's box, its y range at the left, the steps below when `steps`,
 * and the phase change. */
static void axes(chart *c, const frame *f, const timeline *tl, long pc, bool steps,
		 const char *y_top)
{
	chart_rect(c, f->x, f->y, f->w, f->h, -1, 0xbbbbbb);
	chart_text(c, f->x - 3, f->y + 8, 8, 'e', FIG_GREY, false, y_top);
	chart_text(c, f->x - 3, f->y + f->h, 8, 'e', FIG_GREY, false, "0");
	if (steps) {
		char s[32];
		snprintf(s, sizeof s, "%llu", (unsigned long long)tl->step[tl->count - 1]);
		chart_text(c, f->x, f->y + f->h + 10, 8, 's', FIG_GREY, false, "0");
		chart_text(c, f->x + f->w, f->y + f->h + 10, 8, 'e', FIG_GREY, false, s);
	}
	if (pc >= 0) {
		double x = fx(f, (double)tl->step[pc]);
		double xy[4] = {x, f->y, x, f->y + f->h};
		chart_line(c, xy, 2, PHASE, 1, true);
	}
}

static void loss_panel(chart *c, const timeline *tl, double width, long pc)
{
	frame f = {MARGIN + 20,
		   TOP + 18,
		   width - 2 * MARGIN - 20,
		   LOSS_H,
		   (double)tl->step[tl->count - 1],
		   0};
	for (size_t r = 0; r < tl->count; r++) {
		if (isfinite(tl->loss[r]) && tl->loss[r] > f.y_max)
			f.y_max = tl->loss[r];
		if (isfinite(tl->probe_loss[r]) && tl->probe_loss[r] > f.y_max)
			f.y_max = tl->probe_loss[r];
	}
	f.y_max = f.y_max > 0 ? ceil(f.y_max) : 1;
	char top[32];
	snprintf(top, sizeof top, "%g", f.y_max);
	chart_text(c, f.x, f.y - 6, 11, 's', 0x1f77b4, true, "training loss");
	chart_text(c, f.x + 90, f.y - 6, 11, 's', 0xff7f0e, true, "probe loss");
	if (pc >= 0) {
		char s[64];
		snprintf(s, sizeof s, "phase change, step %llu", (unsigned long long)tl->step[pc]);
		chart_text(c, fx(&f, (double)tl->step[pc]) + 3, f.y + 10, 9, 's', PHASE, false, s);
	}
	axes(c, &f, tl, pc, true, top);
	series(c, &f, tl, tl->loss, 1, 0x1f77b4, 1.5, false);
	series(c, &f, tl, tl->probe_loss, 1, 0xff7f0e, 1.5, false);
}

/* The head's SHOWN roles of the highest peak (broad aside), strongest first. */
static int strongest(const timeline *tl, int l, int h, role_kind *out)
{
	float peak[ROLE_NKINDS] = {0};
	int nv = (int)tl->nvalues;
	for (size_t r = 0; r < tl->count; r++)
		for (int k = 0; k < nv; k++)
			if (k != ROLE_BROAD && timeline_head(tl, r, l, h)[k] > peak[k])
				peak[k] = timeline_head(tl, r, l, h)[k];
	int n = 0;
	for (; n < SHOWN; n++) {
		int best = -1;
		for (int k = 0; k < nv; k++) {
			bool taken = k == ROLE_BROAD;
			for (int j = 0; j < n; j++)
				taken |= out[j] == (role_kind)k;
			if (!taken && (best < 0 || peak[k] > peak[best]))
				best = k;
		}
		out[n] = (role_kind)best;
	}
	return n;
}

static void head_panel(chart *c, const timeline *tl, int l, int h, long pc, int pc_head)
{
	frame f = {MARGIN + 20 + h * (PANEL_W + GAP_X),
		   TOP + 18 + LOSS_H + GAP_Y + 14 + l * (PANEL_H + GAP_Y),
		   PANEL_W,
		   PANEL_H,
		   (double)tl->step[tl->count - 1],
		   1};
	char title[64];
	snprintf(title, sizeof title, "L%d H%d%s", l, h,
		 pc >= 0 && pc_head == l * (int)tl->heads + h ? " \xC2\xB7 induction forms" : "");
	chart_text(c, f.x, f.y - 22, 11, 's', FIG_INK, true, title);
	role_kind shown[SHOWN];
	int n = strongest(tl, l, h, shown);
	double x = f.x;
	for (int i = 0; i <= n; i++) {
		role_kind k = i < n ? shown[i] : ROLE_BROAD;
		const char *name = role_score_key(k);
		chart_text(c, x, f.y - 6, 9, 's', role_rgb[k], false, name);
		x += fig_text_width(name, 9) + 8;
	}
	axes(c, &f, tl, pc, l == (int)tl->layers - 1, "1");
	size_t stride = (size_t)tl->layers * tl->heads * tl->nvalues;
	const float *base = timeline_head(tl, 0, l, h);
	series(c, &f, tl, base + ROLE_BROAD, stride, ENTROPY, 1, true);
	for (int i = n - 1; i >= 0; i--)
		series(c, &f, tl, base + shown[i], stride, role_rgb[shown[i]], 1.5, false);
}

bool figure_timeline(const model *m, const char *what, const char *path, bool replace,
		     av_error *err)
{
	const timeline *tl = m->timeline;
	if (!tl || tl->count == 0)
		return av_fail(err,
			       _("%s has no training timeline: it was trained before "
				 "attnview recorded one, or with --timeline-every 0; train it "
				 "again to have one"),
			       AV_Q(what));
	int L = (int)tl->layers, H = (int)tl->heads, head;
	long pc = timeline_phase_change(tl, &head);
	chart c = {0};
	c.width = 2 * MARGIN + 20 + H * PANEL_W + (H - 1) * GAP_X;
	if (c.width < 560)
		c.width = 560;
	c.height = TOP + 18 + LOSS_H + GAP_Y + 14 + L * (PANEL_H + GAP_Y) + MARGIN;
	char title[256], sub[256];
	snprintf(title, sizeof title, "How the heads formed: %s", m->meta.name ? m->meta.name : "");
	snprintf(sub, sizeof sub,
		 "%zu records over %llu steps; the three strongest role scores of each head "
		 "and its entropy (dashed)",
		 tl->count, (unsigned long long)tl->step[tl->count - 1]);
	chart_text(&c, MARGIN, 30, 16, 's', FIG_INK, true, title);
	chart_text(&c, MARGIN, 48, 10, 's', FIG_GREY, false, sub);
	loss_panel(&c, tl, c.width, pc);
	for (int l = 0; l < L; l++)
		for (int h = 0; h < H; h++)
			head_panel(&c, tl, l, h, pc, head);
	bool ok = chart_write(&c, path, replace, err);
	chart_finish(&c);
	return ok;
}

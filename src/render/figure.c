/* Figures (figure.h): the description and figure_write. figure_result.c
 * makes descriptions from a result, figure_layout.c places them, and the
 * writers draw them (figure_svg.c, figure_cairo.c). */
#include "attnview/figure.h"
#include "attnview/i18n.h"

#include "attnview/tokenizer.h"
#include "figure_draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <utf8proc.h>

#define TITLE_MAX_COLS 110 /* titles are cut with "…" past this */
#define LABEL_MAX_COLS 16  /* ... and labels (long words) past this */

/* ---- text ------------------------------------------------------------------ */

uint32_t fig_next_cp(const char **s)
{
	utf8proc_int32_t cp;
	utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)*s, -1, &cp);
	if (k <= 0) {
		(*s)++;
		return 0xFFFD;
	}
	*s += k;
	return (uint32_t)cp;
}

double fig_text_width(const char *s, double font)
{
	double w = 0;
	while (s && *s)
		w += cp_display_width(fig_next_cp(&s), NULL) == 2 ? 1.0 : 0.6;
	return w * font;
}

/* A character that can be written as it is: an XML 1.0 character (so an
 * SVG stays well-formed) that draws something. Line breaks and other
 * controls become spaces, anything invalid U+FFFD. */
static uint32_t printable(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
		return ' ';
	return cp == 0xFFFE || cp == 0xFFFF || !cp_is_scalar(cp) ? 0xFFFD : cp;
}

char *fig_dup_cut(const char *s, int max_cols)
{
	size_t len = strlen(s);
	char *out = malloc(len * 3 + 4); /* an invalid byte may become 3 */
	if (!out)
		return NULL;
	size_t used = 0, cut = 0; /* cut: where "…" would go, leaving it a column */
	int cols = 0;
	for (const char *p = s; *p;) {
		uint32_t cp = printable(fig_next_cp(&p));
		int w = cp_display_width(cp, NULL);
		if (cols + w > max_cols) {
			memcpy(out + cut, "…", 3);
			used = cut + 3;
			break;
		}
		used += cp_to_utf8(cp, out + used);
		cols += w;
		if (cols <= max_cols - 1)
			cut = used;
	}
	out[used] = '\0';
	return out;
}

/* ---- the description ---------------------------------------------------------- */

static void heatmap_finish(fig_heatmap *h)
{
	if (h->labels)
		for (int i = 0; i < h->n; i++)
			free(h->labels[i]);
	if (h->klabels)
		for (int i = 0; i < h->nk; i++)
			free(h->klabels[i]);
	free(h->labels);
	free(h->unknown);
	free(h->klabels);
	free(h->kunknown);
	free(h->w);
	free(h->row_max);
	memset(h, 0, sizeof *h);
}

figure *figure_create(int rows, int cols, av_error *err)
{
	if (rows < 1 || cols < 1 || rows > AV_MAX_LAYERS || cols > AV_MAX_HEADS) {
		av_fail(err, _("a figure has 1 to %d rows and 1 to %d columns of tiles, not %dx%d"),
			AV_MAX_LAYERS, AV_MAX_HEADS, rows, cols);
		return NULL;
	}
	figure *f = calloc(1, sizeof *f);
	if (f)
		f->tiles = calloc((size_t)rows * (size_t)cols, sizeof *f->tiles);
	if (!f || !f->tiles) {
		free(f);
		av_fail(err, _("out of memory for a figure"));
		return NULL;
	}
	f->rows = rows;
	f->cols = cols;
	return f;
}

void figure_destroy(figure *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->rows * f->cols; i++)
		heatmap_finish(&f->tiles[i]);
	free(f->tiles);
	free(f->title);
	free(f->subtitle);
	free(f);
}

bool figure_set_titles(figure *f, const char *title, const char *subtitle, av_error *err)
{
	char *t = title ? fig_dup_cut(title, TITLE_MAX_COLS) : NULL;
	char *s = subtitle ? fig_dup_cut(subtitle, TITLE_MAX_COLS) : NULL;
	if ((title && !t) || (subtitle && !s)) {
		free(t);
		free(s);
		return av_fail(err, _("out of memory for a figure's title"));
	}
	free(f->title);
	free(f->subtitle);
	f->title = t;
	f->subtitle = s;
	return true;
}

static bool copy_labels(char ***out, bool **unknown, int n, const fig_label *labels)
{
	*out = calloc((size_t)n, sizeof **out);
	*unknown = calloc((size_t)n, sizeof **unknown);
	if (!*out || !*unknown)
		return false;
	for (int i = 0; i < n; i++) {
		char g[32];
		if (!labels[i].text)
			cp_glyph(labels[i].cp, g);
		(*out)[i] = fig_dup_cut(labels[i].text ? labels[i].text : g, LABEL_MAX_COLS);
		(*unknown)[i] = labels[i].unknown;
		if (!(*out)[i])
			return false;
	}
	return true;
}

static bool set_labels(fig_heatmap *h, const fig_label *labels)
{
	return copy_labels(&h->labels, &h->unknown, h->n, labels);
}

bool figure_set_tile(figure *f, int i, const attn_matrix *a, const fig_label *labels,
		     scale_kind kind, cm_ramp ramp, const char *title, av_error *err)
{
	int ntiles = f->rows * f->cols;
	if (i < 0 || i >= ntiles)
		return av_fail(err, _("tile %d of a figure of %d"), i, ntiles);
	if (a->n < 1 || a->n > AV_MAX_CONTEXT)
		return av_fail(err, _("a figure's matrix has 1 to %d rows, not %d"), AV_MAX_CONTEXT,
			       a->n);
	for (int j = 0; j < ntiles; j++)
		if (j != i && f->tiles[j].n && f->tiles[j].n != a->n)
			return av_fail(err,
				       _("the tiles of a figure have the same size (%d, not %d)"),
				       f->tiles[j].n, a->n);
	fig_heatmap *h = &f->tiles[i];
	heatmap_finish(h);
	size_t nn = (size_t)a->n * (size_t)a->n;
	h->n = h->nk = a->n;
	h->w = malloc(nn * sizeof *h->w);
	h->row_max = malloc((size_t)a->n * sizeof *h->row_max);
	if (!h->w || !h->row_max || (labels && !set_labels(h, labels))) {
		heatmap_finish(h);
		return av_fail(err, _("out of memory for a %dx%d figure"), a->n, a->n);
	}
	attn_matrix_copy(h->w, a);
	h->causal = a->causal;
	h->kind = kind;
	h->ramp = scale_diverging(kind) ? RAMP_DIVERGING : ramp;
	snprintf(h->title, sizeof h->title, "%s", title ? title : "");
	attn_matrix m = {h->w, h->n, h->causal, 0};
	scale_init(&h->sc, kind, &m, h->row_max);
	return true;
}

bool figure_set_table(figure *f, const float *w, int rows, int cols, const fig_label *row_labels,
		      const fig_label *col_labels, const char *row_axis, const char *col_axis,
		      scale_kind kind, cm_ramp ramp, av_error *err)
{
	if (f->rows * f->cols != 1)
		return av_fail(err, _("tile %d of a figure of %d"), 1, f->rows * f->cols);
	if (rows < 1 || cols < 1 || rows > AV_MAX_CONTEXT + 1 || cols > AV_MAX_CONTEXT + 1)
		return av_fail(err, _("a figure's matrix has 1 to %d rows, not %d"), AV_MAX_CONTEXT,
			       rows < 1 || rows > AV_MAX_CONTEXT + 1 ? rows : cols);
	fig_heatmap *h = &f->tiles[0];
	heatmap_finish(h);
	const size_t nn = (size_t)rows * (size_t)cols;
	h->n = rows;
	h->nk = cols;
	h->w = malloc(nn * sizeof *h->w);
	if (!h->w || !copy_labels(&h->labels, &h->unknown, rows, row_labels) ||
	    !copy_labels(&h->klabels, &h->kunknown, cols, col_labels)) {
		heatmap_finish(h);
		return av_fail(err, _("out of memory for a %dx%d figure"), rows, cols);
	}
	memcpy(h->w, w, nn * sizeof *h->w);
	/* Columns named after the numbered ones (patching's "all") get no
	 * number: over "all" a 6 would read as a seventh position. */
	while (h->knamed < cols && col_labels[cols - 1 - h->knamed].text)
		h->knamed++;
	if (h->knamed == cols)
		h->knamed = 0;
	h->kind = kind;
	h->ramp = ramp;
	snprintf(h->row_axis, sizeof h->row_axis, "%s", row_axis);
	snprintf(h->col_axis, sizeof h->col_axis, "%s", col_axis);
	/* The scale over every cell: no row is a query here. */
	float m = 0;
	for (size_t i = 0; i < nn; i++)
		m = fmaxf(m, kind == SCALE_DIFF ? fabsf(w[i]) : w[i]);
	h->sc = (scale){.kind = kind, .max = kind == SCALE_FIXED || !(m > 0) ? 1.0f : m};
	return true;
}

bool fig_cell_rgb(const fig_heatmap *h, int q, int k, cm_rgb *out)
{
	if (h->causal && k > q)
		return false;
	float w = h->w[(size_t)q * (size_t)h->nk + (size_t)k];
	if (w != w)
		return false; /* undefined (a table's NaN): left out, as a masked cell */
	*out = colormap_rgb(h->ramp, scale_pos(&h->sc, q, w));
	return true;
}

bool fig_masked_run(const fig_heatmap *h, int q, int *k0)
{
	*k0 = q + 1;
	return h->causal && q + 1 < h->nk;
}

bool fig_any_masked(const figure *f)
{
	for (int i = 0; i < f->rows * f->cols; i++)
		if (f->tiles[i].causal && f->tiles[i].n > 1)
			return true;
	return false;
}

bool fig_any_unknown(const figure *f)
{
	const fig_heatmap *h = &f->tiles[0];
	if (f->rows * f->cols != 1 || !h->labels)
		return false;
	for (int i = 0; i < h->n; i++)
		if (h->unknown[i])
			return true;
	for (int i = 0; h->kunknown && i < h->nk; i++)
		if (h->kunknown[i])
			return true;
	return false;
}

const char *fig_label_text(const figure *f, int i)
{
	const fig_heatmap *h = &f->tiles[0];
	return f->rows * f->cols == 1 && h->labels && i < h->n ? h->labels[i] : NULL;
}

const char *fig_col_label_text(const figure *f, int k)
{
	const fig_heatmap *h = &f->tiles[0];
	if (!h->klabels)
		return fig_label_text(f, k);
	return f->rows * f->cols == 1 && k < h->nk ? h->klabels[k] : NULL;
}

bool fig_col_unknown(const fig_heatmap *h, int k)
{
	return h->kunknown ? h->kunknown[k] : h->unknown[k];
}

const char *fig_row_axis(const fig_heatmap *h)
{
	return h->row_axis[0] ? h->row_axis : "Query";
}

const char *fig_col_axis(const fig_heatmap *h)
{
	return h->col_axis[0] ? h->col_axis : "Key";
}

uint8_t *fig_tile_pixels(const fig_heatmap *h, int up)
{
	int side = h->nk * up; /* a row of pixels */
	uint8_t *px = malloc((size_t)side * (size_t)(h->n * up) * 3);
	if (!px)
		return NULL;
	cm_rgb mask = fig_hex(FIG_MASK_BG);
	for (int q = 0; q < h->n; q++) {
		uint8_t *row = px + (size_t)q * up * side * 3;
		for (int k = 0; k < h->nk; k++) {
			cm_rgb c;
			if (!fig_cell_rgb(h, q, k, &c))
				c = mask;
			for (int x = 0; x < up; x++) {
				uint8_t *p = row + ((size_t)k * up + x) * 3;
				p[0] = c.r;
				p[1] = c.g;
				p[2] = c.b;
			}
		}
		for (int y = 1; y < up; y++)
			memcpy(row + (size_t)y * side * 3, row, (size_t)side * 3);
	}
	return px;
}

void fig_format_value(char out[16], float w, bool diff)
{
	float a = fabsf(w);
	const char *sign = !diff ? "" : w < 0 ? "-" : "+";
	if (!(a == a))
		snprintf(out, 16, "?");
	else if (a >= 0.9995f)
		snprintf(out, 16, "%s%.2f", sign, a);
	else if (diff && lroundf(a * 1000.0f) == 0)
		snprintf(out, 16, "0");
	else
		snprintf(out, 16, "%s.%03d", sign, (int)lroundf(a * 1000.0f));
}

int fig_ticks(const figure *f, scale_tick *out, int max, const char **unit)
{
	const fig_heatmap *h = &f->tiles[0];
	int n = scale_ticks(&h->sc, out, max);
	*unit = h->unit[0] ? h->unit : scale_unit(h->kind);
	if (f->rows * f->cols > 1 && h->kind == SCALE_HEAD) {
		/* Each tile has its own maximum: the bar says fractions of it. */
		scale rel = {SCALE_ROW, 1, NULL, false, SCALE_LIFT_DECADES};
		n = scale_ticks(&rel, out, max);
		*unit = "÷ head max";
	}
	return n;
}

/* ---- files ---------------------------------------------------------------------------- */

bool fig_format_of(const char *path, fig_format *fmt, av_error *err)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (dot && (!slash || dot > slash)) {
		if (strcasecmp(dot, ".svg") == 0)
			return *fmt = FIG_SVG, true;
		if (strcasecmp(dot, ".png") == 0)
			return *fmt = FIG_PNG, true;
		if (strcasecmp(dot, ".pdf") == 0)
			return *fmt = FIG_PDF, true;
	}
	return av_fail(err,
		       _("%s: the file name must end in .svg, .png or .pdf (the format follows "
			 "the extension)"),
		       AV_Q(path));
}

const char *fig_format_ext(fig_format fmt)
{
	return fmt == FIG_PNG ? "png" : fmt == FIG_PDF ? "pdf" : "svg";
}

bool fig_free_path(char *out, size_t size, const char *dir, const char *stem, fig_format fmt)
{
	bool here = !dir || !*dir;
	size_t dl = here ? 0 : strlen(dir);
	const char *sep = here || dir[dl - 1] == '/' ? "" : "/";
	for (int i = 1; i < 1000; i++) {
		char num[16] = "";
		if (i > 1)
			snprintf(num, sizeof num, "-%d", i);
		int len = snprintf(out, size, "%s%s%s%s.%s", here ? "" : dir, sep, stem, num,
				   fig_format_ext(fmt));
		if (len < 0 || (size_t)len >= size)
			return false;
		struct stat st;
		if (lstat(out, &st) != 0)
			return true;
	}
	return false;
}

bool fig_format_available(fig_format fmt)
{
#ifdef ATTNVIEW_HAVE_CAIRO
	(void)fmt;
	return true;
#else
	return fmt == FIG_SVG;
#endif
}

bool figure_write(const figure *f, const char *path, bool replace, av_error *err)
{
	fig_format fmt;
	if (!fig_format_of(path, &fmt, err))
		return false;
	if (!fig_format_available(fmt))
		return av_fail(err,
			       _("%s: attnview was built without cairo and pango: PNG and PDF need "
				 "libcairo2-dev and libpango1.0-dev at build time; .svg works"),
			       AV_Q(path));
	struct stat st;
	if (!replace && lstat(path, &st) == 0)
		return av_fail(err, _("%s: exists; it was left untouched"), AV_Q(path));
	fig_geom g;
	figure_layout(f, &g);
	atomic_mode mode = replace ? ATOMIC_REPLACE : ATOMIC_KEEP;
	av_error drawing;
	if (fmt == FIG_SVG) {
		char *svg;
		size_t n;
		if (!figure_svg(f, &g, &svg, &n, &drawing))
			return av_fail(err, "%s: %s", AV_Q(path), drawing.msg);
		bool ok = atomic_write_file(path, svg, n, mode, err);
		free(svg);
		return ok;
	}
	atomic_file *af = atomic_open(path, err);
	if (!af)
		return false;
	/* A failed write (a full disk) is reported by the commit, with the
	 * number of bytes written and the system's reason. */
	if (!fig_write_cairo(f, &g, fmt, af, &drawing) && atomic_ok(af)) {
		atomic_abort(af);
		return av_fail(err, "%s: %s", AV_Q(path), drawing.msg);
	}
	return atomic_commit(af, mode, err);
}

#ifndef ATTNVIEW_HAVE_CAIRO
const char *fig_formats(void)
{
	return "SVG only (built without cairo and pango)";
}

bool fig_write_cairo(const figure *f, const fig_geom *g, fig_format fmt, atomic_file *af,
		     av_error *err)
{
	(void)f, (void)g, (void)fmt, (void)af;
	return av_fail(err, _("attnview was built without cairo and pango"));
}
#endif

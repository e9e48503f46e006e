/* Figures (figure.h): the description, figures from a result, the layout
 * every writer draws, and figure_write. */
#include "attnview/figure.h"

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
#define TEXT_MAX_COLS  48  /* the text quoted in a subtitle */

/* ---- text ------------------------------------------------------------------ */

/* Next codepoint of s (advancing *s); invalid bytes count as U+FFFD. */
static uint32_t next_cp(const char **s)
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
		w += cp_display_width(next_cp(&s), NULL) == 2 ? 1.0 : 0.6;
	return w * font;
}

/* A copy of s cut to at most max_cols columns, "…" marking the cut. */
static char *dup_cut(const char *s, int max_cols)
{
	const char *p = s, *cut = NULL;
	int cols = 0;
	while (*p) {
		const char *at = p;
		int w = cp_display_width(next_cp(&p), NULL);
		if (cols + w > max_cols - 1 && !cut)
			cut = at;
		cols += w;
		if (cols > max_cols)
			break;
	}
	size_t len = cols > max_cols ? (size_t)(cut - s) : strlen(s);
	char *out = malloc(len + 4);
	if (!out)
		return NULL;
	memcpy(out, s, len);
	if (cols > max_cols)
		memcpy(out + len, "…", 3), len += 3;
	out[len] = '\0';
	return out;
}

/* ---- the description ---------------------------------------------------------- */

static void heatmap_free(fig_heatmap *h)
{
	if (h->labels)
		for (int i = 0; i < h->n; i++)
			free(h->labels[i]);
	free(h->labels);
	free(h->unknown);
	free(h->w);
	free(h->row_max);
	memset(h, 0, sizeof *h);
}

figure *figure_create(int rows, int cols, av_error *err)
{
	if (rows < 1 || cols < 1 || rows > AV_MAX_LAYERS || cols > AV_MAX_HEADS) {
		av_fail(err, "a figure has 1 to %d rows and 1 to %d columns of tiles, not %dx%d",
			AV_MAX_LAYERS, AV_MAX_HEADS, rows, cols);
		return NULL;
	}
	figure *f = calloc(1, sizeof *f);
	if (f)
		f->tiles = calloc((size_t)rows * (size_t)cols, sizeof *f->tiles);
	if (!f || !f->tiles) {
		free(f);
		av_fail(err, "out of memory for a figure");
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
		heatmap_free(&f->tiles[i]);
	free(f->tiles);
	free(f->title);
	free(f->subtitle);
	free(f);
}

bool figure_set_titles(figure *f, const char *title, const char *subtitle, av_error *err)
{
	char *t = title ? dup_cut(title, TITLE_MAX_COLS) : NULL;
	char *s = subtitle ? dup_cut(subtitle, TITLE_MAX_COLS) : NULL;
	if ((title && !t) || (subtitle && !s)) {
		free(t);
		free(s);
		return av_fail(err, "out of memory for a figure's title");
	}
	free(f->title);
	free(f->subtitle);
	f->title = t;
	f->subtitle = s;
	return true;
}

static bool set_labels(fig_heatmap *h, const fig_label *labels)
{
	h->labels = calloc((size_t)h->n, sizeof *h->labels);
	h->unknown = calloc((size_t)h->n, sizeof *h->unknown);
	if (!h->labels || !h->unknown)
		return false;
	for (int i = 0; i < h->n; i++) {
		char g[32];
		if (!labels[i].text)
			cp_glyph(labels[i].cp, g);
		h->labels[i] = dup_cut(labels[i].text ? labels[i].text : g, LABEL_MAX_COLS);
		h->unknown[i] = labels[i].unknown;
		if (!h->labels[i])
			return false;
	}
	return true;
}

bool figure_set_tile(figure *f, int i, const attn_matrix *a, const fig_label *labels,
		     scale_kind kind, cm_ramp ramp, const char *title, av_error *err)
{
	int ntiles = f->rows * f->cols;
	if (i < 0 || i >= ntiles)
		return av_fail(err, "tile %d of a figure of %d", i, ntiles);
	if (a->n < 1 || a->n > AV_MAX_CONTEXT)
		return av_fail(err, "a figure's matrix has 1 to %d rows, not %d", AV_MAX_CONTEXT,
			       a->n);
	for (int j = 0; j < ntiles; j++)
		if (j != i && f->tiles[j].n && f->tiles[j].n != a->n)
			return av_fail(err, "the tiles of a figure have the same size (%d, not %d)",
				       f->tiles[j].n, a->n);
	fig_heatmap *h = &f->tiles[i];
	heatmap_free(h);
	size_t nn = (size_t)a->n * (size_t)a->n;
	h->n = a->n;
	h->w = malloc(nn * sizeof *h->w);
	h->row_max = malloc((size_t)a->n * sizeof *h->row_max);
	if (!h->w || !h->row_max || (labels && !set_labels(h, labels))) {
		heatmap_free(h);
		return av_fail(err, "out of memory for a %dx%d figure", a->n, a->n);
	}
	memcpy(h->w, a->w, nn * sizeof *h->w);
	h->causal = a->causal;
	h->kind = kind;
	h->ramp = ramp;
	snprintf(h->title, sizeof h->title, "%s", title ? title : "");
	attn_matrix m = {h->w, h->n, h->causal};
	scale_init(&h->sc, kind, &m, h->row_max);
	return true;
}

bool fig_cell_rgb(const fig_heatmap *h, int q, int k, cm_rgb *out)
{
	if (h->causal && k > q)
		return false;
	float w = h->w[(size_t)q * (size_t)h->n + (size_t)k];
	*out = colormap_rgb(h->ramp, scale_pos(&h->sc, q, w));
	return true;
}

bool fig_masked_run(const fig_heatmap *h, int q, int *k0)
{
	*k0 = q + 1;
	return h->causal && q + 1 < h->n;
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
	return false;
}

const char *fig_label_text(const figure *f, int i)
{
	const fig_heatmap *h = &f->tiles[0];
	return f->rows * f->cols == 1 && h->labels && i < h->n ? h->labels[i] : NULL;
}

uint8_t *fig_tile_pixels(const fig_heatmap *h, int up)
{
	int side = h->n * up;
	uint8_t *px = malloc((size_t)side * (size_t)side * 3);
	if (!px)
		return NULL;
	cm_rgb mask = fig_hex(FIG_MASK_BG);
	for (int q = 0; q < h->n; q++) {
		uint8_t *row = px + (size_t)q * up * side * 3;
		for (int k = 0; k < h->n; k++) {
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
	*unit = scale_unit(h->kind);
	if (f->rows * f->cols > 1 && h->kind == SCALE_HEAD) {
		/* Each tile has its own maximum: the bar says fractions of it. */
		scale rel = {SCALE_ROW, 1, NULL};
		n = scale_ticks(&rel, out, max);
		*unit = "÷ head max";
	}
	return n;
}

/* ---- figures from a result ------------------------------------------------------ */

static const char *const show_names[FIG_NSHOW] = {"head",    "mean", "max",
						  "rollout", "all",  "overview"};

const char *fig_show_name(fig_show s)
{
	return s < FIG_NSHOW ? show_names[s] : "?";
}

bool fig_show_parse(const char *name, fig_show *s)
{
	for (int i = 0; i < FIG_NSHOW; i++)
		if (strcmp(name, show_names[i]) == 0) {
			*s = (fig_show)i;
			return true;
		}
	return false;
}

int fig_words(word_span *out, char **labels, bool *unknown, const token *tok, int n,
	      const bool *marks)
{
	int nw = words_split(out, tok, n);
	if (marks) {
		/* The marks split further: a word also starts where one is. */
		bool *start = malloc((size_t)n * sizeof *start);
		if (!start)
			return -1;
		memcpy(start, marks, (size_t)n * sizeof *start);
		for (int i = 0; i < nw; i++)
			start[out[i].start] = true;
		nw = words_from_marks(out, start, n);
		free(start);
	}
	for (int i = 0; i < nw; i++) {
		/* Trailing spaces belong to the word but are not shown. */
		int end = out[i].end;
		while (end > out[i].start + 1 && tok[end - 1].cp == ' ')
			end--;
		labels[i] = malloc((size_t)(end - out[i].start) * 32 + 1);
		if (!labels[i]) {
			while (i--)
				free(labels[i]);
			return -1;
		}
		size_t used = 0;
		unknown[i] = false;
		for (int t = out[i].start; t < end; t++) {
			used += cp_glyph(tok[t].cp, labels[i] + used);
			unknown[i] |= tok[t].unknown;
		}
		labels[i][used] = '\0';
	}
	return nw;
}

/* One side of a figure: the matrix a result gives for a request, with its
 * labels (characters or words). */
typedef struct fig_side {
	int n;
	bool causal;
	float *m;      /* (n, n) */
	char **labels; /* [n] */
	bool *unknown; /* [n] */
} fig_side;

static void side_free(fig_side *s)
{
	if (s->labels)
		for (int i = 0; i < s->n; i++)
			free(s->labels[i]);
	free(s->labels);
	free(s->unknown);
	free(s->m);
	memset(s, 0, sizeof *s);
}

/* The matrix of `show` at layer/head into out (n, n). */
static bool select_matrix(float *out, const attn_result *r, fig_show show, int layer, int head)
{
	size_t nn = (size_t)r->n * (size_t)r->n;
	switch (show) {
	case FIG_HEAD:
	case FIG_OVERVIEW:
		memcpy(out, attn_result_head(r, layer, head).w, nn * sizeof *out);
		return true;
	case FIG_MEAN:
	case FIG_MAX:
		aggregate_heads(out, r, layer, show == FIG_MEAN ? AGG_MEAN : AGG_MAX);
		return true;
	case FIG_ALL:
		aggregate_heads(out, r, 0, AGG_ALL);
		return true;
	case FIG_ROLLOUT: {
		float *roll = malloc((size_t)r->layers * nn * sizeof *roll);
		float *work = malloc(nn * sizeof *work);
		if (roll && work) {
			attention_rollout(roll, work, r);
			memcpy(out, roll + (size_t)layer * nn, nn * sizeof *out);
		}
		bool ok = roll && work;
		free(roll);
		free(work);
		return ok;
	}
	default:
		return false;
	}
}

static bool side_make(fig_side *s, const attn_result *r, const fig_request *q, fig_show show,
		      int layer, int head, const bool *marks)
{
	int n = r->n;
	memset(s, 0, sizeof *s);
	s->n = n;
	s->causal = r->causal;
	s->m = malloc((size_t)n * (size_t)n * sizeof *s->m);
	s->labels = calloc((size_t)n, sizeof *s->labels);
	s->unknown = calloc((size_t)n, sizeof *s->unknown);
	if (!s->m || !s->labels || !s->unknown || !select_matrix(s->m, r, show, layer, head))
		return false;
	if (!q->words) {
		for (int i = 0; i < n; i++) {
			char g[32];
			cp_glyph(r->tokens[i].cp, g);
			s->unknown[i] = r->tokens[i].unknown;
			if (!(s->labels[i] = strdup(g)))
				return false;
		}
		return true;
	}
	word_span *spans = malloc((size_t)n * sizeof *spans);
	float *wm = malloc((size_t)n * (size_t)n * sizeof *wm);
	int nw = spans && wm ? fig_words(spans, s->labels, s->unknown, r->tokens, n, marks) : -1;
	if (nw >= 0) {
		attn_matrix a = {s->m, n, s->causal};
		words_aggregate(wm, &a, spans, nw);
		memcpy(s->m, wm, (size_t)nw * (size_t)nw * sizeof *wm);
		s->n = nw; /* the labels past nw are NULL */
	}
	free(spans);
	free(wm);
	return nw >= 0;
}

/* Tile i: `show` at layer/head of the request's result, or its difference
 * from the compared one, with labels if `labelled`. *role gets the head role
 * of a character-level matrix (NULL otherwise). */
static bool make_tile(figure *f, int i, const attn_result *r, const fig_request *q, fig_show show,
		      int layer, int head, bool labelled, const char *title, role_scores *role,
		      av_error *err)
{
	fig_side a, b = {0};
	bool ok =
	    side_make(&a, r, q, show, layer, head, q->marks) &&
	    (!q->compare || side_make(&b, q->compare, q, show, layer, head, q->compare_marks));
	fig_label *labels = ok ? calloc((size_t)a.n, sizeof *labels) : NULL;
	char **both = ok ? calloc((size_t)a.n, sizeof *both) : NULL;
	if (!labels || !both) {
		ok = av_fail(err, "out of memory for the figure of %d tokens", r->n);
		goto out;
	}
	attn_matrix m = {a.m, a.n, a.causal};
	if (q->compare) {
		/* Now minus then, aligned by position; a label that differs
		 * shows both ("他/她"). */
		int n = a.n < b.n ? a.n : b.n;
		attn_matrix mb = {b.m, b.n, b.causal};
		matrix_difference(a.m, &m, &mb, n);
		m = (attn_matrix){a.m, n, a.causal || b.causal};
		for (int k = 0; k < n && ok; k++)
			if (strcmp(a.labels[k], b.labels[k]) != 0) {
				size_t la = strlen(a.labels[k]), lb = strlen(b.labels[k]);
				if (!(both[k] = malloc(la + lb + 2))) {
					ok = av_fail(err, "out of memory for the figure's labels");
					break;
				}
				snprintf(both[k], la + lb + 2, "%s/%s", a.labels[k], b.labels[k]);
			}
	}
	for (int k = 0; k < m.n; k++)
		labels[k] = (fig_label){both[k] ? both[k] : a.labels[k], 0,
					a.unknown[k] || (q->compare && b.unknown[k])};
	if (role) {
		if (!q->words && !q->compare)
			head_roles(role, &m, r->tokens);
		else
			role->role = ROLE_NKINDS;
	}
	ok = ok &&
	     figure_set_tile(f, i, &m, labelled ? labels : NULL, q->compare ? SCALE_DIFF : q->scale,
			     q->compare ? RAMP_DIVERGING : q->ramp, title, err);
out:
	if (both)
		for (int k = 0; k < a.n; k++)
			free(both[k]);
	free(both);
	free(labels);
	side_free(&a);
	side_free(&b);
	return ok;
}

/* The text for a subtitle: line breaks as ⏎, other controls as spaces, cut. */
static void quote_text(char *out, size_t size, const char *text)
{
	char tmp[TEXT_MAX_COLS * 8 + 8];
	size_t used = 0;
	int cols = 0;
	for (const char *p = text; *p && used + 8 < sizeof tmp && cols <= TEXT_MAX_COLS;) {
		uint32_t cp = next_cp(&p);
		if (cp == '\n')
			cp = 0x23CE;
		else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))
			cp = ' ';
		cols += cp_display_width(cp, NULL);
		used += cp_to_utf8(cp, tmp + used);
	}
	tmp[used] = '\0';
	char *cut = dup_cut(tmp, TEXT_MAX_COLS);
	snprintf(out, size, "\"%s\"", cut ? cut : "");
	free(cut);
}

static void make_titles(char *title, char *sub, size_t size, const attn_result *r,
			const fig_request *q, const role_scores *role)
{
	int H = r->heads;
	switch (q->show) {
	case FIG_MEAN:
	case FIG_MAX:
		snprintf(title, size, "Layer %d, %s of heads 0–%d", q->layer,
			 q->show == FIG_MEAN ? "mean" : "max", H - 1);
		break;
	case FIG_ROLLOUT:
		snprintf(title, size, "Attention rollout through layer %d", q->layer);
		break;
	case FIG_ALL:
		snprintf(title, size, "Mean of all %d heads", H * r->layers);
		break;
	case FIG_OVERVIEW:
		snprintf(title, size, "All heads: layers 0–%d × heads 0–%d", r->layers - 1, H - 1);
		break;
	case FIG_HEAD:
	default:
		snprintf(title, size, "Layer %d, head %d", q->layer, q->head);
		break;
	}
	size_t at = strlen(title);
	if (q->words)
		at += (size_t)snprintf(title + at, size - at, ", words");
	if (q->compare)
		at += (size_t)snprintf(title + at, size - at, ", difference");
	if (role && role->role < ROLE_NKINDS)
		snprintf(title + at, size - at, " (%s %.2f)", role_name(role->role), role->score);

	char t1[TEXT_MAX_COLS * 4 + 16] = "", t2[sizeof t1] = "";
	if (q->text)
		quote_text(t1, sizeof t1, q->text);
	if (q->text2)
		quote_text(t2, sizeof t2, q->text2);
	const char *mname = q->model_name ? q->model_name : "model";
	if (q->compare)
		snprintf(sub, size, "%s, %s minus %s, by position", mname, t1, t2);
	else
		snprintf(sub, size, "%s, %s scale (%s), %s: %s", mname, scale_name(q->scale),
			 scale_unit(q->scale), colormap_ramp_name(q->ramp), t1);
}

figure *figure_from_result(const attn_result *r, const fig_request *q, av_error *err)
{
	bool grid = q->show == FIG_OVERVIEW;
	figure *f = figure_create(grid ? r->layers : 1, grid ? r->heads : 1, err);
	if (!f)
		return NULL;
	role_scores role = {.role = ROLE_NKINDS};
	bool ok = true;
	if (grid) {
		for (int l = 0; l < r->layers && ok; l++)
			for (int h = 0; h < r->heads && ok; h++) {
				role_scores rs;
				char tt[64];
				ok = make_tile(f, l * r->heads + h, r, q, FIG_HEAD, l, h, false,
					       NULL, &rs, err);
				int at = snprintf(tt, sizeof tt, "L%d H%d", l, h);
				if (ok && rs.role < ROLE_NKINDS)
					snprintf(tt + at, sizeof tt - (size_t)at, " %s %.2f",
						 role_name(rs.role), rs.score);
				snprintf(f->tiles[l * r->heads + h].title, sizeof f->tiles[0].title,
					 "%s", tt);
			}
	} else {
		ok = make_tile(f, 0, r, q, q->show, q->layer, q->head, true, NULL, &role, err);
	}
	char title[256], sub[512];
	make_titles(title, sub, sizeof title, r, q, q->show == FIG_OVERVIEW ? NULL : &role);
	if (ok)
		ok = figure_set_titles(f, q->title ? q->title : title, sub, err);
	if (!ok) {
		figure_destroy(f);
		return NULL;
	}
	f->values = q->values && !grid;
	return f;
}

/* ---- layout ----------------------------------------------------------------------- */

#define MARGIN	   16.0
#define TITLE_FONT 16.0
#define SUB_FONT   12.0
#define AXIS_FONT  12.0
#define TICK_FONT  11.0
#define TILE_FONT  11.0
#define BAR_W	   14.0
#define BAR_MIN_H  140.0

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int digits(int n)
{
	int d = 1;
	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

/* Cells are shown as one image per tile past this many cells in all: an
 * SVG of 4096 rectangles with their tooltips is about 700 KB already, and
 * PDF viewers draw seams between many small rectangles. */
#define FIG_MAX_RECT_CELLS 4096

/* Side of a cell: large for a short text (a 24-character poem fills a
 * slide), readable labels up to the built-in model's context of 128 tokens,
 * and about 1200 units at most beyond. */
static double widest_label(const figure *f, double font);

static double label_font(double cell)
{
	return clampd(0.6 * cell, 6, 14);
}

static double cell_side(const figure *f, int n)
{
	if (f->rows * f->cols > 1)
		return clampd(floor(192.0 / n), 1, 24);
	double c = fmin(28, fmax(floor(720.0 / n), fmin(9, floor(1200.0 / n))));
	if (f->values)
		c = fmax(c, 24);
	/* Wider cells for a few long labels (words, "他/她"), rather than
	 * labels turned on their side. */
	double need = ceil(widest_label(f, label_font(c)) / 0.95);
	if (need > c && n * need <= 720)
		c = fmin(need, 64);
	return c < 1 ? 1 : c;
}

/* The widest label of the single heatmap, at font size `font`. */
static double widest_label(const figure *f, double font)
{
	double w = 0;
	const char *s;
	for (int i = 0; (s = fig_label_text(f, i)); i++)
		w = fmax(w, fig_text_width(s, font));
	return w;
}

/* Titles at the top; returns the y where what follows starts. */
static double layout_titles(const figure *f, fig_geom *g)
{
	double y = g->margin;
	g->title_font = TITLE_FONT;
	g->sub_font = SUB_FONT;
	if (f->title) {
		g->title_y = y + TITLE_FONT;
		y += TITLE_FONT * 1.5;
	}
	if (f->subtitle) {
		g->sub_y = y + SUB_FONT;
		y += SUB_FONT * 1.6;
	}
	return y + 6;
}

/* One heatmap with its labels: axis names, position numbers, labels. */
static void layout_single(const figure *f, fig_geom *g, double y)
{
	int n = g->n;
	double c = g->cell;
	bool labels = fig_label_text(f, 0) && c >= 6;
	g->axis_font = AXIS_FONT;
	g->index_font = clampd(0.42 * c, 6, 10);
	g->label_font = labels ? label_font(c) : 0;
	double numw = 0.6 * g->index_font * digits(n - 1);
	g->index_every = numw + 2 <= c ? 1 : numw + 4 <= 5 * c ? 5 : numw + 4 <= 10 * c ? 10 : 0;
	/* "Key" over the columns, then the numbers, then the labels. */
	g->key_axis_y = y + AXIS_FONT;
	y += AXIS_FONT * 1.5;
	if (g->index_every) {
		g->key_index_y = y + g->index_font;
		y += g->index_font + 4;
	}
	double lw = labels ? widest_label(f, g->label_font) : 0;
	g->rotate_keys = lw > 0.95 * c;
	if (labels) {
		double h = g->rotate_keys ? lw + 4 : g->label_font * 1.3;
		g->key_label_y = g->rotate_keys ? y + h - 2 : y + g->label_font;
		y += h + 2;
	}
	g->y0 = ceil(y + 2); /* cells on whole units: crisp in a PNG */
	/* "Query" up the left side, the numbers, the labels, then the cells. */
	double x = g->margin;
	g->query_axis_x = x + AXIS_FONT;
	x += AXIS_FONT * 1.6;
	if (g->index_every) {
		x += numw;
		g->row_index_x = x;
		x += 5;
	}
	if (labels) {
		x += lw;
		g->row_label_x = x;
		x += 5;
	}
	g->x0 = ceil(x + 2);
	if (f->values) {
		char buf[16];
		fig_format_value(buf, -0.5f, f->tiles[0].kind == SCALE_DIFF);
		double chars = (double)strlen(buf);
		g->value_font = fmin(fmin(0.85 * c / (0.6 * chars), 0.42 * c), 12);
	}
	g->pitch_x = g->pitch_y = 0;
}

/* A grid of tiles, each with its title above. */
static void layout_grid(const figure *f, fig_geom *g, double y)
{
	double side = g->n * g->cell;
	double tw = 0;
	for (int i = 0; i < f->rows * f->cols; i++)
		tw = fmax(tw, fig_text_width(f->tiles[i].title, TILE_FONT));
	g->tile_font = TILE_FONT;
	g->tile_title_dy = -5;
	g->x0 = g->margin;
	g->y0 = ceil(y + TILE_FONT + 6);
	g->pitch_x = ceil(fmax(side, tw) + 14);
	g->pitch_y = side + TILE_FONT + 6 + 12;
}

/* The colour bar right of the cells, its ticks, and the legend below it. */
static double layout_bar(const figure *f, fig_geom *g, double cells_right, double cells_bottom)
{
	g->tick_font = TICK_FONT;
	g->bar_x = cells_right + 18;
	g->bar_y = g->y0;
	g->bar_w = BAR_W;
	g->bar_h = fmax(fmin(cells_bottom - g->y0, 800), BAR_MIN_H);
	g->unit_y = g->bar_y - 10;
	scale_tick ticks[8];
	const char *unit;
	int nt = fig_ticks(f, ticks, 8, &unit);
	double right = g->bar_x + fig_text_width(unit, TICK_FONT);
	for (int i = 0; i < nt; i++)
		right =
		    fmax(right, g->bar_x + BAR_W + 8 + fig_text_width(ticks[i].label, TICK_FONT));
	g->legend_masked = fig_any_masked(f);
	g->legend_unknown = fig_any_unknown(f);
	g->legend_y = g->bar_y + g->bar_h + 14;
	double bottom = g->bar_y + g->bar_h;
	if (g->legend_masked) {
		right = fmax(right, g->bar_x + 18 + fig_text_width("masked", TICK_FONT));
		bottom += 20;
	}
	if (g->legend_unknown) {
		right = fmax(right, g->bar_x + fig_text_width("¿x unknown character", TICK_FONT));
		bottom += 20;
	}
	g->height = fmax(g->height, bottom + g->margin);
	return right;
}

void figure_layout(const figure *f, fig_geom *g)
{
	memset(g, 0, sizeof *g);
	bool grid = f->rows * f->cols > 1;
	g->margin = MARGIN;
	g->n = f->tiles[0].n;
	g->cell = cell_side(f, g->n);
	g->image =
	    (size_t)f->rows * (size_t)f->cols * (size_t)g->n * (size_t)g->n > FIG_MAX_RECT_CELLS;
	double y = layout_titles(f, g);
	if (grid)
		layout_grid(f, g, y);
	else
		layout_single(f, g, y);
	double side = g->n * g->cell;
	double right = grid ? g->x0 + (f->cols - 1) * g->pitch_x + side : g->x0 + side;
	double bottom = grid ? g->y0 + (f->rows - 1) * g->pitch_y + side : g->y0 + side;
	g->height = bottom + g->margin;
	right = layout_bar(f, g, right, bottom);
	g->width = right + g->margin;
	if (f->title)
		g->width = fmax(g->width, 2 * g->margin + fig_text_width(f->title, TITLE_FONT));
	if (f->subtitle)
		g->width = fmax(g->width, 2 * g->margin + fig_text_width(f->subtitle, SUB_FONT));
	g->width = ceil(g->width);
	g->height = ceil(g->height);
}

void fig_cell_origin(const figure *f, const fig_geom *g, int i, int q, int k, double *x, double *y)
{
	int r = i / f->cols, c = i % f->cols;
	*x = g->x0 + c * g->pitch_x + k * g->cell;
	*y = g->y0 + r * g->pitch_y + q * g->cell;
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
		       "%s: the file name must end in .svg, .png or .pdf (the format follows "
		       "the extension)",
		       path);
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
			       "%s: attnview was built without cairo and pango: PNG and PDF need "
			       "libcairo2-dev and libpango1.0-dev at build time; .svg works",
			       path);
	struct stat st;
	if (!replace && lstat(path, &st) == 0)
		return av_fail(err, "%s: exists; it was left untouched", path);
	fig_geom g;
	figure_layout(f, &g);
	atomic_mode mode = replace ? ATOMIC_REPLACE : ATOMIC_KEEP;
	av_error drawing;
	if (fmt == FIG_SVG) {
		char *svg;
		size_t n;
		if (!figure_svg(f, &g, &svg, &n, &drawing))
			return av_fail(err, "%s: %s", path, drawing.msg);
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
		return av_fail(err, "%s: %s", path, drawing.msg);
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
	return av_fail(err, "attnview was built without cairo and pango");
}
#endif

/* Figures (src/render/figure*.c, attnview --export).
 *
 * What a reader of the figure relies on, checked on the files themselves:
 *   - the description made from a result is the matrix the view shows (a
 *     head, mean, max, rollout, words, a difference) with its labels;
 *   - the SVG is well-formed XML (xmllint) and renders (rsvg-convert), PNG
 *     and PDF render (pdftoppm), and in every rendering the pixel at the
 *     centre of a cell is the ramp's colour of that cell's weight, within 3
 *     of 255 per channel; masked cells are hatched grey; the labels are text
 *     (in the SVG, and in the PDF as pdftotext reads it), Chinese included;
 *   - end to end, attnview --export draws the weights attnview --dump
 *     prints, cell by cell;
 *   - writing never leaves a partial file: an existing file is refused
 *     unless replaced on purpose, a full disk (RLIMIT_FSIZE) fails with the
 *     file's name and the system's reason and leaves no temporary file.
 * The renderers are Debian's librsvg2-bin, poppler-utils and libxml2-utils
 * (tests/run.sh installs them); without one, its checks are reported as
 * skipped and the test fails, so that CI cannot pass them by accident. */
#include "attnview/atomicfile.h"
#include "attnview/figure.h"
#include "attnview/timeline.h"
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef TEST_HAVE_CAIRO
#include <cairo.h>
#endif

#define TOL 3 /* per channel, of 255 */

static char dir[256];
static int missing_tools;

/* ---- helpers ------------------------------------------------------------------ */

static const char *tmp(const char *name)
{
	static char buf[8][512];
	static int at;
	at = (at + 1) % 8;
	snprintf(buf[at], sizeof buf[at], "%s/%s", dir, name);
	return buf[at];
}

/* Run a shell command; its exit status (-1 if it did not run). */
static int run(const char *fmt, ...) AV_PRINTF(1, 2);
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static bool have(const char *tool)
{
	if (run("command -v %s >/dev/null 2>&1", tool) == 0)
		return true;
	printf("SKIPPED: %s is not installed (apt-get install %s)\n", tool,
	       strcmp(tool, "xmllint") == 0	   ? "libxml2-utils"
	       : strcmp(tool, "rsvg-convert") == 0 ? "librsvg2-bin"
						   : "poppler-utils");
	missing_tools++;
	return false;
}

static char *slurp(const char *path)
{
	size_t n;
	uint8_t *b = test_read_file(path, &n);
	if (!b)
		return NULL;
	char *s = realloc(b, n + 1);
	if (!s) {
		free(b);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

/* Temporary files (NAME.tmp.XXXXXX) left in the test's folder. */
static int count_temps(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strstr(e->d_name, ".tmp.") != NULL;
	if (d)
		closedir(d);
	return n;
}

/* ---- pictures --------------------------------------------------------------------- */

typedef struct image {
	int w, h;
	uint8_t *rgb;
} image;

static void image_free(image *im)
{
	free(im->rgb);
	im->rgb = NULL;
}

/* A binary PPM (P6, maxval 255), as pdftoppm writes it. */
static bool read_ppm(const char *path, image *im)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	int maxval;
	bool ok = fscanf(f, "P6 %d %d %d", &im->w, &im->h, &maxval) == 3 && maxval == 255 &&
		  fgetc(f) != EOF && im->w > 0 && im->h > 0;
	size_t n = ok ? (size_t)im->w * (size_t)im->h * 3 : 0;
	im->rgb = ok ? malloc(n) : NULL;
	ok = im->rgb && fread(im->rgb, 1, n, f) == n;
	fclose(f);
	if (!ok)
		image_free(im);
	return ok;
}

#ifdef TEST_HAVE_CAIRO
static bool read_png(const char *path, image *im)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);
	bool ok = cairo_surface_status(s) == CAIRO_STATUS_SUCCESS;
	if (ok) {
		cairo_surface_flush(s);
		im->w = cairo_image_surface_get_width(s);
		im->h = cairo_image_surface_get_height(s);
		int stride = cairo_image_surface_get_stride(s);
		const uint8_t *d = cairo_image_surface_get_data(s);
		im->rgb = malloc((size_t)im->w * (size_t)im->h * 3);
		ok = im->rgb != NULL;
		for (int y = 0; ok && y < im->h; y++)
			for (int x = 0; x < im->w; x++) {
				uint32_t v;
				memcpy(&v, d + (size_t)y * stride + (size_t)x * 4, 4);
				uint8_t *p = im->rgb + ((size_t)y * im->w + x) * 3;
				p[0] = (uint8_t)(v >> 16), p[1] = (uint8_t)(v >> 8),
				p[2] = (uint8_t)v;
			}
	}
	cairo_surface_destroy(s);
	return ok;
}
#endif

/* The file rendered at FIG_PNG_SCALE pixels per unit: an SVG by
 * rsvg-convert, a PDF by pdftoppm (144 dpi: 2 pixels a point), a PNG as it
 * is. */
static bool render(const char *path, fig_format fmt, image *im)
{
	*im = (image){0};
	switch (fmt) {
	case FIG_SVG:
		if (!have("rsvg-convert"))
			return false;
#ifdef TEST_HAVE_CAIRO
		return run("rsvg-convert -z %d -o '%s' '%s'", FIG_PNG_SCALE, tmp("r.png"), path) ==
			   0 &&
		       read_png(tmp("r.png"), im);
#else
		/* No PNG reader here: through a PDF at 96 units an inch. */
		return have("pdftoppm") &&
		       run("rsvg-convert -f pdf -o '%s' '%s' && pdftoppm -r %d -singlefile "
			   "'%s' '%s'",
			   tmp("r.pdf"), path, 96 * FIG_PNG_SCALE, tmp("r.pdf"), tmp("r")) == 0 &&
		       read_ppm(tmp("r.ppm"), im);
#endif
	case FIG_PDF:
		return have("pdftoppm") &&
		       run("pdftoppm -r %d -singlefile '%s' '%s'", 72 * FIG_PNG_SCALE, path,
			   tmp("r")) == 0 &&
		       read_ppm(tmp("r.ppm"), im);
	case FIG_PNG:
	default:
#ifdef TEST_HAVE_CAIRO
		return read_png(path, im);
#else
		return false;
#endif
	}
}

static bool pixel(const image *im, double x, double y, cm_rgb *out)
{
	int px = (int)floor(x * FIG_PNG_SCALE), py = (int)floor(y * FIG_PNG_SCALE);
	if (px < 0 || py < 0 || px >= im->w || py >= im->h)
		return false;
	const uint8_t *p = im->rgb + ((size_t)py * im->w + px) * 3;
	*out = (cm_rgb){p[0], p[1], p[2]};
	return true;
}

static bool close_rgb(cm_rgb a, cm_rgb b)
{
	return abs(a.r - b.r) <= TOL && abs(a.g - b.g) <= TOL && abs(a.b - b.b) <= TOL;
}

/* Every cell of tile i (every `step`-th row and column, and the last)
 * against its colour: the pixel at its centre. Masked cells must be the
 * hatch's greys. Returns the number of cells checked. */
static int check_cells(const char *what, const figure *f, const fig_geom *g, const image *im, int i,
		       int step)
{
	const fig_heatmap *h = &f->tiles[i];
	int checked = 0, bad = 0;
	for (int q = 0; q < h->n; q += q + step < h->n || q == h->n - 1 ? step : h->n - 1 - q)
		for (int k = 0; k < h->n;
		     k += k + step < h->n || k == h->n - 1 ? step : h->n - 1 - k) {
			double x, y;
			fig_cell_origin(f, g, i, q, k, &x, &y);
			/* The centre, or above the value printed there. */
			x += g->cell / 2;
			y += f->values ? g->cell / 5 : g->cell / 2;
			cm_rgb got, want;
			bool in = pixel(im, x, y, &got);
			bool ok;
			if (fig_cell_rgb(h, q, k, &want)) {
				ok = in && close_rgb(got, want);
			} else {
				/* The hatch: light greys about its two colours (its
				 * lines are smoothed and meet at the pattern's edges). */
				want = (cm_rgb){0xbb, 0xbb, 0xbb};
				ok = in && abs(got.r - got.g) <= 1 && abs(got.g - got.b) <= 1 &&
				     got.r >= 0xa8 && got.r <= 0xf8;
			}
			checked++;
			if (!ok && bad++ < 5)
				CHECKF(
				    false,
				    "%s: tile %d cell (%d,%d) at (%.1f,%.1f): #%02x%02x%02x, want "
				    "#%02x%02x%02x",
				    what, i, q, k, x, y, got.r, got.g, got.b, want.r, want.g,
				    want.b);
			if (k == h->n - 1)
				break;
		}
	test_checks++;
	return checked;
}

/* ---- figures to draw ------------------------------------------------------------------ */

/* A row-stochastic n x n matrix with a clear pattern and every shade. */
static float *pattern(int n, bool causal, unsigned seed)
{
	float *w = malloc((size_t)n * n * sizeof *w);
	for (int q = 0; q < n; q++) {
		double sum = 0;
		for (int k = 0; k < n; k++) {
			seed = seed * 1103515245u + 12345u;
			double v = causal && k > q ? 0
						   : (k == (q + 1) % n ? 4.0 : 0.0) +
							 (double)((seed >> 16) & 1023) / 1023;
			w[(size_t)q * n + k] = (float)v;
			sum += v;
		}
		for (int k = 0; k < n; k++)
			w[(size_t)q * n + k] = (float)(w[(size_t)q * n + k] / sum);
	}
	return w;
}

static figure *single(int n, bool causal, scale_kind kind, cm_ramp ramp, bool values)
{
	float *w = pattern(n, causal, (unsigned)n);
	if (kind == SCALE_DIFF) {
		float *v = pattern(n, causal, 7);
		for (int i = 0; i < n * n; i++)
			w[i] -= v[i];
		free(v);
	}
	fig_label *labels = calloc((size_t)n, sizeof *labels);
	static const uint32_t cps[] = {0x5E8A, ' ', 0x524D, '\n', 'a', 0x1F600, 0x6708, 'x'};
	for (int i = 0; i < n; i++)
		labels[i] = (fig_label){NULL, cps[i % 8], i % 8 == 7};
	if (n > 2)
		labels[2].text = "北京";
	attn_matrix a = {w, n, causal, 0};
	av_error err;
	figure *f = figure_create(1, 1, &err);
	CHECKF(f && figure_set_tile(f, 0, &a, labels, kind, ramp, NULL, &err) &&
		   figure_set_titles(f, "床前明月光 title", "subtitle: 疑是地上霜", &err),
	       "%s", err.msg);
	f->values = values;
	free(labels);
	free(w);
	return f;
}

static figure *grid(int rows, int cols, int n)
{
	av_error err;
	figure *f = figure_create(rows, cols, &err);
	for (int i = 0; i < rows * cols; i++) {
		float *w = pattern(n, i % 2, (unsigned)i + 3);
		attn_matrix a = {w, n, i % 2, 0};
		char t[32];
		snprintf(t, sizeof t, "L%d H%d next 0.5", i / cols, i % cols);
		CHECKF(figure_set_tile(f, i, &a, NULL, SCALE_ROW, RAMP_CIVIDIS, t, &err), "%s",
		       err.msg);
		free(w);
	}
	figure_set_titles(f, "All heads", NULL, &err);
	return f;
}

/* ---- the description -------------------------------------------------------------------- */

static void formats_and_values(void)
{
	fig_format fmt;
	av_error err;
	CHECK(fig_format_of("a.svg", &fmt, &err) && fmt == FIG_SVG);
	CHECK(fig_format_of("dir.x/A.PNG", &fmt, &err) && fmt == FIG_PNG);
	CHECK(fig_format_of("b.Pdf", &fmt, &err) && fmt == FIG_PDF);
	CHECK(!fig_format_of("c.jpg", &fmt, &err) && strstr(err.msg, "c.jpg") &&
	      strstr(err.msg, ".svg, .png or .pdf"));
	CHECK(!fig_format_of("svg", &fmt, &err) && !fig_format_of("d.svg/x", &fmt, &err));

	char v[16];
	fig_format_value(v, 0.1552f, false);
	CHECKF(strcmp(v, ".155") == 0, "%s", v);
	fig_format_value(v, 0.9996f, false);
	CHECKF(strcmp(v, "1.00") == 0, "%s", v);
	fig_format_value(v, -0.05f, true);
	CHECKF(strcmp(v, "-.050") == 0, "%s", v);
	fig_format_value(v, 0.0001f, true);
	CHECKF(strcmp(v, "0") == 0, "%s", v);

	/* Layout widths: a wide character takes 1 em, others 0.6. */
	CHECK(fabs(fig_text_width("床a", 10) - 16) < 1e-9);

	CHECK(strcmp(sel_name(SEL_ROLLOUT), "rollout") == 0);
	sel_kind s;
	CHECK(sel_parse("overview", &s) && s == SEL_OVERVIEW && !sel_parse("x", &s));

	/* Tiles of a figure have one size; long titles are cut. */
	figure *f = figure_create(1, 2, &err);
	float w4[4] = {1, 0, 0, 1}, w9[9] = {0};
	attn_matrix a = {w4, 2, false, 0}, b = {w9, 3, false, 0};
	CHECK(figure_set_tile(f, 0, &a, NULL, SCALE_FIXED, RAMP_VIRIDIS, "t", &err));
	CHECK(!figure_set_tile(f, 1, &b, NULL, SCALE_FIXED, RAMP_VIRIDIS, "t", &err) &&
	      strstr(err.msg, "same size"));
	char long_title[400];
	memset(long_title, 'x', sizeof long_title - 1);
	long_title[sizeof long_title - 1] = '\0';
	CHECK(figure_set_titles(f, long_title, NULL, &err) && strlen(f->title) < 200 &&
	      strstr(f->title, "…"));
	figure_destroy(f);
	CHECK(!figure_create(0, 1, &err));
}

/* A result of 2 layers x 2 heads on "ab c" (4 tokens), every head a
 * different matrix. */
static void make_result(attn_result *r, const char *text, bool causal, unsigned seed)
{
	int n = (int)strlen(text);
	*r = (attn_result){.n = n, .layers = 2, .heads = 2, .causal = causal};
	r->tokens = calloc((size_t)n, sizeof *r->tokens);
	for (int i = 0; i < n; i++)
		r->tokens[i] = (token){(uint8_t)text[i], 3 + text[i], 1, text[i] == 'z', false};
	size_t nn = (size_t)n * n;
	r->att = malloc(4 * nn * sizeof *r->att);
	for (int i = 0; i < 4; i++) {
		float *w = pattern(n, causal, seed + (unsigned)i);
		memcpy(r->att + i * nn, w, nn * sizeof *w);
		free(w);
	}
}

static void from_result(void)
{
	attn_result r, r2;
	make_result(&r, "ab c", false, 1);
	make_result(&r2, "xb c", false, 9);
	av_error err;
	fig_request q = {.show = SEL_HEAD,
			 .layer = 1,
			 .head = 0,
			 .scale = SCALE_ROW,
			 .ramp = RAMP_VIRIDIS,
			 .model_name = "toy",
			 .text = "ab c"};
	figure *f = figure_from_result(&r, &q, &err);
	CHECKF(f, "%s", err.msg);
	attn_matrix h = attn_result_head(&r, 1, 0);
	CHECK(f->rows == 1 && f->tiles[0].n == 4);
	check_close("head 1.0", f->tiles[0].w, h.w, 16, 0);
	CHECK(strcmp(f->tiles[0].labels[2], "␣") == 0 && strcmp(f->tiles[0].labels[3], "c") == 0);
	CHECKF(strstr(f->title, "Layer 1, head 0 (") && strstr(f->subtitle, "toy") &&
		   strstr(f->subtitle, "row scale") && strstr(f->subtitle, "\"ab c\""),
	       "%s / %s", f->title, f->subtitle);
	figure_destroy(f);

	float want[16], roll[2 * 16], work[16];
	q.show = SEL_MAX;
	f = figure_from_result(&r, &q, &err);
	aggregate_heads(want, &r, 1, SEL_MAX);
	check_close("max of layer 1", f->tiles[0].w, want, 16, 0);
	figure_destroy(f);
	q.show = SEL_ROLLOUT;
	q.layer = 0;
	f = figure_from_result(&r, &q, &err);
	attention_rollout(roll, work, &r);
	check_close("rollout through layer 0", f->tiles[0].w, roll, 16, 0);
	CHECK(strstr(f->title, "rollout through layer 0"));
	figure_destroy(f);

	/* Words: "ab " and "c"; with a mark before b, "a", "b", "c". */
	q.show = SEL_ALL;
	q.words = true;
	f = figure_from_result(&r, &q, &err);
	aggregate_heads(want, &r, 0, SEL_ALL);
	word_span spans[2] = {{0, 3}, {3, 4}};
	float ww[4];
	attn_matrix all = {want, 4, false, 0};
	words_aggregate(ww, &all, spans, 2);
	CHECK(f->tiles[0].n == 2 && strcmp(f->tiles[0].labels[0], "ab") == 0);
	check_close("words of all heads", f->tiles[0].w, ww, 4, 0);
	figure_destroy(f);
	bool marks[4] = {false, true, false, false};
	q.marks = marks;
	f = figure_from_result(&r, &q, &err);
	CHECK(f->tiles[0].n == 3 && strcmp(f->tiles[0].labels[1], "b") == 0 &&
	      strcmp(f->tiles[0].labels[2], "c") == 0);
	figure_destroy(f);

	/* A difference: diverging, labels that differ show both. */
	q = (fig_request){.show = SEL_HEAD,
			  .layer = 0,
			  .head = 1,
			  .scale = SCALE_ROW,
			  .compare = &r2,
			  .text = "ab c",
			  .text2 = "xb c"};
	f = figure_from_result(&r, &q, &err);
	attn_matrix a1 = attn_result_head(&r, 0, 1), a2 = attn_result_head(&r2, 0, 1);
	matrix_difference(want, &a1, &a2, 4);
	check_close("difference", f->tiles[0].w, want, 16, 0);
	CHECK(f->tiles[0].kind == SCALE_DIFF && f->tiles[0].ramp == RAMP_DIVERGING);
	CHECKF(strcmp(f->tiles[0].labels[0], "a/x") == 0 && strcmp(f->tiles[0].labels[1], "b") == 0,
	       "%s %s", f->tiles[0].labels[0], f->tiles[0].labels[1]);
	CHECK(strstr(f->subtitle, "minus"));
	figure_destroy(f);

	/* The overview: a tile per head with its role, no labels. */
	q = (fig_request){
	    .show = SEL_OVERVIEW, .scale = SCALE_HEAD, .ramp = RAMP_CIVIDIS, .values = true};
	f = figure_from_result(&r, &q, &err);
	CHECK(f->rows == 2 && f->cols == 2 && !f->values && !f->tiles[3].labels);
	CHECKF(strncmp(f->tiles[3].title, "L1 H1 ", 6) == 0, "%s", f->tiles[3].title);
	check_close("overview tile L1 H1", f->tiles[3].w, attn_result_head(&r, 1, 1).w, 16, 0);
	scale_tick ticks[8];
	const char *unit;
	fig_ticks(f, ticks, 8, &unit);
	CHECK(strcmp(unit, "÷ head max") == 0);
	figure_destroy(f);
	attn_result_finish(&r);
	attn_result_finish(&r2);
}

static void layout(void)
{
	int sizes[] = {1, 5, 24, 64, 65, 128, 300};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		int n = sizes[s];
		figure *f = single(n, n % 2, SCALE_ROW, RAMP_VIRIDIS, false);
		fig_geom g;
		figure_layout(f, &g);
		double side = n * g.cell;
		CHECKF(g.image == (n * n > 4096), "n %d: image %d", n, g.image);
		CHECKF(!g.label_font || (g.x0 > g.row_label_x && g.row_label_x >= g.row_index_x &&
					 g.y0 > g.key_label_y && g.key_label_y > g.key_index_y),
		       "n %d: labels overlap the cells", n);
		CHECKF(g.bar_x > g.x0 + side && g.bar_x + g.bar_w < g.width &&
			   g.y0 + side < g.height && g.legend_y < g.height,
		       "n %d: outside the canvas %gx%g", n, g.width, g.height);
		CHECKF(g.cell == floor(g.cell) && g.x0 == floor(g.x0) && g.y0 == floor(g.y0),
		       "n %d: cells off the pixel grid (%g at %g,%g)", n, g.cell, g.x0, g.y0);
		CHECKF(side <= 1200 && (n > 128 || g.label_font >= 6), "n %d: side %g font %g", n,
		       side, g.label_font);
		figure_destroy(f);
	}
	figure *f = grid(2, 4, 128);
	fig_geom g;
	figure_layout(f, &g);
	double x, y;
	fig_cell_origin(f, &g, 7, 127, 127, &x, &y);
	CHECK(g.image && x + g.cell <= g.bar_x && y + g.cell <= g.height);
	figure_destroy(f);
}

/* ---- the files --------------------------------------------------------------------------- */

static const char *ext[3] = {"svg", "png", "pdf"};

/* f written in every format and rendered: the cells' colours, the text. */
static void draw_and_check(const char *name, figure *f, int step)
{
	fig_geom g;
	figure_layout(f, &g);
	for (int fmt = 0; fmt < 3; fmt++) {
		char file[64];
		snprintf(file, sizeof file, "%s.%s", name, ext[fmt]);
		const char *path = tmp(file);
		av_error err;
		bool ok = figure_write(f, path, true, &err);
		if (!fig_format_available((fig_format)fmt)) {
			CHECKF(!ok && strstr(err.msg, "libcairo2-dev and libpango1.0-dev") &&
				   access(path, F_OK) != 0,
			       "%s without cairo: %s", path, err.msg);
			continue;
		}
		CHECKF(ok, "%s", err.msg);
		if (fmt == FIG_SVG && have("xmllint"))
			CHECKF(run("xmllint --noout '%s'", path) == 0, "%s is not well-formed XML",
			       path);
		image im;
		if (!render(path, (fig_format)fmt, &im))
			continue;
		CHECKF(abs(im.w - (int)g.width * FIG_PNG_SCALE) <= 2 &&
			   abs(im.h - (int)g.height * FIG_PNG_SCALE) <= 2,
		       "%s: %dx%d pixels for %gx%g units", path, im.w, im.h, g.width, g.height);
		int cells = 0;
		for (int i = 0; i < f->rows * f->cols; i++)
			cells += check_cells(path, f, &g, &im, i, step);
		printf("%s: %dx%d, %d cell centres checked\n", file, im.w, im.h, cells);
		image_free(&im);
	}
}

static void writers(void)
{
	/* Rectangles: causal, values, unknown labels, CJK, a space, a line
	 * break; the diverging ramp; then images: one large heatmap and a grid. */
	figure *f = single(8, true, SCALE_ROW, RAMP_VIRIDIS, true);
	draw_and_check("small", f, 1);
	char *svg = slurp(tmp("small.svg"));
	CHECK(svg && strstr(svg, ">床</text>") && strstr(svg, ">␣</text>") &&
	      strstr(svg, ">⏎</text>") && strstr(svg, ">北京</text>") &&
	      strstr(svg, "text-decoration=\"underline\"") && strstr(svg, "url(#masked)") &&
	      strstr(svg, ">masked</text>") && strstr(svg, ">÷ row max</text>"));
	free(svg);
	if (have("xmllint"))
		CHECKF(run("test \"$(xmllint --xpath 'count(//*[local-name()=\"text\"][.=\"床\"])' "
			   "'%s')\" = 2",
			   tmp("small.svg")) == 0,
		       "the SVG lacks 床 as a row and a column label");
	if (fig_format_available(FIG_PDF) && have("pdftotext"))
		CHECKF(run("pdftotext '%s' - | grep -q 床 && pdftotext '%s' - | grep -q 北京 && "
			   "pdftotext '%s' - | grep -q 疑是地上霜",
			   tmp("small.pdf"), tmp("small.pdf"), tmp("small.pdf")) == 0,
		       "the PDF's text lacks the Chinese labels or title");
	figure_destroy(f);

	f = single(12, false, SCALE_DIFF, RAMP_DIVERGING, true);
	draw_and_check("diff", f, 1);
	figure_destroy(f);
	f = single(80, false, SCALE_LOG, RAMP_CIVIDIS, false);
	draw_and_check("large", f, 7);
	figure_destroy(f);
	f = grid(2, 3, 40);
	draw_and_check("grid", f, 3);
	figure_destroy(f);
}

/* A write in a child process limited to `limit` bytes of file: its
 * message (exit 1) or "" (exit 0). */
static int write_limited(const figure *f, const char *path, bool replace, rlim_t limit, char *msg,
			 size_t size)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = {limit, limit};
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(4);
		av_error err;
		bool ok = figure_write(f, path, replace, &err);
		if (!ok && write(fds[1], err.msg, strlen(err.msg)) < 0)
			_exit(5);
		_exit(ok ? 0 : 1);
	}
	close(fds[1]);
	size_t got = 0;
	ssize_t k;
	while (got < size - 1 && (k = read(fds[0], msg + got, size - 1 - got)) > 0)
		got += (size_t)k;
	msg[got] = '\0';
	close(fds[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void files(void)
{
	figure *f = single(24, false, SCALE_ROW, RAMP_VIRIDIS, false);
	av_error err;
	const char *path = tmp("keep.svg");
	FILE *o = fopen(path, "w");
	fputs("mine", o);
	fclose(o);
	chmod(path, 0640);
	/* Never overwritten without asking. */
	CHECKF(!figure_write(f, path, false, &err) && strstr(err.msg, "keep.svg: exists"), "%s",
	       err.msg);
	char *s = slurp(path);
	CHECK(s && strcmp(s, "mine") == 0);
	free(s);
	/* Asked: replaced, keeping its mode. */
	CHECKF(figure_write(f, path, true, &err), "%s", err.msg);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640 && st.st_size > 1000);
	/* No place to write: a message naming the file and the reason. */
	CHECKF(!figure_write(f, tmp("nowhere/x.svg"), false, &err) && strstr(err.msg, "x.svg") &&
		   strstr(err.msg, strerror(ENOENT)),
	       "%s", err.msg);
	mkdir(tmp("d.svg"), 0755);
	CHECKF(!figure_write(f, tmp("d.svg"), true, &err) && strstr(err.msg, "is a directory"),
	       "%s", err.msg);
	CHECKF(!figure_write(f, tmp("x.jpg"), true, &err) && strstr(err.msg, ".svg, .png or .pdf"),
	       "%s", err.msg);
	/* Names for new figures never name an existing file. */
	char fname[512];
	CHECK(fig_free_path(fname, sizeof fname, dir, "keep", FIG_SVG) &&
	      strcmp(fname, tmp("keep-2.svg")) == 0);
	CHECK(fig_free_path(fname, sizeof fname, dir, "keep", FIG_PDF) &&
	      strcmp(fname, tmp("keep.pdf")) == 0);
	CHECK(fig_free_path(fname, sizeof fname, NULL, "x", FIG_PNG) && strcmp(fname, "x.png") == 0);
	CHECK(!fig_free_path(fname, 8, dir, "keep", FIG_SVG));
	/* The commit that finds a file made meanwhile leaves it alone. */
	atomic_file *af = atomic_open(tmp("race.svg"), &err);
	atomic_write(af, "new", 3);
	o = fopen(tmp("race.svg"), "w");
	fputs("theirs", o);
	fclose(o);
	CHECKF(!atomic_commit(af, ATOMIC_KEEP, &err) && strstr(err.msg, "left untouched"), "%s",
	       err.msg);
	s = slurp(tmp("race.svg"));
	CHECK(s && strcmp(s, "theirs") == 0);
	free(s);

	/* A full disk, in each format: no file, no temporary file, and an
	 * existing file as it was. */
	for (int fmt = 0; fmt < 3; fmt++) {
		if (!fig_format_available((fig_format)fmt))
			continue;
		char name[32], msg[1024];
		snprintf(name, sizeof name, "full.%s", ext[fmt]);
		const char *p = tmp(name);
		unlink(p);
		int rc = write_limited(f, p, false, 2048, msg, sizeof msg);
		printf("full disk, %s: %s\n", name, msg);
		CHECKF(rc == 1 && strstr(msg, name) && strstr(msg, "writing failed after") &&
			   strstr(msg, "the file was not created") && strstr(msg, strerror(EFBIG)),
		       "%s: status %d: %s", name, rc, msg);
		CHECKF(access(p, F_OK) != 0, "%s was left behind", name);
		o = fopen(p, "w");
		fputs("old", o);
		fclose(o);
		rc = write_limited(f, p, true, 2048, msg, sizeof msg);
		CHECKF(rc == 1 && strstr(msg, "the previous file is unchanged"), "%s: %s", name,
		       msg);
		s = slurp(p);
		CHECKF(s && strcmp(s, "old") == 0, "%s was changed", name);
		free(s);
		CHECKF(count_temps() == 0, "%d temporary files after %s", count_temps(), name);
	}
	figure_destroy(f);
}

/* ---- end to end: attnview --export against attnview --dump ------------------------------- */

/* The weights of layer/head of text, from attnview --dump --format tsv. */
static bool dump_weights(const char *bin, const char *text, int layer, int head, float *w, int n)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "'%s' --dump --format tsv --layer %d --head %d --text '%s'", bin,
		 layer, head, text);
	FILE *p = popen(cmd, "r");
	if (!p)
		return false;
	char line[512];
	int rows = 0;
	bool header = true;
	while (fgets(line, sizeof line, p)) {
		if (header) {
			header = false;
			continue;
		}
		char *f[8], *save = NULL;
		int nf = 0;
		for (char *t = strtok_r(line, "\t", &save); t && nf < 8;
		     t = strtok_r(NULL, "\t", &save))
			f[nf++] = t;
		int q = nf == 8 ? atoi(f[2]) : -1, k = nf == 8 ? atoi(f[3]) : -1;
		if (q < 0 || q >= n || k < 0 || k >= n)
			break;
		w[q * n + k] = strtof(f[6], NULL);
		rows++;
	}
	return pclose(p) == 0 && rows == n * n;
}

static void end_to_end(void)
{
	const char *bin = getenv("ATTNVIEW_BIN");
	if (!bin) {
		printf("SKIPPED: end to end (ATTNVIEW_BIN unset)\n");
		missing_tools++;
		return;
	}
	const char *text = "床前明月光，疑是地上霜。";
	enum { N = 12 };
	float w[N * N];
	CHECK(dump_weights(bin, text, 1, 2, w, N));
	attn_matrix a = {w, N, false, 0};
	float rmax[N];
	scale sc;
	scale_init(&sc, SCALE_ROW, &a, rmax);
	for (int fmt = 0; fmt < 3; fmt++) {
		char name[32];
		snprintf(name, sizeof name, "poem.%s", ext[fmt]);
		int rc = run("'%s' --export '%s' --text '%s' --layer 1 --head 2 --values --force",
			     bin, tmp(name), text);
		CHECKF(rc == (fig_format_available((fig_format)fmt) ? 0 : 1), "--export %s: %d",
		       name, rc);
	}
	/* The SVG's cells: where they are, and their exact colours. */
	char *svg = slurp(tmp("poem.svg"));
	const char *p = svg;
	int cells = 0, exact = 0;
	double cx[N * N], cy[N * N];
	while (p && (p = strstr(p, "<rect class=\"cell\" "))) {
		double x, y, cw, ch;
		unsigned rgb;
		int tile, q, k;
		if (sscanf(p,
			   "<rect class=\"cell\" x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\" "
			   "fill=\"#%6x\" data-tile=\"%d\" data-q=\"%d\" data-k=\"%d\"",
			   &x, &y, &cw, &ch, &rgb, &tile, &q, &k) == 8 &&
		    q >= 0 && q < N && k >= 0 && k < N) {
			cm_rgb want = colormap_rgb(RAMP_VIRIDIS, scale_pos(&sc, q, w[q * N + k]));
			exact += rgb == ((unsigned)want.r << 16 | (unsigned)want.g << 8 | want.b);
			/* The value is printed in the middle of the cell: a fifth
			 * of the way down is still the cell's own colour. */
			cx[q * N + k] = x + cw / 2;
			cy[q * N + k] = y + ch / 5;
			cells++;
		}
		p++;
	}
	CHECKF(cells == N * N && exact == N * N,
	       "the SVG has %d cells, %d of them in the colour of --dump's weight", cells, exact);
	for (int i = 0; i < N; i++) {
		char g[40];
		snprintf(g, sizeof g, ">%.*s</text>", 3, text + 3 * i);
		CHECKF(svg && strstr(svg, g), "the SVG lacks the label %s", g);
	}
	free(svg);
	/* The same cells in every rendering. */
	for (int fmt = 0; fmt < 3 && cells == N * N; fmt++) {
		char name[32];
		snprintf(name, sizeof name, "poem.%s", ext[fmt]);
		image im;
		if (!fig_format_available((fig_format)fmt) ||
		    !render(tmp(name), (fig_format)fmt, &im))
			continue;
		int bad = 0;
		for (int i = 0; i < N * N; i++) {
			cm_rgb got, want = colormap_rgb(RAMP_VIRIDIS, scale_pos(&sc, i / N, w[i]));
			if (!pixel(&im, cx[i], cy[i], &got) || !close_rgb(got, want))
				if (bad++ < 3)
					CHECKF(false,
					       "%s: cell %d,%d #%02x%02x%02x, want #%02x%02x%02x",
					       name, i / N, i % N, got.r, got.g, got.b, want.r,
					       want.g, want.b);
		}
		printf("%s: %d cells against --dump, %d off\n", name, N * N, bad);
		CHECK(bad == 0);
		image_free(&im);
	}
	if (fig_format_available(FIG_PDF) && have("pdftotext"))
		CHECKF(run("pdftotext '%s' - | tr -d ' \\n' | grep -q 床前明月光",
			   tmp("poem.pdf")) == 0,
		       "poem.pdf: the labels are not text");
}

/* --export --timeline (figure_timeline): a model whose head (1, 1) becomes
 * an induction head at record 5; every format is written, the SVG names the
 * phase change at its step, draws a panel per head (three scores and the
 * entropy each) and the two losses, and the phase change's dashed line is
 * red at the same place in every format's pixels. A model without a
 * timeline is refused. */
static void timeline_figure(void)
{
	model_config cfg = {OBJ_CAUSAL, 9, 8, 2, 2, 16, {0}};
	uint32_t cps[9] = {AV_SPECIAL_CP, AV_SPECIAL_CP + 1, AV_SPECIAL_CP + 2, 'a', 'b', 'c',
			   'd', 'e', ' '};
	av_error err;
	model *m = model_create(&cfg, cps, &err);
	CHECKF(m != NULL, "%s", err.msg);
	if (!m)
		return;
	model_init_random(m, 3);
	CHECK(!figure_timeline(m, "m.attn", tmp("none.svg"), false, &err) &&
	      strstr(err.msg, "m.attn has no training timeline"));
	uint32_t probe[16];
	for (int i = 0; i < 16; i++)
		probe[i] = "abcde "[i % 6];
	m->timeline = timeline_create(m, probe, 1, 16, 100, 1, &err);
	for (uint64_t s = 0; m->timeline && s <= 1000; s += 100)
		CHECK(timeline_record(m->timeline, m, s, s >= 500 ? 0.5f : 3.0f, true, &err));
	timeline *tl = m->timeline;
	for (size_t r = 0; tl && r < tl->count; r++)
		((float *)timeline_head(tl, r, 1, 1))[ROLE_INDUCTION] = r < 5 ? 0.05f : 0.9f;
	CHECK(tl && timeline_phase_change(tl, NULL) == 5);
	for (int e = 0; e < 3; e++) {
		char name[32];
		snprintf(name, sizeof name, "timeline.%s", ext[e]);
		bool avail = fig_format_available((fig_format)e);
		CHECKF(figure_timeline(m, "m.attn", tmp(name), true, &err) == avail, "%s: %s",
		       name, err.msg);
	}
	char *svg = slurp(tmp("timeline.svg"));
	int lines = 0;
	for (const char *p = svg; p && (p = strstr(p, "<polyline")); p++)
		lines++;
	/* losses 2, the phase change in the loss panel and in 4 panels, 4 heads x 4 series */
	CHECKF(lines == 2 + 5 + 16, "%d lines in the SVG", lines);
	CHECK(svg && strstr(svg, ">phase change, step 500</text>") &&
	      strstr(svg, ">L1 H1 \xC2\xB7 induction forms</text>"));
	const char *red = svg ? strstr(svg, "stroke=\"#d62728\"") : NULL;
	double x = -1, y0 = 0, y1 = 0;
	while (red && red > svg && strncmp(red, "<polyline points=\"", 18) != 0)
		red--;
	CHECK(red && sscanf(red, "<polyline points=\"%lf,%lf %*f,%lf", &x, &y0, &y1) == 3);
	free(svg);
	for (int e = 0; e < 3 && x > 0; e++) {
		char name[32];
		snprintf(name, sizeof name, "timeline.%s", ext[e]);
		image im;
		if (!fig_format_available((fig_format)e) || !render(tmp(name), (fig_format)e, &im))
			continue;
		cm_rgb px = {0};
		/* y0 + 2: inside the first dash; antialiased, the line may be pink */
		CHECKF(y1 > y0 + 4 && pixel(&im, x, y0 + 2, &px) && px.r > 200 && px.g < 190 &&
			   px.r - px.g > 60 && px.r - px.b > 60,
		       "%s: the phase change at x %.1f is %d,%d,%d, not red", name, x, px.r, px.g,
		       px.b);
		image_free(&im);
	}
	/* The head rises but never clears the bar (every other score 0):
	 * no phase change, and no title says "induction forms". */
	for (size_t r = 0; tl && r < tl->count; r++) {
		float *v = (float *)timeline_head(tl, r, 1, 1);
		for (uint32_t k = 0; k < tl->nvalues; k++)
			v[k] = k == ROLE_INDUCTION ? (r < 5 ? 0.05f : 0.45f) : 0;
	}
	int head = -1;
	CHECK(tl && timeline_phase_change(tl, &head) == -1 && head == 3);
	CHECK(figure_timeline(m, "m.attn", tmp("unnamed.svg"), true, &err));
	svg = slurp(tmp("unnamed.svg"));
	CHECKF(svg && !strstr(svg, "induction forms") && !strstr(svg, "phase change, step"),
	       "a head that is never named: %s",
	       svg && strstr(svg, "induction forms") ? "induction forms" : "a phase change");
	free(svg);
	model_destroy(m);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/attnview-figure.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	formats_and_values();
	from_result();
	layout();
	writers();
	files();
	end_to_end();
	timeline_figure();
	run("rm -rf '%s'", dir);
	if (missing_tools)
		printf("%d checks could not run: install the tools named above\n", missing_tools);
	CHECK(missing_tools == 0);
	return test_summary("figure");
}

/* The heatmap (src/view/heatmap.c) and the matrix it draws (matrix.c),
 * without a terminal: matrix_make from a request, and heat_layout,
 * heat_draw and heat_hit on a curses screen whose output goes to /dev/null,
 * read back cell by cell. */
#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "colors.h"
#include "harness.h"
#include "heatmap.h"
#include "matrix.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ---- a result made by hand ------------------------------------------------ */

/* 1 layer, 2 heads over the tokens of s (ASCII): head 0 attends to the
 * previous token (the first to itself), head 1 evenly. */
static void result_of(attn_result *r, const char *s, bool causal)
{
	int n = (int)strlen(s);
	memset(r, 0, sizeof *r);
	r->n = n, r->layers = 1, r->heads = 2, r->causal = causal;
	r->tokens = calloc((size_t)n, sizeof *r->tokens);
	r->att = calloc(2 * (size_t)n * (size_t)n, sizeof *r->att);
	for (int i = 0; i < n; i++) {
		r->tokens[i] = (token){.cp = (uint32_t)s[i], .id = 3 + i, .width = 1};
		r->att[(size_t)i * n + (size_t)(i ? i - 1 : 0)] = 1;
		int seen = causal ? i + 1 : n;
		for (int j = 0; j < seen; j++)
			r->att[(size_t)n * n + (size_t)i * n + j] = 1.0f / (float)seen;
	}
}

static void result_free(attn_result *r)
{
	free(r->tokens);
	free(r->att);
	free(r->value_norms);
}

static void matrices(void)
{
	attn_result r;
	result_of(&r, "ab cd", false);
	matrix_cache mx;
	av_error err;
	float row_max[8];
	CHECK(matrix_init(&mx, &err));
	matrix_request rq = {&r, 1, SEL_HEAD, 0, 0, false, NULL, NULL, SCALE_ROW, row_max};
	heat_src s;
	CHECK(matrix_make(&mx, &rq, &s, &err) && s.m.n == 5 && s.m.w == r.att && !s.diverging);
	CHECK(s.labels[3].cp == 'c' && !s.labels[3].text && s.sc.kind == SCALE_ROW);
	uint64_t gen = mx.gen;
	/* The same request: kept; another scale: kept, the scale made anew. */
	rq.scale = SCALE_FIXED;
	CHECK(matrix_make(&mx, &rq, &s, &err) && mx.gen == gen && s.sc.kind == SCALE_FIXED);
	/* Another head, another result: made anew. */
	rq.head = 1;
	CHECK(matrix_make(&mx, &rq, &s, &err) && mx.gen == gen + 1 && s.m.w[0] == 0.2f);
	rq.seq = 2;
	CHECK(matrix_make(&mx, &rq, &s, &err) && mx.gen == gen + 2);
	/* The mean of the layer, made in the cache's scratch. */
	rq.kind = SEL_MEAN;
	CHECK(matrix_make(&mx, &rq, &s, &err) && s.m.w != r.att);
	CHECKF(s.m.w[1] == 0.1f && s.m.w[0] == 0.6f, "mean: %g %g", s.m.w[0], s.m.w[1]);
	/* Words: "ab " and "cd", and a '|' mark splitting "cd" again. */
	rq.kind = SEL_HEAD, rq.head = 1, rq.words = true;
	CHECK(matrix_make(&mx, &rq, &s, &err) && s.m.n == 2);
	CHECK(strcmp(s.labels[0].text, "ab") == 0 && strcmp(s.labels[1].text, "cd") == 0);
	int a, b;
	CHECK(matrix_word_span(&mx, 1, &a, &b) && a == 3 && b == 5);
	bool marks[5] = {false, false, false, false, true};
	rq.marks = marks;
	rq.seq = 3;
	CHECK(matrix_make(&mx, &rq, &s, &err) && s.m.n == 3 && strcmp(s.labels[2].text, "d") == 0);
	/* A pin: the difference, on the diverging scale; the cell's two weights. */
	rq.words = false, rq.marks = NULL;
	CHECK(matrix_make(&mx, &rq, &s, &err));
	pin p = {0};
	CHECK(pin_set(&p, &s) && p.on && p.n == 5);
	rq.head = 0, rq.pin = &p;
	CHECK(matrix_make(&mx, &rq, &s, &err) && s.diverging && s.sc.kind == SCALE_DIFF);
	float now, then;
	CHECK(matrix_compare_cell(&mx, &p, 1, 0, &now, &then) && now == 1 && then == 0.2f);
	CHECK(s.m.w[1 * 5 + 0] == 0.8f);
	/* Contributions need the norms: refused with a message, then made. */
	rq.pin = NULL, rq.kind = SEL_CONTRIB;
	CHECK(!matrix_make(&mx, &rq, &s, &err) && strstr(err.msg, "norms"));
	r.value_norms = malloc(10 * sizeof *r.value_norms);
	for (int i = 0; i < 10; i++)
		r.value_norms[i] = 1.0f + (float)i;
	rq.seq = 4;
	CHECK(matrix_make(&mx, &rq, &s, &err));
	CHECKF(s.m.w[0] == 1 && s.m.w[5 * 1 + 0] == 1, "contributions of a one-key head: %g",
	       s.m.w[0]);
	pin_clear(&p);
	CHECK(!p.on && !p.w);
	matrix_finish(&mx);
	result_free(&r);
}

/* ---- drawing ------------------------------------------------------------------- */

/* Line y of the screen from column x, w columns, as UTF-8 (wide characters
 * take their columns once). */
static const char *line_at(int y, int x, int w)
{
	static char out[1024];
	size_t used = 0;
	for (int i = 0; i < w && used + 8 < sizeof out; i++) {
		cchar_t cc;
		wchar_t wc[CCHARW_MAX + 1];
		attr_t at;
		short pair;
		if (mvin_wch(y, x + i, &cc) != OK || getcchar(&cc, wc, &at, &pair, NULL) != OK)
			continue;
		if (wc[0] && wcwidth(wc[0]) == 2)
			i++; /* held in both its columns */
		for (int k = 0; wc[k]; k++) {
			mbstate_t st = {0};
			size_t len = wcrtomb(out + used, wc[k], &st);
			used += len == (size_t)-1 ? 0 : len;
		}
	}
	while (used && out[used - 1] == ' ')
		used--;
	out[used] = '\0';
	return out;
}

static bool reversed(int y, int x)
{
	cchar_t cc;
	return mvin_wch(y, x, &cc) == OK && (cc.attr & A_REVERSE);
}

static void draw_small(colors *col)
{
	attn_result r;
	result_of(&r, "abcd", true);
	heat_label labels[4];
	heat_token_labels(labels, r.tokens, 4);
	float row_max[4];
	heat_src s = {attn_result_head(&r, 0, 0), labels, 2, {0}, false};
	scale_init(&s.sc, SCALE_FIXED, &s.m, row_max);
	heat_geom g;
	heat_view hv = {1, 0, 0, 0};
	heat_layout(&g, 4, 2, 0, 0, 60, 20, CELLS_FIT, false, true);
	CHECKF(!g.compact && g.cell_w >= 2 && g.vis_rows >= 4 && g.vis_cols >= 4,
	       "4 tokens in 60x20: cells %dx%d, %d rows", g.cell_w, g.cell_h, g.vis_rows);
	erase();
	heat_draw(col, &s, &g, &hv);
	/* The key labels, the row labels with the cursor's marker, the cursor
	 * cell, the masked cells after the diagonal, the bar's scale name. */
	const char *keys = line_at(g.keys_y, g.cx0, 4 * g.cell_w);
	CHECKF(strstr(keys, "a") && strstr(keys, "d"), "key labels: '%s'", keys);
	int y1 = g.cells_y + 1 * g.cell_h + (g.cell_h - 1) / 2;
	const char *row1 = line_at(y1, 0, g.cx0);
	CHECKF(strncmp(row1, "▶", 3) == 0 && strstr(row1, " 1 b"), "cursor row: '%s'", row1);
	CHECK(reversed(y1, g.x + 1 + g.posw + 1)); /* its label */
	const char *cells1 = line_at(y1, g.cx0, 4 * g.cell_w);
	CHECKF(strstr(cells1, "<>") && strstr(cells1, "·"), "row 1's cells: '%s'", cells1);
	const char *row0 = line_at(g.cells_y + (g.cell_h - 1) / 2, g.cx0, 4 * g.cell_w);
	CHECKF(strstr(row0, "·") && !strstr(row0, "<>"), "row 0's cells: '%s'", row0);
	CHECKF(strcmp(line_at(g.tick_y, g.bar_x + 2, 6), "fixed") == 0, "bar: '%s'",
	       line_at(g.tick_y, g.bar_x + 2, 6));
	/* Clicks: a cell, a key label (the cursor's row), outside. */
	int q, k;
	CHECK(heat_hit(&g, &hv, 4, g.cells_y + 2 * g.cell_h, g.cx0 + 3 * g.cell_w, &q, &k) &&
	      q == 2 && k == 3);
	CHECK(heat_hit(&g, &hv, 4, g.keys_y, g.cx0 + 2 * g.cell_w, &q, &k) && q == 1 && k == 2);
	CHECK(!heat_hit(&g, &hv, 4, g.foot_y + 1, g.cx0, &q, &k));

	/* Values: each cell prints its weight. */
	heat_layout(&g, 4, 2, 0, 0, 60, 20, CELLS_FIT, true, true);
	erase();
	heat_draw(col, &s, &g, &hv);
	const char *vals = line_at(g.cells_y + 2 * g.cell_h + (g.cell_h - 1) / 2, g.cx0,
				   4 * g.cell_w);
	CHECKF(strstr(vals, "1.00") && strstr(vals, ".000"), "values of row 2: '%s'", vals);
	result_free(&r);
}

static void draw_long(colors *col)
{
	/* 100 tokens in 40 columns: compact, every row and key on screen; fit
	 * keeps labelled cells that scroll (readable over whole). */
	char text[101];
	for (int i = 0; i < 100; i++)
		text[i] = (char)('a' + i % 26);
	text[100] = '\0';
	attn_result r;
	result_of(&r, text, false);
	heat_label labels[100];
	heat_token_labels(labels, r.tokens, 100);
	float row_max[100];
	heat_src s = {attn_result_head(&r, 0, 1), labels, 2, {0}, false};
	scale_init(&s.sc, SCALE_ROW, &s.m, row_max);
	heat_geom g;
	heat_view hv = {99, 99, 0, 0};
	heat_layout(&g, 100, 2, 0, 0, 40, 20, CELLS_FIT, false, true);
	CHECKF(!g.compact && g.cell_w == 2 && g.vis_cols < 100, "fit: compact %d, cells %d wide",
	       g.compact, g.cell_w);
	heat_layout(&g, 100, 2, 0, 0, 40, 20, CELLS_COMPACT, false, true);
	CHECKF(g.compact && g.cx0 + g.ncols <= g.bar_x && g.nlines <= 17,
	       "compact: %d columns, %d lines", g.ncols, g.nlines);
	erase();
	heat_draw(col, &s, &g, &hv);
	CHECKF(strstr(line_at(g.tick_y, 0, 40), "99") != NULL, "the cursor's key number: '%s'",
	       line_at(g.tick_y, 0, 40));
	int q, k;
	CHECK(heat_hit(&g, &hv, 100, g.cells_y, g.cx0, &q, &k) && q == 0 && k == 0);
	/* Scrolling cells keep the cursor on screen. */
	heat_layout(&g, 100, 2, 0, 0, 40, 20, CELLS_SCROLL, false, true);
	heat_scroll(&hv, &g, 100);
	CHECK(!g.compact && hv.top == 100 - g.vis_rows && hv.left == 100 - g.vis_cols);
	result_free(&r);
}

int main(void)
{
	matrices();
	setlocale(LC_ALL, "C.UTF-8");
	FILE *out = fopen("/dev/null", "w"), *in = fopen("/dev/null", "r");
	SCREEN *scr = out && in ? newterm("xterm-256color", out, in) : NULL;
	if (!scr) {
		printf("no xterm-256color terminfo: the drawing tests are skipped\n");
		return test_summary("heatmap");
	}
	resize_term(24, 80);
	colors c;
	colors_init(&c, RAMP_VIRIDIS, false);
	CHECK(c.mode >= CM_256);
	draw_small(&c);
	draw_long(&c);
	colors_finish(&c);
	endwin();
	delscreen(scr);
	fclose(out);
	fclose(in);
	return test_summary("heatmap");
}

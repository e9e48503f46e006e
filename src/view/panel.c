/* The details panel beside the heatmap: the cursor's Query and Key, the
 * weight with its rank and score, the row's strongest keys, what the matrix
 * does on this text (pattern, role, statistics) and the model's predictions
 * at the Query's position. It describes whatever the map shows: a head, a
 * summary of heads, words, or a difference from a pinned map. */
#include "panel.h"
#include "attnview/i18n.h"

#include "attnview/vocab.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pen_vline(pen *p, style s, const char *fmt, va_list ap)
{
	if (p->y <= p->ymax) {
		char buf[256];
		vsnprintf(buf, sizeof buf, fmt, ap);
		put_str(p->y, p->x, p->w, s, buf);
	}
	p->y++;
}

void pen_line(pen *p, style s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pen_vline(p, s, fmt, ap);
	va_end(ap);
}

static void line(pen *p, style s, const char *fmt, ...) AV_PRINTF(3, 4);
static void line(pen *p, style s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pen_vline(p, s, fmt, ap);
	va_end(ap);
}

/* Chinese punctuation that does not start a line. */
static bool closing_mark(const char *c)
{
	static const char *const marks[] = {"，", "。", "、", "：", "；", "！", "？", "）", "”"};
	for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (strncmp(c, marks[i], strlen(marks[i])) == 0)
			return true;
	return false;
}

/* Punctuation that does not end a line. */
static bool opening_mark(const char *c)
{
	static const char *const marks[] = {"（", "“", "‘", "《", "「", "『", "【", "("};
	for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (strncmp(c, marks[i], strlen(marks[i])) == 0)
			return true;
	return false;
}

/* The start of the character before c (c > text, in a string we made). */
static const char *prev_char(const char *text, const char *c)
{
	do
		c--;
	while (c > text && ((unsigned char)*c & 0xc0) == 0x80);
	return c;
}

void pen_wrapped(pen *p, style s, const char *text)
{
	while (*text && p->y <= p->ymax) {
		const char *t = text, *brk = NULL, *prev = text;
		int w = 0, wbrk = 0;
		bool wide_after = false; /* a wide character after the last space */
		while (*t) {
			const char *c = t;
			int cw = cp_display_width((uint32_t)utf8_next(&t), NULL);
			if (w + cw > p->w) {
				t = c;
				break;
			}
			prev = c;
			w += cw;
			wide_after |= cw > 1;
			if (*c == ' ')
				brk = t, wbrk = w, wide_after = false;
		}
		if (*t == ' ') /* the line is full at a word's end */
			brk = t, wbrk = w, wide_after = false;
		/* After a space; where that wastes a third of the line, a line
		 * ending in Chinese (spaces only around numbers) breaks anywhere, a
		 * word is not cut. Never before a closing mark. */
		bool at_space = brk && (3 * (w - wbrk) < p->w || !wide_after);
		if (*t && !at_space && closing_mark(t) && prev > text) {
			t = prev;
			prev = prev_char(text, prev);
		}
		/* nor after an opening one: it goes down with what it opens */
		if (*t && !at_space && opening_mark(prev) && prev > text)
			t = prev;
		const char *end = *t && at_space ? brk : t;
		if (end == text) /* a character wider than the panel */
			break;
		char buf[512];
		snprintf(buf, sizeof buf, "%.*s", (int)(end - text), text);
		/* The panel's last line, and more to say: cut, it says so ("no
		 * role holds for most rows" alone reads whole). */
		if (p->y == p->ymax && *end) {
			int x = put_str(p->y, p->x, p->w - 1, s, buf);
			put_str(p->y++, x, 1, s, "…");
			return;
		}
		put_str(p->y++, p->x, p->w, s, buf);
		/* a line does not start with the space it was broken at */
		for (text = end; *text == ' ';)
			text++;
	}
}

static void wrapped(pen *p, style s, const char *text)
{
	pen_wrapped(p, s, text);
}

void sign_key(view *v, int y, int x, int w, const char *pos, const char *neg)
{
	const int end = x + w;
	x = put_str(y, x, end - x, ui_style(&v->col, UI_POSITIVE, A_BOLD), " ██");
	x = put_fmt(y, x, end - x, st(A_DIM, 0), " %s ", pos);
	x = put_str(y, x, end - x, ui_style(&v->col, UI_NEGATIVE, A_BOLD), "██");
	x = put_fmt(y, x, end - x, st(A_DIM, 0), " %s ", neg);
	put_str(y, x, end - x, st(A_DIM, 0), _("· small"));
}

/* "Query 2 明 U+660E", "Key   1 北京 (word: tokens 1-2)". */
static void label_line(view *v, pen *p, const char *what, int i, const heat_label *l)
{
	if (p->y <= p->ymax) {
		int x = put_fmt(p->y, p->x, p->w, st(A_BOLD, 0), "%s %d ", what, i);
		style s = l->unknown ? ui_style(&v->col, UI_UNKNOWN, A_BOLD | A_UNDERLINE)
				     : st(A_BOLD, 0);
		int start, end;
		if (l->text) {
			x = put_str_cut(p->y, x, p->w - (x - p->x), s, l->text);
			if (view_word_span(v, i, &start, &end))
				put_fmt_cut(p->y, x, p->w - (x - p->x), st(A_DIM, 0),
					    _(" tokens %d-%d"), start, end - 1);
		} else {
			x += put_glyph(p->y, x, l->cp, s);
			if (l->cp < 0x110000)
				put_fmt_cut(p->y, x, p->w - (x - p->x), st(A_DIM, 0), " U+%04X%s",
					    l->cp, l->unknown ? _(" unknown") : "");
			else
				put_str(p->y, x, p->w - (x - p->x), st(A_DIM, 0), _(" special"));
		}
	}
	p->y++;
}

static void cell_lines(view *v, pen *p, const heat_src *s)
{
	int q = v->hv.qrow, k = v->hv.kcol;
	label_line(v, p, _("Query"), q, &s->labels[q]);
	label_line(v, p, _("Key  "), k, &s->labels[k]);
	if (attn_masked(&s->m, q, k)) {
		line(p, plain(), _("weight masked (key after query)"));
		p->y += 2;
		return;
	}
	char wbuf[32], pbuf[32];
	float now, pinned;
	if (view_compare_cell(v, q, k, &now, &pinned)) {
		fmt_weight(wbuf, now);
		fmt_weight(pbuf, pinned);
		line(p, plain(), _("now    %s"), wbuf);
		line(p, plain(), _("pinned %s"), pbuf);
		line(p, st(A_BOLD, 0), _("difference %+.6f"), now - pinned);
		return;
	}
	int visible;
	int rank = row_rank(&s->m, q, k, &visible);
	fmt_weight(wbuf, attn_at(&s->m, q, k));
	bool contrib = view_map_kind(v) == SEL_CONTRIB;
	/* Under F11 the cell is a share of the row's contributions, not a
	 * weight: the weight A[i][j] is one of its two factors. */
	line(p, plain(), contrib ? _("share  %s of the row") : _("weight %s"), wbuf);
	line(p, plain(), _("rank   %d of %d in the row"), rank, visible);
	if (view_sel(v) == SEL_HEAD && !v->words && v->contrib && v->r.value_norms) {
		size_t n = (size_t)v->r.n, h = (size_t)v->layer * (size_t)v->r.heads + (size_t)v->head;
		/* Four decimals, or e-notation where those would read 0.0000
		 * beside a share that is not 0; the norm to four digits (the
		 * line fits a panel of 34 columns). */
		char abuf[32];
		float a = attn_weight(&v->r, v->layer, v->head, q, k);
		snprintf(abuf, sizeof abuf, a != 0 && fabsf(a) < 1e-4f ? "%.2e" : "%.4f",
			 (double)a);
		line(p, plain(), _("A[i][j] %s × |v_j W_O| %.4g"), abuf,
		     (double)v->r.value_norms[h * n + (size_t)k]);
	} else if (view_sel(v) == SEL_HEAD && !v->words) {
		float raw = attn_score(&v->r, v->layer, v->head, q, k);
		line(p, plain(), "q·k %.4f  /√%d = %.4f", raw, v->head_dim,
		     raw / sqrtf((float)v->head_dim));
	} else {
		p->y++;
	}
}

/* The keys of row q with the largest |difference|, largest first. */
static int top_by_size(const attn_matrix *a, int q, int *top)
{
	int ntop = 0;
	for (int j = 0; j < a->n; j++) {
		if (attn_masked(a, q, j))
			continue;
		float d = fabsf(attn_at(a, q, j));
		int pos = ntop < VIEW_TOPK ? ntop++ : VIEW_TOPK;
		if (pos == VIEW_TOPK) {
			if (!(d > fabsf(attn_at(a, q, top[VIEW_TOPK - 1]))))
				continue;
			pos = VIEW_TOPK - 1;
		}
		for (; pos > 0 && fabsf(attn_at(a, q, top[pos - 1])) < d; pos--)
			top[pos] = top[pos - 1];
		top[pos] = j;
	}
	return ntop;
}

static void top_key_lines(view *v, pen *p, const heat_src *s)
{
	int q = v->hv.qrow, k = v->hv.kcol;
	/* A difference: the largest changes either way, with their signs. */
	if (s->diverging)
		line(p, st(A_BOLD, 0), _("Top keys of row %d by |difference|"), q);
	else
		line(p, st(A_BOLD, 0), _("Top keys of row %d"), q);
	int top[VIEW_TOPK];
	int ntop = s->diverging ? top_by_size(&s->m, q, top)
				: row_top_keys(&s->m, q, VIEW_TOPK, top);
	/* The weights in one column, after the widest label shown (words
	 * differ). */
	int colw = 2;
	for (int i = 0; i < ntop && i <= p->ymax - p->y; i++) {
		int w = s->labels[top[i]].width;
		colw = w > colw ? (w < 8 ? w : 8) : colw;
	}
	for (int i = 0; i < ntop && p->y <= p->ymax; i++, p->y++) {
		int xx = put_fmt(p->y, p->x, p->w, plain(), " %*d ", view_map_geom(v)->heat.posw, top[i]);
		const heat_label *l = &s->labels[top[i]];
		int lw = l->width < 8 ? l->width : 8;
		style ls = top[i] == k ? st(A_BOLD, 0) : plain();
		if (l->text) /* a longer word ends in "…" */
			put_str_cut(p->y, xx, lw, ls, l->text);
		else
			put_glyph(p->y, xx, l->cp, ls);
		char wbuf[32];
		float w = attn_at(&s->m, q, top[i]);
		if (s->diverging)
			snprintf(wbuf, sizeof wbuf, "%+.6f", w);
		else
			fmt_weight(wbuf, w);
		int wx = xx + colw + 1;
		put_str(p->y, wx, p->w - (wx - p->x), ls, wbuf);
	}
}

const head_stats *panel_map_stats(view *v, const heat_src *s)
{
	if (v->hs_gen != view_matrix_gen(v)) {
		head_stats_compute(&v->hs, &s->m);
		/* Roles compare tokens: characters, not words. */
		if (!v->words && !s->diverging)
			head_roles(&v->roles, &s->m, v->r.tokens);
		v->hs_gen = view_matrix_gen(v);
	}
	return &v->hs;
}

/* At most maxw columns of text, whole characters, "…" where cut (a long
 * run of Chinese is one word). */
static void fit_word(const char *text, int maxw, char *out, size_t size)
{
	size_t at = 0;
	int w = 0;
	for (const char *t = text; *t;) {
		const char *c = t;
		int cw = cp_display_width((uint32_t)utf8_next(&t), NULL);
		size_t len = (size_t)(t - c);
		if (w + cw > maxw - 1 && str_width(c) > maxw - w) {
			snprintf(out + at, size - at, "…");
			return;
		}
		if (at + len + 1 > size)
			break;
		memcpy(out + at, c, len);
		at += len;
		w += cw;
	}
	out[at] = 0;
}

void panel_words_pattern(view *v, const heat_src *s, char *out, size_t size)
{
	const head_stats *hs = panel_map_stats(v, s);
	const char *p = head_pattern(hs);
	bool column = strcmp(p, "column") == 0, first = strcmp(p, "first") == 0;
	if (column && hs->column < s->m.n && s->labels[hs->column].text) {
		char word[96];
		fit_word(s->labels[hs->column].text, 24, word, sizeof word);
		snprintf(out, size, _("column on “%s” (%d of %d rows)"), word, hs->column_rows,
			 hs->n);
	} else if (first) {
		snprintf(out, size, _("first (%d of %d rows)"), hs->column_rows, hs->n);
	} else {
		snprintf(out, size, "%s", _(p));
	}
}

/* What the matrix does on this text. */
static void stats_lines(view *v, pen *p, const heat_src *s)
{
	const head_stats *hs = panel_map_stats(v, s);
	if (s->diverging) {
		line(p, st(A_BOLD, 0), _("Difference from the pinned map"));
		line(p, plain(), _("largest |difference| %.4f"), s->sc.max);
		return;
	}
	char where[96];
	sel_where(v, true, where, sizeof where);
	if (!v->words) {
		char label[192], says[512];
		role_title(&v->roles, true, label, sizeof label);
		/* Wrapped: a label of two roles with their scores is longer
		 * than a narrow panel, and a cut one would hide a score. */
		snprintf(says, sizeof says, _("%s: %s"), where, label);
		wrapped(p, st(A_BOLD, 0), says);
		/* The label's evidence in words comes right after it, however
		 * short the panel: a student checks the label by it. */
		role_sentence(&v->roles, true, says, sizeof says);
		wrapped(p, plain(), says);
		/* A rollout's diagonal is the residual's half at every layer
		 * (attnview(1), AGGREGATES AND ROLLOUT), whatever the heads do. */
		const role_scores *r = &v->roles;
		if (view_sel(v) == SEL_ROLLOUT &&
		    (r->role == ROLE_SELF || (r->verdict == ROLE_TWO && r->second == ROLE_SELF))) {
			snprintf(
			    says, sizeof says,
			    _("(a rollout keeps 1/%d of each row on its own character or more: "
			      "the residual's half at each layer, not the heads)"),
			    1 << (v->layer + 1));
			wrapped(p, st(A_DIM, 0), says);
		}
		/* The runner-up where it leaves room for the statistics and
		 * the predictions below (5 + 1 + 6 lines). */
		role_runner_up(&v->roles, true, says, sizeof says);
		if (says[0] && p->ymax - p->y >= 15)
			wrapped(p, st(A_DIM, 0), says);
	} else {
		char pattern[192], says[256];
		panel_words_pattern(v, s, pattern, sizeof pattern);
		snprintf(says, sizeof says, _("%s, words: %s"), where, pattern);
		wrapped(p, st(A_BOLD, 0), says);
	}
	line(p, plain(), _("entropy %.3f nats (max %.3f)"), hs->entropy, hs->max_entropy);
	line(p, plain(), _("mean distance %.2f %s"), hs->distance,
	     v->words ? _("words") : _("positions"));
	/* Every row's largest weight, however spread the row: not the
	 * label's counts, which leave spread rows out (attnview(1), the details
	 * panel). Left out where it would leave the predictions under four
	 * lines (their heading and three). */
	if (p->ymax - p->y < 2 + 1 + 4)
		return;
	line(p, plain(), _("every row's max: self %.0f%%"), 100 * hs->self);
	line(p, plain(), _("  previous %.0f%%  next %.0f%%"), 100 * hs->prev, 100 * hs->next);
}

static void prediction_lines(view *v, pen *p)
{
	int q = view_query_token(v, v->hv.qrow);
	/* A masked model predicts position q with q alone replaced by the mask;
	 * a causal one predicts the character after q. */
	if (v->m->cfg.objective == OBJ_CAUSAL)
		line(p, st(A_BOLD, 0), _("Predicted after %d"), q);
	else
		line(p, st(A_BOLD, 0), _("Predicted at %d (masked)"), q);
	if (q >= v->r.n || v->pstate[q] != PRED_HAVE) {
		line(p, plain(), _(" computing..."));
		return;
	}
	for (int i = 0; i < VIEW_TOPK && p->y <= p->ymax; i++, p->y++) {
		int32_t id = v->pids[(size_t)q * VIEW_TOPK + (size_t)i];
		float pr = v->pps[(size_t)q * VIEW_TOPK + (size_t)i];
		if (id < 0 || (uint32_t)id >= v->m->vocab.size)
			break;
		int xx = put_str(p->y, p->x, p->w, plain(), " ");
		put_glyph(p->y, xx, v->m->vocab.cps[id], st(A_BOLD, 0));
		put_fmt(p->y, xx + 3, p->w - 4, plain(), "%5.1f%%", 100 * pr);
	}
}

/* Their mean in their place takes back the rise: ablation_mean_suffices. */
static const char *mean_suffices_text(int n)
{
	return ngettext("on this text the mean takes back the rise: the model needs what the "
			"head writes on average, not where it looks",
			"on this text the mean takes back the rise: the model needs what the "
			"heads write on average, not where they look",
			n);
}

/* The loss with the n heads mean-ablated (model_text_loss_mean), or that
 * it is on its way. */
static void mean_line(view *v, pen *p, style s, int n, double loss)
{
	if (v->loss.mean_failed) {
		line(
		    p, s,
		    ngettext("loss with its mean output: %s", "loss with their mean output: %s", n),
		    v->loss.why.msg);
		return;
	}
	if (!v->loss.mean_valid) {
		line(p, s,
		     ngettext("loss with its mean output: computing...",
			      "loss with their mean output: computing...", n));
		return;
	}
	line(p, s,
	     ngettext("loss with its mean output: %.3f", "loss with their mean output: %.3f", n),
	     loss);
}

/* With heads switched off: which, the loss on the text with every head, with
 * them zeroed and with their mean output in their place. */
void ablation_lines(view *v, pen *p)
{
	if (!v->nablated)
		return;
	p->y++;
	line(p, st(A_BOLD, 0), ngettext("%d head off (Alt-A)", "%d heads off (Alt-A)", v->nablated),
	     v->nablated);
	if (v->loss.failed && v->loss.seq == v->res_seq) {
		line(p, plain(), _("loss: %s"), v->loss.why.msg);
		return;
	}
	if (!v->loss.valid || v->loss.seq != v->res_seq) {
		line(p, plain(), _("loss: computing..."));
		return;
	}
	line(p, plain(), _("loss %.3f → %.3f nats/char"), v->loss.before, v->loss.after);
	if (v->loss.task_positions >= 0) {
		/* A lab model: the loss that means something is its task's,
		 * and the mean-ablated loss is given there only. */
		line(p, accent(v, A_BOLD),
		     ngettext("at its task's %d position:", "at its task's %d positions:",
			      v->loss.task_positions),
		     v->loss.task_positions);
		line(p, accent(v, A_BOLD), _("loss %.3f → %.3f nats/char"), v->loss.task_before,
		     v->loss.task_after);
		mean_line(v, p, accent(v, A_BOLD), v->nablated, v->loss.task_mean);
		if (v->loss.mean_valid &&
		    ablation_mean_suffices(v->loss.task_before, v->loss.task_after,
					   v->loss.task_mean))
			wrapped(p, st(A_DIM, 0), mean_suffices_text(v->nablated));
		wrapped(p, st(A_DIM, 0),
			_("a lab model learns only where its task decides and may be sure of a "
			  "wrong letter anywhere else"));
		return;
	}
	mean_line(v, p, plain(), v->nablated, v->loss.mean);
	if (v->loss.mean_valid &&
	    ablation_mean_suffices(v->loss.before, v->loss.after, v->loss.mean))
		wrapped(p, st(A_DIM, 0), mean_suffices_text(v->nablated));
	/* Lower without them: what that means, on one text. */
	if (v->loss.after < v->loss.before) {
		char says[512];
		snprintf(says, sizeof says,
			 _("lower without them on one text of %d characters: a head can hurt "
			   "here and help on most texts (sink heads often do): try others"),
			 v->loss.positions);
		wrapped(p, st(A_DIM, 0), says);
	}
}

void panel_draw(view *v)
{
	const map_geom *g = view_map_geom(v);
	if (g->panel_w == 0)
		return;
	pen p = {g->panel_x, g->panel_w, g->heat.tick_y, LINES - 2};
	for (int yy = p.y; yy <= p.ymax; yy++)
		put_str(yy, g->map_w, 1, st(A_DIM, 0), "│");
	heat_src s;
	if (!view_matrix(v, &s) || v->hv.qrow >= s.m.n || v->hv.kcol >= s.m.n)
		return;
	if (v->page != PAGE_DETAILS) {
		const panel_page *pg = panel_pages[v->page];
		pg->draw(v, v->pages[v->page], &p, &s);
		if (pg->ablation)
			ablation_lines(v, &p);
		return;
	}
	cell_lines(v, &p, &s);
	p.y++;
	top_key_lines(v, &p, &s);
	p.y++;
	stats_lines(v, &p, &s);
	/* Heads switched off: what that did to the loss comes before the
	 * predictions, which a short panel cuts first (at 80x24 the loss was
	 * below the screen). */
	if (v->nablated) {
		ablation_lines(v, &p);
		p.y++;
		prediction_lines(v, &p);
		return;
	}
	p.y++;
	prediction_lines(v, &p);
}

/* ---- the pages ------------------------------------------------------------- */

const panel_page *const panel_pages[PAGE_N] = {
#define PAGE_ROW_(id, ops) [PAGE_##id] = &ops,
    PANEL_PAGES(PAGE_ROW_)
#undef PAGE_ROW_
};

bool pages_init(view *v, av_error *err)
{
	for (int i = 0; i < PAGE_N; i++) {
		const panel_page *pg = panel_pages[i];
		v->pages[i] = calloc(1, pg->state_size);
		if (!v->pages[i] || (pg->init && !pg->init(v, v->pages[i])))
			return av_fail(err, _("out of memory starting the view"));
	}
	return true;
}

void pages_finish(view *v)
{
	for (int i = 0; i < PAGE_N; i++) {
		if (v->pages[i] && panel_pages[i]->finish)
			panel_pages[i]->finish(v->pages[i]);
		free(v->pages[i]);
		v->pages[i] = NULL;
	}
}

void pages_request(view *v)
{
	if (v->page != PAGE_DETAILS)
		panel_pages[v->page]->request(v, v->pages[v->page]);
}

bool pages_take(view *v, worker_job_result *j)
{
	for (int i = 0; i < PAGE_N; i++)
		if (panel_pages[i]->job == j->job.kind) {
			panel_pages[i]->take(v, v->pages[i], j);
			return true;
		}
	return false;
}

void pages_new_result(view *v)
{
	for (int i = 0; i < PAGE_N; i++)
		if (!panel_pages[i]->per_model) {
			page_job *pj = v->pages[i];
			pj->valid = pj->asked = false;
		}
}

void pages_new_model(view *v)
{
	for (int i = 0; i < PAGE_N; i++) {
		page_job *pj = v->pages[i];
		pj->valid = pj->asked = false;
		if (panel_pages[i]->model_changed)
			panel_pages[i]->model_changed(v, v->pages[i]);
	}
}

bool pages_waiting(const view *v)
{
	for (int i = 0; i < PAGE_N; i++)
		if (((const page_job *)v->pages[i])->asked)
			return true;
	return false;
}

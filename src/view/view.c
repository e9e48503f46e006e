/* The interactive view. The interface thread owns the terminal: it polls the
 * keyboard, the worker's wake-up pipe and a signal pipe, edits the text,
 * posts it to the worker and draws whatever result is the latest. It never
 * runs the model; the worker never touches curses.
 *
 * Screen layout (lines from the top):
 *   0  input line        "text> ..."
 *   1  info line         token count, cut-off notice, errors
 *   2  head line         layer/head/objective, colour legend
 *   3  key positions     every fifth Key index
 *   4  key labels        one token per cell
 *   5… Query rows        marker, position, token, then the cells
 *   last                 status line
 * with the details panel to the right of the heatmap when there is room. */
#define NCURSES_WIDECHAR 1

#include "view.h"

#include "attnview/colormap.h"
#include "lineedit.h"
#include "attnview/tokenizer.h"
#include "attnview/vocab.h"
#include "worker.h"

#include <curses.h>

#include "keys.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

/* ------------------------------------------------------------------------ */
/* Terminal restoration on signals. The handlers only touch what is
 * async-signal-safe: write(2), tcsetattr(3), sigaction, raise. */

static volatile sig_atomic_t got_signal;
static int sig_pipe[2] = {-1, -1};
static struct termios saved_tio;
static bool saved_tio_ok;
static char emergency_seq[512]; /* leave alternate screen, show cursor, modes off */
static size_t emergency_len;
static struct sigaction old_winch;

static const int term_signals[] = {SIGINT, SIGTERM, SIGHUP};
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NTERM  (sizeof term_signals / sizeof term_signals[0])
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction old_term[NTERM], old_fatal[NFATAL];

/* Bracketed paste off, mouse reporting off (all the variants ncurses may have
 * turned on). Written on every exit path, before endwin. */
static const char modes_off[] = "\033[?2004l\033[?1006l\033[?1002l\033[?1000l";

static void emergency_restore(void)
{
	ssize_t r = write(STDOUT_FILENO, emergency_seq, emergency_len);
	(void)r;
	if (saved_tio_ok)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void on_fatal_signal(int sig)
{
	/* Installed with SA_RESETHAND: after restoring the terminal, the
	 * re-raised signal (or the re-executed fault) takes its default action
	 * and the core dump or the shell's message still happens. */
	emergency_restore();
	raise(sig);
}

static void on_term_signal(int sig)
{
	if (got_signal) {
		/* Second signal: the main loop did not get to it; do not wait. */
		emergency_restore();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	got_signal = sig;
	char b = 's';
	ssize_t r = write(sig_pipe[1], &b, 1);
	(void)r;
}

static void on_winch(int sig)
{
	/* ncurses's own handler (if any) notes the new size for KEY_RESIZE; the
	 * byte wakes poll() even if the signal came just before it blocked. */
	if (old_winch.sa_handler != SIG_DFL && old_winch.sa_handler != SIG_IGN &&
	    !(old_winch.sa_flags & SA_SIGINFO))
		old_winch.sa_handler(sig);
	char b = 'w';
	ssize_t r = write(sig_pipe[1], &b, 1);
	(void)r;
}

static void append_cap(const char *cap)
{
	char *s = tigetstr((char *)cap);
	if (!s || s == (char *)-1)
		return;
	size_t n = strlen(s);
	if (emergency_len + n < sizeof emergency_seq) {
		memcpy(emergency_seq + emergency_len, s, n);
		emergency_len += n;
	}
}

static bool install_signals(av_error *err)
{
	if (pipe(sig_pipe) != 0)
		return av_fail_errno(err, errno, "cannot create a pipe for signals");
	for (int i = 0; i < 2; i++) {
		int fl = fcntl(sig_pipe[i], F_GETFL);
		if (fl < 0 || fcntl(sig_pipe[i], F_SETFL, fl | O_NONBLOCK) < 0 ||
		    fcntl(sig_pipe[i], F_SETFD, FD_CLOEXEC) < 0)
			return av_fail_errno(err, errno, "cannot set up the signal pipe");
	}
	/* What emergency_restore writes, prepared now while it is safe. */
	emergency_len = 0;
	memcpy(emergency_seq, modes_off, sizeof modes_off - 1);
	emergency_len = sizeof modes_off - 1;
	append_cap("sgr0");
	append_cap("cnorm");
	append_cap("rmcup");

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_term_signal;
	for (size_t i = 0; i < NTERM; i++)
		if (sigaction(term_signals[i], &sa, &old_term[i]) != 0)
			return av_fail_errno(err, errno, "cannot install a signal handler");
	sa.sa_handler = on_fatal_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (size_t i = 0; i < NFATAL; i++)
		if (sigaction(fatal_signals[i], &sa, &old_fatal[i]) != 0)
			return av_fail_errno(err, errno, "cannot install a signal handler");
	sa.sa_handler = on_winch;
	sa.sa_flags = 0;
	if (sigaction(SIGWINCH, &sa, &old_winch) != 0)
		return av_fail_errno(err, errno, "cannot install a signal handler");
	return true;
}

static void remove_signals(void)
{
	for (size_t i = 0; i < NTERM; i++)
		sigaction(term_signals[i], &old_term[i], NULL);
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &old_fatal[i], NULL);
	sigaction(SIGWINCH, &old_winch, NULL);
	for (int i = 0; i < 2; i++) {
		if (sig_pipe[i] >= 0)
			close(sig_pipe[i]);
		sig_pipe[i] = -1;
	}
}

/* ------------------------------------------------------------------------ */
/* State. */

typedef enum focus { F_INPUT, F_MAP, F_OVERVIEW, F_HELP } focus;

typedef struct style {
	attr_t a;
	short pair;
} style;

/* Colour pairs: the ramp levels 1..levels, then these, counted after it. */
enum { P_MASKED = 1, P_UNKNOWN, P_CUT, P_ACCENT, P_NPAIRS };

typedef struct geom {
	bool too_small;
	int field_x, field_w; /* input field */
	int map_w;	      /* columns for labels + cells */
	int panel_x, panel_w; /* panel_w 0: no panel */
	int tick_y, keys_y, cells_y;
	int posw, cx0, cell_w, vis_rows, vis_cols;
	/* overview */
	bool ov_fits;
	int ov_y0, ov_bw, ov_bh, ov_sw, ov_sh, ov_gap;
} geom;

typedef struct head_stats {
	bool valid;
	uint64_t seq;
	int layer, head;
	double entropy, max_entropy, distance;
	double self, prev, next; /* share of rows whose maximum is there */
} head_stats;

typedef struct help_line {
	char names[64];
	const char *text;
	bool heading;
} help_line;

enum { PRED_NONE = 0, PRED_HAVE = 2 };

typedef struct view {
	const model *m;
	worker *w;
	int context, head_dim;

	/* the text */
	lineedit le;
	cp_buf cps;
	token *toks; /* [context] */
	int ntok, ntot;
	size_t cut_cp; /* input-line index from which the text is cut off */
	uint64_t seq;  /* of the latest text */
	bool pending;  /* latest text posted, no result yet */
	double post_ms;
	bool busy_shown;

	/* the result on screen */
	bool have;
	uint64_t res_seq;
	attn_result r;
	double res_ms;
	char error[sizeof(av_error)];
	head_stats hs;
	uint8_t *pstate; /* [context] */
	int32_t *pids;	 /* [context][VIEW_TOPK] */
	float *pps;
	int pred_req;	 /* row of the outstanding prediction request, -1 none */
	double pred_due; /* when to ask for the first predictions of a result, 0 none */

	/* navigation */
	int layer, head, qrow, kcol, top, left, ov_sel;
	bool values;
	focus focus, help_return, ov_return;
	int help_scroll;

	/* drawing */
	colormap cm;
	cm_mode mode;
	bool color;
	geom g;
	char notice[256];
	help_line *help;
	int nhelp;
	int help_keys_w; /* widest line of key names: the description column */

	/* paste in progress */
	bool pasting;
	cp_buf paste;

	bool quit;

	/* hidden benchmark mode: key time -> echoed -> result drawn */
	FILE *bench;
	uint64_t bench_seq;
	double bench_key, bench_echo;
	bool bench_echo_pending, bench_done_pending, bench_ready;
} view;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void set_notice(view *v, const char *fmt, ...) AV_PRINTF(2, 3);
static void set_notice(view *v, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(v->notice, sizeof v->notice, fmt, ap);
	va_end(ap);
}

static int nlayers(const view *v)
{
	return (int)v->m->cfg.layers;
}

static int nheads(const view *v)
{
	return (int)v->m->cfg.heads;
}

/* ------------------------------------------------------------------------ */
/* The text: tokenize, find the cut, post. */

/* Line index of the first codepoint beyond the model's context. NFC may join
 * codepoints, so count tokens of prefixes (binary search; only runs when the
 * text is too long). */
static size_t find_cut(view *v, const char *s, const size_t *off)
{
	size_t lo = 0, hi = v->le.n; /* count(lo) <= ctx < count(hi) */
	cp_buf tmp = {0};
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		tmp.n = 0;
		if (!tokenize_text(s, off[mid], "the input line", &tmp, NULL, NULL))
			break;
		if ((int)tmp.n <= v->context)
			lo = mid;
		else
			hi = mid;
	}
	cp_buf_free(&tmp);
	return lo;
}

static void text_changed(view *v)
{
	v->seq++;
	v->ntok = v->ntot = 0;
	v->cut_cp = v->le.n;
	v->notice[0] = '\0';
	size_t len;
	char *s = lineedit_utf8(&v->le, &len);
	size_t *off = malloc((v->le.n + 1) * sizeof *off);
	if (!s || !off) {
		set_notice(v, "out of memory: cannot tokenize the text");
		free(s);
		free(off);
		return;
	}
	size_t b = 0;
	for (size_t i = 0; i < v->le.n; i++) {
		off[i] = b;
		char tmp[4];
		b += cp_to_utf8(v->le.cps[i], tmp);
	}
	off[v->le.n] = b;
	v->cps.n = 0;
	av_error err;
	if (!tokenize_text(s, len, "the input line", &v->cps, NULL, &err)) {
		set_notice(v, "%s", err.msg);
	} else {
		v->ntot = (int)v->cps.n;
		v->ntok = v->ntot < v->context ? v->ntot : v->context;
		vocab_tokenize(&v->m->vocab, v->cps.v, (size_t)v->ntok, v->toks);
		if (v->ntot > v->context)
			v->cut_cp = find_cut(v, s, off);
	}
	free(s);
	free(off);

	v->busy_shown = false;
	if (v->ntok == 0) {
		/* Nothing to compute: the map empties now, and whatever the worker
		 * still returns is for an older sequence number and dropped. */
		v->pending = false;
		if (v->have)
			attn_result_free(&v->r);
		v->have = false;
		v->qrow = v->kcol = v->top = v->left = 0;
		return;
	}
	if (!worker_post_text(v->w, v->toks, v->ntok, v->seq, &err)) {
		set_notice(v, "%s", err.msg);
		return;
	}
	v->pending = true;
	v->post_ms = now_ms();
}

/* ------------------------------------------------------------------------ */
/* Results. */

static float att_at(const view *v, int q, int k)
{
	int n = v->r.n;
	return v->r.att[(((size_t)v->layer * (size_t)v->r.heads + (size_t)v->head) * (size_t)n +
			 (size_t)q) *
			    (size_t)n +
			(size_t)k];
}

static float score_at(const view *v, int q, int k)
{
	int n = v->r.n;
	return v->r.scores[(((size_t)v->layer * (size_t)v->r.heads + (size_t)v->head) * (size_t)n +
			    (size_t)q) *
			       (size_t)n +
			   (size_t)k];
}

static bool masked_at(const view *v, int q, int k)
{
	return isnan(score_at(v, q, k));
}

static void clamp_cursor(view *v)
{
	int n = v->have ? v->r.n : 0;
	if (v->qrow >= n)
		v->qrow = n - 1;
	if (v->kcol >= n)
		v->kcol = n - 1;
	if (v->qrow < 0)
		v->qrow = 0;
	if (v->kcol < 0)
		v->kcol = 0;
}

static void request_pred(view *v)
{
	if (!v->have || v->qrow >= v->r.n || v->pstate[v->qrow] == PRED_HAVE ||
	    v->pred_req == v->qrow)
		return;
	worker_post_predict(v->w, v->res_seq, v->qrow, VIEW_TOPK);
	v->pred_req = v->qrow;
}

static void take_results(view *v)
{
	worker_drain(v->w);
	worker_attn a;
	if (worker_take_attn(v->w, &a)) {
		if (a.seq != v->seq) {
			if (a.ok)
				attn_result_free(&a.r);
		} else {
			v->pending = false;
			v->busy_shown = false;
			if (v->have)
				attn_result_free(&v->r);
			v->have = a.ok;
			if (a.ok) {
				v->r = a.r;
				v->res_seq = a.seq;
				v->res_ms = a.ms;
				v->error[0] = '\0';
				memset(v->pstate, 0, (size_t)v->context);
				v->pred_req = -1;
				v->hs.valid = false;
				clamp_cursor(v);
				/* Predictions are a second forward pass: start it a
				 * moment later, so that while someone types it does
				 * not delay the next keystroke's heatmap. */
				v->pred_due = now_ms() + VIEW_PRED_DELAY_MS;
			} else {
				snprintf(v->error, sizeof v->error, "%s", a.err.msg);
			}
		}
	}
	worker_pred p;
	if (worker_take_pred(v->w, &p) && v->have && p.seq == v->res_seq && p.pos < v->r.n) {
		memcpy(v->pids + (size_t)p.pos * VIEW_TOPK, p.ids, sizeof(int32_t) * VIEW_TOPK);
		memcpy(v->pps + (size_t)p.pos * VIEW_TOPK, p.probs, sizeof(float) * VIEW_TOPK);
		v->pstate[p.pos] = PRED_HAVE;
		if (v->pred_req == p.pos)
			v->pred_req = -1;
		request_pred(v);
	}
}

/* Entropy of each row (nats), mean |q - k| under the row's distribution, and
 * where each row's maximum falls, averaged over the rows. Masked keys have
 * weight 0 and add nothing. */
static const head_stats *get_stats(view *v)
{
	head_stats *s = &v->hs;
	if (s->valid && s->seq == v->res_seq && s->layer == v->layer && s->head == v->head)
		return s;
	memset(s, 0, sizeof *s);
	int n = v->r.n;
	double ent = 0, maxent = 0, dist = 0;
	int self = 0, prev = 0, next = 0;
	for (int q = 0; q < n; q++) {
		int best = -1, allowed = 0;
		float bw = -1;
		for (int k = 0; k < n; k++) {
			if (masked_at(v, q, k))
				continue;
			allowed++;
			double p = att_at(v, q, k);
			if (p > 0)
				ent -= p * log(p);
			dist += p * abs(q - k);
			if (att_at(v, q, k) > bw) {
				bw = att_at(v, q, k);
				best = k;
			}
		}
		maxent += allowed > 0 ? log((double)allowed) : 0;
		self += best == q;
		prev += best == q - 1;
		next += best == q + 1;
	}
	if (n > 0) {
		s->entropy = ent / n;
		s->max_entropy = maxent / n;
		s->distance = dist / n;
		s->self = (double)self / n;
		s->prev = (double)prev / n;
		s->next = (double)next / n;
	}
	s->valid = true;
	s->seq = v->res_seq;
	s->layer = v->layer;
	s->head = v->head;
	return s;
}

/* ------------------------------------------------------------------------ */
/* Drawing primitives. Every character is placed at a column we computed, so
 * the layout never depends on the terminal agreeing with our widths for the
 * characters before it. */

static style st(attr_t a, short pair)
{
	style s = {a, pair};
	return s;
}

static style plain(void)
{
	return st(A_NORMAL, 0);
}

static style accent(const view *v, attr_t a)
{
	return v->color ? st(a, (short)(v->cm.levels + P_ACCENT)) : st(a | A_BOLD, 0);
}

static void put_wc(int y, int x, const wchar_t *wc, style s)
{
	cchar_t cc;
	if (setcchar(&cc, wc, s.a, s.pair, NULL) == OK)
		mvadd_wch(y, x, &cc);
}

static int utf8_next(const char **p)
{
	const unsigned char *s = (const unsigned char *)*p;
	uint32_t c = s[0];
	int len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
	if (len > 1) {
		c &= 0x3fu >> (len - 1);
		for (int i = 1; i < len; i++) {
			if ((s[i] & 0xc0) != 0x80) {
				*p += i;
				return 0xfffd;
			}
			c = (c << 6) | (s[i] & 0x3fu);
		}
	}
	*p += len;
	return (int)c;
}

/* Text (UTF-8) from column x, at most maxw columns; returns the end column. */
static int put_str(int y, int x, int maxw, style s, const char *str)
{
	int end = x + maxw;
	while (*str) {
		uint32_t cp = (uint32_t)utf8_next(&str);
		int w = cp_display_width(cp, NULL);
		if (x + w > end)
			break;
		wchar_t wc[2] = {(wchar_t)cp, 0};
		put_wc(y, x, wc, s);
		x += w;
	}
	return x;
}

static int put_fmt(int y, int x, int maxw, style s, const char *fmt, ...) AV_PRINTF(5, 6);
static int put_fmt(int y, int x, int maxw, style s, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return put_str(y, x, maxw, s, buf);
}

static void fill(int y, int x, int w, style s)
{
	static const wchar_t sp[2] = {L' ', 0};
	for (int i = 0; i < w; i++)
		put_wc(y, x + i, sp, s);
}

/* The glyph of a codepoint as attnview shows tokens (cp_glyph): one cell
 * with its combining marks, or a short ASCII stand-in. Returns its width. */
static int put_glyph(int y, int x, uint32_t cp, style s)
{
	char g[32];
	cp_glyph(cp, g);
	const char *p = g;
	wchar_t wc[CCHARW_MAX + 1];
	int n = 0;
	while (*p && n < CCHARW_MAX)
		wc[n++] = (wchar_t)utf8_next(&p);
	wc[n] = 0;
	bool ph = false;
	int w = cp_display_width(cp, &ph);
	/* A base and its marks form one cell; anything else (the <unk>-style
	 * names of special tokens) is drawn character by character. */
	bool one = n == 1 || (ph && n == 2);
	if (one) {
		put_wc(y, x, wc, s);
		return w;
	}
	return put_str(y, x, 8, s, g) - x;
}

static style token_style(const view *v, const token *t, attr_t a)
{
	if (t->unknown)
		return v->color ? st(a | A_UNDERLINE, (short)(v->cm.levels + P_UNKNOWN))
				: st(a | A_UNDERLINE, 0);
	return st(a, 0);
}

/* A weight as the panel prints it: six decimals, or three significant
 * digits in scientific notation when six decimals would show only zeros. */
static void fmt_weight(char out[32], float w)
{
	if (w != 0 && fabsf(w) < 0.001f)
		snprintf(out, 32, "%.3e", w);
	else
		snprintf(out, 32, "%.6f", w);
}

/* A weight as the cells print it: ".123", "1.00". */
static void fmt_cell_value(char out[8], float w)
{
	if (w >= 0.9995f)
		snprintf(out, 8, "1.00");
	else
		snprintf(out, 8, ".%03d", (int)lroundf(w * 1000.0f));
}

/* ------------------------------------------------------------------------ */
/* Layout. */

static int digits(int n)
{
	int d = 1;
	while (n >= 10) {
		n /= 10;
		d++;
	}
	return d;
}

static void layout(view *v)
{
	geom *g = &v->g;
	int lines = LINES, cols = COLS;
	memset(g, 0, sizeof *g);
	g->too_small = cols < VIEW_MIN_COLS || lines < VIEW_MIN_LINES;
	g->field_x = 6; /* "text> " */
	g->field_w = cols - g->field_x;
	g->panel_w = VIEW_PANEL_W;
	g->map_w = cols - g->panel_w - 1;
	if (g->map_w < VIEW_MIN_MAP_W) {
		g->panel_w = 0;
		g->map_w = cols;
	}
	g->panel_x = g->map_w + 1;
	g->tick_y = 3;
	g->keys_y = 4;
	g->cells_y = 5;
	int n = v->have ? v->r.n : 0;
	g->posw = digits(n > 0 ? n - 1 : 0);
	if (g->posw < 2)
		g->posw = 2;
	g->cx0 = 1 + g->posw + 1 + 2 + 1; /* marker, position, space, glyph, space */
	g->cell_w = v->values ? VIEW_VALUE_CELL_W : VIEW_CELL_W;
	g->vis_rows = lines - 1 - g->cells_y;
	g->vis_cols = (g->map_w - g->cx0) / g->cell_w;
	if (g->vis_rows < 1)
		g->vis_rows = 1;
	if (g->vis_cols < 1)
		g->vis_cols = 1;

	/* Keep the cursor in view; labels stay put while the cells scroll. */
	if (v->qrow < v->top)
		v->top = v->qrow;
	if (v->qrow >= v->top + g->vis_rows)
		v->top = v->qrow - g->vis_rows + 1;
	if (v->top > (n > g->vis_rows ? n - g->vis_rows : 0))
		v->top = n > g->vis_rows ? n - g->vis_rows : 0;
	if (v->kcol < v->left)
		v->left = v->kcol;
	if (v->kcol >= v->left + g->vis_cols)
		v->left = v->kcol - g->vis_cols + 1;
	if (v->left > (n > g->vis_cols ? n - g->vis_cols : 0))
		v->left = n > g->vis_cols ? n - g->vis_cols : 0;
	if (v->top < 0)
		v->top = 0;
	if (v->left < 0)
		v->left = 0;

	/* Overview: a grid of layers x heads, each box a title line and a small
	 * heatmap of sh x sw samples, two columns per sample when there is room
	 * (terminal cells are about twice as tall as wide). */
	int L = nlayers(v), H = nheads(v);
	g->ov_y0 = 3;
	g->ov_gap = 2;
	int avail_h = lines - 1 - g->ov_y0;
	g->ov_bh = avail_h / L;
	g->ov_bw = (cols - 1) / H - g->ov_gap;
	g->ov_fits = g->ov_bh >= VIEW_OV_MIN_BOX_H && g->ov_bw >= VIEW_OV_MIN_BOX_W;
	int sh = g->ov_bh - 2, pix = n > 0 ? n : 1;
	g->ov_sh = sh < pix ? sh : pix;
	if (g->ov_sh < 1)
		g->ov_sh = 1;
	int sw2 = g->ov_bw / 2;
	if (sw2 >= (pix < g->ov_sh * 2 ? pix : g->ov_sh * 2) || sw2 >= pix) {
		g->ov_sw = sw2 < pix ? sw2 : pix;
		g->ov_bw = g->ov_sw * 2;
	} else {
		g->ov_sw = g->ov_bw < pix ? g->ov_bw : pix;
		g->ov_bw = g->ov_sw;
	}
	if (g->ov_sw < 1)
		g->ov_sw = 1;
}

/* ------------------------------------------------------------------------ */
/* Screens. */

static void draw_input(view *v)
{
	const geom *g = &v->g;
	bool on = v->focus == F_INPUT;
	put_str(0, 0, 6, on ? accent(v, A_BOLD) : st(A_DIM, 0), "text> ");
	lineedit *le = &v->le;
	int curcol = lineedit_fit(le, g->field_w);
	int x = g->field_x, end = COLS;
	for (size_t i = le->scroll; i < le->n; i++) {
		uint32_t cp = le->cps[i];
		int w = lineedit_cp_width(cp);
		if (x + w > end)
			break;
		style s = plain();
		if (i >= v->cut_cp)
			s = v->color ? st(A_DIM, (short)(v->cm.levels + P_CUT)) : st(A_DIM, 0);
		if (cp == ' ') {
			fill(0, x, 1, s);
		} else {
			put_glyph(0, x, cp, s);
		}
		x += w;
	}
	if (le->scroll > 0)
		put_str(0, g->field_x - 1, 1, st(A_DIM, 0), "<");
	(void)curcol;
}

static void draw_info(view *v)
{
	int cols = COLS;
	if (v->notice[0]) {
		put_str(1, 0, cols, accent(v, A_BOLD), v->notice);
		return;
	}
	if (v->error[0]) {
		put_fmt(1, 0, cols, accent(v, A_BOLD), "inference failed: %s", v->error);
		return;
	}
	if (v->le.n == 0) {
		put_str(1, 0, cols, st(A_DIM, 0),
			"Type some text (Chinese, English, emoji...). Enter: go to the map. "
			"F1: help.");
		return;
	}
	int unk = 0;
	for (int i = 0; i < v->ntok; i++)
		unk += v->toks[i].unknown;
	int x = 0;
	/* The cut-off notice first: it is the one that changes what is shown. */
	if (v->ntot > v->ntok)
		x = put_fmt(1, x, cols - x, accent(v, A_BOLD),
			    "cut off after %d tokens (the model's context): %d ignored, dimmed  ",
			    v->context, v->ntot - v->ntok);
	x = put_fmt(1, x, cols - x, plain(), "%d token%s", v->ntok, v->ntok == 1 ? "" : "s");
	if (unk)
		x = put_fmt(1, x, cols - x, token_style(v, &(token){.unknown = true}, 0),
			    "  %d unknown (underlined)", unk);
}

static void draw_legend(view *v, int y, int x_min, int x_right)
{
	/* "0 ▁▁▁ 1" with one cell per ramp level (or the shade steps), right
	 * aligned, if it fits. */
	int nsteps = v->mode == CM_256 ? v->cm.levels : 5;
	int w = 2 + nsteps + 2;
	int x = x_right - w;
	if (x < x_min)
		return;
	put_str(y, x, 2, plain(), "0 ");
	for (int i = 0; i < nsteps; i++) {
		if (v->mode == CM_256) {
			fill(y, x + 2 + i, 1, st(A_NORMAL, (short)(1 + i)));
		} else {
			wchar_t wc[2] = {(wchar_t)colormap_shade((float)i / 4.0f), 0};
			put_wc(y, x + 2 + i, wc, plain());
		}
	}
	put_str(y, x + 2 + nsteps, 2, plain(), " 1");
}

static void draw_head_line(view *v)
{
	/* Numbered from 0 as --dump numbers them; "of N" is a count, not the last
	 * number, so the numbers on screen are the ones a script finds. */
	int x = put_fmt(2, 0, COLS, st(A_BOLD, 0), "Layer %d of %d  Head %d of %d", v->layer,
			nlayers(v), v->head, nheads(v));
	x = put_fmt(2, x, COLS - x, st(A_DIM, 0), "  %s%s",
		    v->m->cfg.objective == OBJ_CAUSAL ? "causal" : "masked",
		    v->values ? "  values" : "");
	draw_legend(v, 2, x + 2, v->g.map_w);
}

/* One cell of the heatmap at (y, x), cell_w wide. */
static void draw_cell(view *v, int y, int x, int q, int k)
{
	const geom *g = &v->g;
	bool cursor = q == v->qrow && k == v->kcol;
	if (masked_at(v, q, k)) {
		/* Masked is not zero: the key is invisible to this query. */
		style s = v->color ? st(A_DIM, (short)(v->cm.levels + P_MASKED)) : st(A_DIM, 0);
		fill(y, x, g->cell_w, s);
		put_str(y, x + g->cell_w - 1 - (g->cell_w > 2), 1, cursor ? accent(v, A_BOLD) : s,
			cursor ? "×" : "·");
		return;
	}
	float w = att_at(v, q, k);
	style s = plain();
	if (v->mode == CM_256)
		s = st(A_NORMAL, (short)(1 + colormap_level(&v->cm, w)));
	if (v->values) {
		char buf[8];
		fmt_cell_value(buf, w);
		style t = s;
		if (cursor)
			t.a |= A_REVERSE | A_BOLD;
		fill(y, x, 1, s);
		put_str(y, x + 1, 4, t, buf);
		return;
	}
	if (cursor) {
		s.a |= A_BOLD;
		put_str(y, x, 2, s, "<>");
		return;
	}
	if (v->mode == CM_256) {
		fill(y, x, 2, s);
	} else {
		wchar_t wc[2] = {(wchar_t)colormap_shade(w), 0};
		put_wc(y, x, wc, s);
		put_wc(y, x + 1, wc, s);
	}
}

static void draw_map(view *v)
{
	const geom *g = &v->g;
	if (!v->have) {
		const char *msg = v->pending ? "computing..."
				  : v->le.n  ? ""
					     : "The heatmap appears here as you type.";
		put_str(g->cells_y, 2, g->map_w - 2, st(A_DIM, 0), msg);
		return;
	}
	int n = v->r.n;
	int rows = n - v->top < g->vis_rows ? n - v->top : g->vis_rows;
	int cols = n - v->left < g->vis_cols ? n - v->left : g->vis_cols;
	/* Key positions and labels. */
	for (int j = 0; j < cols; j++) {
		int k = v->left + j, x = g->cx0 + j * g->cell_w;
		bool cur = k == v->kcol;
		if (g->cell_w > 2 || k % 5 == 0 || cur) {
			char num[16];
			int len = snprintf(num, sizeof num, "%d", k);
			/* The cursor's column number wins over its neighbours'. */
			if (cur || x + len <= g->map_w)
				put_str(g->tick_y, x + (g->cell_w > 2), g->map_w - x,
					cur ? accent(v, A_BOLD) : st(A_DIM, 0), num);
		}
		const token *t = &v->r.tokens[k];
		int gx = x + (g->cell_w > 2 ? (g->cell_w - t->width + 1) / 2 : 0);
		style s = token_style(v, t, cur ? A_REVERSE | A_BOLD : A_NORMAL);
		if (cur)
			fill(g->keys_y, x, g->cell_w, s);
		put_glyph(g->keys_y, gx, t->cp, s);
	}
	if (v->left > 0)
		put_str(g->keys_y, g->cx0 - 1, 1, st(A_DIM, 0), "<");
	if (v->left + cols < n)
		put_str(g->keys_y, g->cx0 + cols * g->cell_w, 1, st(A_DIM, 0), ">");
	/* Query rows: marker, position, token, cells. */
	for (int i = 0; i < rows; i++) {
		int q = v->top + i, y = g->cells_y + i;
		bool cur = q == v->qrow;
		const token *t = &v->r.tokens[q];
		if (cur)
			put_str(y, 0, 1, accent(v, A_BOLD), "▶");
		style ls = cur ? st(A_REVERSE | A_BOLD, 0) : st(A_DIM, 0);
		put_fmt(y, 1, g->posw, ls, "%*d", g->posw, q);
		style ts = token_style(v, t, cur ? A_REVERSE | A_BOLD : A_NORMAL);
		if (cur)
			fill(y, 1 + g->posw + 1, 2, ts);
		put_glyph(y, 1 + g->posw + 1, t->cp, ts);
		for (int j = 0; j < cols; j++)
			draw_cell(v, y, g->cx0 + j * g->cell_w, q, v->left + j);
	}
	if (v->top > 0)
		put_str(g->cells_y, 0, 1, st(A_DIM, 0), "^");
	if (v->top + rows < n)
		put_str(g->cells_y + rows - 1, 0, 1, st(A_DIM, 0), "v");
}

/* A token for the panel: the glyph, and what it is. */
static int put_token_desc(view *v, int y, int x, int maxw, const token *t)
{
	style s = token_style(v, t, A_BOLD);
	int w = put_glyph(y, x, t->cp, s);
	char desc[64];
	if (t->cp < 0x110000)
		snprintf(desc, sizeof desc, " U+%04X%s", t->cp, t->unknown ? " unknown" : "");
	else
		snprintf(desc, sizeof desc, " special");
	return put_str(y, x + w, maxw - w, st(A_DIM, 0), desc);
}

static void draw_panel(view *v)
{
	const geom *g = &v->g;
	if (g->panel_w == 0)
		return;
	int x = g->panel_x, w = g->panel_w, y = g->tick_y, ymax = LINES - 2;
	for (int yy = g->tick_y; yy <= ymax; yy++)
		put_str(yy, g->map_w, 1, st(A_DIM, 0), "│");
	if (!v->have)
		return;
	int q = v->qrow, k = v->kcol, n = v->r.n;
	const token *tq = &v->r.tokens[q], *tk = &v->r.tokens[k];

#define LINE(...)                                                                                  \
	do {                                                                                       \
		if (y <= ymax)                                                                     \
			put_fmt(y, x, w, plain(), __VA_ARGS__);                                    \
		y++;                                                                               \
	} while (0)

	if (y <= ymax) {
		int xx = put_fmt(y, x, w, st(A_BOLD, 0), "Query %d ", q);
		put_token_desc(v, y, xx, w - (xx - x), tq);
	}
	y++;
	if (y <= ymax) {
		int xx = put_fmt(y, x, w, st(A_BOLD, 0), "Key   %d ", k);
		put_token_desc(v, y, xx, w - (xx - x), tk);
	}
	y++;
	if (masked_at(v, q, k)) {
		LINE("weight masked (key after query)");
		y += 2;
	} else {
		float wt = att_at(v, q, k);
		int rank = 1, allowed = 0;
		for (int j = 0; j < n; j++) {
			if (masked_at(v, q, j))
				continue;
			allowed++;
			rank += att_at(v, q, j) > wt;
		}
		float raw = score_at(v, q, k);
		char wbuf[32];
		fmt_weight(wbuf, wt);
		LINE("weight %s", wbuf);
		LINE("rank   %d of %d in the row", rank, allowed);
		LINE("q·k %.4f  /√%d = %.4f", raw, v->head_dim, raw / sqrtf((float)v->head_dim));
	}
	y++;
	if (y <= ymax)
		put_fmt(y, x, w, st(A_BOLD, 0), "Top keys of row %d", q);
	y++;
	/* The row's top keys, by weight (ties by position). */
	int top[VIEW_TOPK], ntop = 0;
	for (int j = 0; j < n; j++) {
		if (masked_at(v, q, j))
			continue;
		float wj = att_at(v, q, j);
		int pos = ntop < VIEW_TOPK ? ntop++ : VIEW_TOPK;
		if (pos == VIEW_TOPK) {
			if (wj <= att_at(v, q, top[VIEW_TOPK - 1]))
				continue;
			pos = VIEW_TOPK - 1;
		}
		while (pos > 0 && att_at(v, q, top[pos - 1]) < wj) {
			top[pos] = top[pos - 1];
			pos--;
		}
		top[pos] = j;
	}
	for (int i = 0; i < ntop && y <= ymax; i++, y++) {
		int xx = put_fmt(y, x, w, plain(), " %*d ", g->posw, top[i]);
		const token *t = &v->r.tokens[top[i]];
		put_glyph(y, xx, t->cp, token_style(v, t, top[i] == k ? A_BOLD : A_NORMAL));
		char wbuf[32];
		fmt_weight(wbuf, att_at(v, q, top[i]));
		put_str(y, xx + 3, w - (xx + 3 - x), top[i] == k ? st(A_BOLD, 0) : plain(), wbuf);
	}
	y++;
	const head_stats *s = get_stats(v);
	if (y <= ymax)
		put_fmt(y, x, w, st(A_BOLD, 0), "Head %d of layer %d", v->head, v->layer);
	y++;
	LINE("entropy %.3f nats (max %.3f)", s->entropy, s->max_entropy);
	LINE("mean |q-k| %.2f", s->distance);
	LINE("row max on self %.0f%%", 100 * s->self);
	LINE("  previous %.0f%%  next %.0f%%", 100 * s->prev, 100 * s->next);
	y++;
	bool causal = v->m->cfg.objective == OBJ_CAUSAL;
	if (y <= ymax)
		put_fmt(y, x, w, st(A_BOLD, 0), causal ? "Predicted after %d" : "Predicted at %d",
			q);
	y++;
	if (v->pstate[q] != PRED_HAVE) {
		LINE(" computing...");
	} else {
		for (int i = 0; i < VIEW_TOPK && y <= ymax; i++, y++) {
			int32_t id = v->pids[(size_t)q * VIEW_TOPK + (size_t)i];
			float p = v->pps[(size_t)q * VIEW_TOPK + (size_t)i];
			if (id < 0 || (uint32_t)id >= v->m->vocab.size)
				break;
			int xx = put_str(y, x, w, plain(), " ");
			put_glyph(y, xx, v->m->vocab.cps[id], st(A_BOLD, 0));
			put_fmt(y, xx + 3, w - 4, plain(), "%5.1f%%", 100 * p);
		}
	}
#undef LINE
}

static void draw_status(view *v)
{
	int y = LINES - 1, cols = COLS;
	style s = st(A_REVERSE, 0);
	fill(y, 0, cols, s);
	const char *name = v->m->meta.name && v->m->meta.name[0] ? v->m->meta.name : "model";
	const char *mode = v->focus == F_INPUT	    ? "INPUT"
			   : v->focus == F_MAP	    ? "MAP"
			   : v->focus == F_OVERVIEW ? "OVERVIEW"
						    : "HELP";
	char ms[32] = "";
	if (v->have)
		snprintf(ms, sizeof ms, " | %.1f ms", v->res_ms);
	int x = put_fmt(y, 0, cols, s,
			" %s | %s | layer %d of %d, head %d of %d | %d tokens%s | F1 help", mode,
			name, v->layer, nlayers(v), v->head, nheads(v), v->ntok, ms);
	/* The mark matters more than the end of the status text: it overwrites
	 * it when the line is full (a long model name, a narrow terminal). */
	(void)x;
	if (v->busy_shown && cols >= 26)
		put_str(y, cols - 13, 13, st(A_REVERSE | A_BOLD, 0), "computing... ");
}

static void draw_too_small(view *v)
{
	(void)v;
	char msg[160];
	snprintf(msg, sizeof msg, "Terminal too small (%dx%d): attnview needs at least %dx%d.",
		 COLS, LINES, VIEW_MIN_COLS, VIEW_MIN_LINES);
	/* Wrap the message to the width we have. */
	int y = LINES / 2 - 1, w = COLS > 0 ? COLS : 1;
	const char *p = msg;
	while (*p && y < LINES) {
		size_t len = strlen(p);
		size_t take = len <= (size_t)w ? len : (size_t)w;
		if (take < len) {
			size_t sp = take;
			while (sp > 0 && p[sp] != ' ')
				sp--;
			if (sp > 0)
				take = sp;
		}
		char line[160];
		memcpy(line, p, take);
		line[take] = '\0';
		put_str(y < 0 ? 0 : y, 0, w, st(A_BOLD, 0), line);
		p += take;
		while (*p == ' ')
			p++;
		y++;
	}
	if (y < LINES)
		put_str(y, 0, w, plain(), "Enlarge it, or Ctrl-Q to quit.");
}

static void draw_overview(view *v)
{
	const geom *g = &v->g;
	int L = nlayers(v), H = nheads(v);
	if (!g->ov_fits) {
		put_fmt(g->ov_y0, 0, COLS, st(A_BOLD, 0),
			"The overview of %d layers x %d heads needs a larger terminal.", L, H);
		return;
	}
	if (!v->have) {
		put_str(g->ov_y0, 0, COLS, st(A_DIM, 0), "No text yet: type some first.");
		return;
	}
	int n = v->r.n, stride_w = g->ov_bw + g->ov_gap;
	int save_l = v->layer, save_h = v->head;
	for (int l = 0; l < L; l++) {
		for (int h = 0; h < H; h++) {
			int bx = h * stride_w, by = g->ov_y0 + l * g->ov_bh;
			bool sel = l * H + h == v->ov_sel;
			put_fmt(by, bx, g->ov_bw + 1,
				sel ? accent(v, A_REVERSE | A_BOLD) : st(A_DIM, 0), "L%dH%d", l, h);
			v->layer = l;
			v->head = h;
			int cw = g->ov_bw / g->ov_sw;
			for (int r = 0; r < g->ov_sh; r++) {
				int q0 = r * n / g->ov_sh, q1 = (r + 1) * n / g->ov_sh;
				for (int c = 0; c < g->ov_sw; c++) {
					int k0 = c * n / g->ov_sw, k1 = (c + 1) * n / g->ov_sw;
					/* Mean weight of the block; masked cells count as 0
					 * unless the whole block is masked. */
					double sum = 0;
					int cnt = 0, msk = 0;
					for (int q = q0; q < q1; q++)
						for (int k = k0; k < k1; k++) {
							if (masked_at(v, q, k)) {
								msk++;
								continue;
							}
							sum += att_at(v, q, k);
							cnt++;
						}
					int x = bx + c * cw, y = by + 1 + r;
					if (cnt == 0 && msk > 0) {
						put_str(y, x, 1, st(A_DIM, 0), "·");
						continue;
					}
					float m = cnt ? (float)(sum / (cnt + msk)) : 0.0f;
					if (v->mode == CM_256) {
						fill(y, x, cw,
						     st(A_NORMAL,
							(short)(1 + colormap_level(&v->cm, m))));
					} else {
						wchar_t wc[2] = {(wchar_t)colormap_shade(m), 0};
						for (int i = 0; i < cw; i++)
							put_wc(y, x + i, wc, plain());
					}
				}
			}
		}
	}
	v->layer = save_l;
	v->head = save_h;
}

static void build_help(view *v)
{
	v->help = calloc(VIEW_NKEYS * 2 + 32, sizeof *v->help);
	if (!v->help)
		return;
	int n = 0;
	const char *section = NULL;
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const key_binding *b = &view_keys[i];
		const char *sec = b->ctx == KC_ALL		  ? "Everywhere"
				  : b->ctx == (KC_INPUT | KC_MAP) ? "Input line and heatmap"
				  : b->ctx == (KC_INPUT | KC_MAP | KC_OVERVIEW)
				      ? "Input line and heatmap"
				  : b->ctx == KC_INPUT ? "Input line (any other key types itself)"
				  : b->ctx == KC_MAP   ? "Heatmap (after Enter)"
						       : "Overview";
		if (sec != section && (!section || strcmp(sec, section) != 0)) {
			v->help[n].heading = true;
			v->help[n++].text = sec;
			section = sec;
		}
		if (!b->name)
			continue;
		if (!b->help && n > 0 && !v->help[n - 1].heading) {
			/* Another key of the group above (test_keys checks it does the
			 * same); past VIEW_HELP_KEYS_W the names go on below, the
			 * description staying on the group's first line. */
			help_line *h = &v->help[n - 1];
			size_t len = strlen(h->names);
			if (len + 2 + strlen(b->name) <= VIEW_HELP_KEYS_W) {
				snprintf(h->names + len, sizeof h->names - len, ", %s", b->name);
				continue;
			}
			snprintf(h->names + len, sizeof h->names - len, ",");
		}
		snprintf(v->help[n].names, sizeof v->help[n].names, "%s", b->name);
		v->help[n++].text = b->help ? b->help : "";
	}
	v->help[n].heading = true;
	v->help[n++].text = "Mouse";
	for (size_t i = 0; i < sizeof view_mouse_help / sizeof view_mouse_help[0]; i++) {
		snprintf(v->help[n].names, sizeof v->help[n].names, "%s", view_mouse_help[i][0]);
		v->help[n++].text = view_mouse_help[i][1];
	}
	v->nhelp = n;
	/* Descriptions start after the widest names (all ASCII), so none is cut. */
	v->help_keys_w = 0;
	for (int i = 0; i < n; i++)
		if (!v->help[i].heading && (int)strlen(v->help[i].names) > v->help_keys_w)
			v->help_keys_w = (int)strlen(v->help[i].names);
}

static void draw_help(view *v)
{
	int cols = COLS, rows = LINES - 2;
	put_str(0, 0, cols, st(A_BOLD, 0),
		"attnview keys  (Up/Down/PageUp/PageDown scroll, any other key closes)");
	/* Two columns when the list is longer than the screen and wide enough. */
	int ncol = v->nhelp > rows && cols >= 100 ? 2 : 1;
	int colw = cols / ncol;
	int per = ncol == 2 ? (v->nhelp + 1) / 2 : v->nhelp;
	if (ncol == 2 && per > rows)
		per = rows;
	int total = ncol == 2 ? (v->nhelp + 1) / 2 : v->nhelp;
	if (v->help_scroll > total - rows)
		v->help_scroll = total - rows;
	if (v->help_scroll < 0)
		v->help_scroll = 0;
	for (int c = 0; c < ncol; c++) {
		int first = c * ((v->nhelp + 1) / 2) * (ncol == 2);
		int end = ncol == 2 && c == 0 ? (v->nhelp + 1) / 2 : v->nhelp;
		for (int i = 0; i < rows && first + v->help_scroll + i < end; i++) {
			const help_line *h = &v->help[first + v->help_scroll + i];
			int y = 1 + i, x0 = c * colw;
			if (h->heading) {
				put_str(y, x0, colw - 1, accent(v, A_BOLD), h->text);
				continue;
			}
			/* Two columns between the names and their description. */
			put_str(y, x0 + 2, v->help_keys_w, st(A_BOLD, 0), h->names);
			int x = x0 + 2 + v->help_keys_w + 2;
			put_str(y, x, colw - 1 - (x - x0), plain(), h->text);
		}
	}
	(void)per;
}

static void draw(view *v)
{
	erase();
	layout(v);
	if (v->g.too_small) {
		draw_too_small(v);
		curs_set(0);
	} else if (v->focus == F_HELP) {
		draw_help(v);
		draw_status(v);
		curs_set(0);
	} else {
		draw_input(v);
		draw_info(v);
		if (v->focus == F_OVERVIEW) {
			put_fmt(
			    2, 0, COLS, st(A_BOLD, 0),
			    "Overview: %d layers x %d heads. Arrows select, Enter opens, o closes.",
			    nlayers(v), nheads(v));
			draw_overview(v);
		} else {
			draw_head_line(v);
			draw_map(v);
			draw_panel(v);
		}
		draw_status(v);
		if (v->focus == F_INPUT) {
			int col = lineedit_fit(&v->le, v->g.field_w);
			move(0, v->g.field_x + col);
			curs_set(1);
		} else {
			curs_set(0);
		}
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* ------------------------------------------------------------------------ */
/* Input. */

static void move_row(view *v, int d)
{
	int n = v->have ? v->r.n : 0;
	v->qrow += d;
	if (v->qrow >= n)
		v->qrow = n - 1;
	if (v->qrow < 0)
		v->qrow = 0;
	request_pred(v);
}

static void move_col(view *v, int d)
{
	int n = v->have ? v->r.n : 0;
	v->kcol += d;
	if (v->kcol >= n)
		v->kcol = n - 1;
	if (v->kcol < 0)
		v->kcol = 0;
}

static void set_head(view *v, int l, int h)
{
	int L = nlayers(v), H = nheads(v);
	v->layer = ((l % L) + L) % L;
	v->head = ((h % H) + H) % H;
}

static void open_overview(view *v)
{
	v->ov_return = v->focus == F_OVERVIEW ? F_MAP : v->focus;
	v->ov_sel = v->layer * nheads(v) + v->head;
	v->focus = F_OVERVIEW;
}

static void do_action(view *v, view_action act, int key)
{
	int H = nheads(v), L = nlayers(v), page = v->g.vis_rows > 1 ? v->g.vis_rows - 1 : 1;
	bool ov = v->focus == F_OVERVIEW;
	switch (act) {
	case ACT_NONE:
		break;
	case ACT_QUIT:
		v->quit = true;
		break;
	case ACT_HELP:
		v->help_return = v->focus;
		v->help_scroll = 0;
		v->focus = F_HELP;
		break;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		break;
	case ACT_FOCUS_MAP:
		v->focus = F_MAP;
		break;
	case ACT_FOCUS_INPUT:
		v->focus = F_INPUT;
		break;
	case ACT_OVERVIEW:
		if (ov)
			v->focus = v->ov_return;
		else
			open_overview(v);
		break;
	case ACT_VALUES:
		v->values = !v->values;
		break;
	case ACT_UP:
		if (ov)
			v->ov_sel = (v->ov_sel - H + L * H) % (L * H);
		else
			move_row(v, -1);
		break;
	case ACT_DOWN:
		if (ov)
			v->ov_sel = (v->ov_sel + H) % (L * H);
		else
			move_row(v, 1);
		break;
	case ACT_LEFT:
		if (ov)
			v->ov_sel = (v->ov_sel - 1 + L * H) % (L * H);
		else
			move_col(v, -1);
		break;
	case ACT_RIGHT:
		if (ov)
			v->ov_sel = (v->ov_sel + 1) % (L * H);
		else
			move_col(v, 1);
		break;
	case ACT_PAGE_UP:
		move_row(v, -page);
		break;
	case ACT_PAGE_DOWN:
		move_row(v, page);
		break;
	case ACT_FIRST_ROW:
		move_row(v, -v->qrow);
		break;
	case ACT_LAST_ROW:
		move_row(v, 1 << 30);
		break;
	case ACT_FIRST_COL:
		move_col(v, -v->kcol);
		break;
	case ACT_LAST_COL:
		move_col(v, 1 << 30);
		break;
	case ACT_NEXT_HEAD:
		set_head(v, v->layer, v->head + 1);
		break;
	case ACT_PREV_HEAD:
		set_head(v, v->layer, v->head - 1);
		break;
	case ACT_NEXT_LAYER:
		set_head(v, v->layer + 1, v->head);
		break;
	case ACT_PREV_LAYER:
		set_head(v, v->layer - 1, v->head);
		break;
	case ACT_HEAD_NUMBER: {
		int h = key - '0';
		if (h < H)
			v->head = h;
		else
			set_notice(v, "head %d does not exist: this model has %d heads, 0 to %d", h,
				   H, H - 1);
		break;
	}
	case ACT_OPEN:
		v->layer = v->ov_sel / H;
		v->head = v->ov_sel % H;
		v->focus = F_MAP;
		break;
	case ACT_EDIT_LEFT:
		lineedit_left(&v->le);
		break;
	case ACT_EDIT_RIGHT:
		lineedit_right(&v->le);
		break;
	case ACT_EDIT_HOME:
		lineedit_home(&v->le);
		break;
	case ACT_EDIT_END:
		lineedit_end(&v->le);
		break;
	case ACT_EDIT_BACKSPACE:
		if (lineedit_backspace(&v->le))
			text_changed(v);
		break;
	case ACT_EDIT_DELETE:
		if (lineedit_delete(&v->le))
			text_changed(v);
		break;
	case ACT_EDIT_CLEAR:
		if (lineedit_clear(&v->le))
			text_changed(v);
		break;
	case ACT_EDIT_KILL_END:
		if (lineedit_kill_end(&v->le))
			text_changed(v);
		break;
	case ACT_EDIT_DELETE_WORD:
		if (lineedit_delete_word(&v->le))
			text_changed(v);
		break;
	}
}

static void insert_text(view *v, const uint32_t *cps, size_t n)
{
	bool full;
	size_t got = lineedit_insert(&v->le, cps, n, &full);
	if (got)
		text_changed(v);
	if (full)
		set_notice(v,
			   "the input line holds at most %d characters; the rest was not inserted",
			   VIEW_MAX_LINE);
}

static void handle_mouse(view *v)
{
	MEVENT ev;
	if (getmouse(&ev) != OK)
		return;
	if (v->focus == F_HELP) {
		if (ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED))
			v->focus = v->help_return;
		return;
	}
	const geom *g = &v->g;
	if (g->too_small)
		return;
#ifdef BUTTON5_PRESSED
	if (ev.bstate & BUTTON5_PRESSED) {
		move_row(v, 3);
		return;
	}
#endif
	if (ev.bstate & BUTTON4_PRESSED) {
		move_row(v, -3);
		return;
	}
	if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return;
	if (ev.y == 0) {
		if (ev.x >= g->field_x)
			lineedit_click(&v->le, ev.x - g->field_x);
		v->focus = F_INPUT;
		return;
	}
	if (v->focus == F_OVERVIEW) {
		if (!g->ov_fits || ev.y < g->ov_y0)
			return;
		int l = (ev.y - g->ov_y0) / g->ov_bh, h = ev.x / (g->ov_bw + g->ov_gap);
		if (l >= nlayers(v) || h >= nheads(v) || ev.x % (g->ov_bw + g->ov_gap) > g->ov_bw)
			return;
		int sel = l * nheads(v) + h;
		if (sel == v->ov_sel)
			do_action(v, ACT_OPEN, 0);
		else
			v->ov_sel = sel;
		return;
	}
	if (!v->have)
		return;
	int n = v->r.n;
	int q = ev.y >= g->cells_y ? v->top + (ev.y - g->cells_y) : -1;
	int k = ev.x >= g->cx0 && ev.x < g->map_w ? v->left + (ev.x - g->cx0) / g->cell_w : -1;
	if (ev.y == g->keys_y || ev.y == g->tick_y)
		q = v->qrow;
	if (ev.x < g->cx0 && q >= 0)
		k = v->kcol;
	if (q >= 0 && q < n && k >= 0 && k < n && k < v->left + g->vis_cols) {
		v->qrow = q;
		v->kcol = k;
		if (v->focus == F_INPUT)
			v->focus = F_MAP;
		request_pred(v);
	}
}

static void handle_key(view *v, int ch, bool is_code)
{
	if (is_code && ch == KEY_RESIZE)
		return; /* the next draw lays out for the new size */
	if (is_code && ch == VIEW_KEY_PASTE_BEGIN) {
		v->pasting = true;
		v->paste.n = 0;
		return;
	}
	if (v->pasting) {
		if (is_code && ch == VIEW_KEY_PASTE_END) {
			v->pasting = false;
			if (v->focus != F_INPUT && v->focus != F_HELP)
				v->focus = F_INPUT;
			if (v->paste.n)
				insert_text(v, v->paste.v, v->paste.n);
			return;
		}
		if (is_code && ch == KEY_ENTER)
			ch = '\n', is_code = false;
		if (!is_code && !cp_buf_push(&v->paste, (uint32_t)ch))
			set_notice(v, "out of memory while pasting");
		return;
	}
	if (is_code && ch == VIEW_KEY_PASTE_END)
		return;
	if (is_code && ch == KEY_MOUSE) {
		handle_mouse(v);
		return;
	}
	if (v->focus == F_HELP) {
		int page = LINES - 3;
		if (is_code && (ch == KEY_DOWN || ch == KEY_NPAGE))
			v->help_scroll += ch == KEY_DOWN ? 1 : page;
		else if (is_code && (ch == KEY_UP || ch == KEY_PPAGE))
			v->help_scroll -= ch == KEY_UP ? 1 : page;
		else if (!is_code && ch == CTRL('q'))
			v->quit = true;
		else
			v->focus = v->help_return;
		return;
	}
	unsigned ctx = v->focus == F_INPUT ? KC_INPUT : v->focus == F_MAP ? KC_MAP : KC_OVERVIEW;
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const key_binding *b = &view_keys[i];
		if (b->key == ch && b->is_code == is_code && (b->ctx & ctx)) {
			if (v->focus != F_INPUT)
				v->notice[0] = '\0';
			do_action(v, b->act, ch);
			return;
		}
	}
	if (v->focus == F_INPUT && !is_code && ch >= 0x20 && ch != 0x7f) {
		uint32_t cp = (uint32_t)ch;
		insert_text(v, &cp, 1);
		return;
	}
	if (v->focus == F_MAP && !is_code && ch >= 0x20)
		set_notice(v, "'%lc' is not a key here: press i to edit the text, ? for help",
			   (wint_t)ch);
}

/* ------------------------------------------------------------------------ */
/* Set-up and the main loop. */

static void init_colors(view *v)
{
	colormap_init(&v->cm, VIEW_RAMP_LEVELS);
	const char *nc = getenv("NO_COLOR");
	v->mode = CM_MONO;
	v->color = false;
	if (colormap_no_color(nc) || !has_colors() || start_color() != OK)
		return;
	v->mode = colormap_choose(COLORS, nc);
	int need = v->cm.levels + P_NPAIRS;
	if (v->mode == CM_256 && COLOR_PAIRS <= need)
		v->mode = CM_SHADE;
	if (COLOR_PAIRS <= need)
		return;
	v->color = true;
	short bg = use_default_colors() == OK ? -1 : COLOR_BLACK;
	short fg = bg == -1 ? -1 : COLOR_WHITE;
	int L = v->cm.levels;
	if (v->mode == CM_256) {
		for (int i = 0; i < L; i++)
			init_pair((short)(1 + i), v->cm.dark_text[i] ? 16 : 231,
				  (short)v->cm.xterm[i]);
		init_pair((short)(L + P_MASKED), 244, bg);
		init_pair((short)(L + P_CUT), 244, bg);
		init_pair((short)(L + P_UNKNOWN), 203, bg);
		init_pair((short)(L + P_ACCENT), 214, bg);
	} else {
		init_pair((short)(L + P_MASKED), COLOR_BLUE, bg);
		init_pair((short)(L + P_CUT), COLOR_BLUE, bg);
		init_pair((short)(L + P_UNKNOWN), COLOR_RED, bg);
		init_pair((short)(L + P_ACCENT), COLOR_YELLOW, bg);
	}
	(void)fg;
}

bool view_check_terminal(av_error *err)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return av_fail(err, "the interactive view needs a terminal on standard input and "
				    "output; for scripts use: attnview --dump --text TEXT");
	const char *cs = nl_langinfo(CODESET);
	if (!cs || strcmp(cs, "UTF-8") != 0)
		return av_fail(err,
			       "the locale's character set is %s, not UTF-8, so Chinese text and "
			       "the heatmap cannot be drawn; set a UTF-8 locale, e.g. "
			       "LANG=C.UTF-8 attnview",
			       cs && cs[0] ? cs : "unknown");
	const char *term = getenv("TERM");
	if (!term || !term[0] || strcmp(term, "dumb") == 0)
		return av_fail(err,
			       "TERM is %s: the interactive view needs a terminal that can "
			       "move the cursor (e.g. TERM=xterm-256color)",
			       term && term[0] ? term : "not set");
	return true;
}

static bool view_init(view *v, const model *m, const view_options *opt, av_error *err)
{
	memset(v, 0, sizeof *v);
	v->m = m;
	v->context = (int)m->cfg.context;
	v->head_dim = (int)(m->cfg.dim / (m->cfg.heads ? m->cfg.heads : 1));
	v->pred_req = -1;
	v->focus = F_INPUT;
	v->ov_return = F_MAP;
	v->toks = calloc((size_t)v->context + 1, sizeof *v->toks);
	v->pstate = calloc((size_t)v->context + 1, 1);
	v->pids = calloc(((size_t)v->context + 1) * VIEW_TOPK, sizeof *v->pids);
	v->pps = calloc(((size_t)v->context + 1) * VIEW_TOPK, sizeof *v->pps);
	if (!v->toks || !v->pstate || !v->pids || !v->pps || !lineedit_init(&v->le, VIEW_MAX_LINE))
		return av_fail(err, "out of memory starting the view");
	if (opt && opt->text) {
		cp_buf cps = {0};
		if (!tokenize_text(opt->text, strlen(opt->text), "--text", &cps, NULL, err)) {
			cp_buf_free(&cps);
			return false;
		}
		bool full;
		lineedit_set(&v->le, cps.v, cps.n, &full);
		cp_buf_free(&cps);
		if (full)
			set_notice(v, "--text is longer than the input line (%d characters); cut",
				   VIEW_MAX_LINE);
	}
	if (opt && opt->bench_log) {
		v->bench = fopen(opt->bench_log, "w");
		if (!v->bench)
			return av_fail_errno(err, errno, "%s: cannot write the benchmark log",
					     opt->bench_log);
		fprintf(v->bench, "context %d layers %u heads %u dim %u\n", v->context,
			m->cfg.layers, m->cfg.heads, m->cfg.dim);
		fflush(v->bench);
	}
	build_help(v);
	v->w = worker_create_for_model(m, opt ? opt->delay_ms : 0, err);
	return v->w != NULL;
}

static void view_finish(view *v)
{
	worker_destroy(v->w);
	if (v->have)
		attn_result_free(&v->r);
	lineedit_finish(&v->le);
	cp_buf_free(&v->cps);
	cp_buf_free(&v->paste);
	free(v->toks);
	free(v->pstate);
	free(v->pids);
	free(v->pps);
	free(v->help);
	if (v->bench)
		fclose(v->bench);
}

/* Benchmark records: when the key arrived, when the screen showing the
 * edited text was out, when the screen showing its result was out. */
static void bench_key(view *v, double t)
{
	if (!v->bench || !v->pending || v->seq == v->bench_seq)
		return;
	v->bench_seq = v->seq;
	v->bench_key = t;
	v->bench_echo_pending = v->bench_done_pending = true;
}

static void bench_frame(view *v)
{
	if (!v->bench)
		return;
	double t = now_ms();
	if (!v->bench_ready && v->have && v->res_seq == v->seq) {
		fprintf(v->bench, "ready %d\n", v->r.n);
		fflush(v->bench);
		v->bench_ready = true;
	}
	if (v->bench_echo_pending) {
		v->bench_echo = t;
		v->bench_echo_pending = false;
	}
	if (v->bench_done_pending && v->have && v->res_seq == v->bench_seq) {
		fprintf(v->bench, "key %llu %d %.3f %.3f %.3f %.3f\n",
			(unsigned long long)v->bench_seq, v->r.n, v->bench_key, v->bench_echo, t,
			v->res_ms);
		fflush(v->bench);
		v->bench_done_pending = false;
	}
}

static bool main_loop(view *v, av_error *err)
{
	struct pollfd fds[3] = {
	    {STDIN_FILENO, POLLIN, 0},
	    {worker_fd(v->w), POLLIN, 0},
	    {sig_pipe[0], POLLIN, 0},
	};
	draw(v);
	while (!v->quit && !got_signal) {
		/* Wake up for the "computing" mark and for deferred predictions. */
		double wake = 0;
		if (v->pending && !v->busy_shown)
			wake = v->post_ms + VIEW_BUSY_MS;
		if (v->pred_due > 0 && (wake == 0 || v->pred_due < wake))
			wake = v->pred_due;
		int timeout = -1;
		if (wake > 0) {
			double left = wake - now_ms();
			timeout = left > 0 ? (int)left + 1 : 0;
		}
		int r = poll(fds, 3, timeout);
		if (r < 0 && errno != EINTR)
			return av_fail_errno(err, errno, "poll on the terminal failed");
		if (got_signal)
			break;
		if (r > 0 && (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) &&
		    !(fds[0].revents & POLLIN))
			return av_fail(err, "the terminal went away");
		if (r > 0 && (fds[2].revents & POLLIN)) {
			char buf[16];
			while (read(sig_pipe[0], buf, sizeof buf) > 0)
				;
		}
		/* Keys first (a keystroke is echoed at once), then results. */
		wint_t wc;
		int rc;
		while ((rc = get_wch(&wc)) != ERR) {
			double t = now_ms();
			handle_key(v, (int)wc, rc == KEY_CODE_YES);
			bench_key(v, t);
			if (v->quit)
				break;
		}
		take_results(v);
		if (v->pending && !v->busy_shown && now_ms() - v->post_ms >= VIEW_BUSY_MS)
			v->busy_shown = true;
		if (v->pred_due > 0 && (v->pending || now_ms() >= v->pred_due)) {
			/* A newer text is on its way: its result will set a new time. */
			if (!v->pending)
				request_pred(v);
			v->pred_due = 0;
		}
		draw(v);
		bench_frame(v);
	}
	return true;
}

bool view_run(const model *m, const view_options *opt, int *signo, av_error *err)
{
	*signo = 0;
	got_signal = 0;
	if (!view_check_terminal(err))
		return false;
	view *v = calloc(1, sizeof *v);
	if (!v)
		return av_fail(err, "out of memory starting the view");
	if (!view_init(v, m, opt, err)) {
		view_finish(v);
		free(v);
		return false;
	}
	saved_tio_ok = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	SCREEN *scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		view_finish(v);
		free(v);
		return av_fail(err,
			       "cannot start curses on this terminal (TERM=%s); try "
			       "TERM=xterm-256color",
			       getenv("TERM") ? getenv("TERM") : "");
	}
	bool ok = install_signals(err);
	if (ok) {
		/* cbreak keeps Ctrl-C and Ctrl-Z as signals; flow control goes so
		 * that Ctrl-Q and Ctrl-S reach us. */
		cbreak();
		noecho();
		nonl();
		keypad(stdscr, TRUE);
		nodelay(stdscr, TRUE);
		set_escdelay(VIEW_ESCDELAY_MS);
		struct termios t;
		if (tcgetattr(STDIN_FILENO, &t) == 0) {
			t.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
			tcsetattr(STDIN_FILENO, TCSANOW, &t);
			def_prog_mode();
		}
		/* Home and End in the spellings terminals and multiplexers send
		 * whatever TERM says (tmux sends \e[1~ and \e[4~ under
		 * TERM=xterm-256color). */
		static const char *const home_seqs[] = {"\033[1~", "\033[7~", "\033[H", "\033OH"};
		static const char *const end_seqs[] = {"\033[4~", "\033[8~", "\033[F", "\033OF"};
		for (size_t i = 0; i < sizeof home_seqs / sizeof home_seqs[0]; i++) {
			define_key(home_seqs[i], KEY_HOME);
			define_key(end_seqs[i], KEY_END);
		}
		define_key("\033[200~", VIEW_KEY_PASTE_BEGIN);
		define_key("\033[201~", VIEW_KEY_PASTE_END);
		mouseinterval(0);
		mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
			      | BUTTON5_PRESSED
#endif
			  ,
			  NULL);
		init_colors(v);
		static const char paste_on[] = "\033[?2004h";
		ssize_t wr = write(STDOUT_FILENO, paste_on, sizeof paste_on - 1);
		(void)wr;
		if (v->le.n)
			text_changed(v);
		ok = main_loop(v, err);
	}
	/* Normal restore: modes off, then curses puts the screen back. */
	mousemask(0, NULL);
	fflush(stdout);
	ssize_t wr = write(STDOUT_FILENO, modes_off, sizeof modes_off - 1);
	(void)wr;
	endwin();
	delscreen(scr);
	*signo = got_signal;
	remove_signals();
	view_finish(v);
	free(v);
	return ok;
}

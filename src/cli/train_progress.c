/* The progress display of attnview --train (train_progress.h). */
#include "train_progress.h"
#include "attnview/i18n.h"
#include "attnview/tokenizer.h"
#include "attnview/verdict.h"
#include "cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

void format_duration(double s, char *out, size_t n)
{
	if (!(s >= 0) || s > 1e8) {
		snprintf(out, n, "?");
		return;
	}
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(out, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(out, n, "%lds", t);
}

void progress_begin(progress_ui *ui, uint64_t step0)
{
	*ui = (progress_ui){.tty = isatty(STDOUT_FILENO), .t0 = av_now_ms() / 1e3, .step0 = step0};
}

/* A sparkline of up to `width` buckets of the recent losses on the scale
 * lo .. hi. */
static void sparkline(const float *v, int n, int width, float lo, float hi, char *out, size_t cap)
{
	static const char *bars[8] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	out[0] = '\0';
	if (n < 2 || !(hi > lo))
		return;
	int nb = n < width ? n : width;
	float b[64];
	for (int i = 0; i < nb; i++) {
		int a = i * n / nb, e = (i + 1) * n / nb;
		double s = 0;
		for (int j = a; j < e; j++)
			s += v[j];
		b[i] = (float)(s / (e - a));
	}
	size_t k = 0;
	for (int i = 0; i < nb && k + 4 < cap; i++) {
		float f = (b[i] - lo) / (hi - lo);
		int level = f >= 1 ? 7 : f > 0 ? (int)(f * 7.0f + 0.5f) : 0;
		size_t l = strlen(bars[level]);
		memcpy(out + k, bars[level], l);
		k += l;
	}
	out[k] = '\0';
}

/* The sparkline's scale: kept from redraw to redraw (a bar's height is the
 * same loss), and fitted again to the recent losses, rounded out to a round
 * step, when one falls outside it or they use less than a quarter of it
 * (else a loss that moves within a small part of it draws a flat line). */
static void spark_scale(progress_ui *ui, const float *v, int n)
{
	float mn = INFINITY, mx = -INFINITY;
	for (int i = 0; i < n; i++) {
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
	}
	if (n < 2 || !(mx >= mn) || !isfinite(mx))
		return;
	bool set = ui->spark_hi > ui->spark_lo;
	if (set && mn >= ui->spark_lo && mx <= ui->spark_hi &&
	    4 * (mx - mn) >= ui->spark_hi - ui->spark_lo)
		return;
	static const float steps[] = {0.01f, 0.02f, 0.05f, 0.1f, 0.2f, 0.5f, 1, 2, 5, 10};
	size_t k = 0;
	while (k + 1 < sizeof steps / sizeof steps[0] && (mx - mn) / steps[k] > 6)
		k++;
	float st = steps[k], lo = floorf(mn / st) * st, hi = ceilf(mx / st) * st;
	ui->spark_lo = lo > 0 ? lo : 0;
	ui->spark_hi = hi > ui->spark_lo ? hi : ui->spark_lo + st;
	ui->spark_digits = st >= 1 ? 0 : st >= 0.1f ? 1 : 2;
}

/* The validation loss rose while the training loss fell: say so, with what
 * to do (train.h, "Over-fitting"). */
static void warn_overfitting(progress_ui *ui, const train_progress *p)
{
	progress_end(ui);
	cli_note(_("warning: over-fitting: the validation loss has not improved for %d "
		   "evaluations (best %.3f at step %" PRIu64 ", now %.3f at step %" PRIu64
		   ") while the training loss fell (%.3f to %.3f): the model is learning the "
		   "training text by heart. The model of step %" PRIu64 " was better: train "
		   "fewer steps (--steps %" PRIu64 "), or add --patience 3 to stop at the best "
		   "and keep it; more text or a smaller model (--dim 32 --layers 1) help too"),
		 p->since_best, (double)p->best.loss, p->best.step, (double)p->val_loss, p->step,
		 (double)p->best.train_loss, (double)p->train_loss, p->best.step, p->best.step);
}

/* " | unigram 4.006, 20.50%: beaten by 2.180 (54%)" after an evaluation. */
/* Cut the UTF-8 line s to at most cols terminal columns (Chinese takes two
 * a character); returns the columns left. */
static int fit_columns(char *s, int cols)
{
	const unsigned char *p = (const unsigned char *)s;
	int w = 0;
	while (*p) {
		int len = *p < 0x80 ? 1 : *p < 0xe0 ? 2 : *p < 0xf0 ? 3 : 4;
		uint32_t c = len == 1 ? *p : *p & (0x3fu >> (len - 1));
		for (int i = 1; i < len && p[i]; i++)
			c = c << 6 | (p[i] & 0x3fu);
		int cw = cp_display_width(c, NULL);
		if (w + cw > cols) {
			*(char *)p = '\0';
			break;
		}
		w += cw;
		for (int i = 0; i < len && *p; i++)
			p++;
	}
	return w;
}

static void verdict_part(const train_progress *p, char *out, size_t n)
{
	switch (verdict_of(p->val_loss, p->base_loss)) {
	case VERDICT_BETTER:
		snprintf(out, n, _(" | unigram %.3f, %.2f%%: beaten by %.3f (%.0f%%)"),
			 (double)p->base_loss, 100.0 * (double)p->base_acc,
			 (double)(p->base_loss - p->val_loss),
			 100.0 * (double)(p->base_loss - p->val_loss) / (double)p->base_loss);
		break;
	case VERDICT_NOT_BETTER:
		snprintf(out, n, _(" | unigram %.3f, %.2f%%: not beaten"), (double)p->base_loss,
			 100.0 * (double)p->base_acc);
		break;
	default:
		out[0] = '\0';
	}
}

/* An evaluation's line, kept in the history (on a terminal too, above the
 * live line). */
static void eval_line(const train_progress *p, const char *vl, double tps, const char *eta)
{
	double mean = 0;
	int n = p->nrecent < 100 ? p->nrecent : 100;
	for (int i = p->nrecent - n; i < p->nrecent; i++)
		mean += p->recent[i];
	mean = n ? mean / n : NAN;
	char verdict[160];
	verdict_part(p, verdict, sizeof verdict);
	printf(_("step %" PRIu64 "/%" PRIu64 ": train loss %.4f, val loss %s, val acc %.2f%%, "
		 "%.0f tok/s, ETA %s%s\n"),
	       p->step, p->total, mean, vl, 100.0 * (double)p->val_acc, tps, eta, verdict);
}

void progress_report(const train_progress *p, void *ctx)
{
	progress_ui *ui = ctx;
	double el = av_now_ms() / 1e3 - ui->t0;
	uint64_t done = p->step - ui->step0;
	uint64_t per_step = p->step ? p->tokens / p->step : 0;
	double tps = el > 0 ? (double)(done * per_step) / el : 0;
	char eta[32], vl[32];
	format_duration(done ? el / (double)done * (double)(p->total - p->step) : -1, eta,
			sizeof eta);
	if (isnan(p->val_loss))
		snprintf(vl, sizeof vl, "-");
	else
		snprintf(vl, sizeof vl, "%.3f", (double)p->val_loss);
	if (ui->tty) {
		/* Redraw at most ~10 times a second, and always at evaluations. */
		double t = av_now_ms() / 1e3;
		if (!p->evaluated && p->step != p->total && t - ui->last_draw < 0.1)
			return;
		ui->last_draw = t;
		struct winsize ws;
		int cols = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
		char line[256], vs[48] = "";
		if (!isnan(p->val_loss)) {
			vs[0] = ' ';
			vs[1] = '(';
			verdict_short(p->val_loss, p->base_loss, vs + 2, sizeof vs - 3);
			strcat(vs, ")");
		}
		snprintf(line, sizeof line,
			 _("step %" PRIu64 "/%" PRIu64 "  loss %.3f  val %s%s  %.1fk tok/s  "
			   "ETA %s"),
			 p->step, p->total, (double)p->loss, vl, vs, tps / 1000.0, eta);
		int len = fit_columns(line, cols > 1 ? cols - 1 : 0);
		/* The scale, labelled (spark_scale). */
		spark_scale(ui, p->recent, p->nrecent);
		char spark[320], label[64];
		snprintf(label, sizeof label, _("loss %.*f-%.*f "), ui->spark_digits,
			 (double)ui->spark_lo, ui->spark_digits, (double)ui->spark_hi);
		int room = cols - 2 - len - (int)strlen(label);
		if (room > 48)
			room = 48;
		spark[0] = '\0';
		if (room >= 8) {
			size_t l = strlen(label);
			memcpy(spark, label, l + 1);
			sparkline(p->recent, p->nrecent, room, ui->spark_lo, ui->spark_hi,
				  spark + l, sizeof spark - l);
			if (!spark[l])
				spark[0] = '\0';
		}
		printf("\r\033[K");
		if (p->evaluated && !isnan(p->val_loss)) /* history the live line would lose */
			eval_line(p, vl, tps, eta);
		printf("%s%s%s", line, spark[0] ? "  " : "", spark);
		fflush(stdout);
		ui->line_open = true;
		if (p->overfitting)
			warn_overfitting(ui, p);
		return;
	}
	if (!p->evaluated)
		return;
	/* Not a terminal: one plain line per evaluation. */
	eval_line(p, vl, tps, eta);
	fflush(stdout);
	if (p->overfitting)
		warn_overfitting(ui, p);
}

void progress_end(progress_ui *ui)
{
	if (ui->line_open) {
		putchar('\n');
		ui->line_open = false;
	}
}

/* Keys from a script, the screen as text (script.h). */
#include "script.h"
#include "attnview/i18n.h"

#include "panel.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define SCRIPT_WAIT_MS	10000 /* a wait fails after this */
#define SCRIPT_POLL_MS	20    /* how often a wait looks again */
#define SCRIPT_LINE_MAX 4096

struct view_script {
	FILE *f;
	char path[1024];
	int line;		     /* of the command being run */
	char cmd[SCRIPT_LINE_MAX];   /* it, when it waits */
	bool waiting;		     /* cmd is a wait not met yet */
	double wait_since;
	uint64_t heads_seen; /* attn_weights_computed_here at the last heads-here */
};

view_script *script_open(const char *path, av_error *err)
{
	view_script *s = calloc(1, sizeof *s);
	if (!s) {
		av_fail(err, _("out of memory"));
		return NULL;
	}
	s->f = fopen(path, "r");
	if (!s->f) {
		av_fail_errno(err, errno, _("%s: cannot open the script"), AV_Q(path));
		free(s);
		return NULL;
	}
	snprintf(s->path, sizeof s->path, "%s", path);
	return s;
}

void script_close(view_script *s)
{
	if (!s)
		return;
	fclose(s->f);
	free(s);
}

int script_timeout(const view_script *s)
{
	return s->waiting ? SCRIPT_POLL_MS : 0;
}

/* ---- the screen as text -------------------------------------------------- */

/* Line y of the screen as UTF-8 into out, trailing spaces dropped. A wide
 * character is read once (curses holds it in both its columns). */
static void screen_line(int y, char *out, size_t size)
{
	size_t used = 0;
	for (int x = 0; x < COLS && used + MB_LEN_MAX * (CCHARW_MAX + 1) < size; x++) {
		cchar_t cc;
		wchar_t wc[CCHARW_MAX + 1];
		attr_t at;
		short pair;
		if (mvin_wch(y, x, &cc) != OK || getcchar(&cc, wc, &at, &pair, NULL) != OK)
			continue;
		if (wc[0] && wcwidth(wc[0]) == 2)
			x++;
		for (int k = 0; wc[k]; k++) {
			mbstate_t st;
			memset(&st, 0, sizeof st);
			size_t len = wcrtomb(out + used, wc[k], &st);
			used += len == (size_t)-1 ? 0 : len;
		}
	}
	while (used && out[used - 1] == ' ')
		used--;
	out[used] = '\0';
}

bool screen_save(const char *path, av_error *err)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return av_fail_errno(err, errno, _("%s: cannot write the screen"), AV_Q(path));
	static char line[SCRIPT_LINE_MAX * 2];
	for (int y = 0; y < LINES; y++) {
		screen_line(y, line, sizeof line);
		fprintf(f, "%s\n", line);
	}
	if (fclose(f) != 0)
		return av_fail_errno(err, errno, _("%s: cannot write the screen"), AV_Q(path));
	return true;
}

static bool screen_has(const char *text)
{
	static char line[SCRIPT_LINE_MAX * 2];
	for (int y = 0; y < LINES; y++) {
		screen_line(y, line, sizeof line);
		if (strstr(line, text))
			return true;
	}
	return false;
}

/* ---- keys -------------------------------------------------------------------- */

static const struct {
	const char *name;
	int ch;
	bool code;
} key_names[] = {
    {"Enter", '\r', false},  {"Escape", 27, false},	    {"Tab", '\t', false},
    {"BSpace", 127, false},  {"Space", ' ', false},	    {"BTab", KEY_BTAB, true},
    {"Up", KEY_UP, true},    {"Down", KEY_DOWN, true},	    {"Left", KEY_LEFT, true},
    {"Right", KEY_RIGHT, true}, {"Home", KEY_HOME, true},   {"End", KEY_END, true},
    {"PPage", KEY_PPAGE, true}, {"NPage", KEY_NPAGE, true}, {"DC", KEY_DC, true},
    {"S-Home", KEY_SHOME, true}, {"S-End", KEY_SEND, true},
};

/* One key by its name into *ch, *code; false if it is none. */
static bool key_of(const char *name, int *ch, bool *code)
{
	for (size_t i = 0; i < sizeof key_names / sizeof key_names[0]; i++)
		if (strcmp(name, key_names[i].name) == 0) {
			*ch = key_names[i].ch;
			*code = key_names[i].code;
			return true;
		}
	*code = false;
	if (name[0] == 'F' && name[1] >= '1' && name[1] <= '9') {
		int f = atoi(name + 1);
		*ch = KEY_F(f);
		*code = true;
		return f >= 1 && f <= 12;
	}
	const char *p = name;
	int alt = 0;
	if (strncmp(p, "M-", 2) == 0 && p[2])
		alt = ALT_BIT, p += 2;
	if (strncmp(p, "C-", 2) == 0 && p[2] && !p[3]) {
		*ch = alt | CTRL(p[2]);
		return true;
	}
	int cp = utf8_next(&p);
	*ch = alt | cp;
	return *p == '\0';
}

static bool run_keys(view *v, char *names, av_error *err, const view_script *s)
{
	for (char *tok = strtok(names, " "); tok; tok = strtok(NULL, " ")) {
		int ch;
		bool code;
		if (!key_of(tok, &ch, &code))
			return av_fail(err, _("%s:%d: no key is called '%s'"), AV_Q(s->path),
				       s->line, AV_Q(tok));
		handle_key(v, ch, code);
	}
	return true;
}

static void run_type(view *v, const char *text)
{
	while (*text)
		handle_key(v, utf8_next(&text), false);
}

/* ---- waiting --------------------------------------------------------------------- */

/* The result of the latest text is on screen with all that follows it. */
static bool quiet(const view *v)
{
	return v->have && !v->pending && v->res_seq == v->seq && v->pred_due == 0 &&
	       v->pred_req < 0 && !pages_waiting(v) && !v->loss.asked && !v->loss.mean_asked &&
	       !(v->nablated && v->loss.valid && !v->loss.mean_valid && !v->loss.mean_failed) &&
	       !v->roles_asked && !v->reloading;
}

/* A wait of s->cmd: met, still waiting, or timed out (false with err). */
static bool wait_step(view_script *s, view *v, bool *met, av_error *err)
{
	const char *arg = s->cmd + strcspn(s->cmd, " ");
	arg += *arg == ' ';
	*met = strncmp(s->cmd, "wait-result", 11) == 0 ? quiet(v) : screen_has(arg);
	if (*met) {
		s->waiting = false;
		return true;
	}
	if (!s->waiting) {
		s->waiting = true;
		s->wait_since = av_now_ms();
	}
	if (av_now_ms() - s->wait_since > SCRIPT_WAIT_MS)
		return av_fail(err, _("%s:%d: '%s' did not happen in %d s"), AV_Q(s->path), s->line,
			       AV_Q(s->cmd), SCRIPT_WAIT_MS / 1000);
	return true;
}

/* heads-here N: this thread computed N heads' weights since the last
 * heads-here (or the start); without N, the count starts again. */
static bool heads_here(view_script *s, const char *arg, av_error *err)
{
	char *end;
	unsigned long long want = strtoull(arg, &end, 10);
	uint64_t now = attn_weights_computed_here(), got = now - s->heads_seen;
	s->heads_seen = now;
	if (!*arg)
		return true;
	if (end == arg || *end)
		return av_fail(err, _("%s:%d: heads-here needs a number"), AV_Q(s->path), s->line);
	if (got != want)
		return av_fail(err, _("%s:%d: the interface's thread computed %llu heads' weights, "
				      "not %llu"),
			       AV_Q(s->path), s->line, (unsigned long long)got, want);
	return true;
}

bool script_run(view_script *s, view *v, bool *failed, av_error *err)
{
	*failed = false;
	for (;;) {
		if (!s->waiting) {
			if (!fgets(s->cmd, sizeof s->cmd, s->f))
				return false;
			s->line++;
			s->cmd[strcspn(s->cmd, "\r\n")] = '\0';
		}
		char *cmd = s->cmd, *arg = cmd + strcspn(cmd, " ");
		if (*arg)
			*arg++ = '\0';
		bool met = true, ok = true;
		if (cmd[0] == '\0' || cmd[0] == '#') {
			continue;
		} else if (strcmp(cmd, "key") == 0) {
			if (!run_keys(v, arg, err, s))
				break;
			return true;
		} else if (strcmp(cmd, "type") == 0) {
			run_type(v, arg);
			return true;
		} else if (strcmp(cmd, "save") == 0) {
			ok = screen_save(arg, err);
		} else if (strcmp(cmd, "heads-here") == 0) {
			ok = heads_here(s, arg, err);
		} else if (strcmp(cmd, "wait") == 0 || strcmp(cmd, "wait-result") == 0) {
			if (*arg)
				arg[-1] = ' '; /* the whole line again, for the next look */
			ok = wait_step(s, v, &met, err);
		} else {
			ok = av_fail(err, _("%s:%d: unknown command '%s'"), AV_Q(s->path),
				     s->line, AV_Q(cmd));
		}
		if (!ok)
			break;
		if (!met)
			return true;
	}
	*failed = true;
	return false;
}

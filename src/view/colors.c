/* The view's colours (colors.h). */
#include "colors.h"
#include "attnview/i18n.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keys.h"

/* RGB as ncurses takes it in direct-colour mode. */
static int rgb_number(cm_rgb c)
{
	return (c.r << 16) | (c.g << 8) | c.b;
}

/* What the interface colours are in each mode: xterm 256-colour numbers, and
 * the same colours as RGB for 24-bit terminals. */
static const int ui_xterm[] = {244, 203, 244, 214, 240, 77, 167};
static const cm_rgb ui_rgb[] = {{0x80, 0x80, 0x80}, {0xff, 0x5f, 0x5f}, {0x80, 0x80, 0x80},
				{0xff, 0xaf, 0x00}, {0x58, 0x58, 0x58}, {0x5f, 0xd7, 0x5f},
				{0xd7, 0x5f, 0x5f}};
static const short ui_ansi[] = {COLOR_BLUE,  COLOR_RED,	 COLOR_BLUE, COLOR_YELLOW,
				COLOR_WHITE, COLOR_GREEN, COLOR_RED};

static bool terminfo_direct(void)
{
	int rgb = tigetflag((char *)"RGB");
	return rgb > 0 || COLORS >= (1 << 24);
}

const char *colors_direct_term(void)
{
	const char *term = getenv("TERM");
	if (!colormap_colorterm_direct(getenv("COLORTERM")) ||
	    colormap_no_color(getenv("NO_COLOR")) || !term || !term[0] || strstr(term, "direct"))
		return NULL;
	/* xterm-256color -> xterm-direct, tmux-256color -> tmux-direct: the
	 * family's entry with direct colour (ncurses-term has them). Inside
	 * tmux any TERM can use tmux's. */
	static const char *const families[][2] = {
	    {"xterm", "xterm-direct"},	   {"tmux", "tmux-direct"},	{"st", "st-direct"},
	    {"konsole", "konsole-direct"}, {"mlterm", "mlterm-direct"}, {"kitty", "kitty-direct"},
	};
	for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
		size_t n = strlen(families[i][0]);
		if (strncmp(term, families[i][0], n) == 0 && (term[n] == '\0' || term[n] == '-'))
			return families[i][1];
	}
	if (getenv("TMUX"))
		return "tmux-direct";
	return NULL;
}

/* The variables by which a terminal says it shows 24-bit colour when
 * COLORTERM does not (tests/screens/screens.sh and tests/tui/lib.sh unset them). */
static const char *const colors_hint_vars[] = {"VTE_VERSION",	  "KONSOLE_VERSION", "WT_SESSION",
					"KITTY_WINDOW_ID",	  "ALACRITTY_WINDOW_ID", "TERM_PROGRAM",
					NULL};

/* The terminal that says, in its own variables, that it shows 24-bit colour
 * when COLORTERM does not: "VTE_VERSION=7600", "TERM_PROGRAM=vscode"; NULL
 * if none does. out holds the words. */
static const char *truecolor_terminal(char *out, size_t size)
{
	static const char *const programs[] = {"iTerm.app", "vscode", "WezTerm", "ghostty"};
	const char *c = getenv("COLORTERM");
	if (c && c[0])
		return NULL;
	for (int i = 0; colors_hint_vars[i]; i++) {
		const char *v = getenv(colors_hint_vars[i]);
		if (!v || !v[0])
			continue;
		bool yes = true;
		if (strcmp(colors_hint_vars[i], "VTE_VERSION") == 0)
			yes = atoi(v) >= 3600; /* VTE 0.36 */
		else if (strcmp(colors_hint_vars[i], "TERM_PROGRAM") == 0) {
			yes = false;
			for (size_t j = 0; j < sizeof programs / sizeof programs[0]; j++)
				yes = yes || strcmp(v, programs[j]) == 0;
		}
		if (yes) {
			snprintf(out, size, "%s=%.40s", colors_hint_vars[i], v);
			return out;
		}
	}
	return NULL;
}

static void pairs_reset(pair_cache *pc)
{
	if (pc->keys)
		memset(pc->keys, 0, (size_t)pc->cap * sizeof *pc->keys);
	pc->used = 0;
	pc->next = 1;
}

static void note(colors *c, const char *fmt, ...) AV_PRINTF(2, 3);
static void note(colors *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof c->why, fmt, ap);
	va_end(ap);
}

void colors_init(colors *c, cm_ramp ramp, bool direct_term)
{
	memset(c, 0, sizeof *c);
	c->ramp = ramp;
	c->direct_term = direct_term;
	const char *term = getenv("TERM") ? getenv("TERM") : "";
	const char *nc = getenv("NO_COLOR");
	char says[64];
	c->mode = CM_MONO;
	if (colormap_no_color(nc)) {
		note(c, _("NO_COLOR is set: weights are drawn as shades"));
	} else if (!has_colors() || start_color() != OK) {
		note(c, _("TERM=%s has no colours: weights are drawn as shades"), term);
	} else {
		c->mode = terminfo_direct() ? CM_DIRECT : colormap_choose(COLORS, nc);
		if (c->mode == CM_SHADE)
			note(c,
			     _("TERM=%s has 8 colours: weights are drawn as shades; for the colour "
			       "ramp use a 256-colour TERM (e.g. xterm-256color)"),
			     term);
		else if (c->mode == CM_256 && colormap_colorterm_direct(getenv("COLORTERM")))
			note(c,
			     _("24-bit colour needs the terminfo entry of a -direct terminal "
			       "(Debian: "
			       "ncurses-term); using 256 colours for TERM=%s"),
			     term);
		else if (c->mode == CM_256 && truecolor_terminal(says, sizeof says))
			note(c,
			     _("24-bit colour: start with COLORTERM=truecolor (%s)"), says);
	}
	if (c->mode >= CM_256 && COLOR_PAIRS < 64) {
		note(c, _("TERM=%s has too few colour pairs: weights are drawn as shades"), term);
		c->mode = CM_SHADE;
	}
	if (c->mode != CM_MONO)
		use_default_colors();
	colors_set_ramp(c, ramp);
	if (c->mode != CM_MONO) {
		c->pc.cap = 8192;
		c->pc.limit = COLOR_PAIRS - 1 < 6000 ? COLOR_PAIRS - 1 : 6000;
		c->pc.keys = calloc((size_t)c->pc.cap, sizeof *c->pc.keys);
		c->pc.pairs = calloc((size_t)c->pc.cap, sizeof *c->pc.pairs);
		if (!c->pc.keys || !c->pc.pairs) {
			c->mode = CM_MONO;
			note(c, _("out of memory for colours: weights are drawn as shades"));
		}
		pairs_reset(&c->pc);
	}
}

void colors_set_ramp(colors *c, cm_ramp ramp)
{
	int levels = c->mode == CM_DIRECT ? CM_MAX_LEVELS : VIEW_RAMP_LEVELS;
	c->ramp = ramp;
	colormap_init(&c->cm, ramp, levels);
	/* An odd number of steps puts 0 in a step of its own. */
	colormap_init(&c->dm, RAMP_DIVERGING, levels - 1);
	c->on = &c->cm;
}

void colors_use_diverging(colors *c, bool diverging)
{
	c->on = diverging ? &c->dm : &c->cm;
}

void colors_finish(colors *c)
{
	free(c->pc.keys);
	free(c->pc.pairs);
	c->pc.keys = NULL;
	c->pc.pairs = NULL;
}

void colors_frame(colors *c)
{
	if (c->pc.used >= c->pc.limit * 3 / 4)
		pairs_reset(&c->pc);
}

/* The pair for (fg, bg), made if needed; 0 (the default pair) when there is
 * no room, which shows as uncoloured rather than wrong. */
static int pair_for(colors *c, int fg, int bg)
{
	pair_cache *pc = &c->pc;
	if (!pc->keys)
		return 0;
	uint64_t key = ((uint64_t)(uint32_t)(fg + 1) << 32 | (uint32_t)(bg + 1)) + 1;
	size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 40) % (size_t)pc->cap;
	for (int probe = 0; probe < pc->cap; probe++) {
		size_t i = (h + (size_t)probe) % (size_t)pc->cap;
		if (pc->keys[i] == key)
			return pc->pairs[i];
		if (pc->keys[i] == 0) {
			if (pc->used >= pc->limit || pc->next >= COLOR_PAIRS)
				return 0;
			int p = pc->next++;
			if (init_extended_pair(p, fg, bg) != OK)
				return 0;
			pc->keys[i] = key;
			pc->pairs[i] = p;
			pc->used++;
			return p;
		}
	}
	return 0;
}

int ramp_color(const colors *c, float t)
{
	int l = colormap_level(c->on, t);
	return c->mode == CM_DIRECT ? rgb_number(c->on->rgb[l]) : c->on->xterm[l];
}

static int text_on(const colors *c, float t)
{
	int l = colormap_level(c->on, t);
	bool dark = c->on->dark_text[l];
	if (c->mode == CM_DIRECT)
		return dark ? 0x000000 : 0xffffff;
	return dark ? 16 : 231;
}

style ramp_style(colors *c, float t, attr_t a)
{
	if (c->mode < CM_256)
		return st(a, 0);
	return st(a, pair_for(c, text_on(c, t), ramp_color(c, t)));
}

style pair_style(colors *c, int fg, int bg, attr_t a)
{
	if (c->mode == CM_MONO)
		return st(a, 0);
	return st(a, pair_for(c, fg, bg));
}

int ui_color_number(const colors *c, ui_color u)
{
	if (c->mode == CM_DIRECT)
		return rgb_number(ui_rgb[u]);
	if (c->mode == CM_256)
		return ui_xterm[u];
	return ui_ansi[u];
}

style ui_style(colors *c, ui_color u, attr_t a)
{
	if (c->mode == CM_MONO)
		return st(a | (u == UI_ACCENT ? A_BOLD : 0), 0);
	return st(a, pair_for(c, ui_color_number(c, u), -1));
}

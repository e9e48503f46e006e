/* The view's colours: which mode the terminal gets (24-bit, 256 colours,
 * shades, none) and why, the ramp's levels, and colour pairs made on demand
 * for any foreground/background combination (the half-block cells of the
 * compact mode need two ramp colours in one cell). */
#ifndef ATTNVIEW_VIEW_COLORS_H
#define ATTNVIEW_VIEW_COLORS_H

#include "attnview/colormap.h"

#include "draw.h"

struct view;

/* Colours of the interface itself. */
typedef enum ui_color {
	UI_MASKED,
	UI_UNKNOWN,
	UI_CUT,
	UI_ACCENT,
	UI_BAR_FRAME,
	UI_POSITIVE, /* a positive product in the q·k breakdown */
	UI_NEGATIVE,
} ui_color;

typedef struct pair_cache {
	uint64_t *keys; /* (fg, bg) + 1, 0 for an empty slot */
	int *pairs;
	int cap, used, limit, next;
} pair_cache;

typedef struct colors {
	cm_mode mode;
	cm_ramp ramp;
	colormap cm;	    /* the sequential ramp */
	colormap dm;	    /* the diverging ramp, for differences */
	const colormap *on; /* the one ramp_color and ramp_style use: cm or dm */
	bool direct_term; /* the terminal type was switched to a -direct one */
	char why[200];	  /* why the terminal gets shades or 256 colours, or "" */
	pair_cache pc;
} colors;

/* The terminal type to start curses with: $TERM itself, or its direct-colour
 * variant ("xterm-direct", "tmux-direct") when COLORTERM says the terminal
 * takes 24-bit colour and $TERM's own description does not. NULL: $TERM. */
const char *colors_direct_term(void);

/* After start_color: picks the mode, the ramp's levels, and notes why the
 * terminal gets less than 24-bit colour. */
void colors_init(colors *c, cm_ramp ramp, bool direct_term);
void colors_set_ramp(colors *c, cm_ramp ramp);
void colors_finish(colors *c);

/* At the start of every frame: forgets all pairs if the cache is nearly full
 * (ncurses then repaints the cells whose pairs change). */
void colors_frame(colors *c);
/* The ramp that ramp_color and ramp_style draw from: the sequential one, or
 * the diverging one for differences. */
void colors_use_diverging(colors *c, bool diverging);

/* A style for a cell of the ramp at t (bold/reverse in a), with text that
 * reads on it. Without colour: plain. */
style ramp_style(colors *c, float t, attr_t a);
/* The ramp's colour at t as a terminal colour number. */
int ramp_color(const colors *c, float t);
/* fg and bg as terminal colours (-1: the default). */
style pair_style(colors *c, int fg, int bg, attr_t a);
int ui_color_number(const colors *c, ui_color u);
style ui_style(colors *c, ui_color u, attr_t a);

#endif

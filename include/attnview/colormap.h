/* Colour ramps for the heatmaps: a viridis-like ramp mapped to the xterm
 * 256-colour palette, shade characters for terminals with few colours, and the
 * NO_COLOR convention. Pure functions: no curses here, the view sets up the
 * colour pairs from what this module computes. */
#ifndef ATTNVIEW_COLORMAP_H
#define ATTNVIEW_COLORMAP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cm_rgb {
	uint8_t r, g, b;
} cm_rgb;

/* How a heatmap is drawn on this terminal. */
typedef enum cm_mode {
	CM_MONO = 0,  /* NO_COLOR: shade characters, no colour at all */
	CM_SHADE = 1, /* 8/16 colours: shade characters ' ░▒▓█' */
	CM_256 = 2,   /* 256 colours: the ramp as cell backgrounds */
} cm_mode;

#define CM_MAX_LEVELS 32

/* A quantised ramp: level i of n covers weights [i/n, (i+1)/n) (1.0 goes to
 * the last level), drawn in xterm colour xterm[i]. */
typedef struct colormap {
	int levels;
	int xterm[CM_MAX_LEVELS];      /* 16..255 */
	bool dark_text[CM_MAX_LEVELS]; /* black text reads better than white */
} colormap;

/* Viridis at t in [0, 1] (clamped; NaN gives t = 0), interpolated linearly
 * between published control values. */
cm_rgb colormap_viridis(double t);

/* The xterm palette: the 6x6x6 cube (16..231) and the grey ramp (232..255). */
cm_rgb colormap_xterm_rgb(int index);
/* Nearest xterm colour (16..255) by squared RGB distance. */
int colormap_nearest_xterm(cm_rgb c);

/* Fill cm with `levels` (2..CM_MAX_LEVELS) steps of the viridis ramp. */
void colormap_init(colormap *cm, int levels);
/* Level of a weight in [0, 1]; out-of-range values are clamped, NaN gives 0. */
int colormap_level(const colormap *cm, float w);

/* Shade character for a weight: U+0020, U+2591, U+2592, U+2593 or U+2588. */
uint32_t colormap_shade(float w);

/* NO_COLOR (https://no-color.org): set to any non-empty value disables colour. */
bool colormap_no_color(const char *no_color_env);
/* Mode for a terminal with `ncolors` colours, given the NO_COLOR value. */
cm_mode colormap_choose(int ncolors, const char *no_color_env);

#endif

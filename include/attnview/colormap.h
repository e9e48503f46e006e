/* Colour ramps for the heatmaps: viridis and cividis (exact, from their
 * published 256-entry tables), their best rendering on the xterm 256-colour
 * palette, shade characters for terminals with few colours, the NO_COLOR
 * convention, and a diverging ramp for differences. Pure functions: no
 * curses here; the view and the figure writers both draw from this module. */
#ifndef ATTNVIEW_COLORMAP_H
#define ATTNVIEW_COLORMAP_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cm_rgb {
	uint8_t r, g, b;
} cm_rgb;

/* How a heatmap is drawn on this terminal. */
typedef enum cm_mode {
	CM_MONO = 0,   /* NO_COLOR or no colour at all: shade characters */
	CM_SHADE = 1,  /* 8/16 colours: shade characters ' ░▒▓█' */
	CM_256 = 2,    /* 256 colours: the ramp on the xterm palette */
	CM_DIRECT = 3, /* 24-bit colour: the ramp itself */
} cm_mode;

/* The sequential ramps (t in [0, 1], dark to bright). */
typedef enum cm_ramp {
	RAMP_VIRIDIS = 0,
	RAMP_CIVIDIS = 1, /* for colour-blind viewers: blue to yellow */
	RAMP_NRAMPS,
	/* Not a choice: differences, colormap_diverging(2t - 1). */
	RAMP_DIVERGING = RAMP_NRAMPS,
} cm_ramp;

const char *colormap_ramp_name(cm_ramp r); /* "viridis", "cividis" */
/* Name to ramp; false for an unknown name. */
bool colormap_ramp_parse(const char *name, cm_ramp *r);

/* The ramp at t in [0, 1] (clamped; NaN gives 0), linear between the 256
 * table entries. */
cm_rgb colormap_rgb(cm_ramp r, double t);
cm_rgb colormap_viridis(double t);

/* A diverging ramp for differences, s in [-1, 1]: blue (negative) through a
 * near-white 0 to red (positive), lightness falling symmetrically away from
 * 0 (clamped; NaN gives 0). */
cm_rgb colormap_diverging(double s);

/* The xterm palette: the 6x6x6 cube (16..231) and the grey ramp (232..255). */
cm_rgb colormap_xterm_rgb(int index);
/* Nearest xterm colour (16..255) by distance in OKLab, a perceptual space. */
int colormap_nearest_xterm(cm_rgb c);
/* Perceived lightness of an sRGB colour, OKLab L in [0, 1]. */
double colormap_lightness(cm_rgb c);
/* True when black text reads better on c than white text. */
bool colormap_dark_text(cm_rgb c);

#define CM_MAX_LEVELS 256

/* A quantised ramp: level i of n covers t in [i/n, (i+1)/n) (1.0 goes to the
 * last level), drawn in rgb[i] on a 24-bit terminal and in xterm[i] on a
 * 256-colour one. */
typedef struct colormap {
	cm_ramp ramp;
	int levels;
	cm_rgb rgb[CM_MAX_LEVELS];
	int xterm[CM_MAX_LEVELS];      /* 16..255 */
	bool dark_text[CM_MAX_LEVELS]; /* black text reads better than white */
} colormap;

/* Fill cm with `levels` (2..CM_MAX_LEVELS) steps of the ramp. The xterm
 * colours are distinct and monotone in lightness: rising level by level on
 * a sequential ramp, falling from the light middle outwards on each side of
 * the diverging one, by 0.03 of OKLab lightness at least where the palette
 * has the colours (every ramp of the view: a step a person sees). Among such
 * choices the levels take the one nearest the ramp (the least sum of OKLab
 * distances, the hue's part weighted 9 times: a teal among blues reads as
 * structure); ramps longer than the palette can follow that way (more than
 * 64 levels, only drawn in 24-bit) take the nearest lighter colour level by
 * level, repeating the last. */
void colormap_init(colormap *cm, cm_ramp ramp, int levels);
/* Level of t in [0, 1]; out-of-range values are clamped, NaN gives 0. */
int colormap_level(const colormap *cm, float t);
/* How far the xterm colours are from the ramp: the mean OKLab distance
 * over the levels, and the largest in *worst (may be NULL). */
double colormap_xterm_error(const colormap *cm, double *worst);
/* The number of distinct xterm colours the levels use. */
int colormap_distinct_xterm(const colormap *cm);

/* Shade character for t in [0, 1]: U+0020, U+2591, U+2592, U+2593 or U+2588. */
uint32_t colormap_shade(float t);

/* NO_COLOR (https://no-color.org): set to any non-empty value disables colour. */
bool colormap_no_color(const char *no_color_env);
/* Mode for a terminal with `ncolors` colours (2^24 for direct colour), given
 * the NO_COLOR value. */
cm_mode colormap_choose(int ncolors, const char *no_color_env);
/* COLORTERM says the terminal takes 24-bit colour ("truecolor", "24bit"). */
bool colormap_colorterm_direct(const char *colorterm_env);

#endif

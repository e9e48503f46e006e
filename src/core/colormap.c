/* Colour ramps: viridis -> xterm 256 colours, shade characters, NO_COLOR. */
#include "attnview/colormap.h"

#include <math.h>
#include <stddef.h>

/* Viridis (van der Walt and Smith, matplotlib) sampled at 11 evenly spaced
 * points. Linear interpolation between them stays within a few units of the
 * full 256-entry table, far below what the xterm palette can resolve. */
static const cm_rgb viridis_ctl[] = {
    {0x44, 0x01, 0x54}, {0x48, 0x25, 0x76}, {0x41, 0x44, 0x87}, {0x35, 0x60, 0x8d},
    {0x2a, 0x78, 0x8e}, {0x21, 0x90, 0x8c}, {0x22, 0xa8, 0x84}, {0x43, 0xbf, 0x71},
    {0x7a, 0xd1, 0x51}, {0xbb, 0xdf, 0x27}, {0xfd, 0xe7, 0x25},
};
#define NCTL (sizeof viridis_ctl / sizeof viridis_ctl[0])

cm_rgb colormap_viridis(double t)
{
	if (!(t > 0)) /* also NaN */
		t = 0;
	if (t > 1)
		t = 1;
	double x = t * (double)(NCTL - 1);
	size_t i = (size_t)x;
	if (i >= NCTL - 1)
		return viridis_ctl[NCTL - 1];
	double f = x - (double)i;
	const cm_rgb *a = &viridis_ctl[i], *b = &viridis_ctl[i + 1];
	cm_rgb c = {
	    (uint8_t)lround(a->r + f * (b->r - a->r)),
	    (uint8_t)lround(a->g + f * (b->g - a->g)),
	    (uint8_t)lround(a->b + f * (b->b - a->b)),
	};
	return c;
}

/* Channel levels of xterm's colour cube. */
static const uint8_t cube_level[6] = {0, 95, 135, 175, 215, 255};

cm_rgb colormap_xterm_rgb(int index)
{
	cm_rgb c = {0, 0, 0};
	if (index >= 16 && index < 232) {
		int i = index - 16;
		c.r = cube_level[i / 36];
		c.g = cube_level[(i / 6) % 6];
		c.b = cube_level[i % 6];
	} else if (index >= 232 && index < 256) {
		uint8_t v = (uint8_t)(8 + 10 * (index - 232));
		c.r = c.g = c.b = v;
	}
	return c;
}

/* CIELAB (D65) of an sRGB colour: L* is perceived lightness. */
typedef struct lab {
	double l, a, b;
} lab;

static double srgb_lin(uint8_t v)
{
	double c = v / 255.0;
	return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double lab_f(double t)
{
	return t > 216.0 / 24389.0 ? cbrt(t) : (24389.0 / 27.0 * t + 16.0) / 116.0;
}

static lab to_lab(cm_rgb c)
{
	double r = srgb_lin(c.r), g = srgb_lin(c.g), b = srgb_lin(c.b);
	double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
	double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
	double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
	double fx = lab_f(x), fy = lab_f(y), fz = lab_f(z);
	lab o = {116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)};
	return o;
}

/* Nearest xterm colour (16..255) to c whose lightness is at least min_l.
 * The first 16 colours are left out: terminals redefine them freely. */
static int nearest_from(cm_rgb c, double min_l)
{
	int best = -1;
	long bestd = 0;
	for (int i = 16; i < 256; i++) {
		cm_rgb p = colormap_xterm_rgb(i);
		if (to_lab(p).l < min_l - 1e-9)
			continue;
		/* Plain RGB distance: in Lab the cube's few dark blues pull the
		 * ramp towards washed-out greys. */
		long dr = (long)p.r - c.r, dg = (long)p.g - c.g, db = (long)p.b - c.b;
		long d = dr * dr + dg * dg + db * db;
		if (best < 0 || d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best < 0 ? 231 : best;
}

int colormap_nearest_xterm(cm_rgb c)
{
	return nearest_from(c, -1.0);
}

void colormap_init(colormap *cm, int levels)
{
	if (levels < 2)
		levels = 2;
	if (levels > CM_MAX_LEVELS)
		levels = CM_MAX_LEVELS;
	cm->levels = levels;
	/* Each level takes the nearest palette colour to the ramp at its centre,
	 * among those no darker than the level below: the 6x6x6 cube is coarse
	 * in viridis' dark blues, and a plain nearest match there can step back
	 * in lightness, which would make a larger weight look smaller. */
	double min_l = -1.0;
	for (int i = 0; i < levels; i++) {
		cm_rgb c = colormap_viridis((i + 0.5) / levels);
		cm->xterm[i] = nearest_from(c, min_l);
		lab got = to_lab(colormap_xterm_rgb(cm->xterm[i]));
		min_l = got.l;
		/* Black text has the better contrast above L* ~ 55. */
		cm->dark_text[i] = got.l > 55.0;
	}
}

int colormap_level(const colormap *cm, float w)
{
	if (!(w > 0))
		return 0;
	int l = (int)(w * (float)cm->levels);
	return l >= cm->levels ? cm->levels - 1 : l;
}

uint32_t colormap_shade(float w)
{
	/* Five steps, rounded to the nearest: a weight of 0.1 is still blank, 0.15
	 * already shows as light shade. */
	static const uint32_t shade[5] = {0x20, 0x2591, 0x2592, 0x2593, 0x2588};
	if (!(w > 0))
		return shade[0];
	int i = (int)lroundf(w * 4.0f);
	return shade[i > 4 ? 4 : i];
}

bool colormap_no_color(const char *no_color_env)
{
	return no_color_env && no_color_env[0];
}

cm_mode colormap_choose(int ncolors, const char *no_color_env)
{
	if (colormap_no_color(no_color_env))
		return CM_MONO;
	if (ncolors >= 256)
		return CM_256;
	if (ncolors >= 8)
		return CM_SHADE;
	return CM_MONO;
}

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

int colormap_nearest_xterm(cm_rgb c)
{
	/* 240 candidates: exhaustive search is exact and cheap (done once). The
	 * first 16 colours are left out: terminals redefine them freely. */
	int best = 16;
	long bestd = -1;
	for (int i = 16; i < 256; i++) {
		cm_rgb p = colormap_xterm_rgb(i);
		long dr = (long)p.r - c.r, dg = (long)p.g - c.g, db = (long)p.b - c.b;
		long d = dr * dr + dg * dg + db * db;
		if (bestd < 0 || d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

/* Relative luminance (sRGB, linearised) decides the text colour on a cell:
 * above ~0.18 black text has the higher contrast ratio. */
static double luminance(cm_rgb c)
{
	double ch[3] = {c.r / 255.0, c.g / 255.0, c.b / 255.0};
	for (int i = 0; i < 3; i++)
		ch[i] = ch[i] <= 0.04045 ? ch[i] / 12.92 : pow((ch[i] + 0.055) / 1.055, 2.4);
	return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
}

void colormap_init(colormap *cm, int levels)
{
	if (levels < 2)
		levels = 2;
	if (levels > CM_MAX_LEVELS)
		levels = CM_MAX_LEVELS;
	cm->levels = levels;
	for (int i = 0; i < levels; i++) {
		/* Level i is drawn in the colour of its centre weight. */
		cm_rgb c = colormap_viridis((i + 0.5) / levels);
		cm->xterm[i] = colormap_nearest_xterm(c);
		cm->dark_text[i] = luminance(colormap_xterm_rgb(cm->xterm[i])) > 0.18;
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

/* Colour ramps (colormap.h). */
#include "attnview/colormap.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "colormap_tables.h"

static const char *const ramp_names[RAMP_NRAMPS + 1] = {"viridis", "cividis", "diverging"};

const char *colormap_ramp_name(cm_ramp r)
{
	return r <= RAMP_DIVERGING ? ramp_names[r] : "?";
}

bool colormap_ramp_parse(const char *name, cm_ramp *r)
{
	for (int i = 0; i < RAMP_NRAMPS; i++)
		if (strcmp(name, ramp_names[i]) == 0) {
			*r = (cm_ramp)i;
			return true;
		}
	return false;
}

static uint8_t mix(uint8_t a, uint8_t b, double f)
{
	return (uint8_t)lround(a + f * (b - a));
}

cm_rgb colormap_rgb(cm_ramp r, double t)
{
	if (r == RAMP_DIVERGING)
		return colormap_diverging(t == t ? 2 * t - 1 : 0);
	const cm_rgb *tab = r == RAMP_CIVIDIS ? cividis_table : viridis_table;
	if (!(t > 0)) /* also NaN */
		t = 0;
	if (t > 1)
		t = 1;
	double x = t * 255.0;
	size_t i = (size_t)x;
	if (i >= 255)
		return tab[255];
	double f = x - (double)i;
	cm_rgb c = {mix(tab[i].r, tab[i + 1].r, f), mix(tab[i].g, tab[i + 1].g, f),
		    mix(tab[i].b, tab[i + 1].b, f)};
	return c;
}

cm_rgb colormap_viridis(double t)
{
	return colormap_rgb(RAMP_VIRIDIS, t);
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

/* OKLab (Björn Ottosson, 2020) of an sRGB colour: L is perceived lightness,
 * and Euclidean distances follow perceived differences far better than in
 * RGB. */
typedef struct oklab {
	double l, a, b;
} oklab;

static double srgb_lin(uint8_t v)
{
	double c = v / 255.0;
	return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static oklab to_oklab(cm_rgb c)
{
	double r = srgb_lin(c.r), g = srgb_lin(c.g), b = srgb_lin(c.b);
	double l = cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
	double m = cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
	double s = cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
	oklab o = {0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s,
		   1.9779984951 * l - 2.4285922050 * m + 0.4505937099 * s,
		   0.0259040371 * l + 0.7827717662 * m - 0.8086757660 * s};
	return o;
}

static double dist2(oklab x, oklab y)
{
	double dl = x.l - y.l, da = x.a - y.a, db = x.b - y.b;
	return dl * dl + da * da + db * db;
}

double colormap_lightness(cm_rgb c)
{
	return to_oklab(c).l;
}

bool colormap_dark_text(cm_rgb c)
{
	/* Relative luminance where black and white text have equal contrast
	 * (WCAG's formula): about 0.18. */
	double y = 0.2126 * srgb_lin(c.r) + 0.7152 * srgb_lin(c.g) + 0.0722 * srgb_lin(c.b);
	return y > 0.179;
}

/* Nearest xterm colour (16..255) to c among those lighter than min_l and not
 * in used[] (may be NULL); -1 if none. The first 16 colours are left out:
 * terminals redefine them freely. */
static int nearest_from(cm_rgb c, double min_l, const bool *used)
{
	oklab t = to_oklab(c);
	int best = -1;
	double bestd = 0;
	for (int i = 16; i < 256; i++) {
		if (used && used[i])
			continue;
		oklab p = to_oklab(colormap_xterm_rgb(i));
		if (p.l <= min_l)
			continue;
		double d = dist2(p, t);
		if (best < 0 || d < bestd) {
			bestd = d;
			best = i;
		}
	}
	return best;
}

int colormap_nearest_xterm(cm_rgb c)
{
	int i = nearest_from(c, -1.0, NULL);
	return i < 0 ? 231 : i;
}

/* The palette (16..255) ordered by lightness, with each colour's OKLab. */
typedef struct palette {
	int n;
	int index[240];
	oklab lab[240];
} palette;

static void palette_sorted(palette *p)
{
	p->n = 0;
	for (int i = 16; i < 256; i++) {
		oklab o = to_oklab(colormap_xterm_rgb(i));
		int j = p->n++;
		while (j > 0 && p->lab[j - 1].l > o.l) {
			p->lab[j] = p->lab[j - 1];
			p->index[j] = p->index[j - 1];
			j--;
		}
		p->lab[j] = o;
		p->index[j] = i;
	}
}

#define CM_FIT_HUE  9.0	 /* the weight of a hue difference in fit_dist */
#define CM_MIN_STEP 0.03 /* the least lightness step between palette levels */

/* How far palette colour x is from ramp colour y for the fit: the OKLab
 * distance with its hue part weighted CM_FIT_HUE times (a teal or lavender
 * step in a blue ramp reads as structure, not as a lighter blue); a grey for
 * a clearly coloured level counts as far (it reads as mud in the middle of a
 * coloured ramp, however near its lightness). */
static double fit_dist(oklab x, oklab y)
{
	double cx = hypot(x.a, x.b), cy = hypot(y.a, y.b);
	/* |Δab|² = ΔC² + ΔH²: the hue part is what the chroma does not explain. */
	double dab2 = (x.a - y.a) * (x.a - y.a) + (x.b - y.b) * (x.b - y.b);
	double dh2 = dab2 - (cx - cy) * (cx - cy);
	double dl = x.l - y.l;
	double d = sqrt(dl * dl + (cx - cy) * (cx - cy) + CM_FIT_HUE * (dh2 > 0 ? dh2 : 0));
	return cx < 0.01 && cy > 0.05 ? d + 1.0 : d;
}

#define CHAIN_MAX 64 /* longer ramps are never drawn with palette colours */

/* Palette colours for targets[0..n), each darker than the one before by
 * gap at least and strictly darker than max_l, with the least sum of
 * distances (fit_dist) to the targets (a shortest path over the palette sorted by lightness; the
 * greedy choice, nearest among those left, spends the dark colours early and leaves the mid-tones
 * far from the ramp). False if no such chain exists. */
static bool fit_chain(const palette *p, const cm_rgb *targets, int n, double max_l, double gap,
		      int *out)
{
	static double cost[CHAIN_MAX][240];
	static short from[CHAIN_MAX][240];
	if (n < 1 || n > CHAIN_MAX)
		return false;
	for (int i = 0; i < n; i++) {
		oklab t = to_oklab(targets[i]);
		/* best: the cheapest chain of i levels ending lighter than p[j]. */
		double best = -1;
		int best_j = -1, k = p->n - 1;
		for (int j = p->n - 1; j >= 0; j--) {
			cost[i][j] = -1;
			if (p->lab[j].l >= max_l)
				continue;
			if (i > 0) {
				while (k > j && p->lab[k].l > p->lab[j].l + gap) {
					if (cost[i - 1][k] >= 0 && (best < 0 || cost[i - 1][k] < best)) {
						best = cost[i - 1][k];
						best_j = k;
					}
					k--;
				}
				if (best < 0)
					continue;
			}
			cost[i][j] = (i > 0 ? best : 0) + fit_dist(p->lab[j], t);
			from[i][j] = (short)best_j;
		}
	}
	int end = -1;
	for (int j = 0; j < p->n; j++)
		if (cost[n - 1][j] >= 0 && (end < 0 || cost[n - 1][j] < cost[n - 1][end]))
			end = j;
	if (end < 0)
		return false;
	for (int i = n - 1; i >= 0; i--) {
		out[i] = p->index[end];
		end = from[i][end];
	}
	return true;
}

/* fit_chain with steps of CM_MIN_STEP in lightness at least, that a person
 * sees as steps (the 24-bit ramps' are 0.03 to 0.07), or, where the palette
 * has too few colours for that (long ramps), any steps. */
static bool fit_steps(const palette *p, const cm_rgb *targets, int n, double max_l, int *out)
{
	return fit_chain(p, targets, n, max_l, CM_MIN_STEP, out) ||
	       fit_chain(p, targets, n, max_l, 0.0, out);
}

/* The greedy fallback for ramps too long for fit_chain: each level the
 * nearest unused colour lighter than the level below, the last repeated
 * when the palette runs out. */
static void fit_greedy(colormap *cm)
{
	bool used[256] = {false};
	double min_l = -1.0;
	int last = -1;
	for (int i = 0; i < cm->levels; i++) {
		int x = nearest_from(cm->rgb[i], cm->ramp == RAMP_DIVERGING ? -1.0 : min_l, used);
		if (x < 0) {
			x = last >= 0 ? last : 231;
		} else {
			used[x] = true;
			min_l = to_oklab(colormap_xterm_rgb(x)).l;
		}
		cm->xterm[i] = last = x;
	}
}

/* Palette colours for the levels: darker level by level from the bright
 * end of a sequential ramp; from the light middle outwards on each side of
 * the diverging one. */
static void fit_palette(colormap *cm)
{
	palette p;
	palette_sorted(&p);
	cm_rgb tg[CHAIN_MAX] = {{0, 0, 0}};
	int out[CHAIN_MAX], n = cm->levels;
	bool ok = true;
	if (cm->ramp != RAMP_DIVERGING) {
		for (int i = 0; i < n && n <= CHAIN_MAX; i++)
			tg[i] = cm->rgb[n - 1 - i];
		ok = fit_steps(&p, tg, n, 2.0, out);
		for (int i = 0; ok && i < n; i++)
			cm->xterm[n - 1 - i] = out[i];
	} else {
		/* Levels below the middle (blue), the middle (odd counts), above. */
		int lo = n / 2, mid = n % 2 ? n / 2 : -1, hi = n - lo - (mid >= 0);
		double max_l = 2.0;
		if (mid >= 0) {
			cm->xterm[mid] = colormap_nearest_xterm(cm->rgb[mid]);
			max_l = to_oklab(colormap_xterm_rgb(cm->xterm[mid])).l;
		}
		for (int i = 0; i < lo && n <= CHAIN_MAX; i++)
			tg[i] = cm->rgb[lo - 1 - i];
		ok = fit_steps(&p, tg, lo, max_l, out);
		for (int i = 0; ok && i < lo; i++)
			cm->xterm[lo - 1 - i] = out[i];
		for (int i = 0; ok && i < hi; i++)
			tg[i] = cm->rgb[n - hi + i];
		ok = ok && fit_steps(&p, tg, hi, max_l, out);
		/* Without a middle level the two sides must not meet in one colour. */
		if (ok && mid < 0 && lo > 0 && out[0] == cm->xterm[lo - 1])
			ok = fit_steps(&p, tg, hi, to_oklab(colormap_xterm_rgb(out[0])).l, out);
		for (int i = 0; ok && i < hi; i++)
			cm->xterm[n - hi + i] = out[i];
	}
	if (!ok)
		fit_greedy(cm);
}

void colormap_init(colormap *cm, cm_ramp ramp, int levels)
{
	if (levels < 2)
		levels = 2;
	if (levels > CM_MAX_LEVELS)
		levels = CM_MAX_LEVELS;
	cm->ramp = ramp;
	cm->levels = levels;
	for (int i = 0; i < levels; i++) {
		/* The first level is the ramp's dark end itself, the last its
		 * bright end; between them, centres of equal steps. */
		double t = levels > 1 ? (double)i / (levels - 1) : 0.0;
		cm->rgb[i] = colormap_rgb(ramp, t);
		cm->dark_text[i] = colormap_dark_text(cm->rgb[i]);
	}
	fit_palette(cm);
}

double colormap_xterm_error(const colormap *cm, double *worst)
{
	double sum = 0, w = 0;
	for (int i = 0; i < cm->levels; i++) {
		double d = sqrt(dist2(to_oklab(cm->rgb[i]), to_oklab(colormap_xterm_rgb(cm->xterm[i]))));
		sum += d;
		w = d > w ? d : w;
	}
	if (worst)
		*worst = w;
	return sum / cm->levels;
}

int colormap_level(const colormap *cm, float t)
{
	if (!(t > 0))
		return 0;
	int l = (int)(t * (float)cm->levels);
	return l >= cm->levels ? cm->levels - 1 : l;
}

int colormap_distinct_xterm(const colormap *cm)
{
	bool seen[256] = {false};
	int n = 0;
	for (int i = 0; i < cm->levels; i++)
		if (!seen[cm->xterm[i]]) {
			seen[cm->xterm[i]] = true;
			n++;
		}
	return n;
}

cm_rgb colormap_diverging(double s)
{
	/* Blue #2166ac - near-white #f7f7f7 - red #b2182b (ColorBrewer RdBu's
	 * ends and middle), linear in sRGB on each side. */
	static const cm_rgb neg = {0x21, 0x66, 0xac}, mid = {0xf7, 0xf7, 0xf7},
			    pos = {0xb2, 0x18, 0x2b};
	if (!(s == s))
		s = 0;
	if (s > 1)
		s = 1;
	if (s < -1)
		s = -1;
	const cm_rgb *end = s < 0 ? &neg : &pos;
	double f = fabs(s);
	cm_rgb c = {mix(mid.r, end->r, f), mix(mid.g, end->g, f), mix(mid.b, end->b, f)};
	return c;
}

uint32_t colormap_shade(float t)
{
	/* Five steps, rounded to the nearest: 0.1 is still blank, 0.15 already
	 * shows as light shade. */
	static const uint32_t shade[5] = {0x20, 0x2591, 0x2592, 0x2593, 0x2588};
	if (!(t > 0))
		return shade[0];
	int i = (int)lroundf(t * 4.0f);
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
	if (ncolors >= (1 << 24))
		return CM_DIRECT;
	if (ncolors >= 256)
		return CM_256;
	if (ncolors >= 8)
		return CM_SHADE;
	return CM_MONO;
}

bool colormap_colorterm_direct(const char *colorterm_env)
{
	return colorterm_env &&
	       (strcmp(colorterm_env, "truecolor") == 0 || strcmp(colorterm_env, "24bit") == 0);
}

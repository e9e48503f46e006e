/* The colour ramp: viridis end points, lightness rising along the ramp (so a
 * larger weight always looks brighter), the xterm palette, quantisation, shade
 * characters for few-colour terminals, and NO_COLOR. */
#include "attnview/colormap.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>

static bool rgb_eq(cm_rgb c, int r, int g, int b)
{
	return c.r == r && c.g == g && c.b == b;
}

/* Relative luminance (linearised sRGB): what "brighter" means. */
static double lin(int v)
{
	double c = v / 255.0;
	return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double lum(cm_rgb c)
{
	return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

static void test_viridis(void)
{
	CHECK(rgb_eq(colormap_viridis(0), 0x44, 0x01, 0x54));
	CHECK(rgb_eq(colormap_viridis(1), 0xfd, 0xe7, 0x25));
	/* Halfway between table entries 127 and 128. */
	cm_rgb mid = colormap_viridis(0.5);
	CHECKF(abs(mid.r - 0x21) <= 1 && abs(mid.g - 0x91) <= 1 && abs(mid.b - 0x8c) <= 1,
	       "viridis(0.5) = #%02x%02x%02x", mid.r, mid.g, mid.b);
	/* Cividis: dark blue to yellow. */
	CHECK(rgb_eq(colormap_rgb(RAMP_CIVIDIS, 0), 0x00, 0x22, 0x4e));
	CHECK(rgb_eq(colormap_rgb(RAMP_CIVIDIS, 1), 0xfe, 0xe8, 0x38));
	CHECK(rgb_eq(colormap_viridis(-3), 0x44, 0x01, 0x54));
	CHECK(rgb_eq(colormap_viridis(7), 0xfd, 0xe7, 0x25));
	CHECK(rgb_eq(colormap_viridis(NAN), 0x44, 0x01, 0x54));
	/* Perceptually ordered: brightness rises strictly along both ramps. */
	for (int r = 0; r < RAMP_NRAMPS; r++) {
		double prev = -1;
		int bad = 0;
		for (int i = 0; i <= 100; i++) {
			double l = lum(colormap_rgb((cm_ramp)r, i / 100.0));
			bad += l <= prev;
			prev = l;
		}
		CHECKF(bad == 0, "%s: %d steps where the ramp does not get brighter",
		       colormap_ramp_name((cm_ramp)r), bad);
	}
	cm_ramp rp;
	CHECK(colormap_ramp_parse("cividis", &rp) && rp == RAMP_CIVIDIS);
	CHECK(!colormap_ramp_parse("jet", &rp));
}

static void test_xterm(void)
{
	CHECK(rgb_eq(colormap_xterm_rgb(16), 0, 0, 0));
	CHECK(rgb_eq(colormap_xterm_rgb(231), 255, 255, 255));
	CHECK(rgb_eq(colormap_xterm_rgb(196), 255, 0, 0));
	CHECK(rgb_eq(colormap_xterm_rgb(67), 95, 135, 175));
	CHECK(rgb_eq(colormap_xterm_rgb(232), 8, 8, 8));
	CHECK(rgb_eq(colormap_xterm_rgb(255), 238, 238, 238));
	int bad = 0;
	for (int i = 16; i < 256; i++)
		bad += colormap_nearest_xterm(colormap_xterm_rgb(i)) != i;
	CHECKF(bad == 0, "%d palette colours not mapped to themselves", bad);
	/* A grey between cube levels goes to the grey ramp. */
	cm_rgb g = {128, 128, 128};
	CHECK(colormap_nearest_xterm(g) == 244);
	/* Viridis' dark end is a purple, its bright end a yellow. */
	cm_rgb lo = colormap_xterm_rgb(colormap_nearest_xterm(colormap_viridis(0)));
	cm_rgb hi = colormap_xterm_rgb(colormap_nearest_xterm(colormap_viridis(1)));
	CHECK(lo.b > lo.g && lo.r > lo.g);
	CHECK(hi.r > 200 && hi.g > 200 && hi.b < 100);
}

static void test_levels(void)
{
	colormap cm;
	colormap_init(&cm, RAMP_VIRIDIS, 16);
	CHECK(cm.levels == 16);
	CHECK(colormap_level(&cm, 0) == 0);
	CHECK(colormap_level(&cm, 1) == 15);
	CHECK(colormap_level(&cm, 0.5f) == 8);
	CHECK(colormap_level(&cm, 0.0624f) == 0);
	CHECK(colormap_level(&cm, 0.0626f) == 1);
	CHECK(colormap_level(&cm, NAN) == 0);
	CHECK(colormap_level(&cm, -1) == 0);
	CHECK(colormap_level(&cm, 2) == 15);
	CHECK(rgb_eq(cm.rgb[0], 0x44, 0x01, 0x54) && rgb_eq(cm.rgb[15], 0xfd, 0xe7, 0x25));
	/* On the 256-colour palette every step of either ramp is a colour of
	 * its own, each lighter than the one below (16 steps used to
	 * share 10 colours). */
	for (int r = 0; r < RAMP_NRAMPS; r++) {
		colormap_init(&cm, (cm_ramp)r, 16);
		int bad = 0;
		for (int i = 1; i < cm.levels; i++)
			bad += colormap_lightness(colormap_xterm_rgb(cm.xterm[i])) <=
			       colormap_lightness(colormap_xterm_rgb(cm.xterm[i - 1]));
		CHECKF(colormap_distinct_xterm(&cm) == 16, "%s: %d distinct colours in 16 levels",
		       colormap_ramp_name((cm_ramp)r), colormap_distinct_xterm(&cm));
		CHECKF(bad == 0, "%s: %d levels not lighter than the one below",
		       colormap_ramp_name((cm_ramp)r), bad);
		CHECK(!cm.dark_text[0]);
		CHECK(cm.dark_text[15]);
		for (int i = 0; i < 16; i++)
			CHECK(cm.xterm[i] >= 16 && cm.xterm[i] <= 255);
	}
	/* Viridis' dark end on the palette: the perceptually nearest colour. */
	colormap_init(&cm, RAMP_VIRIDIS, 16);
	CHECK(cm.xterm[0] == colormap_nearest_xterm(colormap_viridis(0)));
	colormap_init(&cm, RAMP_VIRIDIS, 1000);
	CHECK(cm.levels == CM_MAX_LEVELS);
	colormap_init(&cm, RAMP_VIRIDIS, 0);
	CHECK(cm.levels == 2);
}

static void test_diverging(void)
{
	cm_rgb z = colormap_diverging(0), p = colormap_diverging(1), n = colormap_diverging(-1);
	CHECK(z.r > 240 && z.g > 240 && z.b > 240);
	CHECK(p.r > p.b && n.b > n.r);
	/* Symmetric in lightness, falling away from 0. */
	for (int i = 1; i <= 10; i++) {
		double lp = colormap_lightness(colormap_diverging(i / 10.0));
		double ln = colormap_lightness(colormap_diverging(-i / 10.0));
		double lp0 = colormap_lightness(colormap_diverging((i - 1) / 10.0));
		CHECKF(lp < lp0, "diverging: lightness at %g", i / 10.0);
		CHECKF(fabs(lp - ln) < 0.12, "diverging: %g vs %g at +-%g", lp, ln, i / 10.0);
	}
}

/* Each side of the diverging ramp darkens from the light middle outwards,
 * in 24-bit and on the 256-colour palette (the palette's blue half
 * went lighter and darker again), for the view's odd count of steps and for
 * an even one. */
static void test_diverging_levels(void)
{
	for (int levels = 15; levels <= 16; levels++) {
		colormap cm;
		colormap_init(&cm, RAMP_DIVERGING, levels);
		int bad_rgb = 0, bad_xterm = 0, mid = levels / 2;
		for (int i = 1; i < levels; i++) {
			/* Towards the middle on the blue side, away on the red. */
			int dir = i <= mid - (levels % 2 == 0) ? 1 : i > mid ? -1 : 0;
			if (dir == 0)
				continue;
			double d = colormap_lightness(cm.rgb[i]) - colormap_lightness(cm.rgb[i - 1]);
			double dx = colormap_lightness(colormap_xterm_rgb(cm.xterm[i])) -
				    colormap_lightness(colormap_xterm_rgb(cm.xterm[i - 1]));
			bad_rgb += d * dir <= 0;
			bad_xterm += dx * dir <= 0;
		}
		CHECKF(bad_rgb == 0, "%d levels: %d 24-bit steps against the side's direction",
		       levels, bad_rgb);
		CHECKF(bad_xterm == 0, "%d levels: %d palette steps against the side's direction",
		       levels, bad_xterm);
		CHECKF(colormap_distinct_xterm(&cm) == levels, "%d levels: %d distinct colours",
		       levels, colormap_distinct_xterm(&cm));
	}
}

/* OKLab lightness, chroma and hue (radians) of a colour, from its a and b
 * through colormap_lightness's space: the hue by the angle of (a, b). */
static void lch(cm_rgb c, double *l, double *ch, double *h)
{
	/* a and b from the linear sRGB, as colormap.c computes them. */
	double r = lin(c.r), g = lin(c.g), b = lin(c.b);
	double L = cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
	double M = cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
	double S = cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
	double A = 1.9779984951 * L - 2.4285922050 * M + 0.4505937099 * S;
	double B = 0.0259040371 * L + 0.7827717662 * M - 0.8086757660 * S;
	*l = colormap_lightness(c);
	*ch = hypot(A, B);
	*h = atan2(B, A);
}

/* The 256-colour ramps tested as the 24-bit ones are: brightness (relative
 * luminance) strictly monotone along each ramp, level by level (on the
 * diverging ramp, falling from the middle outwards on each side); and more:
 * each level 0.03 of OKLab lightness at least from the next (a step a person
 * sees), and on the view's diverging ramp (15 steps: lift, differences)
 * every coloured level within 20 degrees of its ramp colour's hue (a teal or
 * lavender step among blues read as structure on the lift scale's blue
 * half). */
static void test_palette_monotone(void)
{
	static const struct {
		cm_ramp ramp;
		int levels;
		bool hue;
	} ramps[] = {{RAMP_VIRIDIS, 16, false},
		     {RAMP_CIVIDIS, 16, false},
		     {RAMP_DIVERGING, 15, true},
		     {RAMP_DIVERGING, 16, false}};
	for (size_t r = 0; r < sizeof ramps / sizeof ramps[0]; r++) {
		colormap cm;
		colormap_init(&cm, ramps[r].ramp, ramps[r].levels);
		int n = cm.levels, mid = n / 2, bad_lum = 0, small = 0, hue = 0;
		bool div = ramps[r].ramp == RAMP_DIVERGING;
		for (int i = 1; i < n; i++) {
			/* +1: brighter upwards; -1: darker (the diverging red side). */
			int dir = !div || i <= mid - (n % 2 == 0) ? 1 : i > mid ? -1 : 0;
			if (dir == 0)
				continue;
			cm_rgb a = colormap_xterm_rgb(cm.xterm[i - 1]),
			       b = colormap_xterm_rgb(cm.xterm[i]);
			bad_lum += (lum(b) - lum(a)) * dir <= 0;
			small +=
			    (colormap_lightness(b) - colormap_lightness(a)) * dir < 0.03 - 1e-9;
		}
		for (int i = 0; ramps[r].hue && i < n; i++) {
			double l0, c0, h0, l1, c1, h1;
			lch(cm.rgb[i], &l0, &c0, &h0);
			lch(colormap_xterm_rgb(cm.xterm[i]), &l1, &c1, &h1);
			double dh = fabs(remainder(h1 - h0, 2 * M_PI)) * 180 / M_PI;
			hue += c0 > 0.05 && c1 > 0.03 && dh > 20;
		}
		const char *name = colormap_ramp_name(ramps[r].ramp);
		CHECKF(bad_lum == 0, "%s, %d levels: %d palette steps not brighter", name, n,
		       bad_lum);
		CHECKF(small == 0, "%s, %d levels: %d palette steps under 0.03 of lightness", name,
		       n, small);
		CHECKF(hue == 0, "%s, %d levels: %d levels more than 20 degrees off the hue", name,
		       n, hue);
	}
}

/* The palette colours follow the ramp as closely as steps of 0.03 in
 * lightness and the ramp's hue allow: the mean OKLab distance over 16
 * levels of viridis is 0.087 (0.051 without the steps and the hue, 0.057
 * with the nearest lighter colour), and its middle levels take no grey (a
 * grey viridis mid-tone reads as mud). */
static void test_palette_fit(void)
{
	colormap cm;
	double worst;
	colormap_init(&cm, RAMP_VIRIDIS, 16);
	double mean = colormap_xterm_error(&cm, &worst);
	printf("viridis on 256 colours: mean OKLab distance %.4f, worst %.4f\n", mean, worst);
	CHECKF(mean < 0.09, "viridis: mean distance %.4f", mean);
	for (int i = 0; i < 16; i++) {
		cm_rgb x = colormap_xterm_rgb(cm.xterm[i]);
		CHECKF(!(x.r == x.g && x.g == x.b), "viridis level %d is grey %d", i, cm.xterm[i]);
	}
	colormap_init(&cm, RAMP_DIVERGING, 15);
	mean = colormap_xterm_error(&cm, &worst);
	printf("diverging on 256 colours: mean OKLab distance %.4f, worst %.4f\n", mean, worst);
	CHECKF(mean < 0.048, "diverging: mean distance %.4f", mean);
}

static void test_shades(void)
{
	CHECK(colormap_shade(0) == ' ');
	CHECK(colormap_shade(0.1f) == ' ');
	CHECK(colormap_shade(0.2f) == 0x2591);
	CHECK(colormap_shade(0.5f) == 0x2592);
	CHECK(colormap_shade(0.8f) == 0x2593);
	CHECK(colormap_shade(1) == 0x2588);
	CHECK(colormap_shade(NAN) == ' ');
	CHECK(colormap_shade(5) == 0x2588);
	/* Never lighter for a larger weight. */
	static const uint32_t order[] = {0x20, 0x2591, 0x2592, 0x2593, 0x2588};
	int prev = 0, bad = 0;
	for (int i = 0; i <= 1000; i++) {
		uint32_t s = colormap_shade(i / 1000.0f);
		int idx = 0;
		while (idx < 5 && order[idx] != s)
			idx++;
		bad += idx == 5 || idx < prev;
		prev = idx;
	}
	CHECK(bad == 0);
}

static void test_no_color(void)
{
	CHECK(!colormap_no_color(NULL));
	CHECK(!colormap_no_color(""));
	CHECK(colormap_no_color("1"));
	CHECK(colormap_no_color("0")); /* any non-empty value, even "0" */
	CHECK(colormap_choose(256, NULL) == CM_256);
	CHECK(colormap_choose(88, NULL) == CM_SHADE);
	CHECK(colormap_choose(16, "") == CM_SHADE);
	CHECK(colormap_choose(8, NULL) == CM_SHADE);
	CHECK(colormap_choose(256, "yes") == CM_MONO);
	CHECK(colormap_choose(0, NULL) == CM_MONO);
	CHECK(colormap_choose(1 << 24, NULL) == CM_DIRECT);
	CHECK(colormap_choose(1 << 24, "1") == CM_MONO);
	CHECK(colormap_colorterm_direct("truecolor") && colormap_colorterm_direct("24bit"));
	CHECK(!colormap_colorterm_direct(NULL) && !colormap_colorterm_direct("yes"));
}

int main(void)
{
	test_viridis();
	test_xterm();
	test_levels();
	test_diverging();
	test_diverging_levels();
	test_palette_fit();
	test_palette_monotone();
	test_shades();
	test_no_color();
	return test_summary("colormap");
}

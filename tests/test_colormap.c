/* The colour ramp: viridis end points, lightness rising along the ramp (so a
 * larger weight always looks brighter), the xterm palette, quantisation, shade
 * characters for few-colour terminals, and NO_COLOR. */
#include "attnview/colormap.h"
#include "harness.h"

#include <math.h>

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
	CHECK(rgb_eq(colormap_viridis(0.5), 0x21, 0x90, 0x8c));
	CHECK(rgb_eq(colormap_viridis(-3), 0x44, 0x01, 0x54));
	CHECK(rgb_eq(colormap_viridis(7), 0xfd, 0xe7, 0x25));
	CHECK(rgb_eq(colormap_viridis(NAN), 0x44, 0x01, 0x54));
	/* Perceptually ordered: brightness rises strictly along the ramp. */
	double prev = -1;
	int bad = 0;
	for (int i = 0; i <= 100; i++) {
		double l = lum(colormap_viridis(i / 100.0));
		bad += l <= prev;
		prev = l;
	}
	CHECKF(bad == 0, "%d steps where the ramp does not get brighter", bad);
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
	colormap_init(&cm, 16);
	CHECK(cm.levels == 16);
	CHECK(colormap_level(&cm, 0) == 0);
	CHECK(colormap_level(&cm, 1) == 15);
	CHECK(colormap_level(&cm, 0.5f) == 8);
	CHECK(colormap_level(&cm, 0.0624f) == 0);
	CHECK(colormap_level(&cm, 0.0626f) == 1);
	CHECK(colormap_level(&cm, NAN) == 0);
	CHECK(colormap_level(&cm, -1) == 0);
	CHECK(colormap_level(&cm, 2) == 15);
	/* The quantised ramp stays ordered and uses many distinct colours. */
	int distinct = 1, bad = 0;
	for (int i = 1; i < cm.levels; i++) {
		distinct += cm.xterm[i] != cm.xterm[i - 1];
		bad +=
		    lum(colormap_xterm_rgb(cm.xterm[i])) < lum(colormap_xterm_rgb(cm.xterm[i - 1]));
	}
	CHECKF(distinct >= 10, "only %d distinct colours in 16 levels", distinct);
	CHECKF(bad == 0, "%d levels darker than the one below", bad);
	CHECK(!cm.dark_text[0]);
	CHECK(cm.dark_text[15]);
	for (int i = 0; i < 16; i++)
		CHECK(cm.xterm[i] >= 16 && cm.xterm[i] <= 255);
	colormap_init(&cm, 1000);
	CHECK(cm.levels == CM_MAX_LEVELS);
	colormap_init(&cm, 0);
	CHECK(cm.levels == 2);
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
}

int main(void)
{
	test_viridis();
	test_xterm();
	test_levels();
	test_shades();
	test_no_color();
	return test_summary("colormap");
}

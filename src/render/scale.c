/* Colour scales (scale.h). */
#include "attnview/scale.h"
#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The names of --scale; a person reads them translated (scale_title). */
static const char *const names[SCALE_NKINDS + 1] = {
    NC_("colour scale", "fixed"), NC_("colour scale", "head"), NC_("colour scale", "row"),
    NC_("colour scale", "log"),	  NC_("colour scale", "lift"), NC_("colour scale", "diff")};
_Static_assert(sizeof names / sizeof names[0] == SCALE_NKINDS + 1, "one name a scale");

const char *scale_name(scale_kind k)
{
	return k <= SCALE_DIFF ? names[k] : "?";
}

const char *scale_title(scale_kind k)
{
	return av_pgettext("colour scale", scale_name(k));
}

bool scale_parse(const char *name, scale_kind *k)
{
	for (int i = 0; i < SCALE_NKINDS; i++)
		if (strcmp(name, names[i]) == 0) {
			*k = (scale_kind)i;
			return true;
		}
	return false;
}

const char *scale_names_list(const char *last)
{
	static char buf[96];
	size_t len = 0;
	for (int i = 0; i < SCALE_NKINDS && len < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
					i == 0			? ""
					: i == SCALE_NKINDS - 1 ? last
								: ", ",
					names[i]);
	return buf;
}

bool scale_diverging(scale_kind k)
{
	return k == SCALE_LIFT || k == SCALE_DIFF;
}

const char *scale_unit(scale_kind k)
{
	return k == SCALE_ROW	 ? "÷ row max"
	       : k == SCALE_DIFF ? "difference"
	       : k == SCALE_LIFT ? "× uniform"
				 : "weight";
}

/* Keys row q sees: all but those the mask hides. */
static int row_keys(const attn_matrix *a, int q)
{
	int n = 0;
	for (int k = 0; k < a->n; k++)
		n += !attn_masked(a, q, k);
	return n > 0 ? n : 1;
}

static float row_max(const attn_matrix *a, int q)
{
	float m = 0;
	for (int k = 0; k < a->n; k++)
		if (!attn_masked(a, q, k) && attn_at(a, q, k) > m)
			m = attn_at(a, q, k);
	return m > 0 ? m : 1.0f;
}

void scale_init(scale *s, scale_kind kind, const attn_matrix *a, float *rmax)
{
	s->kind = kind;
	s->max = 1.0f;
	s->row_max = NULL;
	s->causal = false;
	s->decades = SCALE_LIFT_DECADES;
	if (kind == SCALE_DIFF) {
		float m = 0;
		for (int q = 0; q < a->n; q++)
			for (int k = 0; k < a->n; k++)
				if (!attn_masked(a, q, k) && fabsf(attn_at(a, q, k)) > m)
					m = fabsf(attn_at(a, q, k));
		s->max = m > 0 ? m : 1.0f;
	} else if (kind == SCALE_HEAD) {
		float m = 0;
		for (int q = 0; q < a->n; q++) {
			float r = row_max(a, q);
			m = r > m ? r : m;
		}
		s->max = m > 0 ? m : 1.0f;
	} else if (kind == SCALE_ROW && rmax) {
		for (int q = 0; q < a->n; q++)
			rmax[q] = row_max(a, q);
		s->row_max = rmax;
	} else if (kind == SCALE_LIFT) {
		for (int q = 0; rmax && q < a->n; q++)
			rmax[q] = (float)row_keys(a, q);
		s->row_max = rmax;
		s->max = (float)a->n;
		s->causal = a->causal;
		s->decades = scale_lift_decades(a->n);
	}
}

float scale_lift_decades(int n)
{
	float d = n > 1 ? log10f((float)n) : 0;
	return d < SCALE_LIFT_MIN_DECADES ? SCALE_LIFT_MIN_DECADES
	       : d > SCALE_LIFT_DECADES	  ? SCALE_LIFT_DECADES
					  : d;
}

/* The number of keys row q sees; without the counts, what the mask leaves. */
static float row_keys_of(const scale *s, int q)
{
	return s->row_max ? s->row_max[q] : s->causal ? (float)(q + 1) : s->max;
}

float scale_lift_pos(const scale *s, float lift)
{
	if (!(lift > 0))
		return 0.0f;
	/* Within SCALE_LIFT_NEAR decades of uniform, a fixed log scale (the
	 * broad heads' colours do not depend on the text's length); beyond,
	 * the rest of each half of the ramp up to the text's largest lift. */
	const float near = SCALE_LIFT_NEAR, u0 = SCALE_LIFT_NEAR / SCALE_LIFT_DECADES;
	float x = log10f(lift), a = fabsf(x);
	float u = a <= near ? a / SCALE_LIFT_DECADES
			    : u0 + (1.0f - u0) * (a - near) / (s->decades - near);
	return 0.5f + 0.5f * (x < 0 ? -u : u);
}

static float lift_pos(const scale *s, float lift)
{
	return scale_lift_pos(s, lift);
}

/* t clamped to the ramp, [0, 1]; NaN gives 0. */
static float ramp(float t)
{
	if (!(t > 0))
		return 0;
	return t > 1 ? 1 : t;
}

float scale_pos(const scale *s, int q, float w)
{
	float t;
	switch (s->kind) {
	case SCALE_HEAD:
		t = w / s->max;
		break;
	case SCALE_ROW:
		t = s->row_max ? w / s->row_max[q] : w;
		break;
	case SCALE_LOG:
		t = w > 0 ? 1.0f + log10f(w) / SCALE_LOG_DECADES : 0.0f;
		break;
	case SCALE_LIFT:
		t = lift_pos(s, w * row_keys_of(s, q));
		break;
	case SCALE_DIFF:
		t = 0.5f + 0.5f * w / s->max;
		break;
	case SCALE_FIXED:
	default:
		t = w;
		break;
	}
	return ramp(t);
}

static void block(int i, int parts, int n, int *b0, int *b1)
{
	*b0 = (int)((long)i * n / parts);
	*b1 = (int)((long)(i + 1) * n / parts);
	if (*b1 <= *b0)
		*b1 = *b0 + 1;
}

/* A sample of scale_pool under lift over queries [q0, q1) and keys [k0, k1)
 * (*seen: the visible cells): a key holding a quarter of a row's attention,
 * twice uniform's or more, shows as itself (a diagonal stays a line); else
 * the block's mean lift, its weight against uniform's (noise averages
 * out). */
static float pool_lift(const attn_matrix *a, const scale *s, int q0, int q1, int k0, int k1,
		       int *seen)
{
	float sharp = -1;
	double lift = 0;
	for (int q = q0; q < q1; q++) {
		float keys = row_keys_of(s, q);
		for (int k = k0; k < k1 && !attn_masked(a, q, k); k++) {
			float w = attn_at(a, q, k), lq = w * keys;
			if (w >= SCALE_LIFT_SHARP && lq >= 2 && lq > sharp)
				sharp = lq;
			lift += lq;
			++*seen;
		}
	}
	if (!*seen)
		return 0;
	return sharp >= 0 ? ramp(lift_pos(s, sharp)) : lift_pos(s, (float)(lift / *seen));
}

/* One sample of scale_pool over queries [q0, q1) and keys [k0, k1); *any:
 * some cell is visible. The ramps are monotone in w (in w times the row's
 * keys under lift, and within a row under the row scale), so the largest
 * position is the position of the largest weight: one scale_pos, one
 * logarithm, a block rather than a cell (the overview pools every weight of
 * every head on each frame: 12.6 million at 512 tokens of 48 heads). */
static float pool_block(const attn_matrix *a, const scale *s, int q0, int q1, int k0, int k1,
			bool *any)
{
	int seen = 0;
	if (s->kind == SCALE_LIFT) {
		float t = pool_lift(a, s, q0, q1, k0, k1, &seen);
		*any = seen > 0;
		return t;
	}
	float best = 0, top = -INFINITY;
	for (int q = q0; q < q1; q++) {
		float m = -INFINITY;
		for (int k = k0; k < k1 && !attn_masked(a, q, k); k++) {
			float w = attn_at(a, q, k);
			m = w > m ? w : m;
			seen++;
		}
		if (s->kind == SCALE_ROW) { /* each row its own maximum */
			float t = scale_pos(s, q, m);
			best = t > best ? t : best;
		} else {
			top = m > top ? m : top;
		}
	}
	*any = seen > 0;
	return s->kind == SCALE_ROW || !seen ? best : scale_pos(s, q0, top);
}

void scale_pool(float *out, uint8_t *masked, const attn_matrix *a, const scale *s, int rows,
		int cols)
{
	for (int r = 0; r < rows; r++) {
		int q0, q1;
		block(r, rows, a->n, &q0, &q1);
		for (int c = 0; c < cols; c++) {
			int k0, k1;
			block(c, cols, a->n, &k0, &k1);
			bool any;
			size_t i = (size_t)r * (size_t)cols + (size_t)c;
			out[i] = pool_block(a, s, q0, q1, k0, k1, &any);
			masked[i] = !any;
		}
	}
}

/* A weight as a short tick label with `digits` significant digits: ".25",
 * "1", "0", ".003", "-.2". */
static void tick_label(char out[16], double v, int digits)
{
	if (v < 0) {
		char pos[16];
		tick_label(pos, -v, digits);
		snprintf(out, 16, "-%.14s", pos);
		return;
	}
	if (v == 0) {
		snprintf(out, 16, "0");
		return;
	}
	if (v >= 0.9995) {
		snprintf(out, 16, "%.0f", v);
		return;
	}
	char buf[16];
	snprintf(buf, sizeof buf, "%.*g", digits, v);
	/* Drop the leading zero, as the cells' values do. */
	memcpy(out, buf[0] == '0' ? buf + 1 : buf, sizeof buf - (buf[0] == '0'));
	out[15] = '\0';
}

bool scale_tick_label(char out[16], double v, int width)
{
	tick_label(out, v, 2);
	if ((int)strlen(out) > width)
		tick_label(out, v, 1);
	return (int)strlen(out) <= width;
}

static void tick_at(scale_tick *t, float pos, double v)
{
	t->t = pos;
	t->v = v;
	tick_label(t->label, v, 2);
}

/* The lift scale's whole decades inside its range (.01 .. 100 at most), and
 * above them the largest lift the text can have, its size n (a row's whole
 * weight on one key), where the range reaches it. */
static int lift_ticks(const scale *s, scale_tick *out, int max)
{
	int n = 0, top = (int)floorf(s->decades);
	for (int d = -top; d <= top && n < max; d++, n++)
		tick_at(&out[n], lift_pos(s, powf(10.0f, (float)d)), pow(10.0, d));
	float tn = lift_pos(s, s->max);
	if (n < max && tn <= 1.0f + 1e-6f && log10f(s->max) > (float)top + 0.05f)
		tick_at(&out[n++], tn > 1 ? 1 : tn, s->max);
	return n;
}

int scale_ticks(const scale *s, scale_tick *out, int max)
{
	int n = 0;
	switch (s->kind) {
	case SCALE_LOG:
		for (int d = SCALE_LOG_DECADES; d >= 0 && n < max; d--, n++) {
			tick_at(&out[n], 1.0f - (float)d / SCALE_LOG_DECADES, pow(10.0, -d));
		}
		break;
	case SCALE_LIFT:
		n = lift_ticks(s, out, max);
		break;
	case SCALE_DIFF:
		for (int i = -2; i <= 2 && n < max; i++, n++) {
			tick_at(&out[n], 0.5f + i / 4.0f, s->max * i / 2.0);
		}
		break;
	case SCALE_HEAD:
		for (int i = 0; i <= 2 && n < max; i++, n++) {
			tick_at(&out[n], i / 2.0f, s->max * i / 2.0);
		}
		break;
	case SCALE_ROW:
	case SCALE_FIXED:
	default:
		for (int i = 0; i <= 4 && n < max; i++, n++) {
			tick_at(&out[n], i / 4.0f, i / 4.0);
		}
		break;
	}
	return n;
}

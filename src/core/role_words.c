/* Head roles in words (analysis.h): the label a heading or a tile shows, and
 * the sentence that gives its evidence in rows a person can count. */
#include "attnview/analysis.h"
#include "attnview/i18n.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

AV_FORMAT_ARG(1) static const char *tr(const char *msg, bool translate)
{
	return translate ? _(msg) : msg;
}

/* A character as a label shows it: as the view draws it (a space "␣", a
 * line break "⏎", a zero-width joiner "⨝": nothing raw that moves a
 * terminal's cursor; the mask "▒"), the unknown token "�", a format
 * character one cannot see by its number ("<U+202E>"). In a word already
 * in quotes ("after “2026”"), as it is; see put_char. */
static void put_in_word(uint32_t cp, char *out, size_t size)
{
	if (cp == ROLE_UNKNOWN_CP) {
		snprintf(out, size, "\uFFFD");
		return;
	}
	char g[32], raw[4];
	size_t k = cp_glyph(cp, g), r = cp < AV_SPECIAL_CP ? cp_to_utf8(cp, raw) : 0;
	/* A format character the view has no stand-in for: its glyph ends
	 * raw, or is the placeholder alone (a direction control). Its number,
	 * in brackets that keep it apart from the letters around it. */
	utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
	if (r &&
	    (c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP) &&
	    ((k >= r && memcmp(g + k - r, raw, r) == 0) || strcmp(g, "\u25CC") == 0))
		snprintf(out, size, "<U+%04X>", (unsigned)cp);
	else
		snprintf(out, size, "%s", g);
}

/* A character alone: as in a word, and a slash in quotes (bare, it would
 * read as the line between two roles: "keyword / @ / first"), and so a
 * digit (bare, it reads as part of a number: "keyword a 0 0.59", "look
 * at 2 at position 24"). */
static void put_char(uint32_t cp, char *out, size_t size)
{
	if (cp == '/' || (cp >= '0' && cp <= '9'))
		snprintf(out, size, "“%c”", (char)cp);
	else
		put_in_word(cp, out, size);
}

static void keys_text(const role_scores *rs, const char *sep, char *out, size_t size)
{
	char a[16], b[16];
	put_char(rs->keys[0], a, sizeof a);
	if (rs->nkeys < 2) {
		snprintf(out, size, "%s", a);
		return;
	}
	put_char(rs->keys[1], b, sizeof b);
	snprintf(out, size, "%s%s%s", a, sep, b);
}

/* The name of role r on this head: "2 left", "keyword 是 头", "previous". */
static void name_of(const role_scores *rs, role_kind r, bool translate, char *out, size_t size)
{
	char keys[32];
	if (r == ROLE_OFFSET && rs->offset != 0) {
		snprintf(out, size,
			 rs->offset < 0 ? tr(N_("%d left"), translate)
					: tr(N_("%d right"), translate),
			 abs(rs->offset));
	} else if (r == ROLE_KEYWORD && rs->nkeys > 0) {
		keys_text(rs, " ", keys, sizeof keys);
		snprintf(out, size, tr(N_("keyword %s"), translate), keys);
	} else {
		snprintf(out, size, "%s", tr(role_name(r), translate));
	}
}

void role_short_label(const role_scores *rs, bool translate, char *out, size_t size)
{
	if (rs->verdict == ROLE_SHORT)
		snprintf(out, size, "%s", tr(N_("too short"), translate));
	else
		name_of(rs, rs->role, translate, out, size);
}

/* The closest role's score in percent, rounded, but under the bar's
 * percentage when under the bar: "unclear: 50%" beside a bar of 0.5 or
 * more would read as a contradiction (0.4995 is 49%). */
static int unclear_percent(const role_scores *rs)
{
	int pct = (int)(100 * rs->score + 0.5);
	if (rs->role < ROLE_NKINDS) {
		int bar = (int)ceil(100 * role_bar(rs->role) - 1e-9);
		if (rs->score < role_bar(rs->role) && pct >= bar)
			pct = bar - 1;
	}
	return pct;
}

void role_label(const role_scores *rs, bool translate, char *out, size_t size)
{
	char a[64], b[64];
	name_of(rs, rs->role, translate, a, sizeof a);
	switch (rs->verdict) {
	case ROLE_SHORT:
		snprintf(out, size, "%s", tr(N_("too short to tell"), translate));
		break;
	case ROLE_UNSURE:
		/* TRANSLATORS: a head whose rows follow no role; %d%% the score
		 * of the closest (a share of rows), %s its name. */
		snprintf(out, size, tr(N_("unclear: %d%% %s"), translate), unclear_percent(rs), a);
		break;
	case ROLE_TWO:
		name_of(rs, rs->second, translate, b, sizeof b);
		snprintf(out, size, "%s / %s", a, b);
		break;
	default:
		snprintf(out, size, "%s", a);
	}
}

void role_title(const role_scores *rs, bool translate, char *out, size_t size)
{
	char label[160];
	if (rs->verdict == ROLE_TWO) {
		/* Each role with its own score: the second may be the higher
		 * (induction named first, same script above it). */
		char a[64], b[64];
		name_of(rs, rs->role, translate, a, sizeof a);
		name_of(rs, rs->second, translate, b, sizeof b);
		snprintf(out, size, "%s %.2f / %s %.2f", a, rs->score, b, rs->second_score);
		return;
	}
	role_label(rs, translate, label, sizeof label);
	if (rs->verdict == ROLE_SURE)
		snprintf(out, size, "%s %.2f", label, rs->score);
	else
		snprintf(out, size, "%s", label);
}

/* The key most rows look at, as a person finds it: "the space after
 * “fruit”", "疑 at position 6"; its position too where the word before it
 * comes again before the same character ("h at position 35, after “t”"). */
static void column_text(const role_scores *rs, bool translate, char *out, size_t size)
{
	char c[16], before[9 * 16] = "";
	uint32_t cp = rs->column >= 0 ? rs->column_cp : 0;
	put_char(cp, c, sizeof c);
	size_t at = 0;
	if (rs->before_cut) /* "after “…pple和5个香”", not a word of its own */
		at = (size_t)snprintf(before, sizeof before, "…");
	for (int k = 0; k < rs->nbefore; k++) {
		put_in_word(rs->before[k], before + at, sizeof before - at);
		at += strlen(before + at);
	}
	/* A character the model does not know is found by its position: the
	 * word before it may look like another's ("о after “Р”" in Cyrillic). */
	const bool alone = rs->column_alone && !rs->column_unknown;
	if (at == 0 && cp == ' ')
		snprintf(out, size, tr(N_("the space at position %d"), translate), rs->column);
	else if (at == 0)
		snprintf(out, size, tr(N_("%s at position %d"), translate), c, rs->column);
	else if (!alone && cp == ' ')
		snprintf(out, size, tr(N_("the space at position %d, after “%s”"), translate),
			 rs->column, before);
	else if (!alone)
		snprintf(out, size, tr(N_("%s at position %d, after “%s”"), translate), c,
			 rs->column, before);
	else if (cp == ' ')
		snprintf(out, size, tr(N_("the space after “%s”"), translate), before);
	else
		snprintf(out, size, tr(N_("%s after “%s”"), translate), c, before);
}

/* Whether the column is one of the keyword's characters and holds more
 * than half of the rows on them: the sentence then says where they look
 * (attnview(1), keyword). */
static bool column_of_keys(const role_scores *rs)
{
	return rs->column >= 0 && rs->column_is_key && 2 * rs->column_rows > rs->hits[ROLE_KEYWORD];
}

/* A keyword whose rows look at one place: that place, with the chance of
 * the score (the place's, or the copies' said to be theirs); or, where the
 * place most rows look at is not the keyword's, the keyword's rows. */
static void place_evidence(const role_scores *rs, bool translate, char *out, size_t size)
{
	const int h = rs->hits[ROLE_KEYWORD], n = rs->rows[ROLE_KEYWORD];
	const int pc = (int)(100 * (rs->by_place ? rs->column_chance : rs->key_chance) + 0.5);
	char what[256], key[16];
	column_text(rs, translate, what, sizeof what);
	put_char(rs->keys[0], key, sizeof key);
	if (!rs->column_is_key)
		snprintf(out, size,
			 pc >= 5
			     ? tr(N_("%d of %d rows look at %s (%d%% would by chance)"), translate)
			     : tr(N_("%d of %d rows look at %s"), translate),
			 h, n, key, pc);
	else if (pc < 5)
		snprintf(out, size, tr(N_("%d of %d rows look at %s"), translate), rs->column_rows,
			 n, what);
	else if (rs->by_place)
		snprintf(out, size,
			 tr(N_("%d of %d rows look at %s (%d%% would by chance)"), translate),
			 rs->column_rows, n, what, pc);
	else
		snprintf(out, size,
			 /* TRANSLATORS: the second %s is the character, as in
			  * "(13% would look at a b by chance)". */
			 tr(N_("%d of %d rows look at %s (%d%% would look at a %s by chance)"),
			    translate),
			 rs->column_rows, n, what, pc, key);
}

/* A keyword's evidence: its characters, or the one place most rows look. */
static void keyword_evidence(const role_scores *rs, bool translate, char *out, size_t size)
{
	const int h = rs->hits[ROLE_KEYWORD], n = rs->rows[ROLE_KEYWORD];
	char what[256];
	/* Rows on copies of a frequent character: how many would by chance. */
	const int chance = (int)(100 * rs->key_chance + 0.5);
	/* One place is the sentence when the score is that place's, or the
	 * rows look at no other copy; else the copies and their chance, and
	 * the place that holds most rows after them. */
	const bool one_place = rs->nkeys < 2 && (rs->key_places <= 1 || rs->by_place);
	if (one_place) {
		place_evidence(rs, translate, out, size);
	} else if (rs->nkeys > 1) {
		keys_text(rs, tr(N_(" or "), translate), what, sizeof what);
		snprintf(out, size,
			 chance >= 5
			     ? tr(N_("%d of %d rows look at %s (%d%% would by chance)"), translate)
			     : tr(N_("%d of %d rows look at %s"), translate),
			 h, n, what, chance);
	} else {
		keys_text(rs, "", what, sizeof what);
		snprintf(out, size,
			 chance >= 5 ? tr(N_("%d of %d rows look at %s (at %d different places; "
					     "%d%% would by chance)"),
					  translate)
				     : tr(N_("%d of %d rows look at %s (at %d different places)"),
					  translate),
			 h, n, what, rs->key_places, chance);
	}
	/* Most rows on one of several places: a column inside the keyword. */
	if (!one_place && column_of_keys(rs)) {
		size_t len = strlen(out);
		column_text(rs, translate, what, sizeof what);
		/* TRANSLATORS: appended to a keyword's evidence: how many of its
		 * rows look at one place, and which. */
		snprintf(out + len, size > len ? size - len : 0,
			 tr(N_(", %d of them at %s"), translate), rs->column_rows, what);
	}
	/* One of the keys is every character outside the vocabulary. */
	if (rs->keys[0] == ROLE_UNKNOWN_CP || (rs->nkeys > 1 && rs->keys[1] == ROLE_UNKNOWN_CP)) {
		size_t len = strlen(out);
		/* TRANSLATORS: appended to a keyword's evidence when its key is
		 * U+FFFD, the mark of unknown characters. */
		snprintf(out + len, size > len ? size - len : 0, "%s",
			 tr(N_("; � is any character the model does not know"), translate));
	}
}

/* Induction's evidence, with the chance of landing after a copy where it
 * is 5% or more (a text of few characters, where many keys follow one). */
static void induction_evidence(const role_scores *rs, bool translate, char *out, size_t size)
{
	const int h = rs->hits[ROLE_INDUCTION], n = rs->rows[ROLE_INDUCTION];
	const int pc = (int)(100 * rs->ind_chance + 0.5);
	if (pc >= 5)
		snprintf(out, size,
			 tr(N_("%d of %d rows with an earlier copy of their character look at the "
			       "character after it (%d%% would by chance; an induction head)"),
			    translate),
			 h, n, pc);
	else
		snprintf(out, size,
			 tr(N_("%d of %d rows with an earlier copy of their character look at the "
			       "character after it (an induction head)"),
			    translate),
			 h, n);
}

/* The evidence of role r: "47 of 73 rows look at the character before". */
static void evidence(const role_scores *rs, role_kind r, bool translate, char *out, size_t size)
{
	const int h = rs->hits[r], n = rs->rows[r];
	switch (r) {
	case ROLE_DELIMITER:
		snprintf(out, size,
			 2 * rs->ahead > h
			     ? tr(N_("%d of %d rows look at the nearest space or punctuation mark, "
				     "mostly the one that ends their phrase (%d different ones)"),
				  translate)
			     : tr(N_("%d of %d rows look at the nearest space or punctuation mark "
				     "(%d different ones)"),
				  translate),
			 h, n, rs->places);
		break;
	case ROLE_LOCAL:
		if (rs->causal)
			snprintf(out, size,
				 tr(N_("%d of %d rows look at themselves or one or two to the left "
				       "(%d themselves, %d one, %d two to the left)"),
				    translate),
				 h, n, h - rs->left1 - rs->left2, rs->left1, rs->left2);
		else
			snprintf(
			    out, size,
			    tr(N_("%d of %d rows look within two places of themselves"), translate),
			    h, n);
		break;
	case ROLE_OFFSET:
		snprintf(out, size,
			 rs->offset < 0
			     ? tr(N_("%d of %d rows look %d places to the left"), translate)
			     : tr(N_("%d of %d rows look %d places to the right"), translate),
			 h, n, abs(rs->offset));
		break;
	case ROLE_KEYWORD:
		keyword_evidence(rs, translate, out, size);
		break;
	case ROLE_SCRIPT:
		snprintf(
		    out, size,
		    tr(N_("%d of %d rows look at a character of their own script (%d%% would by "
			  "chance)"),
		       translate),
		    h, n, (int)(100 * rs->chance + 0.5));
		break;
	case ROLE_PARALLEL:
		snprintf(out, size,
			 rs->causal || rs->par_dir < 0
			     ? tr(N_("%d of %d rows look at the same place in the line before"),
				  translate)
			 : rs->par_dir > 0
			     ? tr(N_("%d of %d rows look at the same place in the line after"),
				  translate)
			     : tr(N_("%d of %d rows look at the same place in the line before "
				     "or after"),
				  translate),
			 h, n);
		break;
	case ROLE_MIRROR:
		snprintf(out, size,
			 tr(N_("%d of %d rows look at their mirror image: row i at key %d - i"),
			    translate),
			 h, n, rs->mirror);
		break;
	case ROLE_WORDSTART:
		snprintf(out, size,
			 tr(N_("%d of %d rows two places or more into a word or phrase look at its "
			       "first character (%d different ones)"),
			    translate),
			 h, n, rs->places);
		break;
	case ROLE_PREVIOUS:
		snprintf(out, size, tr(N_("%d of %d rows look at the character before"), translate),
			 h, n);
		break;
	case ROLE_NEXT:
		snprintf(out, size, tr(N_("%d of %d rows look at the character after"), translate),
			 h, n);
		break;
	case ROLE_SELF:
		snprintf(out, size, tr(N_("%d of %d rows look at their own character"), translate),
			 h, n);
		break;
	case ROLE_FIRST:
		snprintf(out, size,
			 tr(N_("%d of %d rows look at the first character of the text"), translate),
			 h, n);
		break;
	case ROLE_DUPLICATE:
		snprintf(out, size,
			 tr(N_("%d of %d rows with another copy of their character look at it"),
			    translate),
			 h, n);
		break;
	case ROLE_INDUCTION:
		induction_evidence(rs, translate, out, size);
		break;
	default:
		snprintf(
		    out, size,
		    tr(N_("%d of %d rows look nowhere in particular: no key gets three times an "
			  "even share"),
		       translate),
		    h, n);
	}
}

void role_sentence(const role_scores *rs, bool translate, char *out, size_t size)
{
	char a[256], b[256];
	switch (rs->verdict) {
	case ROLE_SHORT:
		snprintf(
		    out, size,
		    tr(N_("too short to tell: a label needs %d rows with a choice of keys, this "
			  "text gives %d"),
		       translate),
		    ROLE_MIN_LABEL_ROWS, rs->n);
		return;
	case ROLE_UNSURE:
		evidence(rs, rs->role, translate, a, sizeof a);
		snprintf(
		    out, size,
		    tr(N_("no role holds for most rows beyond chance; the closest: %s"), translate),
		    a);
		return;
	case ROLE_TWO:
		evidence(rs, rs->role, translate, a, sizeof a);
		evidence(rs, rs->second, translate, b, sizeof b);
		/* TRANSLATORS: two roles fit a head: their evidence, joined. */
		snprintf(out, size, tr(N_("%s; and %s"), translate), a, b);
		return;
	default:
		evidence(rs, rs->role, translate, out, size);
	}
}

void role_runner_up(const role_scores *rs, bool translate, char *out, size_t size)
{
	if (rs->verdict == ROLE_TWO || rs->verdict == ROLE_SHORT || rs->second >= ROLE_NKINDS) {
		out[0] = '\0';
		return;
	}
	char name[64];
	name_of(rs, rs->second, translate, name, sizeof name);
	/* line-parallel over one side's rows: the count says which */
	bool side = rs->second == ROLE_PARALLEL && rs->par_dir != 0;
	snprintf(out, size,
		 !side ? tr(N_("runner-up: %s, %d of %d rows"), translate)
		 : rs->par_dir < 0
		     ? tr(N_("runner-up: %s, %d of %d rows with a line before"), translate)
		     : tr(N_("runner-up: %s, %d of %d rows with a line after"), translate),
		 name, rs->hits[rs->second], rs->rows[rs->second]);
}

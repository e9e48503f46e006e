/* The key table (src/view/keys.h): no key does two things in the same place,
 * every action can be reached and is described on the help screen, no
 * printable key is bound anywhere (typing always reaches the text), every key
 * named there is documented in man/attnview.1, and the Alt-digit keys count
 * heads from 0 as --dump does. */
#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "harness.h"
#include "keys.h"

#include <stdlib.h>
#include <string.h>

static void test_no_conflicts(void)
{
	for (size_t i = 0; i < VIEW_NKEYS; i++)
		for (size_t j = i + 1; j < VIEW_NKEYS; j++) {
			const key_binding *a = &view_keys[i], *b = &view_keys[j];
			CHECKF(!(a->key == b->key && a->is_code == b->is_code && (a->ctx & b->ctx)),
			       "key %d (%s) bound twice in context %u", a->key,
			       a->name ? a->name : "?", a->ctx & b->ctx);
		}
}

static void test_reachable(void)
{
	/* Every action has a key with a help line in some context; the input
	 * line, the map and the overview each have a way to quit and to help. */
	for (int act = ACT_NONE + 1; act < ACT_COUNT; act++) {
		bool described = false;
		for (size_t i = 0; i < VIEW_NKEYS; i++)
			if ((int)view_keys[i].act == act && view_keys[i].name)
				described = true;
		CHECKF(described, "action %d has no named key", act);
	}
	unsigned ctxs[] = {KC_INPUT, KC_MAP, KC_OVERVIEW, KC_TIMELINE};
	for (size_t c = 0; c < 4; c++) {
		bool quit = false, help = false;
		for (size_t i = 0; i < VIEW_NKEYS; i++) {
			if (!(view_keys[i].ctx & ctxs[c]))
				continue;
			quit |= view_keys[i].act == ACT_QUIT;
			help |= view_keys[i].act == ACT_HELP;
		}
		CHECKF(quit && help, "context %u lacks quit or help", ctxs[c]);
	}
	/* The first binding of each group carries the help text. */
	CHECK(view_keys[0].help != NULL);
	/* A printable key bound anywhere would swallow typed text (typing "quick" on the map quit at the q). Alt-keys are not printable. */
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const key_binding *b = &view_keys[i];
		CHECKF(b->is_code || b->key < 0x20 || b->key == 0x7f || (b->key & ALT_BIT),
		       "printable key '%c' bound (context %u)", b->key, b->ctx);
	}
	/* Quitting takes a key nobody types in a sentence. */
	for (size_t i = 0; i < VIEW_NKEYS; i++)
		if (view_keys[i].act == ACT_QUIT)
			CHECKF(!(view_keys[i].key & ALT_BIT) &&
				   (view_keys[i].is_code || view_keys[i].key < 0x20),
			       "quit bound to %s", view_keys[i].name);
}

/* An entry without help text is shown on the help screen as another key of
 * the nearest entry above that has one (view.c, build_help): it must do the
 * same thing in the same place, or the screen describes it wrongly (Shift-Tab
 * in the overview was listed under Tab, "select the head on the right"). */
static void test_groups(void)
{
	const key_binding *group = NULL;
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const key_binding *b = &view_keys[i];
		if (b->help) {
			CHECKF(b->name != NULL, "entry %zu has help text but no name", i);
			group = b;
			continue;
		}
		CHECKF(group != NULL, "entry %zu (%s) has no entry with help above it", i,
		       b->name ? b->name : "?");
		if (!group)
			continue;
		CHECKF(b->act == group->act,
		       "%s (action %d) is listed under %s, which does action %d (\"%s\")",
		       b->name ? b->name : "an unnamed key", (int)b->act, group->name,
		       (int)group->act, group->help);
		CHECKF(b->ctx == group->ctx, "%s is listed under %s of another section",
		       b->name ? b->name : "an unnamed key", group->name);
	}
}

/* Alt-0..9 select heads 0..9 (actions.c: key - '0'), the numbers --dump
 * prints; the help line and the man page must say so. */
static void test_digits(const char *man)
{
	for (int d = '0'; d <= '9'; d++) {
		bool bound = false;
		for (size_t i = 0; i < VIEW_NKEYS; i++)
			if (view_keys[i].key == ALT(d) && !view_keys[i].is_code &&
			    (view_keys[i].ctx & KC_MAP))
				bound = view_keys[i].act == ACT_HEAD_NUMBER;
		CHECKF(bound, "Alt-%c does not select a head on the map", d);
	}
	const key_binding *named = NULL;
	for (size_t i = 0; i < VIEW_NKEYS && !named; i++)
		if (view_keys[i].act == ACT_HEAD_NUMBER && view_keys[i].name)
			named = &view_keys[i];
	CHECK(named != NULL);
	if (named) {
		CHECKF(named->key == ALT('0'), "the digit group starts at %s", named->name);
		CHECKF(strcmp(named->name, "Alt-0..9") == 0, "digit keys named '%s'", named->name);
		CHECKF(strstr(named->help, "head 0..9") != NULL, "digit help '%s'", named->help);
	}
	if (man) {
		CHECKF(strstr(man, "Head 0 to 9") != NULL,
		       "man/attnview.1: digits not head 0 to 9");
		CHECKF(strstr(man, "head 10") == NULL, "man/attnview.1 still has 'head 10'");
	}
}

static void test_documented(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/../man/attnview.1",
		 getenv("ATTNVIEW_TEST_DATA") ? getenv("ATTNVIEW_TEST_DATA") : ".");
	size_t n;
	uint8_t *doc = test_read_file(path, &n);
	CHECKF(doc != NULL, "cannot read %s", path);
	if (!doc) {
		test_digits(NULL);
		return;
	}
	char *text = malloc(n + 1);
	if (!text)
		abort();
	memcpy(text, doc, n);
	text[n] = '\0';
	for (size_t i = 0; i < VIEW_NKEYS; i++) {
		const char *name = view_keys[i].name;
		if (!name)
			continue;
		CHECKF(strstr(text, name) != NULL, "key %s is not in man/attnview.1", name);
	}
	test_digits(text);
	free(text);
	free(doc);
}

int main(void)
{
	test_no_conflicts();
	test_reachable();
	test_groups();
	test_documented();
	return test_summary("keys");
}

/* The key table (include/attnview/keys.h): no key does two things in the same
 * place, every action can be reached and is described on the help screen,
 * and every key named there is documented in man/attnview.1. */
#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "attnview/keys.h"
#include "harness.h"

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
	for (int act = ACT_NONE + 1; act <= ACT_EDIT_DELETE_WORD; act++) {
		bool described = false;
		for (size_t i = 0; i < VIEW_NKEYS; i++)
			if ((int)view_keys[i].act == act && view_keys[i].name)
				described = true;
		CHECKF(described, "action %d has no named key", act);
	}
	unsigned ctxs[] = {KC_INPUT, KC_MAP, KC_OVERVIEW};
	for (size_t c = 0; c < 3; c++) {
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
	/* Printable keys of the input line would swallow typed text. */
	for (size_t i = 0; i < VIEW_NKEYS; i++)
		if (view_keys[i].ctx & KC_INPUT)
			CHECKF(view_keys[i].is_code || view_keys[i].key < 0x20 ||
				   view_keys[i].key == 0x7f,
			       "printable key '%c' bound in the input line", view_keys[i].key);
}

static void test_documented(void)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/../man/attnview.1",
		 getenv("ATTNVIEW_TEST_DATA") ? getenv("ATTNVIEW_TEST_DATA") : ".");
	size_t n;
	uint8_t *doc = test_read_file(path, &n);
	CHECKF(doc != NULL, "cannot read %s", path);
	if (!doc)
		return;
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
	free(text);
	free(doc);
}

int main(void)
{
	test_no_conflicts();
	test_reachable();
	test_documented();
	return test_summary("keys");
}

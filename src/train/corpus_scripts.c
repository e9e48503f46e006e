/* Which writing systems the validation split holds, against the training
 * split (corpus.h, corpus_script_shares): a text in two languages is
 * validated on both only if its pieces reach both. */
#include "attnview/corpus.h"
#include "attnview/i18n.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <utf8proc.h>

typedef enum script {
	SCRIPT_LATIN,
	SCRIPT_GREEK,
	SCRIPT_CYRILLIC,
	SCRIPT_HEBREW,
	SCRIPT_ARABIC,
	SCRIPT_DEVANAGARI,
	SCRIPT_HAN,
	SCRIPT_KANA,
	SCRIPT_HANGUL,
	SCRIPT_OTHER,
	SCRIPT_COUNT
} script;

static const char *const script_names[] = {
    N_("Latin"),      N_("Greek"), N_("Cyrillic"), N_("Hebrew"), N_("Arabic"),
    N_("Devanagari"), N_("Han"),   N_("Kana"),	   N_("Hangul"), N_("other letters"),
};
_Static_assert(sizeof script_names / sizeof script_names[0] == SCRIPT_COUNT,
	       "a name for every script");

/* The script of a letter by its Unicode block; -1 for what is not a letter
 * (digits, punctuation, spaces belong to no language). */
static int script_of(uint32_t cp)
{
	utf8proc_category_t cat = utf8proc_category((utf8proc_int32_t)cp);
	if (cat < UTF8PROC_CATEGORY_LU || cat > UTF8PROC_CATEGORY_LO)
		return -1;
	static const struct {
		uint32_t lo, hi;
		script s;
	} blocks[] = {
	    {0x0000, 0x024F, SCRIPT_LATIN},	 {0x1E00, 0x1EFF, SCRIPT_LATIN},
	    {0x0370, 0x03FF, SCRIPT_GREEK},	 {0x0400, 0x052F, SCRIPT_CYRILLIC},
	    {0x0590, 0x05FF, SCRIPT_HEBREW},	 {0x0600, 0x06FF, SCRIPT_ARABIC},
	    {0x0900, 0x097F, SCRIPT_DEVANAGARI}, {0x3400, 0x4DBF, SCRIPT_HAN},
	    {0x4E00, 0x9FFF, SCRIPT_HAN},	 {0xF900, 0xFAFF, SCRIPT_HAN},
	    {0x20000, 0x3FFFF, SCRIPT_HAN},	 {0x3040, 0x30FF, SCRIPT_KANA},
	    {0x1100, 0x11FF, SCRIPT_HANGUL},	 {0xAC00, 0xD7AF, SCRIPT_HANGUL},
	};
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
		if (cp >= blocks[i].lo && cp <= blocks[i].hi)
			return (int)blocks[i].s;
	return SCRIPT_OTHER;
}

void corpus_script_shares(const corpus *c, char *buf, size_t n)
{
	uint64_t train[SCRIPT_COUNT] = {0}, val[SCRIPT_COUNT] = {0}, nt = 0, nv = 0;
	if (n)
		buf[0] = '\0';
	if (!c->nval || !c->id_count)
		return;
	for (uint32_t id = TOK_NSPECIAL; id < c->vocab.size; id++) {
		int s = script_of(c->vocab.cps[id]);
		if (s >= 0)
			train[s] += c->id_count[id], nt += c->id_count[id];
	}
	for (uint64_t i = c->ntrain; i < c->ntrain + c->nval; i++) {
		int32_t id = corpus_id(c, i);
		int s = id >= TOK_NSPECIAL ? script_of(c->vocab.cps[id]) : -1;
		if (s >= 0)
			val[s]++, nv++;
	}
	int scripts = 0;
	for (int s = 0; s < SCRIPT_COUNT; s++)
		scripts += train[s] + val[s] > 0;
	if (scripts < 2) /* one language: nothing to say */
		return;
	size_t k = (size_t)snprintf(buf, n, "%s", _("validation letters by script:"));
	const char *sep = " ";
	for (int s = 0; s < SCRIPT_COUNT && k < n; s++) {
		if (!train[s] && !val[s])
			continue;
		int r = snprintf(buf + k, n - k, _("%s%s %.0f%% (training %.0f%%)"), sep,
				 _(script_names[s]), nv ? 100.0 * (double)val[s] / (double)nv : 0.0,
				 nt ? 100.0 * (double)train[s] / (double)nt : 0.0);
		k += r > 0 ? (size_t)r : 0;
		sep = ", ";
	}
	if (k + 1 < n)
		buf[k] = '\n', buf[k + 1] = '\0';
	else if (n)
		buf[n - 1] = '\0';
}

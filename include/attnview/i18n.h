/* Translation of the messages a person reads (GNU gettext, domain
 * "attnview"). _("...") translates at run time; N_("...") only marks a
 * string in a static table for xgettext, translated where it is used with
 * _(). The machine-readable output (--dump, figures' data) is never
 * translated. The catalogue is bound once, by main (i18n_init). */
#ifndef ATTNVIEW_I18N_H
#define ATTNVIEW_I18N_H

#include <libintl.h>

#define AV_TEXTDOMAIN "attnview"
#define _(s)	      gettext(s)
#define N_(s)	      s
/* NC_("context", "s") marks s in a static table with a context, for a word
 * that is translated differently elsewhere ("head": a scale, a count);
 * av_pgettext("context", s) translates it where it is used. */
#define NC_(c, s) s

/* A function returning its argument's translation, or the argument: the
 * compiler checks the format of the literal passed in. */
#if defined(__GNUC__)
#define AV_FORMAT_ARG(n) __attribute__((format_arg(n)))
#else
#define AV_FORMAT_ARG(n)
#endif

const char *av_pgettext(const char *context, const char *s) AV_FORMAT_ARG(2);

/* The locale from the environment (LANG, LC_ALL, LC_MESSAGES, LANGUAGE),
 * except LC_NUMERIC, which stays "C" so that numbers are printed and read
 * with a '.' whatever the language; then the catalogue: $ATTNVIEW_LOCALEDIR
 * if set, else the build tree's when the program runs from it (meson
 * compile, meson test), else the installed one (LOCALEDIR). */
void i18n_init(void);

#endif

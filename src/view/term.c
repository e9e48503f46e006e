/* The terminal: curses on and off, colour pairs, and putting the terminal
 * back on every exit, signals and crashes included.
 *
 * The signal handlers only touch what is async-signal-safe: write(2),
 * tcsetattr(3), sigaction, raise. What they write is prepared in advance. */
#include "attnview/i18n.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

static volatile sig_atomic_t got_signal;
static int sig_pipe[2] = {-1, -1};
static struct termios saved_tio;
static bool saved_tio_ok;
static char emergency_seq[512]; /* leave alternate screen, show cursor, modes off */
static size_t emergency_len;
static struct sigaction old_winch;
static SCREEN *g_screen;
/* Headless (a script's keys): curses writes to /dev/null and reads nothing,
 * and the terminal, whatever it is, is left alone. */
static bool g_headless;
static FILE *g_null_out, *g_null_in;

static const int term_signals[] = {SIGINT, SIGTERM, SIGHUP};
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NTERM  (sizeof term_signals / sizeof term_signals[0])
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static struct sigaction old_term[NTERM], old_fatal[NFATAL];

/* Bracketed paste off, mouse reporting off (all the variants ncurses may have
 * turned on). Written on every exit path, before endwin. */
static const char modes_off[] = "\033[?2004l\033[?1006l\033[?1002l\033[?1000l";

static void emergency_restore(void)
{
	if (g_headless)
		return;
	ssize_t r = write(STDOUT_FILENO, emergency_seq, emergency_len);
	(void)r;
	if (saved_tio_ok)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

static void on_fatal_signal(int sig)
{
	/* Installed with SA_RESETHAND: after restoring the terminal, the
	 * re-raised signal (or the re-executed fault) takes its default action
	 * and the core dump or the shell's message still happens. */
	emergency_restore();
	raise(sig);
}

static void on_term_signal(int sig)
{
	if (got_signal) {
		/* Second signal: the main loop did not get to it; do not wait. */
		emergency_restore();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	got_signal = sig;
	char b = 's';
	ssize_t r = write(sig_pipe[1], &b, 1);
	(void)r;
}

static void on_winch(int sig)
{
	/* ncurses's own handler (if any) notes the new size for KEY_RESIZE; the
	 * byte wakes poll() even if the signal came just before it blocked. */
	if (old_winch.sa_handler != SIG_DFL && old_winch.sa_handler != SIG_IGN &&
	    !(old_winch.sa_flags & SA_SIGINFO))
		old_winch.sa_handler(sig);
	char b = 'w';
	ssize_t r = write(sig_pipe[1], &b, 1);
	(void)r;
}

static void append_cap(const char *cap)
{
	char *s = tigetstr((char *)cap);
	if (!s || s == (char *)-1)
		return;
	size_t n = strlen(s);
	if (emergency_len + n < sizeof emergency_seq) {
		memcpy(emergency_seq + emergency_len, s, n);
		emergency_len += n;
	}
}

static bool install_signals(av_error *err)
{
	if (pipe(sig_pipe) != 0)
		return av_fail_errno(err, errno, _("cannot create a pipe for signals"));
	for (int i = 0; i < 2; i++) {
		int fl = fcntl(sig_pipe[i], F_GETFL);
		if (fl < 0 || fcntl(sig_pipe[i], F_SETFL, fl | O_NONBLOCK) < 0 ||
		    fcntl(sig_pipe[i], F_SETFD, FD_CLOEXEC) < 0)
			return av_fail_errno(err, errno, _("cannot set up the signal pipe"));
	}
	/* What emergency_restore writes, prepared now while it is safe. */
	memcpy(emergency_seq, modes_off, sizeof modes_off - 1);
	emergency_len = sizeof modes_off - 1;
	append_cap("sgr0");
	append_cap("cnorm");
	append_cap("rmcup");

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_term_signal;
	for (size_t i = 0; i < NTERM; i++)
		if (sigaction(term_signals[i], &sa, &old_term[i]) != 0)
			return av_fail_errno(err, errno, _("cannot install a signal handler"));
	sa.sa_handler = on_fatal_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (size_t i = 0; i < NFATAL; i++)
		if (sigaction(fatal_signals[i], &sa, &old_fatal[i]) != 0)
			return av_fail_errno(err, errno, _("cannot install a signal handler"));
	sa.sa_handler = on_winch;
	sa.sa_flags = 0;
	if (sigaction(SIGWINCH, &sa, &old_winch) != 0)
		return av_fail_errno(err, errno, _("cannot install a signal handler"));
	return true;
}

static void remove_signals(void)
{
	for (size_t i = 0; i < NTERM; i++)
		sigaction(term_signals[i], &old_term[i], NULL);
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &old_fatal[i], NULL);
	sigaction(SIGWINCH, &old_winch, NULL);
	for (int i = 0; i < 2; i++) {
		if (sig_pipe[i] >= 0)
			close(sig_pipe[i]);
		sig_pipe[i] = -1;
	}
}

int term_signal_fd(void)
{
	return sig_pipe[0];
}

int term_signal(void)
{
	return got_signal;
}

void term_reset_signal(void)
{
	got_signal = 0;
}

bool view_check_terminal(bool headless, av_error *err)
{
	if (!headless && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
		return av_fail(err, _("the interactive view needs a terminal on standard input and "
				      "output; for scripts use: attnview --dump --text TEXT"));
	const char *cs = nl_langinfo(CODESET);
	if (!cs || strcmp(cs, "UTF-8") != 0)
		return av_fail(err,
			       _("the locale's character set is %s, not UTF-8, so Chinese text and "
				 "the heatmap cannot be drawn; set a UTF-8 locale, e.g. "
				 "LANG=C.UTF-8 attnview"),
			       cs && cs[0] ? cs : _("unknown"));
	const char *term = getenv("TERM");
	if (!term || !term[0] || strcmp(term, "dumb") == 0)
		return av_fail(err,
			       _("TERM is %s: the interactive view needs a terminal that can "
				 "move the cursor (e.g. TERM=xterm-256color)"),
			       term && term[0] ? AV_Q(term) : _("not set"));
	return true;
}

/* Input modes: cbreak keeps Ctrl-C and Ctrl-Z as signals; flow control goes
 * so that Ctrl-Q and Ctrl-S reach us; keys ncurses may not know. */
static void input_modes(void)
{
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(VIEW_ESCDELAY_MS);
	struct termios t;
	if (!g_headless && tcgetattr(STDIN_FILENO, &t) == 0) {
		t.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
		tcsetattr(STDIN_FILENO, TCSANOW, &t);
		def_prog_mode();
	}
	/* Home and End in the spellings terminals and multiplexers send
	 * whatever TERM says (tmux sends \e[1~ and \e[4~ under
	 * TERM=xterm-256color). */
	static const char *const home_seqs[] = {"\033[1~", "\033[7~", "\033[H", "\033OH"};
	static const char *const end_seqs[] = {"\033[4~", "\033[8~", "\033[F", "\033OF"};
	for (size_t i = 0; i < sizeof home_seqs / sizeof home_seqs[0]; i++) {
		define_key(home_seqs[i], KEY_HOME);
		define_key(end_seqs[i], KEY_END);
	}
	define_key("\033[200~", VIEW_KEY_PASTE_BEGIN);
	define_key("\033[201~", VIEW_KEY_PASTE_END);
	mouseinterval(0);
	mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED | BUTTON4_PRESSED
#ifdef BUTTON5_PRESSED
		      | BUTTON5_PRESSED
#endif
		  ,
		  NULL);
}

/* Curses on /dev/null, the size from LINES and COLUMNS (ncurses reads
 * them when the output is no terminal). */
static SCREEN *headless_screen(void)
{
	g_null_out = fopen("/dev/null", "w");
	g_null_in = fopen("/dev/null", "r");
	const char *term = getenv("TERM");
	return g_null_out && g_null_in ? newterm(term && *term ? term : "xterm-256color", g_null_out,
						 g_null_in)
				       : NULL;
}

bool term_start(view *v, cm_ramp ramp, bool headless, av_error *err)
{
	got_signal = 0;
	g_headless = headless;
	saved_tio_ok = !headless && tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	/* A terminal that says it takes 24-bit colour gets the direct-colour
	 * description of its family, if the system has one. */
	const char *direct = headless ? NULL : colors_direct_term();
	g_screen = direct ? newterm(direct, stdout, stdin) : NULL;
	bool switched = g_screen != NULL;
	if (!g_screen)
		g_screen = headless ? headless_screen() : newterm(NULL, stdout, stdin);
	if (!g_screen)
		return av_fail(err,
			       _("cannot start curses on this terminal (TERM=%s); try "
				 "TERM=xterm-256color"),
			       AV_Q(getenv("TERM") ? getenv("TERM") : ""));
	if (!install_signals(err))
		return false;
	input_modes();
	colors_init(&v->col, ramp, switched);
	v->color_note = v->col.why[0] != '\0';
	static const char paste_on[] = "\033[?2004h";
	if (!headless) {
		ssize_t wr = write(STDOUT_FILENO, paste_on, sizeof paste_on - 1);
		(void)wr;
	}
	return true;
}

void term_stop(void)
{
	if (!g_screen)
		return;
	/* Normal restore: modes off, then curses puts the screen back. */
	mousemask(0, NULL);
	fflush(stdout);
	if (!g_headless) {
		ssize_t wr = write(STDOUT_FILENO, modes_off, sizeof modes_off - 1);
		(void)wr;
	}
	endwin();
	delscreen(g_screen);
	g_screen = NULL;
	remove_signals();
	if (g_null_out)
		fclose(g_null_out);
	if (g_null_in)
		fclose(g_null_in);
	g_null_out = g_null_in = NULL;
}

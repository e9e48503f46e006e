/* The interactive view: set-up, the main loop and the frame.
 *
 * The interface thread owns the terminal: it polls the keyboard, the worker's
 * wake-up pipe and a signal pipe, edits the text, posts it to the worker and
 * draws whatever result is the latest. It never runs the model; the worker
 * never touches curses.
 *
 * Screen layout (lines from the top), for the screens that show the text:
 *   0  input line        "text> ..."
 *   1  info line         token count, cut-off notice, errors
 *   2  head line         layer/head/objective, colour legend
 *   3… the screen        the map (heatmap and panel) or the overview
 *   last                 status line
 * Files: chrome.c (lines 0, 1 and the status line), map.c, overview.c,
 * help.c (screens, screen.h), heatmap.c, panel.c, actions.c (keys and
 * mouse), text.c (the text and its results), term.c (the terminal). */
#include "attnview/i18n.h"
#include "panel.h"
#include "screen.h"

#include "attnview/figure.h"
#include "script.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const screen_ops *const view_screens[SCREEN_N] = {
#define SCREEN_ROW_(id, ops, title) [SCREEN_##id] = &ops,
    VIEW_SCREENS(SCREEN_ROW_)
#undef SCREEN_ROW_
};

bool screens_init(view *v, av_error *err)
{
	for (int i = 0; i < SCREEN_N; i++) {
		const screen_ops *s = view_screens[i];
		v->screen[i] = calloc(1, s->state_size ? s->state_size : 1);
		if (!v->screen[i] || (s->init && !s->init(v, v->screen[i]))) {
			if (v->screen[i] && s->finish)
				s->finish(v->screen[i]);
			free(v->screen[i]);
			v->screen[i] = NULL;
			return av_fail(err, _("out of memory starting the view"));
		}
	}
	return true;
}

void screen_open(view *v, screen_id id)
{
	const focus here = v->focus;
	v->back[id] = view_screens[here.screen]->passing ? v->back[here.screen] : here;
	v->focus = FOCUS_ON(id);
	if (view_screens[id]->opened)
		view_screens[id]->opened(v);
}

void screen_back(view *v)
{
	v->focus = v->back[v->focus.screen];
}

bool screen_toggle(view *v, view_action act)
{
	for (int i = 0; act != ACT_NONE && i < SCREEN_N; i++) {
		if (view_screens[i]->toggle != act)
			continue;
		/* A notice of the screen left does not belong on the next one's
		 * info line (it hid the timeline's phase-change line); the help
		 * leaves it, for a reader looking it up. */
		if (i != SCREEN_HELP && v->focus.screen != SCREEN_HELP)
			v->notice[0] = '\0';
		if (v->focus.screen == (screen_id)i)
			screen_back(v);
		else
			screen_open(v, (screen_id)i);
		return true;
	}
	return false;
}

void screens_finish(view *v)
{
	for (int i = 0; i < SCREEN_N; i++) {
		if (v->screen[i] && view_screens[i]->finish)
			view_screens[i]->finish(v->screen[i]);
		free(v->screen[i]);
		v->screen[i] = NULL;
	}
}

static void draw(view *v)
{
	erase();
	colors_frame(&v->col);
	v->too_small = COLS < VIEW_MIN_COLS || LINES < VIEW_MIN_LINES;
	v->field_x = 6; /* "text> " */
	v->field_w = COLS - v->field_x;
	const screen_ops *s = view_screen(v);
	s->layout(v);
	if (v->too_small) {
		draw_too_small(v);
	} else {
		if (s->text_visible) {
			draw_input(v);
			draw_info(v);
		}
		s->draw(v);
		draw_status(v);
	}
	if (!v->too_small && figure_prompt_cursor(v) >= 0) {
		move(LINES - 1, figure_prompt_cursor(v));
		curs_set(1);
	} else if (!v->too_small && v->focus.typing) {
		move(Y_INPUT, v->field_x + lineedit_fit(&v->le, v->field_w));
		curs_set(1);
	} else {
		curs_set(0);
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* Where the view starts: --layer, --head, --show (select.h's kinds: a
 * summary is a head after the layer's last, the contributions F11 on a
 * head, the overview its screen). */
static void start_at(view *v, const view_options *opt)
{
	if (opt->layer >= 0)
		v->layer = opt->layer < nlayers(v) ? opt->layer : nlayers(v) - 1;
	if (opt->head >= 0)
		v->head = opt->head < nheads(v) ? opt->head : nheads(v) - 1;
	if (opt->show >= SEL_FIRST_SUMMARY && opt->show < SEL_FIRST_SUMMARY + SEL_EXTRA)
		v->head = nheads(v) + opt->show - SEL_FIRST_SUMMARY;
	v->contrib = opt->show == SEL_CONTRIB;
	if (opt->show == SEL_OVERVIEW)
		screen_open(v, SCREEN_OVERVIEW);
}

static bool view_init(view *v, const model *m, const view_options *opt, av_error *err)
{
	memset(v, 0, sizeof *v);
	v->m = m;
	v->context = (int)m->cfg.context;
	v->head_dim = (int)(m->cfg.dim / (m->cfg.heads ? m->cfg.heads : 1));
	v->pred_req = -1;
	v->focus = FOCUS_TYPING;
	v->scale = opt && opt->scale >= 0 ? (scale_kind)opt->scale : VIEW_DEFAULT_SCALE;
	v->ov_scale = opt && opt->scale >= 0 ? (scale_kind)opt->scale : VIEW_OV_DEFAULT_SCALE;
	v->cells = opt && opt->cells >= 0 ? (heat_cells)opt->cells : CELLS_FIT;
	v->panel = !(opt && opt->no_panel);
	/* Per-token buffers for the largest context any model may have: a
	 * model reloaded while the view runs may have a longer one. */
	const size_t cap = AV_MAX_CONTEXT + 1;
	v->toks = calloc(cap, sizeof *v->toks);
	v->pstate = calloc(cap, 1);
	v->pids = calloc(cap * VIEW_TOPK, sizeof *v->pids);
	v->pps = calloc(cap * VIEW_TOPK, sizeof *v->pps);
	v->row_max = calloc(cap, sizeof *v->row_max);
	v->wmarks = calloc(cap, sizeof *v->wmarks);
	v->page = PAGE_DETAILS;
	if (!screens_init(v, err) || !pages_init(v, err))
		return false;
	if (!v->toks || !v->pstate || !v->pids || !v->pps || !v->row_max || !v->wmarks ||
	    !lineedit_init(&v->le, VIEW_MAX_LINE) ||
	    !writing_init(v, opt ? opt->temperature : GEN_TEMPERATURE, opt ? opt->top_k : GEN_TOP_K,
			  opt ? opt->seed : 1) ||
	    !figure_prompt_init(v, opt ? opt->figure_dir : NULL, opt ? opt->figure_format : -1))
		return av_fail(err, _("out of memory starting the view"));
	if (opt)
		start_at(v, opt);
	if (opt && opt->text) {
		cp_buf cps = {0};
		if (!tokenize_text(opt->text, strlen(opt->text), "--text", &cps, NULL, err)) {
			cp_buf_finish(&cps);
			return false;
		}
		bool full;
		lineedit_set(&v->le, cps.v, cps.n, &full);
		v->text_given = full ? cps.n : 0;
		cp_buf_finish(&cps);
	}
	if (opt && opt->has_targets)
		patch_set_targets(v, true, opt->targets);
	if (opt && opt->compare && !patch_set_compare(v, opt->compare, err))
		return false;
	if (opt && opt->bench_log) {
		v->bench = fopen(opt->bench_log, "w");
		if (!v->bench)
			return av_fail_errno(err, errno, _("%s: cannot write the benchmark log"),
					     AV_Q(opt->bench_log));
		fprintf(v->bench, "context %d layers %u heads %u dim %u\n", v->context,
			m->cfg.layers, m->cfg.heads, m->cfg.dim);
		fflush(v->bench);
	}
	if (opt && opt->model_path)
		watch_init(v, opt->model_path);
	v->w = worker_create_for_model(m, opt ? opt->delay_ms : 0, err);
	return v->w != NULL;
}

static void view_finish(view *v)
{
	worker_destroy(v->w);
	model_destroy((model *)v->m);
	if (v->have)
		attn_result_finish(&v->r);
	free(v->all_roles);
	lineedit_finish(&v->le);
	figure_prompt_finish(v);
	writing_finish(v);
	screens_finish(v);
	pages_finish(v);
	cp_buf_finish(&v->cps);
	cp_buf_finish(&v->paste);
	free(v->toks);
	free(v->pstate);
	free(v->pids);
	free(v->pps);
	free(v->row_max);
	free(v->wmarks);
	colors_finish(&v->col);
	if (v->bench)
		fclose(v->bench);
}

/* Benchmark records: when the key arrived, when the screen showing the
 * edited text was out, when the screen showing its result was out. */
static void bench_key(view *v, double t)
{
	if (!v->bench || !v->pending || v->seq == v->bench_seq)
		return;
	v->bench_seq = v->seq;
	v->bench_key = t;
	v->bench_echo_pending = v->bench_done_pending = true;
}

/* A key that opened another screen (from) with the result of the latest
 * text on screen: its first frame, then the one with every head in. */
static void bench_switch(view *v, screen_id from, double t)
{
	if (!v->bench || v->focus.screen == from || !v->have || v->pending)
		return;
	v->bench_switch_key = t;
	v->bench_switch_heads = attn_weights_computed_here();
	v->bench_switch_pending = true;
	v->bench_switch_full_pending = false;
}

/* "switch SCREEN KEY FRAME HEADS": the screen's first frame, and the heads'
 * weights this thread computed for it (the key's time to the frame is all
 * this thread's); "switched SCREEN T" when every head it draws is in. */
static void bench_switch_frame(view *v, double t)
{
	const char *name = view_screen(v)->name;
	const int L = nlayers(v);
	if (v->bench_switch_pending) {
		fprintf(v->bench, "switch %s %.3f %.3f %llu\n", name, v->bench_switch_key, t,
			(unsigned long long)(attn_weights_computed_here() - v->bench_switch_heads));
		v->bench_switch_pending = false;
		v->bench_switch_full_pending = view_screen(v)->every_head;
	} else if (v->bench_switch_full_pending && view_heads_ready(v, 0, L) && v->all_roles) {
		fprintf(v->bench, "switched %s %.3f\n", name, t);
		v->bench_switch_full_pending = false;
	} else {
		return;
	}
	fflush(v->bench);
}

static void bench_frame(view *v)
{
	if (!v->bench)
		return;
	double t = av_now_ms();
	bench_switch_frame(v, t);
	if (!v->bench_ready && v->have && v->res_seq == v->seq && !v->r.partial) {
		fprintf(v->bench, "ready %d\n", v->r.n);
		fflush(v->bench);
		v->bench_ready = true;
	}
	if (v->bench_echo_pending) {
		v->bench_echo = t;
		v->bench_echo_pending = false;
	}
	/* The key's first frame (the layer on screen, when a partial result
	 * brought it: the last field, the layers it had), then, after a partial
	 * one, the frame of the complete result. */
	if (v->bench_done_pending && v->have && v->res_seq == v->bench_seq) {
		fprintf(v->bench, "key %llu %d %.3f %.3f %.3f %.3f %d\n",
			(unsigned long long)v->bench_seq, v->r.n, v->bench_key, v->bench_echo, t,
			v->res_ms, v->r.partial);
		fflush(v->bench);
		v->bench_done_pending = false;
		v->bench_full_pending = v->r.partial > 0;
	} else if (v->bench_full_pending && v->have && v->res_seq == v->bench_seq &&
		   !v->r.partial) {
		fprintf(v->bench, "full %llu %.3f %.3f\n", (unsigned long long)v->bench_seq, t,
			v->res_ms);
		fflush(v->bench);
		v->bench_full_pending = false;
	}
}

/* The earlier of two times, 0 standing for none. */
static double earliest(double a, double b)
{
	return a == 0 ? b : b == 0 ? a : a < b ? a : b;
}

/* Milliseconds poll may sleep: until the "computing" mark is due, the
 * deferred predictions are, the model file is looked at again or the model
 * writes its next character; else forever (-1). */
static int poll_timeout(const view *v)
{
	double wake = v->watching ? v->watch_due : 0;
	if (v->pending && !v->busy_shown)
		wake = earliest(wake, v->post_ms + VIEW_BUSY_MS);
	/* Deferred predictions wait for the complete result (timers), whose
	 * arrival wakes poll through the worker's pipe. */
	if (!v->pending)
		wake = earliest(wake, v->pred_due);
	/* An outstanding prediction is looked after (timers). */
	if (v->pred_req >= 0)
		wake = earliest(wake, av_now_ms() + VIEW_PRED_RETRY_MS);
	wake = earliest(wake, writing_due(v));
	if (wake == 0)
		return -1;
	double left = wake - av_now_ms();
	return left > 0 ? (int)left + 1 : 0;
}

/* Keys first (a keystroke is echoed at once), then results. Alt-c arrives
 * as Esc and c together: an Esc with a character right behind it is ALT(c). */
static void read_keys(view *v)
{
	if (v->script)
		return; /* its keys come from script_run */
	wint_t wc;
	int rc;
	while ((rc = get_wch(&wc)) != ERR) {
		double t = av_now_ms();
		int ch = (int)wc;
		bool code = rc == KEY_CODE_YES;
		while (!code && ch == 27) {
			wint_t next;
			int rn = get_wch(&next);
			if (rn == ERR)
				break;
			if (rn == OK && next >= 0x20 && next != 0x7f) {
				ch = ALT((int)next);
				break;
			}
			/* Esc alone, and the next key looked at the same way (Esc Esc x
			 * is Esc, then Alt-x). */
			handle_key(v, 27, false);
			ch = (int)next;
			code = rn == KEY_CODE_YES;
		}
		screen_id from = v->focus.screen;
		handle_key(v, ch, code);
		bench_key(v, t);
		bench_switch(v, from, t);
		if (v->quit)
			break;
	}
}

static void timers(view *v)
{
	if (v->pending && !v->busy_shown && av_now_ms() - v->post_ms >= VIEW_BUSY_MS)
		v->busy_shown = true;
	if (v->pred_due > 0 && v->res_seq != v->seq) {
		/* A newer text is on its way: its result will set a new time. */
		v->pred_due = 0;
	} else if (v->pred_due > 0 && !v->pending && av_now_ms() >= v->pred_due) {
		/* Not while a partial result stands for the text (pending, of
		 * the same text): its complete result comes next, and the
		 * predictions and jobs are asked of that. */
		request_pred(v);
		request_jobs(v);
		v->pred_due = 0;
	}
	/* A prediction the worker dropped without an answer (it gave up for a
	 * text that was posted after it, or its text was no longer the one the
	 * worker had computed) would leave the panel waiting for good: once the
	 * worker is idle, ask for it again. */
	if (v->pred_req >= 0 && v->have && !v->pending && !worker_get_stats(v->w).busy) {
		int q = v->pred_req;
		v->pred_req = -1;
		if (q < v->r.n && v->pstate[q] != PRED_HAVE)
			request_pred(v);
	}
}

/* The script's next lines (script.h) after a frame, and how long poll may
 * then sleep; false when it ended (err->msg empty) or failed. */
static bool run_script(view *v, int *timeout, av_error *err)
{
	bool failed;
	err->msg[0] = '\0';
	if (!script_run(v->script, v, &failed, err)) {
		if (!failed)
			err->msg[0] = '\0';
		return false;
	}
	int t = script_timeout(v->script);
	if (*timeout < 0 || t < *timeout)
		*timeout = t;
	return true;
}

/* True when a signal ends the view. Ctrl-C (SIGINT) with text asks first,
 * as Ctrl-Q does: the next Ctrl-C, y, Ctrl-Q quits (actions.c). */
static bool signal_ends(view *v)
{
	int sig = term_signal();
	if (!sig)
		return false;
	if (sig != SIGINT || v->le.n == 0 || v->confirm_quit)
		return true;
	term_reset_signal();
	v->confirm_quit = true;
	draw(v);
	return false;
}

static bool main_loop(view *v, av_error *err)
{
	struct pollfd fds[3] = {
	    {v->script ? -1 : STDIN_FILENO, POLLIN, 0},
	    {worker_fd(v->w), POLLIN, 0},
	    {term_signal_fd(), POLLIN, 0},
	};
	draw(v);
	while (!v->quit && !signal_ends(v)) {
		int timeout = poll_timeout(v);
		if (v->script && !run_script(v, &timeout, err))
			return err->msg[0] == '\0';
		int r = poll(fds, 3, timeout);
		if (r < 0 && errno != EINTR)
			return av_fail_errno(err, errno, _("poll on the terminal failed"));
		if (signal_ends(v))
			break;
		if (r > 0 && (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) &&
		    !(fds[0].revents & POLLIN))
			return av_fail(err, _("the terminal went away"));
		if (r > 0 && (fds[2].revents & POLLIN)) {
			char buf[16];
			while (read(fds[2].fd, buf, sizeof buf) > 0)
				;
		}
		read_keys(v);
		/* The model before the results: a result of a new model is only
		 * ever seen after the switch to it (worker.c, rule 7). */
		take_model(v);
		take_results(v);
		watch_model(v);
		timers(v);
		if (!v->pending && v->pred_due == 0)
			request_jobs(v);
		writing_step(v);
		draw(v);
		bench_frame(v);
	}
	return true;
}

bool view_run(model *m, const view_options *opt, int *signo, av_error *err)
{
	*signo = 0;
	term_reset_signal();
	bool headless = opt && opt->script;
	if (!view_check_terminal(headless, err)) {
		model_destroy(m);
		return false;
	}
	view *v = calloc(1, sizeof *v);
	if (!v) {
		model_destroy(m);
		return av_fail(err, _("out of memory starting the view"));
	}
	cm_ramp ramp = opt && opt->ramp >= 0 ? (cm_ramp)opt->ramp : RAMP_VIRIDIS;
	bool ok = view_init(v, m, opt, err) &&
		  (!headless || (v->script = script_open(opt->script, err))) &&
		  term_start(v, ramp, headless, err);
	if (ok) {
		if (v->le.n)
			text_changed(v);
		/* After the text's first pass (which clears the info line's notice). */
		if (v->text_given)
			set_notice(v,
				   _("--text: %zu characters, the input line keeps %d, the model "
				     "reads %d"),
				   v->text_given, VIEW_MAX_LINE, v->ntok);
		ok = main_loop(v, err);
	}
	term_stop();
	*signo = term_signal();
	script_close(v->script);
	view_finish(v);
	free(v);
	return ok;
}

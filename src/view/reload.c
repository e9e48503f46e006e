/* Watching the model file FILE and the checkpoint FILE.ckpt that a --train
 * run writing FILE keeps beside it: when either is replaced (training writes
 * both atomically, by renaming), the worker loads it on its own thread and
 * hands it over; the view switches to it keeping
 * the text, the cursor, the head and the scale, and frees the old model (the
 * worker no longer reads it: worker.c, rule 7). */
#include "attnview/i18n.h"
#include "panel.h"
#include "screen.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool file_id(const char *path, file_stamp *st)
{
	struct stat s;
	if (stat(path, &s) != 0)
		return false;
	st->dev = (uint64_t)s.st_dev;
	st->ino = (uint64_t)s.st_ino;
	st->size = (uint64_t)s.st_size;
	st->mtime_ns = (uint64_t)s.st_mtim.tv_sec * 1000000000u + (uint64_t)s.st_mtim.tv_nsec;
	return true;
}

static bool same_file(const file_stamp *a, const file_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

void watch_init(view *v, const char *path)
{
	snprintf(v->watch[0].path, sizeof v->watch[0].path, "%s", path);
	snprintf(v->watch[1].path, sizeof v->watch[1].path, "%s.ckpt", path);
	for (int i = 0; i < 2; i++)
		v->watch[i].ok = file_id(v->watch[i].path, &v->watch[i].st);
	v->watching = true;
	v->watch_due = av_now_ms() + VIEW_WATCH_MS;
}

/* The model file and the checkpoint beside it: a new version of either is
 * loaded; if both changed since the last look, the newer one. */
void watch_model(view *v)
{
	if (!v->watching || av_now_ms() < v->watch_due)
		return;
	v->watch_due = av_now_ms() + VIEW_WATCH_MS;
	int pick = -1;
	for (int i = 0; i < 2; i++) {
		watched *wf = &v->watch[i];
		file_stamp st;
		if (!file_id(wf->path, &st)) {
			wf->ok = false; /* gone (deleted) */
			continue;
		}
		if (wf->ok && same_file(&st, &wf->st))
			continue;
		wf->st = st;
		wf->ok = true;
		if (pick < 0 || st.mtime_ns > v->watch[pick].st.mtime_ns)
			pick = i;
	}
	if (pick >= 0) {
		worker_post_reload(v->w, v->watch[pick].path);
		v->reloading = true;
	}
}

/* Everything that depends on the model's sizes, for the new one. */
static void adopt(view *v, model *m)
{
	const model *old = v->m;
	writing_stop(v, _("the model was replaced"));
	v->m = m;
	v->context = (int)m->cfg.context;
	v->head_dim = (int)(m->cfg.dim / (m->cfg.heads ? m->cfg.heads : 1));
	pages_new_model(v);
	v->loss.valid = v->loss.asked = v->loss.failed = false;
	v->loss.mean_valid = v->loss.mean_asked = v->loss.mean_failed = false;
	/* Heads that were off belong to the old model. */
	memset(&v->topts.ablate, 0, sizeof v->topts.ablate);
	v->topts.any_ablated = false;
	v->nablated = 0;
	int L = nlayers(v), H = nheads(v);
	if (v->layer >= L)
		v->layer = L - 1;
	if (v->head >= H + SEL_EXTRA)
		v->head = H - 1;
	overview_model_changed(v);
	v->hr_seq = v->hs_gen = 0;
	view_matrix_invalidate(v);
	/* The result on screen came from the old model (its arrays, plain
	 * floats, go back to the worker for the new one's). */
	view_let_go(v);
	model_destroy((model *)old);
}

void take_model(view *v)
{
	worker_model wm;
	if (!worker_take_model(v->w, &wm))
		return;
	v->reloading = false;
	if (!wm.ok) {
		set_notice(v, _("%s changed but could not be loaded (keeping the model shown): %s"),
			   AV_Q(wm.path), wm.err.msg);
		return;
	}
	adopt(v, wm.m);
	v->reloads++;
	text_changed(v); /* the text again, in the new model's vocabulary */
	char stats[96] = "";
	model_step_label(v->m, stats, sizeof stats);
	set_notice(v, _("reloaded %s%s%s (%.0f ms)"), AV_Q(wm.path), stats[0] ? _(": ") : "", stats,
		   wm.ms);
}

void model_step_label(const model *m, char *out, size_t size)
{
	const model_meta *mm = &m->meta;
	int len = 0;
	out[0] = '\0';
	if (mm->steps)
		len = snprintf(out, size, _("step %llu"), (unsigned long long)mm->steps);
	if (mm->val_loss == mm->val_loss && len >= 0 && (size_t)len < size)
		snprintf(out + len, size - (size_t)len, _("%sval %.3f"), len ? _(", ") : "",
			 (double)mm->val_loss);
}

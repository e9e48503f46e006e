/* The end of a training run (--train, --train --task): what the new model's
 * heads do on a sample of text, a line per layer, and what to do when no
 * head has a pattern yet. */
#include "attnview/analysis.h"
#include "attnview/i18n.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "previous (head 1), broad (heads 0, 2, 3)": the heads of one layer
 * grouped by label, in the order their first head comes. */
static void layer_line(int l, const role_scores *rs, int H)
{
	cli_printf(_("  layer %d:"), l);
	bool done[AV_MAX_HEADS] = {false};
	char label[128], other[128];
	for (int h = 0; h < H; h++) {
		if (done[h])
			continue;
		role_label(&rs[h], true, label, sizeof label);
		int count = 0;
		for (int k = h; k < H; k++) {
			role_label(&rs[k], true, other, sizeof other);
			if (!done[k] && strcmp(label, other) == 0)
				count++;
		}
		cli_printf(h ? ", %s (%s" : " %s (%s", label, ngettext("head", "heads", count));
		for (int k = h, first = 1; k < H; k++) {
			role_label(&rs[k], true, other, sizeof other);
			if (done[k] || strcmp(label, other) != 0)
				continue;
			cli_printf(first ? " %d" : ", %d", k);
			first = 0;
			done[k] = true;
		}
		cli_printf(")");
	}
	cli_printf("\n");
}

void cli_print_roles(const model *m, const uint32_t *cps, size_t n, const char *sample)
{
	cp_buf b = {(uint32_t *)cps, n, n};
	attn_result r;
	av_error err;
	if (n == 0 || !cli_attend(m, &b, 0, false, &r, NULL, &err))
		return;
	int L = r.layers, H = r.heads, broad = 0;
	role_scores *rs = malloc((size_t)(L * H) * sizeof *rs);
	if (!rs) {
		attn_result_finish(&r);
		return;
	}
	cli_printf(_("what the heads do on %s (attnview(1), HEAD ROLES):\n"), sample);
	for (int l = 0; l < L; l++) {
		for (int h = 0; h < H; h++) {
			attn_matrix a = attn_result_head(&r, l, h);
			head_roles(&rs[l * H + h], &a, r.tokens);
			/* broad, or no role for most rows */
			broad += rs[l * H + h].role == ROLE_BROAD ||
				 rs[l * H + h].verdict == ROLE_UNSURE ||
				 rs[l * H + h].verdict == ROLE_SHORT;
		}
		layer_line(l, rs + l * H, H);
	}
	if (broad == L * H)
		cli_printf(_(
		    "advice: no head has a role on this sample (broad or unclear): the heads have "
		    "not found patterns yet. Train longer (more --steps), give more text, or train "
		    "a "
		    "smaller model (fewer --heads or --layers, a smaller --dim), or continue "
		    "this one with --init and --sharpen 2 for a tenth of its steps; the lab's "
		    "tasks (attnview --train --task list) show heads that have.\n"));
	free(rs);
	attn_result_finish(&r);
}

/* Keys from a script instead of the keyboard, and the screen saved as text
 * (tig's TIG_SCRIPT): the headless screen tests (tests/screens/screens.sh) drive the
 * real view with it where there is no terminal and no tmux. The view then
 * draws into a curses screen whose output goes to /dev/null, LINES x COLUMNS
 * from the environment. ATTNVIEW_SCRIPT=FILE names the script (attnview(1),
 * ENVIRONMENT: for the test suite). A line a command:
 *   key NAME...   keys by tmux's names: Enter Escape Tab BTab BSpace Space
 *                 Up Down Left Right Home End PPage NPage DC S-Home S-End
 *                 F1..F12, C-x (Ctrl), M-x (Alt), or one character
 *   type TEXT     the rest of the line, a key a character
 *   wait TEXT     until the screen shows TEXT (at most 10 s, or it fails)
 *   wait-result   until the latest text's result, its predictions and the
 *                 panel's jobs are on screen
 *   save FILE     the screen as text: a line a line, trailing spaces dropped
 *   heads-here N  fails unless the view's thread computed N heads' weights
 *                 (result.h, attn_weights_computed_here) since the last
 *                 heads-here or the start; without N, counts from here
 *   # ...         a comment (and blank lines)
 * Each key or type line is one frame's input: the frame after it is drawn
 * before the next line runs. When the script ends, the view quits. */
#ifndef ATTNVIEW_VIEW_SCRIPT_H
#define ATTNVIEW_VIEW_SCRIPT_H

#include "attnview/common.h"

struct view;
typedef struct view_script view_script;

view_script *script_open(const char *path, av_error *err);
void script_close(view_script *s);

/* After a frame: run the script's next lines until one has to wait for
 * another frame (keys given, a wait not met yet). False when it ended:
 * *failed (with err) when it failed (a wait timed out, a bad line, a save
 * that could not be written). */
bool script_run(view_script *s, struct view *v, bool *failed, av_error *err);
/* Milliseconds the main loop may sleep before script_run is due. */
int script_timeout(const view_script *s);

/* The curses screen as text into path. */
bool screen_save(const char *path, av_error *err);

#endif

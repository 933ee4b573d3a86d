/* change.h - for an output that holds a sample back a while (script
 * writes one sample while the memory it will want for the next is asked
 * for): the session says when the machine is about to change, that the
 * output may finish what it holds while the machine is still as the
 * sample saw it. Not part of the library's interface.
 */
#ifndef CS_SESSION_CHANGE_H
#define CS_SESSION_CHANGE_H

struct cs_event;
struct cs_session;

/* Returns 0, or what the output's sample callback would return to stop
 * the run (a negative errno, or a positive value). */
typedef int (*cs_change_fn)(void *ctx, const struct cs_event *ev);

/* fn(ctx, ev) is called before the machine takes each record ev that
 * may change it (threads, maps, symbols, comms: every one the output's
 * `event` callback gets) or the build ids a pipe brings (ev NULL), on
 * the thread that runs the callbacks. One per session; NULL: none. */
void cs_session_on_change(struct cs_session *s, cs_change_fn fn, void *ctx);

#endif

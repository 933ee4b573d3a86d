/* interrupt.h - for an output that writes on threads of its own: when a
 * write fails there, the run is asked to stop, even while the session
 * waits on a pipe whose writer is quiet (a live `perf record -o -`
 * between rounds). Not part of the library's interface.
 */
#ifndef CS_SESSION_INTERRUPT_H
#define CS_SESSION_INTERRUPT_H

struct cs_session;

/* Asks the running cs_session_run() to stop as soon as it can; from any
 * thread, while it runs. A read from a stream that waits for bytes
 * returns at once. The run then returns 1, as when an output's callback
 * stops it: the output says why. */
void cs_session_interrupt(struct cs_session *s);

#endif

/*
 * Helper threads, of the host library and of the worker alike (thread.c,
 * linked into both): detached, every signal blocked, a small stack.
 */
#ifndef CI_THREAD_H
#define CI_THREAD_H

/* Starts fn(@arg) on a detached thread with every signal blocked, so
 * that a signal meant for the process (SIGINT, a host's own handlers)
 * never lands on it, and a 64 KiB stack: a worker's memory limit counts
 * address space, and a host may start many. 0, or an errno. */
int ci_thread_start_masked(void *(*fn)(void *), void *arg);

#endif /* CI_THREAD_H */

/* Starting a helper thread with every signal blocked (thread.h). */
#include <pthread.h>
#include <signal.h>

#include "thread.h"

int ci_thread_start_masked(void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t tid;
    sigset_t all, old;
    int err;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits it */
    err = pthread_attr_init(&attr);
    if (!err) {
        err = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (!err)
            err = pthread_attr_setstacksize(&attr, 64 * 1024);
        if (!err)
            err = pthread_create(&tid, &attr, fn, arg);
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

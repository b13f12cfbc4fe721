/*
 * The monotonic clock every deadline of the host library is on.
 */
#ifndef CI_CLOCK_H
#define CI_CLOCK_H

#include <stdint.h>
#include <time.h>

/* A monotonic clock in milliseconds; every deadline is on it. */
static inline int64_t ci_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The same clock in microseconds, for spins. */
static inline int64_t ci_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif /* CI_CLOCK_H */

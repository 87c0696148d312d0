/*
 * Steps the wall clock of one process, for tests/experiment/test_faults.py: loaded with
 * LD_PRELOAD, it adds the number of seconds written in $TRACKTALE_CLOCK_OFFSET_FILE (read
 * again on every call, so a test can step the clock of a running server) to CLOCK_REALTIME,
 * and leaves CLOCK_MONOTONIC alone, as a real clock step (NTP, `date -s`) does.
 * libfaketime cannot: with FAKETIME_DONT_FAKE_MONOTONIC=1 (0.9.10) Python's time.sleep fails
 * with EINVAL, and without it the monotonic clock is stepped too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double offset_seconds(void) {
    const char *path = getenv("TRACKTALE_CLOCK_OFFSET_FILE");
    double seconds = 0;
    FILE *file = path ? fopen(path, "r") : NULL;
    if (file != NULL) {
        if (fscanf(file, "%lf", &seconds) != 1) seconds = 0;
        fclose(file);
    }
    return seconds;
}

int clock_gettime(clockid_t id, struct timespec *now) {
    static int (*real)(clockid_t, struct timespec *) = NULL;
    if (real == NULL) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int result = real(id, now);
    if (result == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        long long ns = (long long)now->tv_sec * 1000000000LL + now->tv_nsec;
        ns += (long long)(offset_seconds() * 1e9);
        now->tv_sec = ns / 1000000000LL;
        now->tv_nsec = ns % 1000000000LL;
    }
    return result;
}

/*
 * busy.c - a CPU-bound program with a known split of its time: about two
 * thirds in crunch_heavy, one third in crunch_light, both called from main.
 *
 * Usage: busy [SECONDS]   (default 2)
 */
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) void crunch_heavy(void)
{
	for (unsigned long i = 0; i < 2000000; i++)
		sink += i * i;
}

__attribute__((noinline)) void crunch_light(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i ^ (i >> 3);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		crunch_heavy();
		crunch_light();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}

/*
 * hot.c - a checksum whose inner step (mix) is inlined into two loops, for
 * probing one source line: the line marked HOT below compiles to one
 * address per inlined copy, and probee attaches to all of them.
 *
 * Usage: hot [N]   (N blocks, default 200)
 */
#include <stdint.h>
#include <stdlib.h>

volatile uint32_t sink;

static inline __attribute__((always_inline)) uint32_t mix(uint32_t h, uint32_t v)
{
	h ^= v * 0x9e3779b1u; /* HOT */
	return (h << 13) | (h >> 19);
}

__attribute__((noinline)) uint32_t hash_block(const uint32_t *p, int n)
{
	uint32_t h = 1;

	for (int i = 0; i < n; i++)
		h = mix(h, p[i]);
	return h;
}

__attribute__((noinline)) uint32_t hash_tail(const uint8_t *p, int n)
{
	uint32_t h = 7;

	for (int i = 0; i < n; i++)
		h = mix(h, p[i]);
	return h;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	uint32_t block[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	uint8_t tail[3] = {1, 2, 3};

	for (int i = 0; i < n; i++) {
		sink = hash_block(block, 16);
		sink = hash_tail(tail, 3);
	}
	return 0;
}

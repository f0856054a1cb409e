/*
 * app.c - a program whose allocations come from two libraries and itself.
 *
 * libparse.so allocates in parse_config, librender.so in render_page, and
 * the program in main. Built by run.sh with frame pointers (see there).
 *
 * Usage: app [N]   (N rounds, default 1000)
 */
#include <stdlib.h>

char *volatile keep; /* so the compiler cannot drop main's malloc/free pair */

char *parse_config(int i);   /* libparse.so: 1 malloc per call */
char *render_page(int i);    /* librender.so: 2 mallocs per call */

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;

	for (int i = 0; i < n; i++) {
		char *c = parse_config(i);
		char *p = render_page(i);
		keep = malloc(64); /* the program's own allocation */
		free(keep);
		free(p);
		free(c);
	}
	return 0;
}

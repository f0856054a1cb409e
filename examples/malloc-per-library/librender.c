/* librender.c - two allocations per render_page call (one freed here). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static char *render_header(int i)
{
	char *h = malloc(128);

	snprintf(h, 128, "<h1>%d</h1>", i);
	return h;
}

__attribute__((noinline)) char *render_page(int i)
{
	char *h = render_header(i);
	char *page = malloc(256);

	snprintf(page, 256, "<html>%s</html>", h);
	free(h);
	return page;
}

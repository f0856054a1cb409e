/* libparse.c - one allocation per parse_config call. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) char *parse_config(int i)
{
	char *s = malloc(32 + i % 16);

	strcpy(s, "key=value");
	return s;
}

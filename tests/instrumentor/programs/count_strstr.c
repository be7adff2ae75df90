/* Linked with -Wl,--wrap=strstr beside strstr.c: counts the calls that reach the C library's strstr. */
#include <stdio.h>
char* __real_strstr(const char* haystack, const char* needle);
static unsigned long calls;
char* __wrap_strstr(const char* haystack, const char* needle) {
  calls++;
  return __real_strstr(haystack, needle);
}
__attribute__((destructor)) static void report(void) { fprintf(stderr, "strstr calls: %lu\n", calls); }

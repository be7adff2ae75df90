/* hello-plain: an uninstrumented program in the same package; it must get no .sites file. */
#include <stdio.h>

int main(void) { return puts("plain") < 0; }

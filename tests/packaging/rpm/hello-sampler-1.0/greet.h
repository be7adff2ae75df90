/* libgreet: the instrumented shared library of the RPM integration test. */
#ifndef GREET_H
#define GREET_H
/* Prints a greeting; returns the number of characters written, or -1. */
int greet(const char* name);
#endif

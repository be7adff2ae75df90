/* Sampling plans in a dlopen()ed unit (tests/instrumentor/plan_test.sh, case plugin): plan_plugin_step() runs the
 * branch in plugin_is_third() and the one in plugin_is_fifth() once each a call. */
int plugin_is_third(int i) {
  if (i % 3 == 0) return 1;
  return 0;
}

int plugin_is_fifth(int i) {
  if (i % 5 == 0) return 1;
  return 0;
}

long plan_plugin_step(long total, int i) { return total + plugin_is_third(i) + 2 * plugin_is_fifth(i); }

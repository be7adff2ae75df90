/* g-object-unref with GLib: the state of each object just before g_object_unref (unref.expected). */
#include <glib-object.h>
#include <stdio.h>

static void drop(gpointer object) { g_object_unref(object); }

int main(void) {
  GObject *first = g_object_new(G_TYPE_OBJECT, NULL);
  GObject *second = g_object_new(G_TYPE_OBJECT, NULL);
  g_object_ref(second);
  g_object_ref(second);
  for (int i = 0; i < 3; i++) drop(second);
  g_object_unref(first);
  /* Not a GObject: GLib refuses it (a critical on stderr), the site counts it in the last column. */
  GParamSpec *spec = g_param_spec_ref_sink(g_param_spec_int("n", "n", "n", 0, 9, 0, G_PARAM_READWRITE));
  drop(spec);
  g_param_spec_unref(spec);
  printf("done\n");
  return 0;
}

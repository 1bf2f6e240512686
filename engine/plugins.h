/* Loads plugins (shared objects) that add score types, task types and
 * comparators into a registry. */
#ifndef TALLY_PLUGINS_H
#define TALLY_PLUGINS_H

#include "engine/registry.h"

typedef struct tally_plugins_s {
  void **handles;
  size_t count;
} tally_plugins_t;

void tally_plugins_init(tally_plugins_t *p);
/* Unloads every plugin. Call it only after the registry, and every task
 * that uses a plugin's types, is gone. */
void tally_plugins_close(tally_plugins_t *p);

/* How long a plugin may take to load in the probe. */
#define TALLY_PLUGIN_PROBE_MS 5000

/* Loads the plugin at path and lets it register its types in reg. It is
 * loaded in a child process first, so that one that crashes, exits or
 * hangs while loading is named in err rather than taking the caller with
 * it. On error, returns TALLY_EPLUGIN with err naming path and the cause
 * (what the probe saw, dlerror(), a missing entry point, an ABI mismatch,
 * or the plugin's own message); nothing stays registered or loaded. */
int tally_plugins_load(tally_plugins_t *p, tally_registry_t *reg,
                       const char *path, char *err, size_t errlen);

/* Loads every *.so in dir, in name order. Stops at the first error. */
int tally_plugins_load_dir(tally_plugins_t *p, tally_registry_t *reg,
                           const char *dir, char *err, size_t errlen);

#endif

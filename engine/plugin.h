/* The plugin interface: what a shared object exports to add score types,
 * task types and comparators.
 *
 * A plugin exports two symbols:
 *
 *   const int tally_plugin_abi = TALLY_PLUGIN_ABI;
 *   int tally_plugin_init(tally_plugin_host_t *host);
 *
 * tally_plugin_init registers one or more score types, task types or
 * comparators through host and returns 0, or a negative code after
 * writing a message to host->err. What it registers must stay valid until
 * the plugin is unloaded, so these are usually static const objects.
 *
 * ABI 2 added register_task_type and register_comparator, ABI 3
 * register_primitive (the scoring primitives of answer tasks,
 * primitives/primitive.h); tally still loads ABI 1 and 2 plugins, which
 * see the prefix of the host they were built for. */
#ifndef TALLY_PLUGIN_H
#define TALLY_PLUGIN_H

#include "primitives/primitive.h"
#include "scoretypes/scoretype.h"
#include "tasktypes/tasktype.h"

#define TALLY_PLUGIN_ABI 3

typedef struct tally_plugin_host_s tally_plugin_host_t;

struct tally_plugin_host_s {
  int abi; /* TALLY_PLUGIN_ABI of the loading tally */
  /* Registers type under type->name. Returns 0, or a negative code with
   * the reason in err (a name already taken, a version mismatch). */
  int (*register_score_type)(tally_plugin_host_t *host,
                             const tally_score_type_t *type);
  char *err;
  size_t errlen;
  void *data; /* the loader's own */
  /* Added in ABI 2. Register a task type or a comparator under its name,
   * with the same rules. */
  int (*register_task_type)(tally_plugin_host_t *host,
                            const tally_task_type_t *type);
  int (*register_comparator)(tally_plugin_host_t *host,
                             const tally_comparator_t *cmp);
  /* Added in ABI 3. Registers a scoring primitive under its name, with
   * the same rules. */
  int (*register_primitive)(tally_plugin_host_t *host,
                            const tally_primitive_t *prim);
};

#endif

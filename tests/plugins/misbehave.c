/* A plugin that misbehaves in its entry point, for the probe tests:
 * built three times, with TALLY_MISBEHAVE set to 1 (it crashes), 2 (it
 * calls exit) or 3 (it hangs). */
#include "engine/plugin.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

const int tally_plugin_abi = TALLY_PLUGIN_ABI;

int tally_plugin_init(tally_plugin_host_t *host);

int tally_plugin_init(tally_plugin_host_t *host) {
  (void)host;
#if TALLY_MISBEHAVE == 1
  raise(SIGSEGV);
#elif TALLY_MISBEHAVE == 2
  exit(0);
#else
  for (;;)
    pause();
#endif
  return 0;
}

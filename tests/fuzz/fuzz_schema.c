/* A libFuzzer target for a JSON Schema's typed decoding (issue 24): any
 * JSON as a schema. The type check never crashes and always says why it
 * refuses; a schema it takes compiles or is refused with a reason, and
 * then validates a few documents without crashing. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evalspecs/jsonschema.h"

const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void) {
  return "halt_on_error=1:print_stacktrace=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *schema = cJSON_ParseWithLength((const char *)data, size);
  if (schema == NULL)
    return 0;
  char err[600] = "";
  bool resolve = false;
  if (tally_js_check_types(schema, err, sizeof(err), &resolve) != 0) {
    if (err[0] == '\0')
      abort(); /* a refusal says why */
  } else if (cJSON_IsObject(schema) || cJSON_IsBool(schema)) {
    err[0] = '\0';
    tally_js_t *js = tally_js_compile(schema, err, sizeof(err));
    if (js == NULL) {
      if (err[0] == '\0')
        abort();
    } else {
      static const char *const docs[] = {"null", "1", "\"x\"", "[1, 2]",
                                         "{\"a\": {\"b\": []}}"};
      for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        cJSON *doc = cJSON_Parse(docs[i]);
        char why[600];
        tally_js_validate(js, doc, why, sizeof(why));
        cJSON_Delete(doc);
      }
      tally_js_free(js);
    }
  }
  cJSON_Delete(schema);
  return 0;
}

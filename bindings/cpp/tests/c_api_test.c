/* The C ABI from C11, linked against the shared library: the header is valid C, every
 * handle and error is freed, and bad arguments are errors, not crashes. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weight_manifest.h"

static int failures = 0;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                     \
    }                                                                 \
  } while (0)

static char* read_file(const char* path, size_t* len) {
  FILE* file = fopen(path, "rb");
  char* text = NULL;
  long size;
  if (file == NULL) {
    return NULL;
  }
  if (fseek(file, 0, SEEK_END) == 0 && (size = ftell(file)) >= 0 && fseek(file, 0, SEEK_SET) == 0) {
    text = malloc((size_t)size + 1);
    if (text != NULL && fread(text, 1, (size_t)size, file) == (size_t)size) {
      *len = (size_t)size;
    } else {
      free(text);
      text = NULL;
    }
  }
  fclose(file);
  return text;
}

int main(int argc, char** argv) {
  size_t len = 0;
  size_t id_len = 0;
  char* text;
  WmPlacement* placement = NULL;
  WmPlacement* again = NULL;
  WmError* error;
  const char* id;
  const char* canonical;
  static const char bad[] = "{\"fragments\":[],\"model_id\":\"\",\"placement_id\":null,"
                            "\"revision\":\"r\",\"tensors\":[]}";

  if (argc != 2 || (text = read_file(argv[1], &len)) == NULL) {
    fprintf(stderr, "usage: %s PLACEMENT_JSON\n", argv[0]);
    return 2;
  }

  error = wm_placement_parse(text, len, &placement);
  CHECK(error == NULL);
  CHECK(placement != NULL);
  id = wm_placement_id(placement, &id_len);
  CHECK(id != NULL && id_len == strlen("sha256:") + 64 && strncmp(id, "sha256:", 7) == 0);
  CHECK(strlen(wm_placement_digest(placement, NULL)) == 64);

  /* The canonical text parses to the same id. */
  canonical = wm_placement_canonical(placement, &len);
  error = wm_placement_parse(canonical, len, &again);
  CHECK(error == NULL);
  CHECK(strcmp(wm_placement_id(again, NULL), id) == 0);
  wm_placement_free(again);
  wm_placement_free(placement);
  free(text);

  /* A rejection. */
  placement = (WmPlacement*)1;
  error = wm_placement_parse(bad, sizeof bad - 1, &placement);
  CHECK(placement == NULL);
  CHECK(wm_error_code(error) == WM_CODE_EMPTY_STRING);
  CHECK(strcmp(wm_error_code_name(error), "empty_string") == 0);
  CHECK(strcmp(wm_error_path(error, &len), "/model_id") == 0 && len == 9);
  CHECK(wm_error_message(error, &len) != NULL && len > 0);
  CHECK(wm_error_detail_json(error, &len) == NULL && len == 0);
  wm_error_free(error);

  /* A rejection with numbers behind it: the placement_id is not the canonical one. */
  {
    static const char wrong_id[] =
        "{\"fragments\":[],\"model_id\":\"m\",\"placement_id\":\"sha256:00\",\"revision\":\"r\","
        "\"tensors\":[]}";
    const char* json;
    error = wm_placement_parse(wrong_id, sizeof wrong_id - 1, &placement);
    CHECK(wm_error_code(error) == WM_CODE_PLACEMENT_ID_MISMATCH);
    CHECK(strcmp(wm_error_path(error, NULL), "/placement_id") == 0);
    json = wm_error_detail_json(error, &len);
    CHECK(json != NULL && len == strlen(json));
    CHECK(strstr(json, "\"got\":\"sha256:00\"") != NULL);
    CHECK(strncmp(wm_error_detail_summary(error, NULL), "expected \"sha256:", 17) == 0);
    wm_error_free(error);
  }

  /* Bad arguments. */
  error = wm_placement_parse(NULL, 5, &placement);
  CHECK(wm_error_code(error) == WM_CODE_INVALID_ARGUMENT);
  CHECK(wm_error_path(error, NULL) == NULL);
  wm_error_free(error);
  error = wm_placement_parse(bad, sizeof bad - 1, NULL);
  CHECK(wm_error_code(error) == WM_CODE_INVALID_ARGUMENT);
  wm_error_free(error);

  /* Plan binding: a plan document that is not an object, and NULL handles. */
  {
    WmPlan* plan = (WmPlan*)1;
    WmBoundPlan* bound = (WmBoundPlan*)1;
    const uint64_t fence = 3;
    error = wm_plan_parse("[]", 2, &plan);
    CHECK(plan == NULL);
    CHECK(wm_error_code(error) == WM_CODE_PLAN_DOCUMENT_INVALID);
    wm_error_free(error);
    error = wm_bind_plan(NULL, NULL, NULL, &fence, NULL, &bound);
    CHECK(bound == NULL);
    CHECK(wm_error_code(error) == WM_CODE_INVALID_ARGUMENT);
    wm_error_free(error);
    CHECK(wm_bound_plan_json(NULL, &len) == NULL && len == 0);
    CHECK(wm_bound_plan_id(NULL, NULL) == NULL);
    wm_bound_plan_free(NULL);
  }

  /* Code names by number. */
  CHECK(strcmp(wm_code_name(WM_CODE_OK), "ok") == 0);
  CHECK(strcmp(wm_code_name(WM_CODE_FRAGMENT_OVERLAP), "fragment_overlap") == 0);
  CHECK(wm_code_name(999) == NULL);
  CHECK(wm_version() != NULL);

  if (failures == 0) {
    printf("c_api: all checks passed\n");
  }
  return failures == 0 ? 0 : 1;
}

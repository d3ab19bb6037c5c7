/*
 * native/map-release: gives back this process's residency of a shared, file-backed memory map (the LMDB store's
 * data.mdb) with madvise(MADV_DONTNEED). See README.md for why this is safe and what it does not do.
 *
 * release(path) walks /proc/self/maps and advises every mapping of exactly `path` that is shared (the `s` of its
 * permissions): private mappings are never touched (MADV_DONTNEED would throw away their copy-on-write pages).
 * It reads RssFile + RssShmem of /proc/self/status before and after, so the caller can report what was given back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/mman.h>

static napi_value set_number(napi_env env, napi_value object, const char *name, double value);

/* RssFile + RssShmem (file = 1) or RssAnon (file = 0) of this process, KiB; -1 when /proc/self/status cannot be read. */
static long long resident_kib(int file) {
  FILE *status = fopen("/proc/self/status", "r");
  if (status == NULL) return -1;
  char line[256];
  long long total = 0;
  int seen = 0;
  while (fgets(line, sizeof line, status) != NULL) {
    long long kib;
    if (file ? (sscanf(line, "RssFile: %lld", &kib) == 1 || sscanf(line, "RssShmem: %lld", &kib) == 1) : sscanf(line, "RssAnon: %lld", &kib) == 1) {
      total += kib;
      seen++;
    }
  }
  fclose(status);
  return seen == (file ? 2 : 1) ? total : -1;
}
#define file_resident_kib() resident_kib(1)

/*
 * trim(): glibc's malloc_trim(0), which returns the free memory of every malloc arena to the kernel (the top of each
 * heap, and whole free pages inside it, with MADV_DONTNEED). Answers RssAnon before and after, bytes.
 */
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  long long before = resident_kib(0);
#ifdef __GLIBC__
  malloc_trim(0);
#endif
  long long after = resident_kib(0);
  napi_value result;
  napi_create_object(env, &result);
  set_number(env, result, "anonResidentBeforeBytes", before < 0 ? -1 : (double)before * 1024);
  set_number(env, result, "anonResidentAfterBytes", after < 0 ? -1 : (double)after * 1024);
  return result;
}

static napi_value throw_error(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value set_number(napi_env env, napi_value object, const char *name, double value) {
  napi_value number;
  napi_create_double(env, value, &number);
  napi_set_named_property(env, object, name, number);
  return object;
}

static napi_value release(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return throw_error(env, "release(path): path expected");
  char path[4096];
  size_t length = 0;
  if (napi_get_value_string_utf8(env, argv[0], path, sizeof path, &length) != napi_ok) return throw_error(env, "release(path): path must be a string");
  if (length == 0 || length >= sizeof path - 1) return throw_error(env, "release(path): path empty or too long");

  long long before = file_resident_kib();
  FILE *maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return throw_error(env, "release: cannot read /proc/self/maps");
  char *line = NULL;
  size_t capacity = 0;
  double mappings = 0, mapped_bytes = 0;
  int failure = 0;
  while (getline(&line, &capacity, maps) != -1) {
    unsigned long start, end;
    char perms[5];
    int name_at = 0;
    /* start-end perms offset dev inode pathname */
    if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &name_at) < 3 || name_at == 0) continue;
    char *name = line + name_at;
    size_t name_length = strcspn(name, "\n");
    if (name_length != length || memcmp(name, path, length) != 0) continue;
    if (perms[3] != 's') continue;
    if (madvise((void *)start, end - start, MADV_DONTNEED) != 0) {
      failure = errno;
      break;
    }
    mappings++;
    mapped_bytes += (double)(end - start);
  }
  free(line);
  fclose(maps);
  if (failure != 0) {
    char message[160];
    snprintf(message, sizeof message, "release: madvise(MADV_DONTNEED) failed: %s", strerror(failure));
    return throw_error(env, message);
  }
  long long after = file_resident_kib();

  napi_value result;
  napi_create_object(env, &result);
  set_number(env, result, "mappings", mappings);
  set_number(env, result, "mappedBytes", mapped_bytes);
  set_number(env, result, "fileResidentBeforeBytes", before < 0 ? -1 : (double)before * 1024);
  set_number(env, result, "fileResidentAfterBytes", after < 0 ? -1 : (double)after * 1024);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "release", NAPI_AUTO_LENGTH, release, NULL, &fn);
  napi_set_named_property(env, exports, "release", fn);
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn);
  napi_set_named_property(env, exports, "trim", fn);
  return exports;
}

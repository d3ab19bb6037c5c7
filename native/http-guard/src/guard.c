// The HTTP guard: answers the requests uWebSockets.js drops or leaves hanging (head.c says which),
// in the spec's error shape, on the node's listening ports only.
//
// uWS reads and accepts through the C library's `recv` and `accept4`, imported by its binary. The
// guard points those two imports of that one binary (its global offset table entries) at the
// functions below, so the checks run inside uWS's own read, on the bytes it reads, at no extra hop:
//   accept4  an accepted socket whose local port is a registered listener gets a fresh head checker;
//   recv     every read on such a socket passes the checker; the first refused request is answered
//            by the guard (status, `Connection: close`, JSON error body), the socket's write side is
//            shut, what the client still sends is read and dropped, and uWS sees the close.
// Requests before the refused one in the same read still reach uWS, which answers them.
//
// Node-API:
//   install(binarySuffix: string): string | null   patch the loaded uWS binary whose path ends with the
//                                                  suffix; null on success, else why not (nothing patched)
//   listen(port: number, name: string, allow: string): void   guard that listening port
//   stats(): {listener, port, reason, count}[]     requests refused so far, by listener and reason
//   check(chunks: Uint8Array[]): {reason, start}  the checker alone over successive reads (for tests)
//   reasons(): string[]                           reason names by number (0 = ok)
#define _GNU_SOURCE
#include <node_api.h>

#include <arpa/inet.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "head.h"

#define MAX_FD 65536
#define MAX_LISTENERS 32
#define DRAIN_LIMIT (1u << 20)

static const char* const REASON_NAMES[GUARD_REASONS] = {
    "ok", "no_version", "bad_request_line", "bad_line_end", "bad_header", "no_host", "bad_content_length",
    "method", "too_many_fields", "head_too_large", "version",
};

struct listener {
  atomic_int port;
  char name[24];
  char allow[96];
  atomic_ullong refused[GUARD_REASONS];
};

static struct listener listeners[MAX_LISTENERS];
static atomic_int listener_count;
static pthread_mutex_t listeners_lock = PTHREAD_MUTEX_INITIALIZER;

enum { CONN_OFF, CONN_ON, CONN_REJECT_NEXT, CONN_DRAIN };

struct conn {
  uint8_t state;
  uint8_t reason;
  int16_t listener;
  uint32_t drained;
  struct guard_head head;
};

// One slot per descriptor number. A slot is written only by the thread whose uWS accepted that
// descriptor, and a descriptor is open in one place at a time, so slots need no lock.
static struct conn* conns[MAX_FD];

static char request_id_prefix[25];
static atomic_ullong request_counter;

static void init_request_ids(void) {
  unsigned char random[10];
  if (getrandom(random, sizeof random, 0) != (ssize_t)sizeof random) {
    for (size_t i = 0; i < sizeof random; i++) random[i] = (unsigned char)(rand() ^ getpid());
  }
  char hex[21];
  for (size_t i = 0; i < sizeof random; i++) snprintf(hex + 2 * i, 3, "%02x", random[i]);
  // An RFC 9562 version-8 UUID like api/http.ts's: version nibble 8, variant bits 10, a 48-bit counter.
  int nibble = hex[15] >= 'a' ? hex[15] - 'a' + 10 : hex[15] - '0';
  static const char digits[] = "0123456789abcdef";
  snprintf(request_id_prefix, sizeof request_id_prefix, "%.8s-%.4s-8%.3s-%c%.3s-", hex, hex + 8, hex + 12, digits[(nibble & 3) | 8], hex + 16);
}

static int listener_of_socket(int fd) {
  struct sockaddr_storage address;
  socklen_t length = sizeof address;
  if (getsockname(fd, (struct sockaddr*)&address, &length) != 0) return -1;
  int port;
  if (address.ss_family == AF_INET) port = ntohs(((struct sockaddr_in*)&address)->sin_port);
  else if (address.ss_family == AF_INET6) port = ntohs(((struct sockaddr_in6*)&address)->sin6_port);
  else return -1;
  int count = atomic_load_explicit(&listener_count, memory_order_acquire);
  for (int i = 0; i < count; i++)
    if (atomic_load_explicit(&listeners[i].port, memory_order_relaxed) == port) return i;
  return -1;
}

struct answer_text {
  int status;
  const char* phrase;
  const char* code;
};

static struct answer_text answer_for(int reason) {
  switch (reason) {
    case GUARD_METHOD: return (struct answer_text){405, "Method Not Allowed", "method_not_allowed"};
    case GUARD_TOO_MANY_FIELDS:
    case GUARD_HEAD_TOO_LARGE: return (struct answer_text){431, "Request Header Fields Too Large", "invalid_request"};
    case GUARD_VERSION: return (struct answer_text){505, "HTTP Version Not Supported", "invalid_request"};
    default: return (struct answer_text){400, "Bad Request", "invalid_request"};
  }
}

static void message_for(int reason, char* out, size_t size) {
  switch (reason) {
    case GUARD_NO_VERSION: snprintf(out, size, "the request line has no HTTP version; send HTTP/1.1"); break;
    case GUARD_BAD_REQUEST_LINE: snprintf(out, size, "malformed request line: expected METHOD /path HTTP/1.1, with nothing before it"); break;
    case GUARD_BAD_LINE_END: snprintf(out, size, "malformed request head: every line ends with CRLF"); break;
    case GUARD_BAD_HEADER: snprintf(out, size, "malformed header line: expected name: value, without folded lines or control characters"); break;
    case GUARD_NO_HOST: snprintf(out, size, "an HTTP/1.1 request must carry a Host header"); break;
    case GUARD_BAD_LENGTH: snprintf(out, size, "Content-Length must be one decimal number, and not sent with Transfer-Encoding"); break;
    case GUARD_METHOD: snprintf(out, size, "the method is not served on this listener"); break;
    case GUARD_TOO_MANY_FIELDS: snprintf(out, size, "the request has more than %d header fields", GUARD_MAX_FIELDS); break;
    case GUARD_HEAD_TOO_LARGE: snprintf(out, size, "the request head exceeds %d bytes", GUARD_MAX_HEAD_BYTES); break;
    case GUARD_VERSION: snprintf(out, size, "only HTTP/1.1 is served (behind nginx: proxy_http_version 1.1)"); break;
    default: snprintf(out, size, "malformed request"); break;
  }
}

// `"details":{…},` for the reasons that have details, else "". Methods are token characters, which
// never need escaping in JSON.
static void details_for(const struct conn* k, const struct listener* l, char* out, size_t size) {
  out[0] = 0;
  if (k->reason == GUARD_TOO_MANY_FIELDS) snprintf(out, size, "\"details\":{\"limitFields\":%d},", GUARD_MAX_FIELDS);
  else if (k->reason == GUARD_HEAD_TOO_LARGE) snprintf(out, size, "\"details\":{\"limitBytes\":%d},", GUARD_MAX_HEAD_BYTES);
  else if (k->reason == GUARD_METHOD) {
    char allowed[160];
    size_t at = 0;
    int first = 1;
    allowed[at++] = '[';
    for (const char* c = l->allow; *c && at + 24 < sizeof allowed;) {
      if (*c == ' ' || *c == ',') {
        c++;
        continue;
      }
      if (!first) allowed[at++] = ',';
      first = 0;
      allowed[at++] = '"';
      while (*c && *c != ',' && *c != ' ' && at + 4 < sizeof allowed) allowed[at++] = *c++;
      allowed[at++] = '"';
    }
    allowed[at++] = ']';
    allowed[at] = 0;
    snprintf(out, size, "\"details\":{\"method\":\"%s\",\"allowed\":%s},", k->head.method, allowed);
  }
}

// Writes the refusal and shuts the write side, so the client reads the answer and then the end.
static void answer(int fd, const struct conn* k) {
  const struct listener* l = &listeners[k->listener];
  struct answer_text text = answer_for(k->reason);
  char message[160], details[320];
  message_for(k->reason, message, sizeof message);
  details_for(k, l, details, sizeof details);
  unsigned long long id = (atomic_fetch_add(&request_counter, 1) + 1) & 0xffffffffffffULL;
  // The id goes in the body and in `x-request-id`, as on every answer the node's routes give.
  char request_id[80];
  snprintf(request_id, sizeof request_id, "%s%012llx", request_id_prefix, id);
  char body[768];
  int body_length = snprintf(body, sizeof body, "{\"error\":{\"code\":\"%s\",\"message\":\"%s\",\"retryable\":false,%s\"requestId\":\"%s\"}}",
                             text.code, message, details, request_id);
  if (body_length < 0 || body_length >= (int)sizeof body) return;
  char allow[128] = "";
  if (k->reason == GUARD_METHOD) snprintf(allow, sizeof allow, "Allow: %s\r\n", l->allow);
  char response[1200];
  int length = snprintf(response, sizeof response,
                        "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nx-request-id: %s\r\nConnection: close\r\n%s\r\n%s",
                        text.status, text.phrase, body_length, request_id, allow, body);
  if (length > 0 && length < (int)sizeof response) send(fd, response, (size_t)length, MSG_NOSIGNAL | MSG_DONTWAIT);
  shutdown(fd, SHUT_WR);
}

// Reads and drops what the client still sends, so closing never resets the answer away: the end of
// the stream (0) closes the socket in uWS; EAGAIN leaves it open until the client closes (or uWS's
// idle timeout); past DRAIN_LIMIT the guard closes it.
static ssize_t drain(int fd, struct conn* k, void* buffer, size_t size) {
  for (;;) {
    ssize_t n = recv(fd, buffer, size, 0);
    if (n > 0) {
      k->drained += (uint32_t)n;
      if (k->drained > DRAIN_LIMIT) return 0;
      continue;
    }
    return n;
  }
}

static int guarded_accept4(int fd, struct sockaddr* address, socklen_t* length, int flags) {
  int accepted = accept4(fd, address, length, flags);
  if (accepted < 0 || accepted >= MAX_FD) return accepted;
  struct conn* k = conns[accepted];
  int l = listener_of_socket(accepted);
  if (l < 0) {
    if (k) k->state = CONN_OFF;
    return accepted;
  }
  if (!k) {
    k = calloc(1, sizeof *k);
    if (!k) return accepted;
    conns[accepted] = k;
  }
  guard_head_reset(&k->head);
  k->state = CONN_ON;
  k->listener = (int16_t)l;
  k->drained = 0;
  return accepted;
}

static ssize_t guarded_recv(int fd, void* buffer, size_t size, int flags) {
  struct conn* k = fd >= 0 && fd < MAX_FD ? conns[fd] : NULL;
  if (!k || k->state == CONN_OFF || (flags & MSG_PEEK) || (k->state == CONN_ON && k->head.mode == GUARD_MODE_PASS))
    return recv(fd, buffer, size, flags);
  if (k->state == CONN_REJECT_NEXT) {
    answer(fd, k);
    k->state = CONN_DRAIN;
  }
  if (k->state == CONN_DRAIN) return drain(fd, k, buffer, size);
  ssize_t n = recv(fd, buffer, size, flags);
  if (n <= 0) return n;
  size_t start;
  int reason = guard_head_scan(&k->head, buffer, (size_t)n, &start);
  if (reason == GUARD_OK) return n;
  k->reason = (uint8_t)reason;
  atomic_fetch_add_explicit(&listeners[k->listener].refused[reason], 1, memory_order_relaxed);
  if (start > 0) {
    // Earlier requests of this read go to uWS first; shutting the read side makes the socket
    // readable again, and the next read answers the refused request after uWS's answers.
    k->state = CONN_REJECT_NEXT;
    shutdown(fd, SHUT_RD);
    return (ssize_t)start;
  }
  answer(fd, k);
  k->state = CONN_DRAIN;
  ssize_t drained = drain(fd, k, buffer, size);
  return drained;
}

// --- patching the uWS binary's imports ---

struct module {
  const char* suffix;
  ElfW(Addr) base;
  const ElfW(Phdr) * phdr;
  ElfW(Half) phnum;
};

static int find_module(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct module* m = data;
  size_t a = strlen(info->dlpi_name), b = strlen(m->suffix);
  if (a < b || strcmp(info->dlpi_name + a - b, m->suffix) != 0) return 0;
  m->base = info->dlpi_addr;
  m->phdr = info->dlpi_phdr;
  m->phnum = info->dlpi_phnum;
  return 1;
}

#if defined(__x86_64__)
#define JUMP_SLOT R_X86_64_JUMP_SLOT
#define GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define JUMP_SLOT R_AARCH64_JUMP_SLOT
#define GLOB_DAT R_AARCH64_GLOB_DAT
#endif

struct patch_counts {
  int recv;
  int accept4;
};

static int patch_relocations(ElfW(Addr) base, const ElfW(Rela) * table, size_t bytes, const ElfW(Sym) * symbols, const char* names,
                             uintptr_t relro_start, uintptr_t relro_end, struct patch_counts* counts) {
  long page = sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < bytes / sizeof *table; i++) {
    const ElfW(Rela)* r = &table[i];
    unsigned type = (unsigned)ELF64_R_TYPE(r->r_info);
    if (type != JUMP_SLOT && type != GLOB_DAT) continue;
    const char* name = names + symbols[ELF64_R_SYM(r->r_info)].st_name;
    void* replacement;
    if (strcmp(name, "recv") == 0) replacement = (void*)guarded_recv, counts->recv++;
    else if (strcmp(name, "accept4") == 0) replacement = (void*)guarded_accept4, counts->accept4++;
    else continue;
    void** slot = (void**)(base + r->r_offset);
    void* start = (void*)((uintptr_t)slot & ~(uintptr_t)(page - 1));
    // Entries inside the read-only-after-relocation range go back to read-only once written.
    int read_only = (uintptr_t)slot >= relro_start && (uintptr_t)slot < relro_end;
    if (mprotect(start, (size_t)page, PROT_READ | PROT_WRITE) != 0) return -1;
    __atomic_store_n(slot, replacement, __ATOMIC_SEQ_CST);
    if (read_only) mprotect(start, (size_t)page, PROT_READ);
  }
  return 0;
}

static const char* patch(const char* suffix) {
#if !defined(JUMP_SLOT)
  (void)suffix;
  return "the guard patches x86-64 and arm64 binaries only";
#else
  struct module m = {suffix, 0, NULL, 0};
  if (!dl_iterate_phdr(find_module, &m)) return "the uWebSockets.js binary is not loaded in this process";
  const ElfW(Dyn)* dynamic = NULL;
  uintptr_t relro_start = 0, relro_end = 0;
  for (ElfW(Half) i = 0; i < m.phnum; i++) {
    if (m.phdr[i].p_type == PT_DYNAMIC) dynamic = (const ElfW(Dyn)*)(m.base + m.phdr[i].p_vaddr);
    if (m.phdr[i].p_type == PT_GNU_RELRO) {
      relro_start = m.base + m.phdr[i].p_vaddr;
      relro_end = relro_start + m.phdr[i].p_memsz;
    }
  }
  if (!dynamic) return "the uWebSockets.js binary has no dynamic section";
  ElfW(Addr) symtab = 0, strtab = 0, jmprel = 0, rela = 0;
  size_t jmprel_bytes = 0, rela_bytes = 0;
  int rela_kind = 0;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; d++) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = d->d_un.d_ptr; break;
      case DT_STRTAB: strtab = d->d_un.d_ptr; break;
      case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
      case DT_PLTRELSZ: jmprel_bytes = d->d_un.d_val; break;
      case DT_RELA: rela = d->d_un.d_ptr; break;
      case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
      case DT_PLTREL: rela_kind = (int)d->d_un.d_val; break;
      default: break;
    }
  }
  // The loader rewrites these addresses in place on some systems; relative ones are below the base.
#define ABSOLUTE(a) ((a) < m.base ? m.base + (a) : (a))
  if (!symtab || !strtab || (rela_kind && rela_kind != DT_RELA)) return "the uWebSockets.js binary's relocations are not in the expected form";
  const ElfW(Sym)* symbols = (const ElfW(Sym)*)ABSOLUTE(symtab);
  const char* names = (const char*)ABSOLUTE(strtab);
  struct patch_counts counts = {0, 0};
  if (jmprel && patch_relocations(m.base, (const ElfW(Rela)*)ABSOLUTE(jmprel), jmprel_bytes, symbols, names, relro_start, relro_end, &counts) != 0)
    return "mprotect refused to make the import table writable";
  if (rela && patch_relocations(m.base, (const ElfW(Rela)*)ABSOLUTE(rela), rela_bytes, symbols, names, relro_start, relro_end, &counts) != 0)
    return "mprotect refused to make the import table writable";
#undef ABSOLUTE
  if (!counts.recv || !counts.accept4) return "the uWebSockets.js binary does not import recv and accept4";
  return NULL;
#endif
}

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int installed;
static char install_failure[160];

// --- Node-API ---

static napi_value js_string(napi_env env, const char* text) {
  napi_value value;
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &value);
  return value;
}

static int arguments(napi_env env, napi_callback_info info, size_t want, napi_value* out) {
  size_t count = want;
  if (napi_get_cb_info(env, info, &count, out, NULL, NULL) != napi_ok || count < want) {
    napi_throw_type_error(env, NULL, "missing arguments");
    return 0;
  }
  return 1;
}

static int string_argument(napi_env env, napi_value value, char* out, size_t size) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, out, size, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a string");
    return 0;
  }
  return 1;
}

static napi_value Install(napi_env env, napi_callback_info info) {
  napi_value args[1];
  char suffix[256];
  if (!arguments(env, info, 1, args) || !string_argument(env, args[0], suffix, sizeof suffix)) return NULL;
  pthread_mutex_lock(&install_lock);
  if (!installed && !install_failure[0]) {
    init_request_ids();
    const char* failure = patch(suffix);
    if (failure) snprintf(install_failure, sizeof install_failure, "%s", failure);
    else installed = 1;
  }
  napi_value result;
  if (installed) napi_get_null(env, &result);
  else result = js_string(env, install_failure);
  pthread_mutex_unlock(&install_lock);
  return result;
}

static napi_value Listen(napi_env env, napi_callback_info info) {
  napi_value args[3];
  if (!arguments(env, info, 3, args)) return NULL;
  int32_t port;
  char name[24], allow[96];
  if (napi_get_value_int32(env, args[0], &port) != napi_ok || port <= 0 || port > 65535) {
    napi_throw_range_error(env, NULL, "port must be 1..65535");
    return NULL;
  }
  if (!string_argument(env, args[1], name, sizeof name) || !string_argument(env, args[2], allow, sizeof allow)) return NULL;
  for (const char* c = allow; *c; c++)
    if (!((*c >= 'A' && *c <= 'Z') || *c == ',' || *c == ' ')) {
      napi_throw_type_error(env, NULL, "allow must be a list of methods such as \"GET, POST\"");
      return NULL;
    }
  pthread_mutex_lock(&listeners_lock);
  int count = atomic_load(&listener_count), found = -1;
  for (int i = 0; i < count; i++)
    if (atomic_load(&listeners[i].port) == port) found = i;
  if (found < 0 && count < MAX_LISTENERS) {
    found = count;
    snprintf(listeners[found].name, sizeof listeners[found].name, "%s", name);
    snprintf(listeners[found].allow, sizeof listeners[found].allow, "%s", allow);
    atomic_store(&listeners[found].port, port);
    atomic_store_explicit(&listener_count, count + 1, memory_order_release);
  } else if (found >= 0) {
    // A port given up by one listener and taken by another (a lane restarted on port 0).
    snprintf(listeners[found].name, sizeof listeners[found].name, "%s", name);
    snprintf(listeners[found].allow, sizeof listeners[found].allow, "%s", allow);
  }
  pthread_mutex_unlock(&listeners_lock);
  if (found < 0) napi_throw_range_error(env, NULL, "too many guarded listeners");
  return NULL;
}

static napi_value Stats(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value list;
  napi_create_array(env, &list);
  uint32_t at = 0;
  int count = atomic_load_explicit(&listener_count, memory_order_acquire);
  for (int i = 0; i < count; i++) {
    for (int reason = 1; reason < GUARD_REASONS; reason++) {
      unsigned long long refused = atomic_load(&listeners[i].refused[reason]);
      if (!refused) continue;
      napi_value row, port, number;
      napi_create_object(env, &row);
      napi_create_int32(env, atomic_load(&listeners[i].port), &port);
      napi_create_double(env, (double)refused, &number);
      napi_set_named_property(env, row, "listener", js_string(env, listeners[i].name));
      napi_set_named_property(env, row, "port", port);
      napi_set_named_property(env, row, "reason", js_string(env, REASON_NAMES[reason]));
      napi_set_named_property(env, row, "count", number);
      napi_set_element(env, list, at++, row);
    }
  }
  return list;
}

static napi_value Check(napi_env env, napi_callback_info info) {
  napi_value args[1];
  if (!arguments(env, info, 1, args)) return NULL;
  uint32_t chunks;
  if (napi_get_array_length(env, args[0], &chunks) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected an array of Uint8Array");
    return NULL;
  }
  struct guard_head head;
  guard_head_reset(&head);
  int reason = GUARD_OK;
  size_t start = 0;
  uint32_t chunk = 0;
  for (; chunk < chunks && reason == GUARD_OK; chunk++) {
    napi_value element;
    napi_typedarray_type type;
    size_t length;
    void* data;
    napi_get_element(env, args[0], chunk, &element);
    if (napi_get_typedarray_info(env, element, &type, &length, &data, NULL, NULL) != napi_ok || type != napi_uint8_array) {
      napi_throw_type_error(env, NULL, "expected an array of Uint8Array");
      return NULL;
    }
    reason = guard_head_scan(&head, data, length, &start);
  }
  napi_value result, chunk_value, start_value;
  napi_create_object(env, &result);
  napi_set_named_property(env, result, "reason", js_string(env, REASON_NAMES[reason]));
  napi_create_uint32(env, reason == GUARD_OK ? chunks : chunk - 1, &chunk_value);
  napi_create_double(env, (double)start, &start_value);
  napi_set_named_property(env, result, "chunk", chunk_value);
  napi_set_named_property(env, result, "start", start_value);
  napi_set_named_property(env, result, "method", js_string(env, head.method));
  return result;
}

static napi_value Reasons(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value list;
  napi_create_array(env, &list);
  for (uint32_t i = 0; i < GUARD_REASONS; i++) napi_set_element(env, list, i, js_string(env, REASON_NAMES[i]));
  return list;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
      {"install", NULL, Install, NULL, NULL, NULL, napi_default, NULL},
      {"listen", NULL, Listen, NULL, NULL, NULL, napi_default, NULL},
      {"stats", NULL, Stats, NULL, NULL, NULL, napi_default, NULL},
      {"check", NULL, Check, NULL, NULL, NULL, napi_default, NULL},
      {"reasons", NULL, Reasons, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof *properties, properties);
  return exports;
}

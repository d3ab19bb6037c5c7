// The request-head checker (head.h): what uWebSockets.js 20.30 cannot answer, measured request by
// request against it (native/http-guard/README.md lists each case and what the library did).
#include "head.h"

#include <string.h>

static const char* const KNOWN_METHODS[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"};

// RFC 9110 token characters: letters, digits and !#$%&'*+-.^_`|~ (bit c of the 256-bit set).
static const uint32_t TCHAR[8] = {0x00000000, 0x03ff6cfa, 0xc7fffffe, 0x57ffffff, 0, 0, 0, 0};

static inline int is_tchar(unsigned char c) { return (TCHAR[c >> 5] >> (c & 31)) & 1; }

static int lower_equals(const char* a, size_t length, const char* lower) {
  if (strlen(lower) != length) return 0;
  for (size_t i = 0; i < length; i++) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != lower[i]) return 0;
  }
  return 1;
}

static void start_line(struct guard_head* head) {
  head->line_len = 0;
  head->keep_len = 0;
  head->colon = 0;
  head->leading_space = 0;
  head->bad_name = 0;
  head->name_len = 0;
  head->spaces = 0;
  memset(head->last, 0, sizeof head->last);
}

static void start_request(struct guard_head* head) {
  uint8_t mode = head->mode;
  memset(head, 0, sizeof *head);
  head->mode = mode;
  head->request_line = 1;
}

void guard_head_reset(struct guard_head* head) {
  memset(head, 0, sizeof *head);
  head->mode = GUARD_MODE_HEAD;
  head->request_line = 1;
}

static int check_request_line(struct guard_head* head) {
  if (head->line_len == 0) return GUARD_BAD_REQUEST_LINE;  // an empty line before the request line
  if (head->spaces == 1) return GUARD_NO_VERSION;          // `GET /`
  if (head->spaces != 2) return GUARD_BAD_REQUEST_LINE;
  const char* first_space = memchr(head->keep, ' ', head->keep_len);
  size_t method_length = first_space ? (size_t)(first_space - head->keep) : GUARD_KEEP;
  if (method_length == 0 || method_length > 16) return GUARD_BAD_REQUEST_LINE;
  for (size_t i = 0; i < method_length; i++)
    if (!is_tchar((unsigned char)head->keep[i])) return GUARD_BAD_REQUEST_LINE;
  // The target is a path (origin form), and " HTTP/d.d" closes the line.
  if (method_length + 1 >= head->keep_len || head->keep[method_length + 1] != '/') return GUARD_BAD_REQUEST_LINE;
  char last[sizeof head->last];  // the line's last 9 bytes in order, from the ring
  for (size_t i = 0; i < sizeof last; i++) last[i] = head->last[(head->line_len + i) % sizeof last];
  int versioned = head->line_len >= method_length + 11 && last[0] == ' ' && memcmp(last + 1, "HTTP/", 5) == 0 &&
                  last[6] >= '0' && last[6] <= '9' && last[7] == '.' && last[8] >= '0' && last[8] <= '9';
  if (!versioned) return GUARD_BAD_REQUEST_LINE;
  if (last[6] != '1' || last[8] != '1') return GUARD_VERSION;
  int known = 0;
  for (size_t i = 0; i < sizeof KNOWN_METHODS / sizeof *KNOWN_METHODS; i++)
    if (strlen(KNOWN_METHODS[i]) == method_length && memcmp(KNOWN_METHODS[i], head->keep, method_length) == 0) known = 1;
  if (!known) {
    memcpy(head->method, head->keep, method_length);
    head->method[method_length] = 0;
    return GUARD_METHOD;
  }
  return GUARD_OK;
}

// A header line is complete: its name and the start of its value are in `keep`.
static int check_header_line(struct guard_head* head) {
  if (head->leading_space || !head->colon || head->bad_name || head->name_len == 0) return GUARD_BAD_HEADER;
  if (++head->fields > GUARD_MAX_FIELDS) return GUARD_TOO_MANY_FIELDS;
  if (head->name_len > head->keep_len) return GUARD_OK;  // a long unknown name: nothing to read from it
  const char* name = head->keep;
  size_t name_length = head->name_len;
  if (lower_equals(name, name_length, "host")) head->has_host = 1;
  else if (lower_equals(name, name_length, "upgrade")) head->has_upgrade = 1;
  else if (lower_equals(name, name_length, "transfer-encoding")) head->has_transfer_encoding = 1;
  else if (lower_equals(name, name_length, "content-length")) {
    // The whole value must be in `keep`: digits, optional whitespace around them.
    if (head->line_len > GUARD_KEEP) return GUARD_BAD_LENGTH;
    size_t at = name_length + 1, end = head->keep_len;
    while (at < end && (head->keep[at] == ' ' || head->keep[at] == '\t')) at++;
    while (end > at && (head->keep[end - 1] == ' ' || head->keep[end - 1] == '\t')) end--;
    if (at == end || end - at > 15) return GUARD_BAD_LENGTH;
    uint64_t value = 0;
    for (size_t i = at; i < end; i++) {
      if (head->keep[i] < '0' || head->keep[i] > '9') return GUARD_BAD_LENGTH;
      value = value * 10 + (uint64_t)(head->keep[i] - '0');
    }
    if (head->has_length && value != head->length) return GUARD_BAD_LENGTH;
    head->has_length = 1;
    head->length = value;
  }
  return GUARD_OK;
}

// The empty line: the head is complete. Chooses how the request's body is crossed.
static int end_head(struct guard_head* head) {
  if (!head->has_host) return GUARD_NO_HOST;
  if (head->has_transfer_encoding && head->has_length) return GUARD_BAD_LENGTH;
  if (head->has_upgrade || head->has_transfer_encoding) {
    head->mode = GUARD_MODE_PASS;
    return GUARD_OK;
  }
  uint64_t body = head->has_length ? head->length : 0;
  start_request(head);
  if (body > 0) {
    head->mode = GUARD_MODE_BODY;
    head->body_left = body;
  }
  return GUARD_OK;
}

static int end_line(struct guard_head* head, int* head_done) {
  *head_done = 0;
  if (head->request_line) {
    int verdict = check_request_line(head);
    if (verdict != GUARD_OK) return verdict;
    head->request_line = 0;
    start_line(head);
    return GUARD_OK;
  }
  if (head->line_len == 0) {
    *head_done = 1;
    return end_head(head);
  }
  int verdict = check_header_line(head);
  start_line(head);
  return verdict;
}

int guard_head_scan(struct guard_head* head, const unsigned char* bytes, size_t length, size_t* request_start) {
  size_t at = 0;
  *request_start = 0;
  while (at < length) {
    if (head->mode == GUARD_MODE_PASS) return GUARD_OK;
    if (head->mode == GUARD_MODE_BODY) {
      uint64_t take = length - at < head->body_left ? length - at : head->body_left;
      head->body_left -= take;
      at += (size_t)take;
      if (head->body_left == 0) head->mode = GUARD_MODE_HEAD;
      continue;
    }
    if (head->head_bytes == 0) *request_start = at;
    unsigned char c = bytes[at++];
    if (++head->head_bytes > GUARD_MAX_HEAD_BYTES) return GUARD_HEAD_TOO_LARGE;
    if (head->line_state == 1) {
      if (c != '\n') return GUARD_BAD_LINE_END;
      head->line_state = 0;
      int done;
      int verdict = end_line(head, &done);
      if (verdict != GUARD_OK) return verdict;
      continue;
    }
    if (c == '\r') {
      head->line_state = 1;
      continue;
    }
    if (c == '\n') return GUARD_BAD_LINE_END;
    if ((c < 0x20 && c != '\t') || c == 0x7f) return head->request_line ? GUARD_BAD_REQUEST_LINE : GUARD_BAD_HEADER;
    if (head->request_line) {
      if (c == ' ') head->spaces++;
    } else {
      if (head->line_len == 0 && (c == ' ' || c == '\t')) head->leading_space = 1;
      if (!head->colon) {
        if (c == ':') {
          head->colon = 1;
          head->name_len = (uint16_t)(head->line_len > 0xffff ? 0xffff : head->line_len);
        } else if (!is_tchar(c)) {
          head->bad_name = 1;
        }
      }
    }
    if (head->keep_len < GUARD_KEEP) head->keep[head->keep_len++] = (char)c;
    if (head->request_line) head->last[head->line_len % sizeof head->last] = (char)c;
    head->line_len++;
  }
  return GUARD_OK;
}

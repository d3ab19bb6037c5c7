{
  "targets": [
    {
      "target_name": "http_guard",
      "sources": ["src/guard.c", "src/head.c"],
      "cflags": ["-O2", "-std=gnu11", "-Wall", "-Wextra"]
    }
  ]
}

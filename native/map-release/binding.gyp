{
  "targets": [
    {
      "target_name": "map_release",
      "sources": ["src/release.c"],
      "cflags": ["-O2", "-std=gnu11", "-Wall", "-Wextra"]
    }
  ]
}

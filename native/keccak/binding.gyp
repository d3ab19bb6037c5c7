{
  "targets": [
    {
      "target_name": "keccak_scalar",
      "type": "static_library",
      "sources": ["src/scalar.cc"],
      "cflags_cc": ["-O3", "-fPIC"]
    },
    {
      "target_name": "keccak_avx2",
      "type": "static_library",
      "sources": ["src/avx2.cc"],
      "cflags_cc": ["-O3", "-fPIC"],
      "conditions": [["target_arch=='x64'", {"cflags_cc": ["-mavx2"]}]]
    },
    {
      "target_name": "keccak_avx512",
      "type": "static_library",
      "sources": ["src/avx512.cc"],
      "cflags_cc": ["-O3", "-fPIC"],
      "conditions": [["target_arch=='x64'", {"cflags_cc": ["-mavx2", "-mavx512f", "-mavx512vl"]}]]
    },
    {
      "target_name": "keccak_stream",
      "type": "static_library",
      "sources": ["src/stream.cc"],
      "cflags_cc": ["-O3", "-fPIC"]
    },
    {
      "target_name": "keccak_stream_bmi2",
      "type": "static_library",
      "sources": ["src/stream_bmi2.cc"],
      "cflags_cc": ["-O3", "-fPIC"],
      "conditions": [["target_arch=='x64'", {"cflags_cc": ["-mbmi", "-mbmi2"]}]]
    },
    {
      "target_name": "keccak_batch",
      "sources": ["src/addon.cc"],
      "cflags_cc": ["-O3"],
      "dependencies": ["keccak_scalar", "keccak_avx2", "keccak_avx512", "keccak_stream", "keccak_stream_bmi2"]
    }
  ]
}

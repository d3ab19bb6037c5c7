{
  "targets": [
    {
      "target_name": "keccak_isa",
      "type": "static_library",
      "sources": ["src/scalar.cc"],
      "cflags": ["-O3", "-fPIC"],
      "cflags_cc": ["-O3", "-fPIC"],
      "conditions": [
        ["target_arch=='x64'", {
          "dependencies": ["keccak_avx2", "keccak_avx512"]
        }]
      ]
    },
    {
      "target_name": "keccak_avx2",
      "type": "static_library",
      "sources": ["src/avx2.cc"],
      "cflags": ["-O3", "-fPIC", "-mavx2"],
      "cflags_cc": ["-O3", "-fPIC", "-mavx2"]
    },
    {
      "target_name": "keccak_avx512",
      "type": "static_library",
      "sources": ["src/avx512.cc"],
      "cflags": ["-O3", "-fPIC", "-mavx2", "-mavx512f", "-mavx512vl"],
      "cflags_cc": ["-O3", "-fPIC", "-mavx2", "-mavx512f", "-mavx512vl"]
    },
    {
      "target_name": "keccak_batch",
      "sources": ["src/addon.cc"],
      "cflags": ["-O3"],
      "cflags_cc": ["-O3"],
      "dependencies": ["keccak_isa"],
      "conditions": [
        ["target_arch=='x64'", {
          "dependencies": ["keccak_avx2", "keccak_avx512"]
        }]
      ]
    }
  ]
}

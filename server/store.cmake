# Block store: placement policies, manifests, per-disk workers, ingest, the store's upkeep and verify.
add_library(toast_server_store STATIC
  core/container.cpp
  core/crc32c.cpp
  core/fd_budget.cpp
  core/manifest.cpp
  core/placement.cpp
  core/replica_chooser.cpp
  core/tier_read_plan.cpp
  core/tier_view.cpp
  core/verified_chunks.cpp
  io/block_store.cpp
  io/catalogue.cpp
  io/chunk_verifier.cpp
  io/disk_emulation.cpp
  io/disk_queue.cpp
  io/ingest.cpp
  io/open_file.cpp
  io/open_file_cache.cpp
  io/store_upkeep.cpp
  io/title_catalogue.cpp
  io/tier_client.cpp
  io/tier_store.cpp
  io/tier_verify.cpp
  io/title_torrent.cpp
  io/verify.cpp)
target_include_directories(toast_server_store PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(toast_server_store PUBLIC toast_server_capacity toast_server_config toast_common toast_asio
  Threads::Threads LibtorrentRasterbar::torrent-rasterbar PRIVATE toast_peer_certs toast_warnings)

list(APPEND SERVER_TEST_SOURCES
  tests/container_test.cpp
  tests/disk_queue_test.cpp
  tests/ingest_private_test.cpp
  tests/ingest_test.cpp
  tests/manifest_test.cpp
  tests/placement_test.cpp
  tests/replica_test.cpp
  tests/server_config_test.cpp
  tests/tier_config_test.cpp
  tests/tier_test.cpp
  tests/store_test.cpp
  tests/store_replica_test.cpp
  tests/verified_chunks_test.cpp)
